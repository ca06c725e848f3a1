// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer's files: one entry per identity and view, their tables
 * within budgets of memory and time, freed once no process maps them
 * (symfile.h says why each rule is there). */
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
#include "core/hash.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/run.h"
#include "sym/budget.h"
#include "sym/cficache.h"
#include "sym/dwline.h"
#include "sym/elfsym.h"
#include "sym/symbolize.h"
#include "sym/symfile.h"

/* Files waiting for their first frame at most; more are read at once. */
#define SYMFILE_WAIT_MAX 256
/* a packed symbol table kept between captures, at most this big */
#define SYMS_BLOB_MAX (CFICACHE_MAX_BYTES / 4)

struct symfiles {
	struct sym_file *head;		/* every entry */
	struct sym_file **buckets;	/* by device and inode, chained by hnext */
	size_t nbuckets, n;
	symfiles_intern_fn intern;
	void *ictx;
	struct cficache *cache;
	const struct pe_resolver *pe;
	uint64_t sweeps;
	struct symfiles_stats st;
	bool warned_memory, warned_time;
};

struct symfiles *symfiles__new(symfiles_intern_fn intern, void *ctx)
{
	struct symfiles *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->intern = intern;
	fs->ictx = ctx;
	return fs;
}

void symfiles__set_cache(struct symfiles *fs, struct cficache *c)
{
	fs->cache = c;
}

void symfiles__set_pe_resolver(struct symfiles *fs, const struct pe_resolver *r)
{
	fs->pe = r;
}

static size_t bucket_of(const struct symfiles *fs, const struct stat *st)
{
	return hash__u64((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)st->st_ino) &
	       (fs->nbuckets - 1);
}

/* Whether F is the file ST describes, seen through VIEW. */
static bool same_file(const struct sym_file *f, const struct stat *st,
		      const struct symfile_view *view)
{
	return f->have_id && f->st.st_dev == st->st_dev && f->st.st_ino == st->st_ino &&
	       f->st.st_size == st->st_size && f->st.st_ctim.tv_sec == st->st_ctim.tv_sec &&
	       f->st.st_ctim.tv_nsec == st->st_ctim.tv_nsec && symfile_view__same(&f->view, view);
}

static struct sym_file *find(const struct symfiles *fs, const struct stat *st,
			     const struct symfile_view *view)
{
	struct sym_file *f;

	if (!fs->nbuckets)
		return NULL;
	for (f = fs->buckets[bucket_of(fs, st)]; f; f = f->hnext)
		if (same_file(f, st, view))
			return f;
	return NULL;
}

/* F into the list of entries, and into its bucket when it has an identity. */
static int add_entry(struct symfiles *fs, struct sym_file *f)
{
	struct sym_file *e;
	size_t b;

	if (fs->n + 1 > fs->nbuckets) {
		size_t ncap = fs->nbuckets ? fs->nbuckets * 2 : 256;
		struct sym_file **nb = calloc(ncap, sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		free(fs->buckets);
		fs->buckets = nb;
		fs->nbuckets = ncap;
		for (e = fs->head; e; e = e->next)
			if (e->have_id) {
				b = bucket_of(fs, &e->st);
				e->hnext = fs->buckets[b];
				fs->buckets[b] = e;
			}
	}
	if (f->have_id) {
		b = bucket_of(fs, &f->st);
		f->hnext = fs->buckets[b];
		fs->buckets[b] = f;
	}
	f->prev = NULL;
	f->next = fs->head;
	if (fs->head)
		fs->head->prev = f;
	fs->head = f;
	fs->n++;
	return 0;
}

static void unlink_entry(struct symfiles *fs, struct sym_file *f)
{
	struct sym_file **pp;

	if (f->have_id)
		for (pp = &fs->buckets[bucket_of(fs, &f->st)]; *pp; pp = &(*pp)->hnext)
			if (*pp == f) {
				*pp = f->hnext;
				break;
			}
	if (f->prev)
		f->prev->next = f->next;
	else
		fs->head = f->next;
	if (f->next)
		f->next->prev = f->prev;
	fs->n--;
}

/* PATH (the app's to choose) as a message shows it */
static const char *shown(char *buf, size_t size, const char *path)
{
	escape__str(buf, size, path, strlen(path), 120, 0);
	return buf;
}

/* The symbol tables and the DWARF dwline loads (for pprof, at the end)
 * share SYMFILE_TABLES_MAX: the DWARF gets what the tables leave, and at
 * least SYMFILE_DWARF_MIN. */
static void share_budget(const struct symfiles *fs)
{
	uint64_t held = fs->st.held;

	dwline__set_budget(held + SYMFILE_DWARF_MIN > SYMFILE_TABLES_MAX ? SYMFILE_DWARF_MIN :
			   SYMFILE_TABLES_MAX - held);
}

static void drop_table(struct symfiles *fs, struct sym_file *f)
{
	if (!f->elf)
		return;
	elfsym__free(f->elf);
	f->elf = NULL;
	fs->st.held -= f->bytes;
	f->bytes = 0;
	share_budget(fs);
}

static void stop_waiting(struct symfiles *fs, struct sym_file *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	f->fd = -1;
	fs->st.waiting--;
	free(f->rel);
	f->rel = NULL;
}

static void free_entry(struct symfiles *fs, struct sym_file *f)
{
	drop_table(fs, f);
	stop_waiting(fs, f);
	dwline__free(f->dw);
	if (f->pe && fs->pe)
		fs->pe->close(f->pe);
	free(f);
}

void symfiles__free(struct symfiles *fs)
{
	struct sym_file *f, *next;

	if (!fs)
		return;
	for (f = fs->head; f; f = next) {
		next = f->next;
		free_entry(fs, f);
	}
	free(fs->buckets);
	free(fs);
}

/* No process holds F any more: its table goes, and so does the entry
 * unless a frame handed out points at its lines. */
static void evict(struct symfiles *fs, struct sym_file *f)
{
	char safe[512];

	if (f->elf) {
		fs->st.evicted++;
		p_debug("symbols of %s freed (%zu KiB): no process maps it",
			shown(safe, sizeof(safe), f->path), f->bytes >> 10);
	}
	drop_table(fs, f);
	stop_waiting(fs, f);
	if (f->pe && fs->pe)
		fs->pe->close(f->pe);
	f->pe = NULL;
	if (f->dw && f->lines_given) {
		f->evicted = true;
		return;
	}
	unlink_entry(fs, f);
	free_entry(fs, f);
}

size_t symfiles__sweep(struct symfiles *fs, uint64_t sweeps)
{
	struct sym_file *f, *next;
	size_t freed = 0;

	fs->sweeps = sweeps;
	for (f = fs->head; f; f = next) {
		next = f->next;
		if (f->refs || f->evicted || sweeps - f->used < SYMFILE_GRACE)
			continue;
		evict(fs, f);
		freed++;
	}
	return freed;
}

/* Free the tables of files no process holds, least recently used first,
 * until NEED more bytes fit in SYMFILE_HELD_MAX (or none is left). */
static void make_room(struct symfiles *fs, uint64_t need)
{
	while (fs->st.held + need > SYMFILE_HELD_MAX) {
		struct sym_file *f, *lru = NULL;

		for (f = fs->head; f; f = f->next)
			if (!f->refs && f->elf && (!lru || f->used < lru->used))
				lru = f;
		if (!lru)
			return;
		evict(fs, lru);
	}
}

/* What the next table, read for OWNER, may hold, and the budget that says
 * so in *WHY. */
static uint64_t room(struct symfiles *fs, const struct symfile_owner *owner, const char **why)
{
	uint64_t r = SYMFILE_FILE_MAX, held;
	uint64_t proc_room = owner->room ? owner->room(owner->ctx) : SYMFILE_PROC_MAX;

	*why = "its symbol table would be over 64 MiB";
	make_room(fs, r);
	held = fs->st.held < SYMFILE_HELD_MAX ? fs->st.held : SYMFILE_HELD_MAX;
	if (SYMFILE_HELD_MAX - held < r) {
		r = SYMFILE_HELD_MAX - held;
		*why = "the symbol tables held would pass 128 MiB";
	}
	if (proc_room < r) {
		r = proc_room;
		*why = "the symbol tables of its process's files would pass 96 MiB";
	}
	return r;
}

/* F is left out of the capture (not read) because of WHY; said once for
 * each kind of budget without -v, every time with it. */
static void left_out(struct symfiles *fs, struct sym_file *f, bool time, const char *why)
{
	char safe[512];
	bool *warned = time ? &fs->warned_time : &fs->warned_memory;

	f->left_out = true;
	if (time)
		fs->st.over_time++;
	else
		fs->st.over_memory++;
	if (!*warned) {
		*warned = true;
		p_warn("symbols of %s left out: %s (-v names every file left out)",
		       shown(safe, sizeof(safe), f->path), why);
	} else {
		p_debug("symbols of %s left out: %s", shown(safe, sizeof(safe), f->path), why);
	}
}

/* The key of the symbols of F in the table cache: its identity and its
 * view (a stripped file's table may come from a debug file of its root). */
static uint64_t syms_key(const struct sym_file *f)
{
	const struct stat *st = &f->st;
	uint64_t k[11] = { 0x73796d73u /* "syms" */, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
			   (uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec,
			   (uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_ctim.tv_sec,
			   (uint64_t)st->st_ctim.tv_nsec, f->view.mntns, f->view.root_dev,
			   f->view.root_ino };

	return hash__words(k, sizeof(k));
}

static int any_debug_file(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx)
{
	return 0;
}

/* Whether a debug file for ES (of the file REL inside ROOTFD) can be found
 * now: one may be installed after its table was kept. */
static bool debug_file_now(const struct elf_syms *es, int rootfd, const char *rel,
			   const struct budget *time)
{
	int dfd = elfsym__find_debug_in(rootfd, rel, es, any_debug_file, NULL, time);

	if (dfd < 0)
		return false;
	close(dfd);
	return true;
}

/* The symbols of F from FD (REL inside ROOTFD, -1: no root), within LIM:
 * kept ones, else read, and kept. A file with only its dynamic symbols
 * (stripped) is kept too, and read again once a debug file for it is
 * found. NULL with errno as elfsym__load_in. */
static struct elf_syms *load_syms(struct symfiles *fs, struct sym_file *f, int fd, int rootfd,
				  const char *rel, const struct elfsym_limits *lim)
{
	struct elf_syms *es;
	uint64_t key = 0;
	char safe[512];
	size_t len;
	void *buf;
	int err;

	if (fs->cache) {
		key = syms_key(f);
		if (!cficache__get_blob(fs->cache, key, SYMS_BLOB_MAX, &buf, &len)) {
			if (len > lim->max_bytes) {
				cficache__blob_free(buf, len);
				errno = EFBIG;
				return NULL;
			}
			es = elfsym__unpack(buf, len);
			cficache__blob_free(buf, len);
			/* a stripped file's table (its dynamic symbols) holds
			 * while no debug file for it is to be found */
			if (es && (elfsym__complete(es) ||
				   !debug_file_now(es, rootfd, rel, lim->time))) {
				p_debug("symbols of %s from the cache",
					shown(safe, sizeof(safe), f->path));
				return es;
			}
			if (es)
				p_debug("symbols of %s read again: a debug file was found",
					shown(safe, sizeof(safe), f->path));
			elfsym__free(es);
			cficache__drop_blob(fs->cache, key);
		}
	}
	es = elfsym__load_in(fd, rootfd, rel, lim);
	/* a debug file that gave no symbols, or was over a budget: read
	 * again next time */
	if (!es || !fs->cache || elfsym__debug_left_out(es) ||
	    (!elfsym__complete(es) && debug_file_now(es, rootfd, rel, lim->time)))
		return es;
	err = elfsym__pack(es, &buf, &len);
	if (!err) {
		err = len > SYMS_BLOB_MAX ? -EFBIG : cficache__put_blob(fs->cache, key, buf, len);
		free(buf);
	}
	if (err)
		p_debug("symbols of %s not kept: %s", shown(safe, sizeof(safe), f->path),
			strerror(-err));
	return es;
}

/* The root of O (O_PATH), while O is alive and its root the one of VIEW
 * (when known): -1 otherwise. Opened first and checked after, so the
 * descriptor is that process's root even if it exits at once. */
static int open_root(const struct symfile_owner *o, const struct symfile_view *view)
{
	char path[64];
	struct stat sb;
	int fd;

	if (!o || o->pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%d/root", proc__root(), (int)o->pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!proc__alive(o->pid, o->start) || fstat(fd, &sb) ||
	    (view->root_ino && (sb.st_dev != view->root_dev || sb.st_ino != view->root_ino))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Make room for a dwline: release the lines of the entry no process
 * holds that was used longest ago. Whether one was. */
static bool release_lines(struct symfiles *fs)
{
	struct sym_file *f, *lru = NULL;

	for (f = fs->head; f; f = f->next)
		if (f->evicted && f->dw && !f->dw_released &&
		    (!lru || f->used < lru->used))
			lru = f;
	if (!lru)
		return false;
	dwline__release(lru->dw);
	lru->dw_released = true;
	return true;
}

/* Read F's symbols and lines from FD (closed here) for OWNER, whose root
 * names F REL; ALT (or NULL) the process F was opened for, naming it
 * ALT_REL, its root the next best. */
static void read_now(struct symfiles *fs, struct sym_file *f, int fd,
		     const struct symfile_owner *owner, const char *rel,
		     const struct symfile_owner *alt, const char *alt_rel)
{
	struct elfsym_limits lim;
	struct budget time;
	const char *why;
	char safe[512];
	int rootfd, err;

	f->used = fs->sweeps;
	budget__start(&time, SYMFILE_READ_NS);
	lim.max_bytes = room(fs, owner, &why);
	lim.time = &time;
	if (!lim.max_bytes) {
		left_out(fs, f, false, why);
		close(fd);
		return;
	}
	/* a process gone (or its PID another's) has no root to find debug
	 * files in: the file's own symbols */
	rootfd = open_root(owner, &f->view);
	if (rootfd < 0 && alt && (rootfd = open_root(alt, &f->view)) >= 0)
		rel = alt_rel;
	f->elf = load_syms(fs, f, fd, rootfd, rel, &lim);
	if (!f->elf) {
		err = errno;
		if (err == EFBIG)
			left_out(fs, f, false, why);
		else if (err == ETIME)
			left_out(fs, f, true, run__stop ? "the time left after the stop signal "
				 "was over" : "reading it took over 2 s");
		else
			p_debug("no ELF symbols for %s: %s", shown(safe, sizeof(safe), f->path),
				strerror(err));
		goto cleanup;
	}
	err = elfsym__debug_left_out(f->elf);
	if (err)
		left_out(fs, f, err == -ETIME, err == -ETIME ? (run__stop ? "its debug file: the "
			 "time left after the stop signal was over" : "its debug file: reading "
			 "it took over 2 s") : "its debug file's table would be over the memory "
			 "budget");
	f->bytes = elfsym__bytes(f->elf);
	fs->st.held += f->bytes;
	if (fs->st.held > fs->st.held_peak)
		fs->st.held_peak = fs->st.held;
	share_budget(fs);
	f->build_id = fs->intern(fs->ictx, elfsym__build_id(f->elf));
	if (!f->build_id)
		f->build_id = "";
	/* its DWARF (or its debug file's), read when a line is asked for */
	if (!f->dw) {
		f->dw = dwline__new(fd, rootfd, rel, f->elf, &time, fs->intern, fs->ictx);
		if (!f->dw && errno == EMFILE && release_lines(fs))
			f->dw = dwline__new(fd, rootfd, rel, f->elf, &time, fs->intern, fs->ictx);
		if (!f->dw && errno != ENOENT)
			p_debug("no source lines for %s: %s", shown(safe, sizeof(safe), f->path),
				strerror(errno));
	}
cleanup:
	if (rootfd >= 0)
		close(rootfd);
	close(fd);
}

static bool is_pe_path(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && (strcasecmp(path + n - 4, ".dll") == 0 ||
			 strcasecmp(path + n - 4, ".exe") == 0);
}

/* F's symbols read now (NOW asked, or SYMFILE_WAIT_MAX files already
 * wait), or F left waiting with FD, its descriptor, and REL until a frame
 * first falls in it (symfiles__read). FD passes to F either way. */
static struct sym_file *read_or_wait(struct symfiles *fs, struct sym_file *f, int fd,
				     const struct symfile_owner *owner, const char *rel, bool now)
{
	if (!now && fs->st.waiting < SYMFILE_WAIT_MAX && (f->rel = strdup(rel))) {
		f->fd = fd;
		f->owner = *owner;
		f->owner.room = NULL;	/* its process may be freed first */
		f->owner.ctx = NULL;
		fs->st.waiting++;
		return f;
	}
	read_now(fs, f, fd, owner, rel, NULL, NULL);
	return f;
}

/* F found again (mapped once more): waiting or read again if its table
 * was freed, FD (closed here, or kept) its new descriptor. */
static struct sym_file *reuse(struct symfiles *fs, struct sym_file *f, int fd,
			      const struct symfile_owner *owner, const char *rel, bool now)
{
	f->refs++;
	f->used = fs->sweeps;
	if (!f->evicted || is_pe_path(f->path)) {
		close(fd);
		return f;
	}
	f->evicted = false;
	return read_or_wait(fs, f, fd, owner, rel, now);
}

struct sym_file *symfiles__open(struct symfiles *fs, const struct symfile_owner *owner,
				const struct proc_map *m, bool now)
{
	char path[PATH_MAX + 64], clean[PATH_MAX];
	struct sym_file *f;
	struct stat sb;
	int fd;

	/* the process's own view of the file, or the mapping itself; still
	 * that process once opened, so not a file of whoever has its PID now */
	fd = appfile__open_mapping(owner->pid, m, clean, sizeof(clean), path, sizeof(path), &sb);
	if (fd >= 0 && owner->recheck && !proc__alive(owner->pid, owner->start)) {
		close(fd);
		fd = -ESRCH;
	}
	if (fd >= 0 && (f = find(fs, &sb, &owner->view)))
		return reuse(fs, f, fd, owner, clean, now);
	f = calloc(1, sizeof(*f));
	if (f) {
		f->fd = -1;
		f->refs = 1;
		f->used = fs->sweeps;
		f->view = owner->view;
		f->path = fs->intern(fs->ictx, clean);
		f->build_id = "";
		/* no identity (not opened): an entry of this mapping alone */
		f->have_id = fd >= 0;
		if (fd >= 0)
			f->st = sb;
	}
	if (!f || !f->path || add_entry(fs, f)) {
		free(f);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (fd < 0) {
		char safe[512];

		if (fd == -EACCES || fd == -EPERM)
			fs->st.denied++;
		p_debug("cannot open %s (%s): %s", shown(safe, sizeof(safe), f->path), path,
			appfile__strerror(fd));
		return f;
	}
	fs->st.opened++;
	if (is_pe_path(clean)) {
		/* the resolver opens the very file checked here */
		if (fs->pe) {
			char self[64];

			snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
			f->pe = fs->pe->open(self);
		}
		close(fd);
		return f;
	}
	return read_or_wait(fs, f, fd, owner, clean, now);
}

void symfiles__get(struct sym_file *f)
{
	f->refs++;
}

void symfiles__put(struct symfiles *fs, struct sym_file *f)
{
	if (f && f->refs)
		f->refs--;
}

struct sym_file *symfiles__read(struct symfiles *fs, struct sym_file *f,
				const struct symfile_owner *owner, const char *rel)
{
	struct symfile_owner opener;
	char *opened;
	int fd = f->fd;

	f->used = fs->sweeps;
	if (fd < 0)
		return f;
	/* taken over from the waiting state: read_now closes FD */
	opener = f->owner;
	opened = f->rel;
	f->fd = -1;
	f->rel = NULL;
	fs->st.waiting--;
	read_now(fs, f, fd, owner, rel ? rel : opened, &opener, opened);
	free(opened);
	return f;
}

void symfiles__stats(const struct symfiles *fs, struct symfiles_stats *st)
{
	*st = fs->st;
}
