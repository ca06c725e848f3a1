// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --unwind tables, user space; see unwind.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "prof/unwind.h"
#include "profile.h"
#include "sym/cficache.h"
#include "sym/cfitab.h"
#include "sym/elfsym.h"
#include "sym/xsegs.h"

/* One object file, by identity: where its rows are, how its file offsets
 * become its addresses. */

/* Why a table was left out over a budget (struct uw_file's over) */
enum uw_over {
	OVER_NONE,
	OVER_SHARE,	/* its process's share of the rows: another process,
			 * with room for it, may still load it */
	OVER_TIME,	/* its process's time for building tables */
	OVER_END,	/* the capture ended (its end, or a signal) */
};

struct uw_file {
	uint32_t dev_major, dev_minor;	/* as the maps name it */
	uint64_t inode;
	/* the file opened: its identity, so that a file that took another's
	 * device and inode (deleted, its inode reused) gets its own table */
	dev_t st_dev;
	ino_t st_ino;
	off_t st_size;
	struct timespec st_ctim;
	int ok;			/* 1: rows loaded; 0: none usable (why), or
				 * still to come (wait) */
	int wait;		/* its table loaded when a walk first needs
				 * it: FD kept open until then */
	int over;		/* enum uw_over: left out over a budget */
	uint64_t need;		/* OVER_SHARE: the rows it needs, at least */
	int fd;
	int pe;			/* a PE image (a .NET assembly), not ELF */
	int vdso;		/* the kernel's vDSO, from this process's copy */
	const char *why;
	char *path;
	uint32_t shard, first, count;	/* its rows: in unwind_rows[shard] */
	uint32_t idx_first, nblocks, block0;	/* their index (struct unwind_map) */
	uint64_t base;		/* the table's */
	struct xsegs segs;	/* executable PT_LOADs */
};

#define UW_KEPT_FDS_MAX 256	/* /proc/PID/maps kept open at most */
#define UW_WAIT_FDS_MAX 256	/* objects waiting for a walk at most; more
				 * are loaded at once */

/* A process's mappings with tables, as unwind_procs/unwind_maps hold them */
struct uw_maps {
	uint32_t n;
	struct unwind_map m[UNWIND_MAX_MAPS];
};

struct uw_proc {
	pid_t pid;
	uint32_t slot;
	struct uw_maps last;	/* as written: unchanged, not written again
				 * (a walker may be reading it) */
	uint32_t file[UNWIND_MAX_MAPS];	/* LAST's mappings' files (u->files) */
	uint64_t maps_hash;	/* of the /proc/PID/maps text LAST came from */
	int maps_fd;		/* its /proc/PID/maps, kept open, or -1 */
	uint64_t held;		/* rows charged to it: the tables it first
				 * needed, with their index */
	uint64_t build_ns;	/* time spent building (reading) them */
	uint64_t maps_next_ns;	/* now_ns() before which its maps are not
				 * read again (UW_MAPS_COST_FACTOR) */
};


/* One row map of unwind_rows */
struct uw_shard {
	int fd;
	struct unwind_row *rows;	/* its mmap */
	size_t len;
	uint32_t cap, used;
};

struct unwinder {
	int outer_fd, procs_fd, maps_fd, pids_fd;
	struct uw_shard shards[UNWIND_MAX_SHARDS];
	uint32_t nshards;
	uint32_t max_rows, alloc_rows, max_procs;
	struct uw_file *files;
	size_t nfiles, cap_files;
	struct uw_proc *procs;
	size_t nprocs;
	size_t kept_fds;	/* procs' maps_fd open */
	size_t wait_fds;	/* files' fd open (wait) */
	struct cficache *cache;	/* tables of earlier captures, or NULL */
	uint64_t used_rows;	/* row slots holding tables (and indexes) */
	uint64_t deadline_ns;	/* no build past it (0: none) */
	long vdso_file;		/* index in files of the vDSO's; -1: not yet
				 * built, -2: none */
	size_t vdso_len;	/* its length, as our own maps say */
	struct unwinder_stats st;
};

struct unwinder *unwinder__new(int rows_fd, uint32_t max_rows, int procs_fd, uint32_t max_procs,
			       int maps_fd, int pids_fd)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->outer_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->maps_fd = maps_fd;
	u->pids_fd = pids_fd;
	u->max_rows = max_rows;
	u->max_procs = max_procs;
	u->procs = calloc(max_procs ? max_procs : 1, sizeof(*u->procs));
	if (!u->procs) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->st.max_rows = max_rows;
	u->vdso_file = -1;
	return u;
}

void unwinder__set_cache(struct unwinder *u, struct cficache *cache)
{
	u->cache = cache;
}

void unwinder__set_deadline(struct unwinder *u, uint64_t deadline_ns)
{
	u->deadline_ns = deadline_ns;
}

void unwinder__free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nfiles; i++) {
		free(u->files[i].path);
		if (u->files[i].wait)
			close(u->files[i].fd);
	}
	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid && u->procs[i].maps_fd >= 0)
			close(u->procs[i].maps_fd);
	for (i = 0; i < u->nshards; i++) {
		munmap(u->shards[i].rows, u->shards[i].len);
		close(u->shards[i].fd);
	}
	free(u->files);
	free(u->procs);
	free(u);
}

/* A new row map of at least N rows (UNWIND_SHARD_ROWS, else N rounded up
 * to a page), within the budget, put in unwind_rows: its index, or -1
 * (no room, or the kernel refused; errno). */
/* The rows a new row map for N rows would hold, or 0 (none can be made) */
static uint32_t new_shard_cap(const struct unwinder *u, uint32_t n)
{
	uint32_t per_page = (uint32_t)(sysconf(_SC_PAGESIZE) / sizeof(struct unwind_row));
	uint32_t cap = n > UNWIND_SHARD_ROWS ? n : UNWIND_SHARD_ROWS;

	cap = (cap + per_page - 1) / per_page * per_page;
	if (cap > u->max_rows - u->alloc_rows)
		cap = u->max_rows - u->alloc_rows;	/* the last of the budget */
	return u->nshards == UNWIND_MAX_SHARDS || cap < n ? 0 : cap;
}

static int new_shard(struct unwinder *u, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	uint32_t cap = new_shard_cap(u, n), idx = u->nshards;
	struct uw_shard *sh;

	if (!cap) {
		errno = ENOSPC;
		return -1;
	}
	sh = &u->shards[idx];
	sh->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_shard", sizeof(__u32),
				sizeof(struct unwind_row), cap, &opts);
	if (sh->fd < 0)
		return -1;
	sh->len = (size_t)cap * sizeof(struct unwind_row);
	sh->rows = mmap(NULL, sh->len, PROT_READ | PROT_WRITE, MAP_SHARED, sh->fd, 0);
	if (sh->rows == MAP_FAILED ||
	    bpf_map_update_elem(u->outer_fd, &idx, &sh->fd, BPF_ANY)) {
		int err = errno;

		if (sh->rows != MAP_FAILED)
			munmap(sh->rows, sh->len);
		close(sh->fd);
		errno = err;
		return -1;
	}
	sh->cap = cap;
	sh->used = 0;
	u->nshards++;
	u->alloc_rows += cap;
	u->st.shards = u->nshards;
	u->st.alloc_rows = u->alloc_rows;
	return (int)idx;
}

/* The first row map with room for N rows, or -1 */
static int shard_room(const struct unwinder *u, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < u->nshards; i++)
		if (u->shards[i].cap - u->shards[i].used >= n)
			return (int)i;
	return -1;
}

/* The executable PT_LOAD segments of the ELF file at FD. */
static int read_segments(int fd, struct uw_file *f)
{
	uint64_t fsize;
	Elf *elf = elfsym__begin(fd, &fsize);
	char mz[2];
	int err;

	if (!elf) {
		/* .NET maps its assemblies' ReadyToRun code straight from
		 * the PE file; like JIT code it keeps frame pointers */
		f->pe = pread(fd, mz, sizeof(mz), 0) == (ssize_t)sizeof(mz) && !memcmp(mz, "MZ", 2);
		return -ENOEXEC;
	}
	err = xsegs__read(elf, &f->segs);
	elf_end(elf);
	return err;
}

/* A process's share of the rows (CORE: for its executable or C library):
 * 1/UNWIND_SHARE_DIV of them, or 1/N for N processes at most (the targets
 * given: one has them all) */
static uint64_t share_of(const struct unwinder *u, bool core)
{
	uint32_t div = u->max_procs < UNWIND_SHARE_DIV ? u->max_procs : UNWIND_SHARE_DIV;

	return (uint64_t)u->max_rows / (div ? div : 1) * (core ? 2 : 1);
}

/* The rows kept for the shares of the others: capacity not yet in any row
 * map (what is free in a map made already may be a sliver no table fits);
 * none when there are no others */
static uint64_t reserve_of(const struct unwinder *u)
{
	return u->max_procs > 1 ? (uint64_t)u->max_rows / UNWIND_RESERVE_DIV : 0;
}

/* How many row slots process P may take now for one more table (CORE:
 * its executable or C library), by the shares (unwind.h): up to its share
 * (twice that for CORE), and beyond it while the reserve stays unmade.
 * P NULL: whatever is free. An estimate for a build's limit; load_rows
 * decides. */
static uint64_t room_for(const struct unwinder *u, const struct uw_proc *p, bool core)
{
	uint64_t free = u->max_rows > u->used_rows ? u->max_rows - u->used_rows : 0;
	uint64_t spare = u->max_rows - u->alloc_rows, room = 0;

	if (!p)
		return free;
	if (p->held < share_of(u, core))
		room = share_of(u, core) - p->held;
	if (spare > reserve_of(u) && spare - reserve_of(u) > room)
		room = spare - reserve_of(u);
	return room < free ? room : free;
}

/* F left out over a budget (OVER), for process P: said with -v, counted */
static void left_out(struct unwinder *u, struct uw_file *f, const struct uw_proc *p, int over,
		     uint64_t rows)
{
	char safe[512];

	escape__str(safe, sizeof(safe), f->path, strlen(f->path), 120, 0);
	f->over = over;
	switch (over) {
	case OVER_SHARE:
		f->why = "over its process's share of the table rows";
		f->need = rows;
		u->st.files_share++;
		p_debug("unwind table of %s left out: %llu rows or more; process %d holds %llu of "
			"its share of %llu (%llu for its executable and C library), and %llu of the "
			"%u rows are not yet in a row map, of which %llu are kept for other processes",
			safe, (unsigned long long)rows, p ? (int)p->pid : 0,
			(unsigned long long)(p ? p->held : 0),
			(unsigned long long)share_of(u, false), (unsigned long long)share_of(u, true),
			(unsigned long long)(u->max_rows - u->alloc_rows), u->max_rows,
			(unsigned long long)reserve_of(u));
		break;
	case OVER_TIME:
		f->why = "its process's time for building tables spent";
		u->st.files_slow++;
		p_debug("unwind table of %s left out: process %d has spent %llu ms of its %u ms "
			"for building tables", safe, p ? (int)p->pid : 0,
			(unsigned long long)(p ? p->build_ns / 1000000 : 0), UNWIND_BUILD_MS);
		break;
	default:
		f->why = "the capture ended before its table was built";
		u->st.files_cut++;
		p_debug("unwind table of %s left out: the capture ended before it was built", safe);
		break;
	}
}

_Static_assert(CFITAB_BLOCK_SHIFT == UNWIND_BLOCK_SHIFT, "one block size for both searches");

int unwind__pack_row(struct unwind_row *r, const struct cfi_row *c)
{
	int32_t off = c->cfa_off;
	uint8_t cfa = c->cfa, fp = c->fp;
	int16_t fp_off = c->fp_off;
	int unfit = 0;

	if (cfa == CFI_CFA_NONE || cfa == CFI_CFA_END || cfa == CFI_CFA_UNSUPPORTED) {
		off = 0;	/* not used */
	} else if (off < 0 || off % 8 || off / 8 > UINT16_MAX) {
		cfa = CFI_CFA_UNSUPPORTED;
		off = 0;
		unfit = 1;
	}
	if (fp_off < INT8_MIN || fp_off > INT8_MAX) {
		/* a PLT stub's push is within its 16 bytes */
		if (cfa == CFI_CFA_PLT) {
			cfa = CFI_CFA_UNSUPPORTED;
			unfit = 1;
		} else if (fp == CFI_FP_AT) {
			fp = CFI_FP_UNKNOWN;
			unfit = 1;
		}
		fp_off = 0;
	}
	r->pc = c->pc;
	r->cfa_off8 = (uint16_t)(off / 8);
	r->fp_off = (int8_t)fp_off;
	r->rules = (uint8_t)(cfa | fp << 4);
	return unfit;
}

/* T's rows (after their index) into a row map, for F (which then is ok),
 * charged to process P (CORE: its executable or C library) within its
 * share (room_for); T is freed. 0, 1 (over the share), or -1 (no room left
 * in the row maps, or the kernel refused one). */
static int load_rows(struct unwinder *u, struct uw_file *f, struct cfi_table *t,
		     struct uw_proc *p, bool core)
{
	uint32_t block0 = 0, nblocks = t->n <= UINT32_MAX / 2 ? cfitab__index_blocks(t, &block0) : 0;
	uint32_t slots = nblocks ? (nblocks + 1 + UNWIND_INDEX_PER_ROW - 1) / UNWIND_INDEX_PER_ROW : 0;
	size_t i, unfit = 0;
	char safe[512];
	int sh;

	/* in the first row map with room; beyond P's share, a new one only
	 * when it leaves the reserve unmade */
	sh = t->n <= UINT32_MAX / 2 ? shard_room(u, (uint32_t)t->n + slots) : -1;
	if (sh < 0 && p && p->held + t->n + slots > share_of(u, core) && t->n <= UINT32_MAX / 2) {
		uint32_t grow = new_shard_cap(u, (uint32_t)t->n + slots);

		if (grow && u->max_rows - u->alloc_rows - grow < reserve_of(u)) {
			left_out(u, f, p, OVER_SHARE, grow);
			cfitab__free(t);
			return 1;
		}
	}
	if (sh < 0)
		sh = t->n <= UINT32_MAX / 2 ? new_shard(u, (uint32_t)t->n + slots) : -1;
	if (sh < 0) {
		f->why = errno == ENOSPC ? "no room left in the table maps" :
			 "the kernel refused a table map";
		if (errno != ENOSPC)
			p_debug("unwind row map of %u rows: %s", (unsigned)t->n, strerror(errno));
		u->st.files_full++;
		cfitab__free(t);
		return -1;
	}
	f->shard = (uint32_t)sh;
	f->idx_first = u->shards[sh].used;
	f->nblocks = nblocks;
	f->block0 = nblocks ? block0 : 0;
	if (nblocks) {
		/* UNWIND_INDEX_PER_ROW entries a row slot, the last slot's
		 * tail zeroed */
		memset(&u->shards[sh].rows[f->idx_first], 0, slots * sizeof(struct unwind_row));
		cfitab__index(t, nblocks, block0, (uint32_t *)&u->shards[sh].rows[f->idx_first]);
	}
	f->first = f->idx_first + slots;
	f->count = (uint32_t)t->n;
	f->base = t->base;
	for (i = 0; i < t->n; i++)
		unfit += unwind__pack_row(&u->shards[sh].rows[f->first + i], &t->rows[i]);
	u->shards[sh].used += (uint32_t)t->n + slots;
	u->used_rows += (uint64_t)t->n + slots;
	if (p)
		p->held += (uint64_t)t->n + slots;
	u->st.rows += t->n;
	u->st.files += !f->vdso;	/* the vDSO is the kernel's, not an object of the app */
	f->ok = 1;
	/* the path is the app's (its maps) */
	escape__str(safe, sizeof(safe), f->path, strlen(f->path), 120, 0);
	p_debug("unwind table of %s: %zu rows (%zu unsupported, %zu more with offsets a packed "
		"row cannot hold)", safe, t->n, t->st.unsupported, unfit);
	cfitab__free(t);
	return 0;
}

/* A new entry of u->files for PATH (copied), or NULL (no memory). */
static struct uw_file *new_file(struct unwinder *u, const char *path)
{
	struct uw_file *f;

	if (array__room(&u->files, &u->cap_files, u->nfiles, sizeof(*u->files), 64))
		return NULL;
	f = &u->files[u->nfiles];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	u->nfiles++;
	return f;
}

/* The vDSO's table, from the image the kernel mapped into this process:
 * the same as in every process of its ABI and length (a target's vDSO of
 * another length is left to frame pointers). Built once; NULL when there
 * is none. */
static struct uw_file *vdso_of(struct unwinder *u, const struct proc_map *m)
{
	uintptr_t base;
	size_t len;
	struct cfi_table t;
	struct uw_file *f;
	char *copy = NULL;
	Elf *elf = NULL;
	int err = -ENOEXEC;

	if (u->vdso_file >= 0) {
		f = &u->files[u->vdso_file];
		return f->ok && m->end - m->start == u->vdso_len ? f : NULL;
	}
	if (u->vdso_file == -2)
		return NULL;
	u->vdso_file = -2;
	if (proc__self_vdso(&base, &len) == 0 && len <= (1u << 20))
		u->vdso_len = len;
	if (!u->vdso_len || !(f = new_file(u, "[vdso]")))
		return NULL;
	f->vdso = 1;
	u->vdso_file = (long)(f - u->files);
	/* libelf wants writable memory: a copy */
	copy = malloc(u->vdso_len);
	if (copy && elf_version(EV_CURRENT) != EV_NONE) {
		memcpy(copy, (const void *)base, u->vdso_len);
		elf = elf_memory(copy, u->vdso_len);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF && !(err = xsegs__read(elf, &f->segs)))
		err = cfitab__build_elf(elf, u->vdso_len, &t);
	if (elf)
		elf_end(elf);
	free(copy);
	if (err) {
		f->why = "no usable unwind table";
		return NULL;
	}
	load_rows(u, f, &t, NULL, true);	/* the kernel's: no process's share */
	return f->ok && m->end - m->start == u->vdso_len ? f : NULL;
}

/* F's table (the ELF file at FD, whose segments F has) from the cache or
 * built (and cached), into a row map, for process P (CORE: its executable
 * or C library), within its share of the rows and of the time, before the
 * capture's end; else F says why not. */
static void load_file(struct unwinder *u, struct uw_file *f, int fd, struct uw_proc *p, bool core)
{
	struct cfitab_limits lim = { .stop = &run__stop };
	struct cfi_table t;
	struct stat fst = { 0 };
	uint64_t t0 = now_ns(), budget = (uint64_t)UNWIND_BUILD_MS * 1000000ull;
	uint64_t room = room_for(u, p, core), free = room_for(u, NULL, false);
	int err = 0;

	if (run__stop || (u->deadline_ns && t0 >= u->deadline_ns)) {
		left_out(u, f, p, OVER_END, 0);
		return;
	}
	if (p && p->build_ns >= budget) {
		left_out(u, f, p, OVER_TIME, 0);
		return;
	}
	if (!free || f->need > free) {
		f->why = "no room left in the table maps";
		u->st.files_full++;
		return;
	}
	if (!room || f->need > room) {
		left_out(u, f, p, OVER_SHARE, f->need > room ? f->need : room + 1);
		return;
	}
	lim.max_rows = room < CFITAB_MAX_ROWS ? (size_t)room : 0;
	lim.deadline_ns = t0 + budget - (p ? p->build_ns : 0);
	if (u->deadline_ns && u->deadline_ns < lim.deadline_ns)
		lim.deadline_ns = u->deadline_ns;
	if (u->cache && !fstat(fd, &fst) && !cficache__get(u->cache, &fst, &t)) {
		u->st.cached++;
	} else {
		err = cfitab__build_fd_within(fd, &lim, &t);
		if (!err && u->cache && fst.st_ino)
			cficache__put(u->cache, &fst, &t);	/* a full disk: built next time */
	}
	if (p)
		p->build_ns += now_ns() - t0;
	u->st.build_ms += (double)(now_ns() - t0) / 1e6;
	if (err == -ENOSPC && room >= free) {
		f->why = "no room left in the table maps";
		u->st.files_full++;
		return;
	}
	if (err == -ENOSPC) {
		left_out(u, f, p, OVER_SHARE, room + 1);
		return;
	}
	if (err == -ETIMEDOUT || err == -EINTR) {
		left_out(u, f, p, err == -EINTR || lim.deadline_ns == u->deadline_ns ? OVER_END :
				  OVER_TIME, 0);
		return;
	}
	if (err) {
		f->why = err == -ENOENT ? "no .eh_frame or .debug_frame" :
			 err == -ENOTSUP ? "not x86-64" :
			 err == -EFBIG ? "too large a table" : "not a readable ELF file";
		u->st.files_none++;
		return;
	}
	load_rows(u, f, &t, p, core);
}

/* A file that waited (F->wait): its table now, for P. */
static void load_waiting(struct unwinder *u, struct uw_file *f, struct uw_proc *p, bool core)
{
	load_file(u, f, f->fd, p, core);
	close(f->fd);
	f->fd = -1;
	f->wait = 0;
	u->wait_fds--;
	u->st.files_wait--;
}

/* F, once left out over its first process's share, for process P (PID,
 * mapping M; CORE: its executable or C library) with room for it: opened
 * again through P, and loaded as a new file would be (at once for CORE,
 * else when a walk first needs it). */
static void retry_file(struct unwinder *u, struct uw_file *f, struct uw_proc *p, int fd,
		       bool core)
{
	if (f->over != OVER_SHARE || run__stop || f->need > room_for(u, p, core))
		return;
	fd = dup(fd);
	if (fd < 0)
		return;
	f->over = OVER_NONE;
	f->why = NULL;
	u->st.files_share--;
	if (!core && u->wait_fds < UW_WAIT_FDS_MAX) {
		f->wait = 1;
		f->fd = fd;
		u->wait_fds++;
		u->st.files_wait++;
		return;
	}
	load_file(u, f, fd, p, core);
	close(fd);
}

/* E (its adj without a base) for the rows of F, loaded */
static void fill_map(struct unwind_map *e, const struct uw_file *f)
{
	e->adj += f->base;
	e->first = f->first;
	e->count = f->count;
	e->shard = f->shard;
	e->idx_first = f->idx_first;
	e->nblocks = f->nblocks;
	e->block0 = f->block0;
}

/* The file of mapping M of process P as first seen, opened at FD (-1: it
 * could not be; ST its fstat): its segments read; its table loaded now when
 * CORE (P's executable or C library; or when too many wait already), else
 * when a walk first needs it (wait, a descriptor kept). NULL: no memory. */
static struct uw_file *new_file_of(struct unwinder *u, struct uw_proc *p, const struct proc_map *m,
				   int fd, const struct stat *st, bool core)
{
	struct uw_file *f = new_file(u, m->path);
	int err;

	if (!f)
		return NULL;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	f->inode = m->inode;
	if (fd < 0) {
		f->why = "cannot be opened";
		u->st.files_none++;
		return f;
	}
	f->st_dev = st->st_dev;
	f->st_ino = st->st_ino;
	f->st_size = st->st_size;
	f->st_ctim = st->st_ctim;
	fd = dup(fd);
	if (fd < 0) {
		f->why = "cannot be opened";
		u->st.files_none++;
		return f;
	}
	err = read_segments(fd, f);
	if (err) {
		f->why = f->pe ? "a PE image" : "not a readable ELF file";
		u->st.files_none++;
		u->st.files_pe += f->pe;
		close(fd);
		return f;
	}
	if (!core && u->wait_fds < UW_WAIT_FDS_MAX) {
		f->wait = 1;
		f->fd = fd;
		u->wait_fds++;
		u->st.files_wait++;
		return f;
	}
	load_file(u, f, fd, p, core);
	close(fd);
	return f;
}

/* The file of mapping M known by its identity, or NULL: the device and
 * inode the maps give, and the file opened for it (ST, its fstat) the same
 * file as when it was first seen. */
static struct uw_file *known_file(struct unwinder *u, const struct proc_map *m,
				  const struct stat *st)
{
	size_t i;

	for (i = 0; i < u->nfiles; i++) {
		struct uw_file *f = &u->files[i];

		if (f->inode != m->inode || f->dev_major != m->dev_major ||
		    f->dev_minor != m->dev_minor || f->vdso)
			continue;
		if (f->st_dev == st->st_dev && f->st_ino == st->st_ino &&
		    f->st_size == st->st_size && f->st_ctim.tv_sec == st->st_ctim.tv_sec &&
		    f->st_ctim.tv_nsec == st->st_ctim.tv_nsec)
			return f;
	}
	return NULL;
}

/* The file of P's mapping M (PID's), one of P's core objects when CORE:
 * the one known by its identity, its table loaded now if it waited and P
 * needs it at once, or tried again within P's share; else a new one. */
static struct uw_file *file_of(struct unwinder *u, struct uw_proc *p, pid_t pid,
			       const struct proc_map *m, bool core)
{
	char clean[PATH_MAX], path[PATH_MAX + 64];
	struct uw_file *f;
	struct stat st;
	int fd;

	fd = appfile__open_mapping(pid, m, clean, sizeof(clean), path, sizeof(path), NULL);
	if (fd >= 0 && fstat(fd, &st)) {
		close(fd);
		fd = -1;
	}
	/* a file that cannot be opened (its process gone) is not taken for
	 * one of the same device and inode */
	f = fd >= 0 ? known_file(u, m, &st) : NULL;
	if (!f)
		f = new_file_of(u, p, m, fd, &st, core);
	else if (f->wait && core)
		load_waiting(u, f, p, true);	/* another's library, this one's executable */
	else if (f->over == OVER_SHARE && fd >= 0)
		retry_file(u, f, p, fd, core);	/* within this one's share */
	if (fd >= 0)
		close(fd);
	return f;
}

/* A process's executable, as its maps name it (its /proc/PID/exe link):
 * read when first needed */
struct uw_exe {
	bool read;
	char path[PATH_MAX];	/* "" when unknown */
};

static const char *exe_of(pid_t pid, struct uw_exe *e)
{
	if (!e->read) {
		e->read = true;
		if (proc__exe(pid, e->path, sizeof(e->path)))
			e->path[0] = '\0';
	}
	return e->path;
}

/* unwinder__add, and with KEEP, PID's /proc/PID/maps kept open for the
 * next looks (unwinder__watch) */
static struct uw_proc *proc_of(struct unwinder *u, pid_t pid)
{
	size_t i;

	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

/* PID's maps when they changed since P (NULL: first seen) read them, into
 * *HASH; NULL and errno 0 when they did not, else errno. A target's
 * (KEEP) are read through a descriptor kept open, P's, or for a P to come
 * in *FD (-1: none kept). */
static struct proc_maps *read_maps(struct unwinder *u, struct uw_proc *p, pid_t pid, bool keep,
				   int *fd, uint64_t *hash)
{
	struct proc_maps *maps = NULL;
	uint64_t t0 = now_ns();
	int err;

	*fd = -1;
	/* a target is looked at again and again (unwinder__watch): through a descriptor
	 * kept open (no open, no path walk in /proc each time); any process's
	 * mappings are parsed only when the text changed */
	if (p && p->maps_fd >= 0) {
		maps = proc_maps__load_changed_fd(p->maps_fd, p->maps_hash, hash);
		if (!maps && errno == ESRCH) {
			/* exited: a process that has its PID now, if any */
			close(p->maps_fd);
			p->maps_fd = -1;
			u->kept_fds--;
		}
	}
	if (!p || p->maps_fd < 0) {
		*fd = proc_maps__open(pid);
		if (*fd < 0) {
			errno = -*fd;
			*fd = -1;
			return NULL;
		}
		maps = proc_maps__load_changed_fd(*fd, p ? p->maps_hash : 0, hash);
		err = errno;
		/* kept for the targets alone: a descriptor for every process
		 * of a pod or a machine could reach the open-files limit */
		if (!keep || u->kept_fds >= UW_KEPT_FDS_MAX) {
			close(*fd);
			*fd = -1;
		} else if (p) {
			p->maps_fd = *fd;
			*fd = -1;
			u->kept_fds++;
		}
		errno = err;
	}
	if (p)
		p->maps_next_ns = now_ns() + (now_ns() - t0) * UW_MAPS_COST_FACTOR;
	return maps;
}

/* A slot for PID, first seen (its maps kept open at FD, or -1): one an
 * exited process left (unwinder__sweep), else a new one, before its
 * tables, which are charged to it. NULL: none left (counted). */
static struct uw_proc *new_proc(struct unwinder *u, pid_t pid, int fd)
{
	struct uw_proc *p = proc_of(u, 0);

	if (!p && u->nprocs == u->max_procs) {
		u->st.procs_full++;
		return NULL;
	}
	if (!p) {
		p = &u->procs[u->nprocs];
		p->slot = (uint32_t)u->nprocs;
		u->nprocs++;
	}
	p->pid = pid;
	p->maps_fd = fd;
	p->held = 0;
	p->build_ns = 0;
	u->kept_fds += fd >= 0;
	memset(&p->last, 0xff, sizeof(p->last));	/* written by write_proc */
	u->st.procs++;
	return p;
}

/* P's (PID's) executable mappings of MAPS with a table, or one to come,
 * into UP, their files' indexes into FILES. */
static void map_entries(struct unwinder *u, struct uw_proc *p, pid_t pid,
			const struct proc_maps *maps, struct uw_maps *up, uint32_t *files)
{
	struct uw_exe exe = { .read = false };
	size_t i;

	memset(up, 0, sizeof(*up));
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct uw_file *f;
		uint64_t vaddr = 0;
		if (m->perms[2] != 'x')
			continue;
		if (!m->inode && !strcmp(m->path, "[vdso]"))
			f = vdso_of(u, m);
		else if (m->path[0] == '/' && m->inode)
			f = file_of(u, p, pid, m, proc__core_object(m->path, exe_of(pid, &exe)));
		else
			continue;
		if (!f || (!f->ok && !f->wait))
			continue;
		if (!xsegs__vaddr(&f->segs, m->offset, &vaddr))
			continue;
		if (up->n == UNWIND_MAX_MAPS) {
			u->st.maps_cut++;
			continue;
		}
		/* row pc = address - start + vaddr - base */
		up->m[up->n].start = m->start;
		up->m[up->n].end = m->end;
		up->m[up->n].adj = m->start - vaddr;
		if (f->ok)
			fill_map(&up->m[up->n], f);
		else
			up->m[up->n].shard = UNWIND_SHARD_WAIT;
		files[up->n] = (uint32_t)(f - u->files);
		up->n++;
	}
}

/* UP (and FILES) as P's mappings in the kernel, unless they are so
 * already: the mappings, then their number, then the process's slot. 0 or
 * a negative errno. */
static int write_proc(struct unwinder *u, struct uw_proc *p, const struct uw_maps *up,
		      const uint32_t *files)
{
	__u32 key = (__u32)p->pid;
	size_t i;

	if (!memcmp(&p->last, up, sizeof(*up)))
		return 0;
	p->last = *up;
	memcpy(p->file, files, up->n * sizeof(files[0]));
	for (i = 0; i < up->n; i++) {
		__u32 k = p->slot * UNWIND_MAX_MAPS + (__u32)i;

		if (bpf_map_update_elem(u->maps_fd, &k, &up->m[i], BPF_ANY))
			return -errno;
	}
	if (bpf_map_update_elem(u->procs_fd, &p->slot, &up->n, BPF_ANY) ||
	    bpf_map_update_elem(u->pids_fd, &key, &p->slot, BPF_ANY))
		return -errno;
	return 0;
}

static int add_proc(struct unwinder *u, pid_t pid, bool keep)
{
	struct uw_proc *p = proc_of(u, pid);
	uint32_t files[UNWIND_MAX_MAPS];
	struct proc_maps *maps;
	struct uw_maps up;
	uint64_t hash;
	int fd, err;

	if (p && now_ns() < p->maps_next_ns) {
		u->st.maps_deferred++;
		return 0;
	}
	maps = read_maps(u, p, pid, keep, &fd, &hash);
	if (!maps) {
		err = errno;
		if (fd >= 0)
			close(fd);
		return err ? -err : 0;
	}
	if (!p && !(p = new_proc(u, pid, fd))) {
		proc_maps__free(maps);
		if (fd >= 0)
			close(fd);
		return -ENOSPC;
	}
	map_entries(u, p, pid, maps, &up, files);
	proc_maps__free(maps);
	err = write_proc(u, p, &up, files);
	if (!err)
		p->maps_hash = hash;
	return err;
}

int unwinder__want(struct unwinder *u, pid_t pid, uint32_t idx)
{
	uint32_t slot = idx / UNWIND_MAX_MAPS, i = idx % UNWIND_MAX_MAPS, fi;
	struct uw_file *f;
	size_t q;
	uint32_t j;

	if (slot >= u->nprocs || u->procs[slot].pid != pid || i >= u->procs[slot].last.n ||
	    u->procs[slot].last.m[i].shard != UNWIND_SHARD_WAIT)
		return -ESRCH;	/* gone, or loaded since it asked */
	fi = u->procs[slot].file[i];
	f = &u->files[fi];
	if (f->wait) {
		load_waiting(u, f, &u->procs[slot], false);
		u->st.files_wanted += f->ok;
	}
	if (!f->ok && f->over) {
		/* left out over a budget: the process's mappings are written
		 * again without it at the next look, its frames then go by
		 * frame pointer */
		u->procs[slot].maps_hash = 0;
		return -ENOENT;
	}
	if (!f->ok)
		return -ENOENT;	/* no usable table: its mappings stay as they are */
	/* every process's mappings of it: whole but for their shard, then
	 * with it, so that a walk reading one as it is written sees it
	 * waiting or ready, nothing between */
	for (q = 0; q < u->nprocs; q++) {
		struct uw_proc *p = &u->procs[q];

		for (j = 0; p->pid && j < p->last.n; j++) {
			struct unwind_map e = p->last.m[j];
			__u32 k = p->slot * UNWIND_MAX_MAPS + j;

			if (p->file[j] != fi || e.shard != UNWIND_SHARD_WAIT)
				continue;
			fill_map(&e, f);
			e.shard = UNWIND_SHARD_WAIT;
			if (bpf_map_update_elem(u->maps_fd, &k, &e, BPF_ANY))
				continue;
			e.shard = f->shard;
			if (bpf_map_update_elem(u->maps_fd, &k, &e, BPF_ANY))
				continue;
			p->last.m[j] = e;
		}
	}
	return 0;
}

int unwinder__add(struct unwinder *u, pid_t pid)
{
	return add_proc(u, pid, false);
}

int unwinder__watch(struct unwinder *u, pid_t pid)
{
	return add_proc(u, pid, true);
}

size_t unwinder__refresh(struct unwinder *u)
{
	size_t i, n = 0;

	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid && !unwinder__add(u, u->procs[i].pid))
			n++;
	return n;
}

size_t unwinder__sweep(struct unwinder *u)
{
	size_t i, n = 0;

	for (i = 0; i < u->nprocs; i++) {
		__u32 key = (__u32)u->procs[i].pid;

		if (!key || kill((pid_t)key, 0) == 0 || errno != ESRCH)
			continue;
		bpf_map_delete_elem(u->pids_fd, &key);
		if (u->procs[i].maps_fd >= 0) {
			close(u->procs[i].maps_fd);
			u->kept_fds--;
		}
		u->procs[i].maps_fd = -1;
		u->procs[i].pid = 0;
		n++;
	}
	return n;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->st;
	st->share_rows = share_of(u, false);
	st->reserve_rows = reserve_of(u);
}

void unwinder__foreach_missing(const struct unwinder *u,
			       void (*fn)(const char *path, const char *why, void *arg), void *arg)
{
	size_t i;

	/* nor those the capture ended before (said with -v as they come) */
	for (i = 0; i < u->nfiles; i++)
		if (!u->files[i].ok && !u->files[i].pe && !u->files[i].wait &&
		    u->files[i].over != OVER_END)
			fn(u->files[i].path, u->files[i].why, arg);
}
