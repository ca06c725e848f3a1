// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer: per-process state (maps, perf map, start time), the files
 * they map (sym/symfile: by identity and view, within budgets), kernel
 * symbols, and an intern table that gives every name a stable pointer for
 * the profile model. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/util.h"
#include "sym/dwline.h"
#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "sym/kallsyms.h"
#include "sym/perfmap.h"
#include "sym/symbolize.h"
#include "sym/symfile.h"

struct sym_proc {
	pid_t pid;
	pid_t nstgid;
	uint64_t start_time;
	struct symfile_view view;	/* where it sees its files from */
	uint64_t *marks;		/* the symbolizer's, for proc_room */
	const char *comm;
	struct proc_maps *maps;
	struct sym_file **files;	/* per map, resolved lazily; a reference each */
	struct perfmap *perfmap;
	char *perfmap_path;	/* the perf map read (malloc'd), NULL: none */
	struct stat perfmap_version;	/* of the file perfmap was read from */
	bool perfmap_tried;
	uint64_t jit_misses;	/* code outside files not named by the perf map */
	bool perfmap_refused;	/* a FIFO, device...: said once */
	bool perfmap_capped;	/* over perfmap__max(): said once */
	uint64_t used;		/* sweep count when last watched or looked up */
	uint64_t gone;		/* sweep count when first seen gone, 0: alive */
	uint64_t maps_read;	/* sweep count + 1 when the maps were last read */
	uint64_t revisited;	/* sweep count + 1 of the last symbolizer__revisit */
	uint64_t gen;		/* from sz->gens at the last change of what names
				 * its frames (process, maps, perf map) */
	/* its own vDSO, when not the size of ours: for vdso_start, of the
	 * process that started at vdso_stime (the PID may be reused) */
	const struct elf_syms *vdso;
	uint64_t vdso_start, vdso_stime;
};

struct symbolizer {
	char **strs;		/* open-addressing intern table */
	size_t strs_cap, strs_n;
	struct sym_proc **procs;
	size_t nprocs;
	struct sym_proc *last;
	struct symfiles *files;
	uint64_t marks;			/* the last sym_file.mark given */
	struct kallsyms *ks;
	bool ks_tried;
	const struct pe_resolver *pe;
	uint64_t sweeps;
	struct symbolizer_stats st;
	struct elf_syms *vdso_self;	/* this process's vDSO: the kernel's */
	size_t vdso_len;
	bool vdso_tried;
	struct vdso_copy *vdsos;	/* copies of targets' other vDSOs */
	size_t nvdsos;
	uint64_t gens;			/* the last sym_proc.gen given */
};

/* A target's vDSO of another size than ours, the image it was read from
 * kept: shared by processes whose images are the same bytes (the app can
 * rewrite its own copy, build id and all). */
struct vdso_copy {
	struct elf_syms *es;
	void *image;
	size_t len;
};

const char *symbolizer__intern(struct symbolizer *sz, const char *s)
{
	size_t i;

	if (sz->strs_n * 2 >= sz->strs_cap) {
		size_t ncap = sz->strs_cap ? sz->strs_cap * 2 : 1024, j;
		char **n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (j = 0; j < sz->strs_cap; j++) {
			if (!sz->strs[j])
				continue;
			i = hash__str(sz->strs[j]) & (ncap - 1);
			while (n[i])
				i = (i + 1) & (ncap - 1);
			n[i] = sz->strs[j];
		}
		free(sz->strs);
		sz->strs = n;
		sz->strs_cap = ncap;
	}
	i = hash__str(s) & (sz->strs_cap - 1);
	while (sz->strs[i]) {
		if (strcmp(sz->strs[i], s) == 0)
			return sz->strs[i];
		i = (i + 1) & (sz->strs_cap - 1);
	}
	sz->strs[i] = strdup(s);
	if (!sz->strs[i])
		return NULL;
	sz->strs_n++;
	return sz->strs[i];
}

static const char *intern_cb(void *ctx, const char *s)
{
	return symbolizer__intern(ctx, s);
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *sz = calloc(1, sizeof(*sz));

	if (!sz)
		return NULL;
	sz->files = symfiles__new(intern_cb, sz);
	if (!sz->files || !symbolizer__intern(sz, "")) {
		symbolizer__free(sz);
		return NULL;
	}
	return sz;
}

void symbolizer__set_pe_resolver(struct symbolizer *sz, const struct pe_resolver *r)
{
	sz->pe = r;
	symfiles__set_pe_resolver(sz->files, r);
}

static void proc_drop_maps(struct symbolizer *sz, struct sym_proc *p)
{
	size_t i;

	for (i = 0; p->files && i < p->maps->n; i++)
		symfiles__put(sz->files, p->files[i]);
	proc_maps__free(p->maps);
	free(p->files);
	p->maps = NULL;
	p->files = NULL;
}

static void proc_free(struct symbolizer *sz, struct sym_proc *p)
{
	if (!p)
		return;
	proc_drop_maps(sz, p);
	perfmap__free(p->perfmap);
	free(p->perfmap_path);
	free(p);
}

void symbolizer__free(struct symbolizer *sz)
{
	size_t i;

	if (!sz)
		return;
	for (i = 0; i < sz->nprocs; i++)
		proc_free(sz, sz->procs[i]);
	free(sz->procs);
	symfiles__free(sz->files);
	for (i = 0; i < sz->strs_cap; i++)
		free(sz->strs[i]);
	free(sz->strs);
	kallsyms__free(sz->ks);
	elfsym__free(sz->vdso_self);
	for (i = 0; i < sz->nvdsos; i++) {
		elfsym__free(sz->vdsos[i].es);
		free(sz->vdsos[i].image);
	}
	free(sz->vdsos);
	free(sz);
}

static struct sym_proc *find_proc(struct symbolizer *sz, pid_t pid)
{
	size_t i;

	if (sz->last && sz->last->pid == pid) {
		sz->last->used = sz->sweeps;
		return sz->last;
	}
	for (i = 0; i < sz->nprocs; i++)
		if (sz->procs[i]->pid == pid) {
			sz->procs[i]->used = sz->sweeps;
			return sz->last = sz->procs[i];
		}
	return NULL;
}

/* Samples of a process are drained at most one drain after it exits (the
 * count maps flip at every drain); two sweeps leave one drain of margin. */
#define SWEEP_GRACE 2

size_t symbolizer__sweep(struct symbolizer *sz)
{
	size_t i = 0, freed = 0;

	sz->sweeps++;
	while (i < sz->nprocs) {
		struct sym_proc *p = sz->procs[i];
		uint64_t start, since;

		if (!p->gone && (proc__start_time(p->pid, &start) || start != p->start_time))
			p->gone = sz->sweeps;	/* exited, or its PID now names another */
		/* a JIT may have written the entries missed so far */
		p->perfmap_tried = false;
		since = p->gone > p->used ? p->gone : p->used;
		if (!p->gone || sz->sweeps - since < SWEEP_GRACE) {
			i++;
			continue;
		}
		if (sz->last == p)
			sz->last = NULL;
		proc_free(sz, p);
		sz->procs[i] = sz->procs[--sz->nprocs];
		sz->st.evicted++;
		freed++;
	}
	/* then the tables of the files no process maps any more */
	symfiles__sweep(sz->files, sz->sweeps);
	return freed;
}

/* (Re)load the perf map when it appeared or changed (grew, was rewritten in
 * place or replaced). A map that disappeared keeps its last version. */
static void refresh_perfmap(struct symbolizer *sz, struct sym_proc *p)
{
	const struct stat *v = &p->perfmap_version;
	char path[PATH_MAX];
	struct perfmap *pm;
	struct stat sb;
	int fd;

	fd = proc__perfmap_open(p->pid, p->nstgid, path, sizeof(path), &sb);
	if (fd < 0) {
		if (fd == -APPFILE_ENOTREG && !p->perfmap_refused) {
			p->perfmap_refused = true;
			p_warn("pid %d: perf map %s is not a regular file; ignored", (int)p->pid, path);
		}
		return;
	}
	if (p->perfmap && p->perfmap_path && strcmp(path, p->perfmap_path) == 0 &&
	    sb.st_ino == v->st_ino && sb.st_dev == v->st_dev && sb.st_size == v->st_size &&
	    sb.st_mtim.tv_sec == v->st_mtim.tv_sec && sb.st_mtim.tv_nsec == v->st_mtim.tv_nsec) {
		close(fd);
		return;
	}
	pm = perfmap__load_live_fd(fd, &sb);
	if (!pm) {
		p_debug("cannot read perf map %s: %s", path, strerror(errno));
		close(fd);
		return;
	}
	close(fd);
	if (perfmap__skipped(pm) && !p->perfmap_capped) {
		p->perfmap_capped = true;
		sz->st.perfmap_capped++;
		p_warn("pid %d: perf map %s holds more than %zu MiB; its oldest %zu MiB are left "
		       "out (--max-perf-map raises the limit)", (int)p->pid, path,
		       perfmap__max() >> 20, (perfmap__skipped(pm) + (1u << 20) - 1) >> 20);
	}
	if (p->perfmap) {
		sz->st.perfmap_reloads++;
		sz->st.perfmap_bad_lines -= perfmap__bad_lines(p->perfmap);
	}
	sz->st.perfmap_bad_lines += perfmap__bad_lines(pm);
	perfmap__free(p->perfmap);
	p->perfmap = pm;
	p->gen = ++sz->gens;
	free(p->perfmap_path);
	p->perfmap_path = strdup(path);	/* NULL: read again next time */
	p->perfmap_version = sb;
	p_debug("pid %d: perf map %s, %zu entries, %zu bad lines", (int)p->pid, path,
		perfmap__count(pm), perfmap__bad_lines(pm));
}

static struct sym_file *map_file_in(struct symbolizer *sz, struct sym_proc *p, size_t idx,
				    bool now, bool in_watch);
static bool is_symbol_file(const struct proc_map *m);

/* Where PID sees its files from (0s for what cannot be read). */
static void read_view(pid_t pid, struct symfile_view *v)
{
	char path[64];
	struct stat sb;

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc__root(), (int)pid);
	if (!stat(path, &sb))
		v->mntns = (uint64_t)sb.st_ino;
	snprintf(path, sizeof(path), "%s/%d/root", proc__root(), (int)pid);
	if (!stat(path, &sb)) {
		v->root_dev = (uint64_t)sb.st_dev;
		v->root_ino = (uint64_t)sb.st_ino;
	}
}

static bool same_mapping(const struct proc_map *a, const struct proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

/* FILES (for MAPS, read again) gets the files of OLD's mappings that are
 * still there, one more reference each: a mapping of the same live process
 * holds its file, so they need no open and no identity check again. */
static void keep_files(const struct proc_maps *old, struct sym_file *const *old_files,
		       const struct proc_maps *maps, struct sym_file **files)
{
	size_t i, j = 0;

	for (i = 0; i < maps->n && j < old->n; i++) {
		while (j < old->n && old->maps[j].start < maps->maps[i].start)
			j++;
		if (j < old->n && old_files[j] && same_mapping(&old->maps[j], &maps->maps[i])) {
			files[i] = old_files[j];
			symfiles__get(files[i]);
		}
	}
}

/* Open the files of P's executable mappings (those not kept from its
 * maps read before), reading those of EXE and the C library now. Mappings
 * of one device and inode in one read of a live process's maps are of one
 * file (its mappings hold it): opened once, however many there are. 0, or
 * -ENOMEM. */
static int open_files(struct symbolizer *sz, struct sym_proc *p, const char *exe)
{
	const struct proc_maps *maps = p->maps;
	size_t cap = 16, i, *seen;
	int err = 0;

	while (cap < 2 * maps->n)
		cap *= 2;
	/* index + 1 of the first mapping of each (device, inode), 0: none */
	seen = calloc(cap, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (i = 0; i < maps->n && !err; i++) {
		const struct proc_map *m = &maps->maps[i];
		size_t h;

		if (m->perms[2] != 'x' || !is_symbol_file(m))
			continue;
		for (h = hash__u64(m->inode ^ ((uint64_t)m->dev_major << 40 ^
					       (uint64_t)m->dev_minor << 20)) & (cap - 1);
		     seen[h]; h = (h + 1) & (cap - 1)) {
			const struct proc_map *o = &maps->maps[seen[h] - 1];

			if (o->inode == m->inode && o->dev_major == m->dev_major &&
			    o->dev_minor == m->dev_minor)
				break;
		}
		if (!seen[h]) {
			seen[h] = i + 1;
		} else if (!p->files[i] && p->files[seen[h] - 1]) {
			p->files[i] = p->files[seen[h] - 1];
			symfiles__get(p->files[i]);
		}
		if (!map_file_in(sz, p, i, proc__core_object(m->path, exe), true))
			err = -ENOMEM;
	}
	free(seen);
	return err;
}

/* symbolizer__watch, for the process that started at WANT (0: any). */
static int watch(struct symbolizer *sz, pid_t pid, uint64_t want)
{
	struct proc_status status;
	struct sym_proc *p = find_proc(sz, pid);
	struct symfile_view view;
	struct sym_file **files;
	struct proc_maps *maps;
	uint64_t start = 0, again = 0;
	char exe[PATH_MAX];

	if (proc__start_time(pid, &start) || proc__read_status(pid, &status))
		return p ? 0 : -ESRCH;	/* gone: keep what was captured */
	if (want && start != want)
		return -ESRCH;	/* another process has the PID now */
	if (p && p->start_time != start) {
		/* the PID was reused: nothing captured still applies */
		sz->st.pid_reuse++;
		proc_drop_maps(sz, p);
		perfmap__free(p->perfmap);
		p->perfmap = NULL;
		free(p->perfmap_path);
		p->perfmap_path = NULL;
	}
	if (!p) {
		struct sym_proc **n = realloc(sz->procs, (sz->nprocs + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sz->procs = n;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		sz->procs[sz->nprocs++] = p;
		sz->st.processes++;
		p->pid = pid;
		p->marks = &sz->marks;
		p->used = sz->sweeps;
	}
	p->gone = 0;
	p->gen = ++sz->gens;	/* whatever follows changes */
	p->start_time = start;
	p->nstgid = status.nstgid ? status.nstgid : pid;
	p->comm = symbolizer__intern(sz, status.name);
	maps = proc_maps__load(pid);
	read_view(pid, &view);
	if (maps && (proc__start_time(pid, &again) || again != start)) {
		/* the process exited while we read: the maps may be another's */
		proc_maps__free(maps);
		maps = NULL;
	}
	/* (its files opened below are checked the same way, all at once) */
	if (maps) {
		files = calloc(maps->n ? maps->n : 1, sizeof(*files));
		if (!files) {
			proc_maps__free(maps);
			return -ENOMEM;
		}
		if (p->maps && symfile_view__same(&p->view, &view))
			keep_files(p->maps, p->files, maps, files);
		proc_drop_maps(sz, p);
		p->maps = maps;
		p->files = files;
		p->view = view;
		p->maps_read = sz->sweeps + 1;
		/* open the executable files now: once the process exits,
		 * /proc/PID/root and map_files are gone. The executable and
		 * the C library are read now, the others when a frame first
		 * falls in them (most libraries of a server never run in a
		 * capture) */
		if (proc__exe(pid, exe, sizeof(exe)))
			exe[0] = '\0';
		if (open_files(sz, p, exe))
			return -ENOMEM;
		if (proc__start_time(pid, &again) || again != start) {
			/* it exited while they were opened: they may be files
			 * of whoever has the PID now, not to name its frames */
			proc_drop_maps(sz, p);
			return 0;
		}
	}
	p->perfmap_tried = false;
	refresh_perfmap(sz, p);
	return 0;
}

int symbolizer__watch(struct symbolizer *sz, pid_t pid)
{
	return watch(sz, pid, 0);
}

int symbolizer__watch_start(struct symbolizer *sz, pid_t pid, uint64_t start)
{
	return watch(sz, pid, start);
}

uint64_t symbolizer__jit_misses(struct symbolizer *sz, pid_t pid)
{
	struct sym_proc *p = find_proc(sz, pid);

	return p ? p->jit_misses : 0;
}

int symbolizer__revisit(struct symbolizer *sz, pid_t pid, uint64_t start,
			const uint64_t *ips, size_t n)
{
	struct sym_proc *p = find_proc(sz, pid);
	size_t i;

	if (!p || (p->gone && p->revisited != sz->sweeps + 1)) {
		/* never watched (its report was lost or is still queued), or
		 * seen gone: the PID may name a new process now */
		if (p)
			p->revisited = sz->sweeps + 1;
		return watch(sz, pid, start);
	}
	if (p->revisited != sz->sweeps + 1) {
		p->revisited = sz->sweeps + 1;
		/* a perf map that changed is read again; one that appeared
		 * is found when a lookup misses (perfmap_tried) */
		if (p->perfmap)
			refresh_perfmap(sz, p);
	}
	if (p->gone || p->maps_read == sz->sweeps + 1)
		return 0;	/* read once this drain already */
	for (i = 0; i < n; i++)
		if (!p->maps || !proc_maps__find(p->maps, ips[i]))
			return watch(sz, pid, start);	/* mapped since (dlopen, JIT) */
	return 0;
}

uint64_t symbolizer__generation(struct symbolizer *sz, pid_t pid)
{
	struct sym_proc *p = find_proc(sz, pid);

	return p ? p->gen : 0;
}

const char *symbolizer__comm(struct symbolizer *sz, pid_t pid)
{
	struct sym_proc *p = find_proc(sz, pid);

	return p ? p->comm : NULL;
}

static bool is_pe_path(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && (strcasecmp(path + n - 4, ".dll") == 0 ||
			 strcasecmp(path + n - 4, ".exe") == 0);
}

static int lines_cb(void *src, uint64_t vaddr, const struct frame_line **out)
{
	return dwline__lookup(src, vaddr, out);
}

void symbolizer__set_cache(struct symbolizer *sz, struct cficache *c)
{
	symfiles__set_cache(sz->files, c);
}

/* What P's files leave of SYMFILE_PROC_MAX: the tables of the files it
 * maps, each counted once. */
static uint64_t proc_room(const void *ctx)
{
	const struct sym_proc *p = ctx;
	uint64_t pinned = 0, mark = ++*p->marks;
	size_t i;

	for (i = 0; p->files && i < p->maps->n; i++) {
		struct sym_file *f = p->files[i];

		if (f && f->mark != mark) {
			f->mark = mark;
			pinned += f->bytes;
		}
	}
	return pinned < SYMFILE_PROC_MAX ? SYMFILE_PROC_MAX - pinned : 0;
}

/* The file of map IDX of process P (sym/symfile). Opened now; its symbols
 * read now when NOW, else when a frame first falls in it (map_file with
 * NOW). IN_WATCH: opened by watch, which checks P's start time after all
 * its opens; otherwise checked after this one. NULL: out of memory. */
static struct sym_file *map_file_in(struct symbolizer *sz, struct sym_proc *p, size_t idx,
				    bool now, bool in_watch)
{
	const struct proc_map *m = &p->maps->maps[idx];
	struct symfile_owner owner = { p->pid, p->start_time, p->view, proc_room, p, !in_watch };
	struct sym_file *f = p->files[idx];
	char rel[PATH_MAX];
	size_t len;

	if (!f) {
		f = symfiles__open(sz->files, &owner, m, now);
		p->files[idx] = f;
		if (!f)
			return NULL;
	}
	if (!now || f->fd < 0) {
		f->used = sz->sweeps;
		return f;
	}
	/* the path as P names the file, for its debug files */
	snprintf(rel, sizeof(rel), "%s", m->path);
	len = strlen(rel);
	if (len > 10 && strcmp(rel + len - 10, " (deleted)") == 0)
		rel[len - 10] = '\0';
	return symfiles__read(sz->files, f, &owner, rel);
}

static struct sym_file *map_file(struct symbolizer *sz, struct sym_proc *p, size_t idx,
				 bool now)
{
	return map_file_in(sz, p, idx, now, false);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Names longer than this (the app chooses its symbols and perf-map lines)
 * are cut, at a character boundary, with "...". */
#define NAME_MAX_LEN 1024

static int set_name(struct symbolizer *sz, struct sym_frame *out, const char *name)
{
	char cut[UTF8_CUT_ROOM(NAME_MAX_LEN)];

	out->name = symbolizer__intern(sz, utf8_cut(name, NAME_MAX_LEN, cut));
	return out->name ? 0 : -ENOMEM;
}

static int unknown(struct symbolizer *sz, struct sym_frame *out)
{
	sz->st.unknown++;
	out->kind = FRAME_UNKNOWN;
	out->module = "";
	out->build_id = "";
	return set_name(sz, out, "[unknown]");
}

/* Whether a mapping holds a file worth reading symbols from. JIT runtimes
 * also map code from memfds (.NET's double mapping: "/memfd:doublemapper")
 * or deleted scratch files: their names come from the perf map. */
static bool is_symbol_file(const struct proc_map *m)
{
	return m->path[0] == '/' && m->inode && !str_has_prefix(m->path, "/memfd:") &&
	       !str_has_prefix(m->path, "/dev/") && !str_has_prefix(m->path, "/SYSV");
}

static const char *perfmap_name(struct symbolizer *sz, struct sym_proc *p, uint64_t ip)
{
	const char *name = perfmap__lookup(p->perfmap, ip, NULL);

	if (!name && !p->perfmap_tried) {
		/* a JIT may have written the entry since the last look */
		p->perfmap_tried = true;
		refresh_perfmap(sz, p);
		name = perfmap__lookup(p->perfmap, ip, NULL);
	}
	return name;
}

/* Where OUT's address is: IP in mapping M (NULL: none known). */
static void set_where(struct sym_frame *out, uint64_t ip, const struct proc_map *m)
{
	out->addr = ip;
	out->map_start = m ? m->start : 0;
	out->map_limit = m ? m->end : 0;
	out->map_offset = m ? m->offset : 0;
	out->lines = (struct frame_lines_ref){ 0 };
	out->unresolved = false;
}

/* The vDSO image mapped at BASE in this process, LEN bytes as our own maps
 * say: the kernel's, the same in every process of its ABI. */
static void load_self_vdso(struct symbolizer *sz)
{
	uintptr_t base;
	size_t len;

	if (proc__self_vdso(&base, &len) == 0) {
		sz->vdso_len = len;
		sz->vdso_self = elfsym__load_mem((const void *)base, len);
	}
}

/* A copy of P's own vDSO (mapping M), read from /proc/PID/mem while P
 * is still P, and checked as any ELF image; kept for the capture, shared
 * with the processes whose image is the same bytes. NULL when unreadable. */
static const struct elf_syms *target_vdso(struct symbolizer *sz, struct sym_proc *p,
					  const struct proc_map *m)
{
	size_t len = m->end - m->start, i;
	struct elf_syms *es = NULL;
	struct vdso_copy *n;
	char path[64];
	void *buf;
	ssize_t got;
	int fd;

	/* 64 processes of another ABI are plenty; more are not named */
	if (len > (1u << 20) || sz->nvdsos >= 64)
		return NULL;
	snprintf(path, sizeof(path), "%s/%d/mem", proc__root(), (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(len);
	got = buf ? pread(fd, buf, len, (off_t)m->start) : -1;
	close(fd);
	if (got <= 0 || !proc__alive(p->pid, p->start_time)) {
		free(buf);
		return NULL;
	}
	for (i = 0; i < sz->nvdsos; i++)
		if (sz->vdsos[i].len == (size_t)got && !memcmp(sz->vdsos[i].image, buf, len)) {
			free(buf);
			return sz->vdsos[i].es;
		}
	es = elfsym__load_mem(buf, (size_t)got);
	n = es ? realloc(sz->vdsos, (sz->nvdsos + 1) * sizeof(*n)) : NULL;
	if (!n) {
		elfsym__free(es);
		free(buf);
		return NULL;
	}
	sz->vdsos = n;
	sz->vdsos[sz->nvdsos++] = (struct vdso_copy){ es, buf, (size_t)got };
	return es;
}

/* Name IP in P's vDSO (mapping M). Return 0 when named, 1 when not. */
static int vdso_name(struct symbolizer *sz, struct sym_proc *p, const struct proc_map *m,
		     uint64_t ip, struct sym_frame *out)
{
	const struct elf_syms *es;
	const struct elf_sym_info *si;
	uint64_t vaddr, delta;

	if (!sz->vdso_tried) {
		sz->vdso_tried = true;
		load_self_vdso(sz);
	}
	if (sz->vdso_self && m->end - m->start == sz->vdso_len) {
		es = sz->vdso_self;
	} else {
		/* another size: another ABI's vDSO (a 32-bit process) */
		if (p->vdso_start != m->start || p->vdso_stime != p->start_time) {
			p->vdso_start = m->start;
			p->vdso_stime = p->start_time;
			p->vdso = target_vdso(sz, p, m);
		}
		es = p->vdso;
	}
	if (!es || elfsym__offset_to_addr(es, ip - m->start, &vaddr))
		return 1;
	si = elfsym__lookup_addr(es, vaddr, &delta);
	if (!si)
		return 1;
	out->kind = FRAME_NATIVE;
	out->module = symbolizer__intern(sz, "[vdso]");
	out->build_id = symbolizer__intern(sz, elfsym__build_id(es));
	if (!out->module || !out->build_id)
		return -ENOMEM;
	return set_name(sz, out, si->name);
}

/* A caller's address in a mapping that is not executable: no return
 * address but what a frame-pointer walk through code without frame
 * pointers found (a data pointer). Named for the mapping, not for the
 * offset, so that such frames do not split a flame graph; given no module,
 * so that no reader of the pprof takes the data for code of that file. */
static int not_code(struct symbolizer *sz, const struct proc_map *m, struct sym_frame *out)
{
	char buf[PATH_MAX + 32];
	size_t len = strlen(m->path);

	out->kind = FRAME_UNKNOWN;
	out->module = "";
	out->build_id = "";
	out->map_start = out->map_limit = out->map_offset = 0;
	if (len > 10 && strcmp(m->path + len - 10, " (deleted)") == 0)
		len -= 10;
	if (m->path[0] == '[' && len > 2 && m->path[len - 1] == ']')
		/* [heap], [stack], [anon:NAME] */
		snprintf(buf, sizeof(buf), "[not code: %.*s]", (int)(len - 2), m->path + 1);
	else if (m->path[0])
		snprintf(buf, sizeof(buf), "[not code: %.*s]", (int)(len - (size_t)(base_name(m->path) -
			 m->path)), base_name(m->path));
	else
		snprintf(buf, sizeof(buf), "[not code]");
	return set_name(sz, out, buf);
}

int symbolizer__user(struct symbolizer *sz, pid_t pid, uint64_t ip, struct sym_frame *out)
{
	return symbolizer__user_at(sz, pid, ip, 0, out);
}

int symbolizer__user_at(struct symbolizer *sz, pid_t pid, uint64_t ip, unsigned int flags,
			struct sym_frame *out)
{
	struct sym_proc *p = find_proc(sz, pid);
	const struct proc_map *m = NULL;
	struct sym_file *f = NULL;
	char buf[1024];
	const char *name;
	uint64_t off = 0, vaddr, delta;
	bool code;
	int err;

	set_where(out, ip, NULL);
	if (!p)
		return unknown(sz, out);
	if (p->maps)
		m = proc_maps__find(p->maps, ip);
	set_where(out, ip, m);
	code = !m || m->perms[2] == 'x' || !(flags & SYM_CALLER);
	if (m && strcmp(m->path, "[vdso]") == 0) {
		err = vdso_name(sz, p, m, ip, out);
		if (err <= 0)
			return err;
	}
	if (m && code && is_symbol_file(m)) {
		f = map_file(sz, p, (size_t)(m - p->maps->maps), true);
		if (!f)
			return -ENOMEM;
		off = ip - m->start + m->offset;
		out->module = f->path;
		out->build_id = f->build_id;
		if (f->elf && elfsym__offset_to_addr(f->elf, off, &vaddr) == 0) {
			const struct elf_sym_info *si = elfsym__lookup_addr(f->elf, vaddr, &delta);

			if (si) {
				char *dm = demangle__name(si->name);

				out->kind = FRAME_NATIVE;
				err = set_name(sz, out, dm ? dm : si->name);
				free(dm);
				if (f->dw) {
					/* the model keeps this: F keeps its lines */
					out->lines = (struct frame_lines_ref){ lines_cb, f->dw, vaddr };
					f->lines_given = true;
				}
				return err;
			}
		}
		if (f->pe && sz->pe && sz->pe->lookup(f->pe, off, buf, sizeof(buf)) == 0) {
			out->kind = FRAME_R2R;
			return set_name(sz, out, buf);
		}
	}
	/* anonymous memory, memfds, or an address no map held when the maps
	 * were read: JIT code, named by the perf map (a JIT's pages may have
	 * been writable when the maps were read) */
	name = perfmap_name(sz, p, ip);
	if (name) {
		out->kind = FRAME_JIT;
		out->module = "[jit]";
		out->build_id = "";
		return set_name(sz, out, name);
	}
	if (!code)
		return not_code(sz, m, out);
	if (!f)
		p->jit_misses++;	/* code a JIT wrote after its perf map */
	if (f) {
		/* the module is known: never a bare number */
		snprintf(buf, sizeof(buf), "%s+0x%llx", base_name(f->path), (unsigned long long)off);
		out->kind = FRAME_UNKNOWN;
		/* an ELF file's address can be named by whoever has its
		 * symbols; a PE image's is only ours to name */
		out->unresolved = !is_pe_path(f->path);
		return set_name(sz, out, buf);
	}
	if (m && m->path[0]) {
		/* [vdso], [anon:name], /memfd:...: offset in the mapping */
		snprintf(buf, sizeof(buf), "%s+0x%llx", m->path[0] == '/' ? base_name(m->path) :
			 m->path, (unsigned long long)(ip - m->start));
		out->kind = FRAME_UNKNOWN;
		out->module = symbolizer__intern(sz, m->path);
		out->build_id = "";
		if (!out->module)
			return -ENOMEM;
		return set_name(sz, out, buf);
	}
	return unknown(sz, out);
}

/* The kernel's half of a 64-bit address space: one pprof mapping for it. */
#define KERNEL_START 0x8000000000000000ull

int symbolizer__kernel(struct symbolizer *sz, uint64_t ip, struct sym_frame *out)
{
	const char *name, *mod = "";
	char buf[512];

	if (!sz->ks_tried) {
		sz->ks_tried = true;
		sz->ks = kallsyms__load(NULL);
		if (!sz->ks)
			sz->st.kallsyms_err = -errno;
		else if (kallsyms__hidden(sz->ks))
			sz->st.kallsyms_err = -EPERM;
	}
	out->kind = FRAME_KERNEL;
	out->module = "[kernel.kallsyms]";
	out->build_id = "";
	set_where(out, 0, NULL);
	name = kallsyms__lookup(sz->ks, ip, &mod, NULL);
	if (!name) {
		/* no address either: where the kernel hides its symbols from
		 * us, an output is no place to show its layout (KASLR) */
		sz->st.unknown++;
		return set_name(sz, out, "[unknown]");
	}
	out->addr = ip;
	out->map_start = KERNEL_START;
	out->map_limit = UINT64_MAX;
	if (mod[0]) {
		snprintf(buf, sizeof(buf), "%s [%s]", name, mod);
		return set_name(sz, out, buf);
	}
	return set_name(sz, out, name);
}

void symbolizer__stats(const struct symbolizer *sz, struct symbolizer_stats *st)
{
	struct symfiles_stats fst;

	symfiles__stats(sz->files, &fst);
	*st = sz->st;
	st->tracked = sz->nprocs;
	st->files = fst.opened;
	st->files_waiting = fst.waiting;
	st->files_denied = fst.denied;
	st->files_evicted = fst.evicted;
	st->files_over_memory = fst.over_memory;
	st->files_over_time = fst.over_time;
	st->tables_bytes = fst.held;
	st->tables_peak = fst.held_peak;
}
