/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --unwind tables, user space: for each process, the unwind tables
 * (sym/cfitab) of its executable file mappings, loaded into the BPF maps
 * bpf/unwind.bpf.h walks: rows into row maps made as they are needed
 * (shards of UNWIND_SHARD_ROWS or more, each mmap'd) and put in the map of
 * maps unwind_rows, the mappings
 * into its slot's part of unwind_maps and their number into unwind_procs,
 * the process's slot into unwind_pids. A
 * file's rows are loaded once, shared by every process that maps it
 * (cached by device and inode): a process's executable and C library
 * when it is first seen, its other objects when a walk first reaches them
 * (unwinder__want). The files are the app's: opened through
 * appfile inside the process's root, or through map_files.
 *
 * What the app can make expensive is bounded. Each process has a share of
 * the rows (UNWIND_SHARE_DIV): a table's rows are charged to the process
 * that first needs it, and a process takes rows for its tables up to its
 * share (twice that for its executable and C library), and beyond it only
 * while a reserve (UNWIND_RESERVE_DIV of all rows) stays out of any row
 * map for the shares of the others. Each process has UNWIND_BUILD_MS of building (or
 * cache reading) for its tables, and no build goes past the end of the
 * capture (unwinder__set_deadline) or on after SIGINT or SIGTERM
 * (run__stop). A table over any of these is left out, counted and named
 * (unwinder__foreach_missing): its frames go by frame pointer. */
#ifndef SIDESCOPE_UNWIND_H
#define SIDESCOPE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct unwinder;
struct unwind_row;
struct cfi_row;

/* Row C (a table's, as sym/cfitab builds it) as the BPF walker reads it
 * (bpf/profile.h), into R: 1 when R says less than C (an offset out of a
 * packed row's reach: its CFA rule unsupported, or its caller's RBP
 * unknown), else 0. */
int unwind__pack_row(struct unwind_row *r, const struct cfi_row *c);

struct unwinder_stats {
	size_t procs;		/* processes given tables, in all */
	size_t procs_full;	/* processes left out: unwind_procs full */
	size_t files;		/* objects with a table */
	size_t files_wait;	/* objects mapped whose tables no walk needed */
	size_t files_wanted;	/* objects whose tables were loaded when a
				 * walk first needed them */
	size_t files_none;	/* objects without a usable one */
	size_t files_pe;	/* of them, PE images (.NET assemblies) */
	size_t files_full;	/* objects left out: unwind_rows full */
	size_t files_share;	/* objects left out: over their process's
				 * share of the rows */
	size_t files_slow;	/* objects left out: their process's time
				 * for building tables spent */
	size_t files_cut;	/* objects left out: the capture ended (its
				 * end, or a signal) while they were built */
	size_t maps_cut;	/* mappings past UNWIND_MAX_MAPS in a process */
	size_t maps_deferred;	/* looks at a process's maps put off: its last
				 * read took long (UW_MAPS_COST_FACTOR) */
	uint64_t rows;		/* loaded */
	uint64_t alloc_rows;	/* in the row maps made */
	uint64_t max_rows;	/* the budget */
	uint64_t share_rows;	/* a process's share of it (twice that for
				 * its executable and C library) */
	uint64_t reserve_rows;	/* beyond a share, kept for the others */
	size_t shards;		/* row maps made */
	size_t cached;		/* objects whose table came from the cache */
	double build_ms;	/* building (or reading) the tables, in all */
};

/* A process's maps are read again at most once in this many times what
 * the last read took: the app chooses that time (60,000 mappings with
 * long paths: a second a read), and asks for reads (each walk that meets
 * an unknown mapping), so that reading its maps takes a tenth of the
 * capture at most. */
#define UW_MAPS_COST_FACTOR 10

/* A row map holds this many rows at least (512 KB), a larger table its own */
#define UNWIND_SHARD_ROWS (1u << 16)

/* A process's share of the rows: a sixteenth of them (131,072 of
 * 2,097,152: most programs' executable, C library and the libraries their
 * walks reach; redis-server's take 82,438), or 1/N when at most N < 16
 * processes are profiled (the targets given; a single one has them all);
 * its executable and C library may take twice that */
#define UNWIND_SHARE_DIV 16
/* Beyond its share a process takes rows only while a quarter of them stay
 * out of any row map (the shares of four processes more), when there can
 * be other processes: one process, or a few, can have the rest (libLLVM
 * alone has a million rows), never that quarter */
#define UNWIND_RESERVE_DIV 4
/* A process's time for building (or reading from the cache) its tables;
 * libLLVM's million rows take ~0.1 s */
#define UNWIND_BUILD_MS 2000

/* Over the BPF maps' descriptors; ROWS_FD is the map of maps unwind_rows
 * (UNWIND_MAX_SHARDS), whose row maps together hold MAX_ROWS rows at most;
 * PROCS_FD has MAX_PROCS, MAPS_FD MAX_PROCS * UNWIND_MAX_MAPS. NULL with
 * errno on failure. */
struct unwinder *unwinder__new(int rows_fd, uint32_t max_rows, int procs_fd, uint32_t max_procs,
			       int maps_fd, int pids_fd);
void unwinder__free(struct unwinder *u);

struct cficache;
/* Take tables from CACHE (sym/cficache) and keep those built there; the
 * caller keeps it open until unwinder__free. */
void unwinder__set_cache(struct unwinder *u, struct cficache *cache);

/* No table is built past DEADLINE_NS (CLOCK_MONOTONIC; 0: none): the end
 * of a capture of a set duration. */
void unwinder__set_deadline(struct unwinder *u, uint64_t deadline_ns);

/* Load (again) the tables of PID's executable mappings: PID as this PID
 * namespace shows it, which is also the key the BPF program uses. A new
 * mapping (dlopen) since the last call is added. Return 0, or a negative
 * errno (the process is gone, or unwind_procs is full: -ENOSPC). */
int unwinder__add(struct unwinder *u, pid_t pid);
/* unwinder__add for a target looked at again and again (for dlopen: every
 * few seconds, and when a walk meets a pc in none of its mappings with
 * tables): its /proc/PID/maps is kept open until it exits (at most 256 of
 * them), read again without an open or a path walk in /proc. */
int unwinder__watch(struct unwinder *u, pid_t pid);

/* A walk of PID's stack reached mapping IDX of unwind_maps, whose table
 * waits (UNWIND_SHARD_WAIT; struct profile_new's want): load it, for
 * every process that maps it. 0, or a negative errno (-ESRCH: the request
 * is stale; -ENOENT: the object has no usable table). */
int unwinder__want(struct unwinder *u, pid_t pid, uint32_t idx);

/* unwinder__add again for every process that has tables: their mappings
 * since (dlopen). Return how many were looked at. */
size_t unwinder__refresh(struct unwinder *u);

/* Give up the slots of processes that have exited, for new ones. Return
 * how many. */
size_t unwinder__sweep(struct unwinder *u);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *st);
/* Call FN for each object without a usable table (its path, and why),
 * but PE images: .NET's, whose code keeps frame pointers (files_pe),
 * objects no walk reached (whose tables were never wanted), and those
 * the capture ended before (files_cut). */
void unwinder__foreach_missing(const struct unwinder *u,
			       void (*fn)(const char *path, const char *why, void *arg), void *arg);

#endif
