/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The symbolizer's files (sym/symbolize.c only): each mapped file opened
 * once per identity, its symbols and lines read when a frame first needs
 * them, kept while a process maps it, within budgets of memory and time.
 * The application chooses its files, so:
 *
 * - A file is one entry per identity and view: the kernel's identity of
 *   the file opened (device, inode, size, change time: a reused inode has
 *   another change time) and the view it was opened through (the process's
 *   mount namespace and root directory). Only processes of one view share
 *   an entry, its symbols and its lines; never two files because their
 *   build ids match (a copy of a library with its names changed keeps its
 *   build id), never a table whose debug file was found in another root.
 * - Debug files are looked for only in the root of the process the read
 *   is for, and only while it is still that process (its start time, after
 *   its root was opened): a PID that names a process of another container
 *   by then is never looked through. A debug file must carry the file's
 *   build id, or match the CRC of its debug link when it has none.
 * - Memory: a table is kept while a process maps its file, and freed
 *   SYMFILE_GRACE sweeps after it was last used once no process does (an
 *   executable that replaces itself costs one table, not one per copy).
 *   All the tables together hold at most SYMFILE_HELD_MAX, one process's
 *   files at most SYMFILE_PROC_MAX, one file SYMFILE_FILE_MAX (judged from
 *   its section headers before it is read); a file over a budget is left
 *   out (its frames named file+0xOFF), counted, and named with -v. The
 *   tables and the DWARF of sym/dwline (loaded for pprof's lines) share
 *   SYMFILE_TABLES_MAX: the DWARF gets what the tables leave, at least
 *   SYMFILE_DWARF_MIN.
 * - Time: one file's read, debug files included, gets SYMFILE_READ_NS;
 *   once a stop is asked (SIGINT, SIGTERM) all reads left get the time of
 *   sym/budget.h. Over time is left out and counted the same way.
 * - Frames handed out point at an entry's lines (frame_lines_ref): an
 *   entry whose lines were handed out outlives its mappings with its
 *   dwline (a descriptor, no table); when descriptors run short the oldest
 *   such is released (its lines looked up so far still answer). */
#ifndef SIDESCOPE_SYMFILE_H
#define SIDESCOPE_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SYMFILE_HELD_MAX	(128ull << 20)
#define SYMFILE_PROC_MAX	(96ull << 20)
#define SYMFILE_FILE_MAX	(64ull << 20)
#define SYMFILE_TABLES_MAX	(192ull << 20)
#define SYMFILE_DWARF_MIN	(64ull << 20)
#define SYMFILE_READ_NS		(2000ull * 1000 * 1000)
/* sweeps an unmapped file's table is kept after its last use: samples
 * still queued for a process that unmapped it are drained by then */
#define SYMFILE_GRACE		2

struct cficache;
struct dwline;
struct elf_syms;
struct pe_resolver;
struct proc_map;

/* Where a process sees its files from: its mount namespace and root
 * directory (0s: not known). */
struct symfile_view {
	uint64_t mntns, root_dev, root_ino;
};

static inline bool symfile_view__same(const struct symfile_view *a, const struct symfile_view *b)
{
	return a->mntns == b->mntns && a->root_dev == b->root_dev && a->root_ino == b->root_ino;
}

/* The process a file is opened or read for: its root is looked through
 * only while PID is the process that started at START. ROOM(CTX): what its
 * other files' tables leave of SYMFILE_PROC_MAX, asked when a table is to
 * be read (NULL: all of it). RECHECK: symfiles__open checks after the open
 * that PID is still that process (else the caller checks once after all
 * its opens, and drops them if not). */
struct symfile_owner {
	pid_t pid;
	uint64_t start;
	struct symfile_view view;
	uint64_t (*room)(const void *ctx);
	const void *ctx;
	bool recheck;
};

struct sym_file {
	struct stat st;			/* its identity (an fstat), when HAVE_ID */
	struct symfile_view view;
	bool have_id;			/* opened: shared by identity and view */
	const char *path;		/* as the process names it (interned) */
	const char *build_id;		/* interned, "" until read or none */
	struct elf_syms *elf;		/* NULL: not read, none, or left out */
	size_t bytes;			/* ELF's memory, counted in the budget */
	struct dwline *dw;		/* its DWARF lines, NULL when none */
	void *pe;			/* the PE resolver's handle */
	bool lines_given;		/* a frame handed out points at DW */
	bool left_out;			/* over a budget: not read */
	size_t refs;			/* mappings of held processes */
	uint64_t used;			/* sweep count of its last use */
	uint64_t mark;			/* for counting a process's files once */
	/* waiting to be read until a frame first falls in it (fd >= 0):
	 * opened for OWNER, whose root names it REL */
	int fd;
	struct symfile_owner owner;
	char *rel;
	/* the cache's own */
	bool evicted;			/* table freed, lines kept: read again if mapped */
	bool dw_released;		/* dwline__release'd to make room */
	struct sym_file *next, *prev;	/* the list of entries */
	struct sym_file *hnext;		/* the chain of its hash bucket */
};

struct symfiles_stats {
	size_t opened;			/* distinct files opened */
	size_t waiting;			/* of those held, symbols not read yet */
	size_t denied;			/* unreadable: EACCES, EPERM */
	size_t evicted;			/* tables freed: no process mapped the file */
	size_t over_memory;		/* left out: a memory budget */
	size_t over_time;		/* left out: the time budget */
	uint64_t held, held_peak;	/* bytes of tables */
};

typedef const char *(*symfiles_intern_fn)(void *ctx, const char *s);

struct symfiles;

/* An empty cache; strings (paths, build ids, lines' names) go through
 * INTERN(CTX, s), which must keep them for the cache's life. */
struct symfiles *symfiles__new(symfiles_intern_fn intern, void *ctx);
void symfiles__free(struct symfiles *fs);
void symfiles__set_cache(struct symfiles *fs, struct cficache *c);
void symfiles__set_pe_resolver(struct symfiles *fs, const struct pe_resolver *r);

/* The file of mapping M of OWNER (alive, just watched), opened now: the
 * entry of the same identity and view if there is one, else a new one,
 * with one more reference (symfiles__put). Its symbols are read now when
 * NOW, else when symfiles__read is first asked. NULL: out of memory. */
struct sym_file *symfiles__open(struct symfiles *fs, const struct symfile_owner *owner,
				const struct proc_map *m, bool now);
/* One more reference to F. */
void symfiles__get(struct sym_file *f);
/* One reference less to F (NULL: none); F stays until a sweep frees it. */
void symfiles__put(struct symfiles *fs, struct sym_file *f);
/* F, its symbols read if they wait: for OWNER (its root looked through if
 * it is still alive, else the root of the process F was opened for, if
 * alive), where REL names F. */
struct sym_file *symfiles__read(struct symfiles *fs, struct sym_file *f,
				const struct symfile_owner *owner, const char *rel);
/* Free the tables of files no process holds (SYMFILE_GRACE sweeps after
 * their last use), given the sweep count SWEEPS. Return how many. */
size_t symfiles__sweep(struct symfiles *fs, uint64_t sweeps);
void symfiles__stats(const struct symfiles *fs, struct symfiles_stats *st);

#endif
