// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer: per-process state (maps, perf map, start time), a cache of
 * files by identity, kernel symbols, and an intern table that gives every
 * name a stable pointer for the profile model. */
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
#include "core/escape.h"
#include "sym/cficache.h"
#include "sym/dwline.h"
#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "core/hash.h"
#include "sym/kallsyms.h"
#include "core/log.h"
#include "sym/perfmap.h"
#include "core/proc.h"
#include "sym/symbolize.h"
#include "core/util.h"

struct sym_file {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	const char *path;	/* as the process names it (interned) */
	const char *build_id;	/* interned */
	struct elf_syms *elf;
	struct dwline *dw;	/* its DWARF lines, NULL when none */
	bool elf_shared;	/* elf, dw belong to another entry (same build id) */
	void *pe;		/* PE resolver's handle */
	bool tried;
	/* waiting to be read until a frame first falls in it (fd >= 0):
	 * opened through the process PID (that started at START) as OPENED
	 * names it */
	int fd;
	pid_t pid;
	uint64_t start;
	char *opened;
};

struct sym_proc {
	pid_t pid;
	pid_t nstgid;
	uint64_t start_time;
	const char *comm;
	struct proc_maps *maps;
	struct sym_file **files;	/* per map, resolved lazily */
	struct perfmap *perfmap;
	char *perfmap_path;	/* the perf map read (malloc'd), NULL: none */
	struct stat perfmap_version;	/* of the file perfmap was read from */
	bool perfmap_tried;
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
	struct sym_file **files;
	size_t nfiles;
	struct kallsyms *ks;
	bool ks_tried;
	const struct pe_resolver *pe;
	uint64_t sweeps;
	struct symbolizer_stats st;
	struct elf_syms *vdso_self;	/* this process's vDSO: the kernel's */
	size_t vdso_len;
	bool vdso_tried;
	struct elf_syms **vdsos;	/* copies of targets' other vDSOs */
	size_t nvdsos;
	struct cficache *cache;		/* symbol tables of earlier captures */
	uint64_t gens;			/* the last sym_proc.gen given */
	size_t waiting;			/* files with fd open, waiting */
};

/* Files waiting for their first frame at most; more are read at once. */
#define SYM_WAIT_FDS_MAX 256

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

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *sz = calloc(1, sizeof(*sz));

	if (sz && !symbolizer__intern(sz, "")) {
		free(sz);
		return NULL;
	}
	return sz;
}

void symbolizer__set_pe_resolver(struct symbolizer *sz, const struct pe_resolver *r)
{
	sz->pe = r;
}

static void proc_drop_maps(struct sym_proc *p)
{
	proc_maps__free(p->maps);
	free(p->files);
	p->maps = NULL;
	p->files = NULL;
}

static void proc_free(struct sym_proc *p)
{
	if (!p)
		return;
	proc_drop_maps(p);
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
		proc_free(sz->procs[i]);
	free(sz->procs);
	for (i = 0; i < sz->nfiles; i++) {
		if (!sz->files[i]->elf_shared) {
			elfsym__free(sz->files[i]->elf);
			dwline__free(sz->files[i]->dw);
		}
		if (sz->files[i]->pe && sz->pe)
			sz->pe->close(sz->files[i]->pe);
		if (sz->files[i]->fd >= 0)
			close(sz->files[i]->fd);
		free(sz->files[i]->opened);
		free(sz->files[i]);
	}
	free(sz->files);
	for (i = 0; i < sz->strs_cap; i++)
		free(sz->strs[i]);
	free(sz->strs);
	kallsyms__free(sz->ks);
	elfsym__free(sz->vdso_self);
	for (i = 0; i < sz->nvdsos; i++)
		elfsym__free(sz->vdsos[i]);
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
		proc_free(p);
		sz->procs[i] = sz->procs[--sz->nprocs];
		sz->st.evicted++;
		freed++;
	}
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

static struct sym_file *map_file(struct symbolizer *sz, struct sym_proc *p, size_t idx,
				 bool now);
static bool is_symbol_file(const struct proc_map *m);

/* symbolizer__watch, for the process that started at WANT (0: any). */
static int watch(struct symbolizer *sz, pid_t pid, uint64_t want)
{
	struct proc_status status;
	struct sym_proc *p = find_proc(sz, pid);
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
		proc_drop_maps(p);
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
		p->used = sz->sweeps;
	}
	p->gone = 0;
	p->gen = ++sz->gens;	/* whatever follows changes */
	p->start_time = start;
	p->nstgid = status.nstgid ? status.nstgid : pid;
	p->comm = symbolizer__intern(sz, status.name);
	maps = proc_maps__load(pid);
	if (maps && (proc__start_time(pid, &again) || again != start)) {
		/* the process exited while we read: the maps may be another's */
		proc_maps__free(maps);
		maps = NULL;
	}
	if (maps) {
		proc_drop_maps(p);
		p->maps = maps;
		p->maps_read = sz->sweeps + 1;
		p->files = calloc(maps->n ? maps->n : 1, sizeof(*p->files));
		if (!p->files) {
			proc_drop_maps(p);
			return -ENOMEM;
		}
		/* open the executable files now: once the process exits,
		 * /proc/PID/root and map_files are gone. The executable and
		 * the C library are read now, the others when a frame first
		 * falls in them (most libraries of a server never run in a
		 * capture) */
		if (proc__exe(pid, exe, sizeof(exe)))
			exe[0] = '\0';
		for (size_t i = 0; i < maps->n; i++)
			if (maps->maps[i].perms[2] == 'x' && is_symbol_file(&maps->maps[i]) &&
			    !map_file(sz, p, i, proc__core_object(maps->maps[i].path, exe)))
				return -ENOMEM;
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

static const char *intern_cb(void *ctx, const char *s)
{
	return symbolizer__intern(ctx, s);
}

static int lines_cb(void *src, uint64_t vaddr, const struct frame_line **out)
{
	return dwline__lookup(src, vaddr, out);
}

void symbolizer__set_cache(struct symbolizer *sz, struct cficache *c)
{
	sz->cache = c;
}

/* a packed symbol table kept between captures, at most this big */
#define SYMS_BLOB_MAX (CFICACHE_MAX_BYTES / 4)

/* The key of the symbols of the file ST describes: its identity as the
 * table cache has it (a changed file has a new change time). */
static uint64_t syms_key(const struct stat *st)
{
	uint64_t k[8] = { 0x73796d73u /* "syms" */, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
			  (uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec,
			  (uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_ctim.tv_sec,
			  (uint64_t)st->st_ctim.tv_nsec };

	return hash__words(k, sizeof(k));
}

/* PATH (the app's to choose) as a message shows it */
static const char *shown(char *buf, size_t size, const char *path)
{
	escape__str(buf, size, path, strlen(path), 120, 0);
	return buf;
}

static int any_debug_file(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx)
{
	return 0;
}

/* Whether a debug file for ES (of the file at PATH, in the process's ROOT)
 * can be found now: one may be installed after its table was kept. */
static bool debug_file_now(const struct elf_syms *es, const char *path, const char *root)
{
	int dfd = elfsym__find_debug_file(path, root, elfsym__build_id(es), elfsym__debuglink(es),
					  any_debug_file, NULL);

	if (dfd < 0)
		return false;
	close(dfd);
	return true;
}

/* The symbols of FD (the file ST describes, PATH, ROOT its process's
 * root): kept ones, else read, and kept. A file with only its dynamic
 * symbols (stripped) is kept too, and read again once a debug file for
 * it is found. */
static struct elf_syms *load_syms(struct symbolizer *sz, int fd, const struct stat *st,
				  const char *path, const char *root)
{
	struct elf_syms *es;
	uint64_t key = 0;
	char safe[512];
	size_t len;
	void *buf;
	int err;

	if (sz->cache) {
		key = syms_key(st);
		if (!cficache__get_blob(sz->cache, key, SYMS_BLOB_MAX, &buf, &len)) {
			es = elfsym__unpack(buf, len);
			cficache__blob_free(buf, len);
			/* a stripped file's table (its dynamic symbols) holds
			 * while no debug file for it is to be found */
			if (es && (elfsym__complete(es) || !debug_file_now(es, path, root))) {
				p_debug("symbols of %s from the cache", shown(safe, sizeof(safe), path));
				return es;
			}
			if (es)
				p_debug("symbols of %s read again: a debug file was found",
					shown(safe, sizeof(safe), path));
			elfsym__free(es);
			cficache__drop_blob(sz->cache, key);
		}
	}
	es = elfsym__load_fd(fd, path, root);
	/* a debug file that gave no symbols: read again next time */
	if (!es || !sz->cache || (!elfsym__complete(es) && debug_file_now(es, path, root)))
		return es;
	err = elfsym__pack(es, &buf, &len);
	if (!err) {
		err = len > SYMS_BLOB_MAX ? -EFBIG : cficache__put_blob(sz->cache, key, buf, len);
		free(buf);
	}
	if (err)
		p_debug("symbols of %s not kept: %s", shown(safe, sizeof(safe), path), strerror(-err));
	return es;
}

/* Read the symbols of F from FD, opened as PATH through process PID (whose
 * root has its debug files; 0: none to look in); FD is closed. */
static void read_syms_of(struct symbolizer *sz, struct sym_file *f, int fd, const char *path,
		      pid_t pid)
{
	char root[64];
	struct stat sb;
	size_t i;

	snprintf(root, sizeof(root), "%s/%d/root", proc__root(), (int)pid);
	if (fstat(fd, &sb)) {
		p_debug("cannot read %s: %s", f->path, strerror(errno));
		close(fd);
		return;
	}
	f->elf = load_syms(sz, fd, &sb, path, root);
	if (!f->elf) {
		p_debug("no ELF symbols for %s (%s): %s", f->path, path, strerror(errno));
		close(fd);
		return;
	}
	f->build_id = symbolizer__intern(sz, elfsym__build_id(f->elf));
	if (!f->build_id) {
		f->build_id = "";
		close(fd);
		return;
	}
	/* the same file under another identity (the same library in two
	 * containers): keep one copy of its symbols and lines */
	for (i = 0; f->build_id[0] && i < sz->nfiles; i++) {
		struct sym_file *o = sz->files[i];

		if (o != f && o->elf && o->build_id == f->build_id) {
			elfsym__free(f->elf);
			f->elf = o->elf;
			f->dw = o->dw;
			f->elf_shared = true;
			break;
		}
	}
	/* its DWARF (or its debug file's), read when a line is asked for */
	if (!f->elf_shared) {
		f->dw = dwline__new(fd, path, root, f->build_id, elfsym__debuglink(f->elf),
				    intern_cb, sz);
		if (!f->dw && errno != ENOENT)
			p_debug("no source lines for %s: %s", f->path, strerror(errno));
	}
	close(fd);
}

/* F, read now if it waited */
static struct sym_file *file_now(struct symbolizer *sz, struct sym_file *f)
{
	int fd = f->fd;

	if (fd >= 0) {
		f->fd = -1;
		sz->waiting--;
		/* a process gone (or its PID another's) has no root to find
		 * debug files in: the file's own symbols */
		read_syms_of(sz, f, fd, f->opened, proc__alive(f->pid, f->start) ? f->pid : 0);
		free(f->opened);
		f->opened = NULL;
	}
	return f;
}

/* The file of map IDX of process P: the file cache by identity. Opened
 * now; its symbols read now when NOW, else when a frame first falls in it
 * (map_file with NOW). */
static struct sym_file *map_file(struct symbolizer *sz, struct sym_proc *p, size_t idx,
				 bool now)
{
	const struct proc_map *m = &p->maps->maps[idx];
	char path[PATH_MAX + 64], clean[PATH_MAX];
	struct sym_file *f = NULL, **n;
	size_t i;
	int fd;

	if (p->files[idx])
		return now ? file_now(sz, p->files[idx]) : p->files[idx];
	for (i = 0; i < sz->nfiles; i++) {
		f = sz->files[i];
		if (f->inode == m->inode && f->dev_major == m->dev_major &&
		    f->dev_minor == m->dev_minor) {
			p->files[idx] = f;
			return now ? file_now(sz, f) : f;
		}
	}
	n = realloc(sz->files, (sz->nfiles + 1) * sizeof(*n));
	if (!n)
		return NULL;
	sz->files = n;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	sz->files[sz->nfiles++] = f;
	sz->st.files++;
	f->fd = -1;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	f->inode = m->inode;
	/* the process's own view of the file, or the mapping itself */
	fd = appfile__open_mapping(p->pid, m, clean, sizeof(clean), path, sizeof(path), NULL);
	f->path = symbolizer__intern(sz, clean);
	f->build_id = "";
	p->files[idx] = f;

	f->tried = true;
	if (fd < 0) {
		if (fd == -EACCES || fd == -EPERM)
			sz->st.files_denied++;
		p_debug("cannot open %s (%s): %s", clean, path, appfile__strerror(fd));
		return f;
	}
	if (is_pe_path(clean)) {
		/* the resolver opens the very file checked here */
		if (sz->pe) {
			char self[64];

			snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
			f->pe = sz->pe->open(self);
		}
		close(fd);
		return f;
	}
	if (!now && sz->waiting < SYM_WAIT_FDS_MAX) {
		f->opened = strdup(path);
		if (f->opened) {
			f->fd = fd;
			f->pid = p->pid;
			f->start = p->start_time;
			sz->waiting++;
			return f;
		}
	}
	read_syms_of(sz, f, fd, path, p->pid);
	return f;
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
	size_t len = strnlen(name, NAME_MAX_LEN + 1);

	if (len > NAME_MAX_LEN) {
		char cut[NAME_MAX_LEN + 4];

		len = NAME_MAX_LEN;
		/* not inside a UTF-8 sequence */
		while (len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
			len--;
		memcpy(cut, name, len);
		memcpy(cut + len, "...", 4);
		out->name = symbolizer__intern(sz, cut);
	} else {
		out->name = symbolizer__intern(sz, name);
	}
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

/* A copy of P's own vDSO (mapping M), read from /proc/PID/mem and checked
 * as any ELF image; kept for the capture. NULL when unreadable. */
static const struct elf_syms *target_vdso(struct symbolizer *sz, struct sym_proc *p,
					  const struct proc_map *m)
{
	size_t len = m->end - m->start, i;
	struct elf_syms *es = NULL, **n;
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
	if (got > 0)
		es = elfsym__load_mem(buf, (size_t)got);
	free(buf);
	if (!es)
		return NULL;
	for (i = 0; i < sz->nvdsos; i++)
		if (elfsym__build_id(es)[0] &&
		    strcmp(elfsym__build_id(sz->vdsos[i]), elfsym__build_id(es)) == 0) {
			elfsym__free(es);
			return sz->vdsos[i];
		}
	n = realloc(sz->vdsos, (sz->nvdsos + 1) * sizeof(*n));
	if (!n) {
		elfsym__free(es);
		return NULL;
	}
	sz->vdsos = n;
	sz->vdsos[sz->nvdsos++] = es;
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
				if (f->dw)
					out->lines = (struct frame_lines_ref){ lines_cb, f->dw, vaddr };
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
	*st = sz->st;
	st->tracked = sz->nprocs;
	st->files_waiting = sz->waiting;
}
