/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The in-memory CPU profile: samples (process, thread, symbolized stack
 * with addresses, mappings and source lines) with counts, plus capture
 * metadata; and its writers: folded stacks, pprof (gzip'd protobuf,
 * protobuf-c), JSON and a top table; prof/writer.h has them in one table
 * by format name and file ending. */
#ifndef SIDESCOPE_PROF_H
#define SIDESCOPE_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mapfail.h"
#include "sym/frame.h"

struct prof_frame {
	const char *name;	/* copied by the model */
	enum frame_kind kind;
	const char *module;	/* "" when none */
	const char *build_id;	/* "" when none */
	/* Where, for pprof; 0 and NULL when unknown. */
	uint64_t addr;		/* in the process: the sampled address, or for a
				 * caller its return address - 1 (inside its call) */
	uint64_t map_start;	/* the mapping holding ADDR, as the process had it */
	uint64_t map_limit;
	uint64_t map_offset;	/* file offset of MAP_START */
	const struct frame_line *lines;	/* source lines (frame.h), copied */
	size_t nlines;
	struct frame_lines_ref lines_ref;	/* or where to look them up when
						 * pprof is written: SRC must
						 * outlive the writers */
	bool unresolved;	/* NAME stands for an address of an ELF file that
				 * had no symbol for it ("lib.so+0xOFF"): pprof
				 * leaves the function out, so that a reader with
				 * the file's debug info can name it */
};

/* Who a stack was sampled in. */
struct prof_sample {
	uint32_t pid;		/* process (thread group) id */
	uint32_t tid;		/* thread id */
	const char *comm;	/* the process's name ("" when unknown) */
	const char *thread;	/* the thread's name: the root frame of folded
				 * stacks and flame graphs (perf's comm) */
};

/* What a profile's counts are. */
enum prof_mode {
	PROF_MODE_CPU = 0,	/* on-CPU samples */
	PROF_MODE_OFFCPU,	/* nanoseconds off the CPU (blocked or waiting) */
	PROF_MODE_WALL,		/* nanoseconds: on-CPU samples weigh their period,
				 * plus the time off the CPU */
	PROF_MODE_HITS,		/* probe hits (uprobe --stacks) */
};

/* Off-CPU thread states (prof_meta.off_states), as bpf/profile.h's
 * PROFILE_STATE_*. */
#define PROF_STATE_RUNNABLE 0x1u	/* preempted: waiting for a CPU */
#define PROF_STATE_SLEEP 0x2u		/* interruptible sleep (S) */
#define PROF_STATE_DISK 0x4u		/* uninterruptible sleep (D) */

/* What the capture saw and lost; written into every output. */
struct prof_meta {
	enum prof_mode mode;
	unsigned int off_states;	/* off-CPU and wall: PROF_STATE_* counted */
	uint64_t min_block_ns;		/* off-CPU: shorter periods left out */
	uint64_t off_periods;		/* off-CPU periods counted by BPF */
	uint64_t lost_off_full;		/* periods lost: the start map was full */
	uint64_t missed_switches;	/* context switches the program missed */
	uint64_t lost_wakers;		/* --wakers: wakers not noted, map full */
	uint64_t unwind_tables;		/* --unwind tables: user stacks walked so */
	uint64_t unwind_cut;		/* of them, cut before the outermost frame */
	uint64_t unwind_wait;		/* of those, at an object whose table was
					 * still to be loaded */
	uint64_t off_every_max;		/* 1 in this many switches was noted at
					 * the most (a storm), its time counted
					 * as many times; 1: every one */
	uint64_t off_pending;		/* threads still off the CPU at the end,
					 * counted up to the end */
	unsigned int hz;
	uint64_t period_ns;
	uint64_t time_ns;	/* wall-clock start (ns since the epoch) */
	uint64_t duration_ns;
	uint64_t samples;	/* counted by BPF */
	uint64_t lost_ustack;	/* stack walk failed */
	uint64_t lost_kstack;
	uint64_t trunc_ustack;	/* deeper than the walk limit */
	uint64_t trunc_kstack;
	uint64_t lost_stacks[MAP_FAIL_N];	/* stacks not stored, by cause */
	uint64_t lost_counts[MAP_FAIL_N];	/* samples not counted, by cause */
	uint64_t missing_stacks;	/* stack hash not found at drain */
	uint64_t perfmap_bad_lines;
};

struct prof;

struct prof *prof__new(void);
void prof__free(struct prof *p);
/* Add COUNT samples of one stack of S, outermost frame first. The model
 * copies what it keeps. Return 0 or -ENOMEM. */
int prof__add(struct prof *p, const struct prof_sample *s, const struct prof_frame *frames,
	      size_t n, uint64_t count);
/* prof__add, and the id of the stack the samples went to in *ID (when not
 * NULL): later samples of that very stack are added with prof__add_count
 * (the model does not drop or renumber stacks). */
int prof__add_id(struct prof *p, const struct prof_sample *s, const struct prof_frame *frames,
		 size_t n, uint64_t count, size_t *id);
/* Add COUNT samples to stack ID (from prof__add_id). 0 or -EINVAL. */
int prof__add_count(struct prof *p, size_t id, uint64_t count);

/* How folded stacks, flame graphs and prof__foreach tell stacks apart. By
 * default (0) one entry per distinct stack, whatever process or thread it
 * came from, under the thread's name; PROF_SPLIT_PID: one per process, its
 * root "NAME-PID"; PROF_SPLIT_TID: one per thread, "NAME-PID/TID" (as
 * FlameGraph's stackcollapse-perf --pid/--tid). pprof and JSON always keep
 * the process and the thread. */
#define PROF_SPLIT_PID 0x1u
#define PROF_SPLIT_TID 0x2u
void prof__set_split(struct prof *p, unsigned int split);
void prof__set_meta(struct prof *p, const struct prof_meta *m);
const struct prof_meta *prof__meta(const struct prof *p);
uint64_t prof__total(const struct prof *p);
size_t prof__nstacks(const struct prof *p);

/* Walk the stacks as prof__set_split tells them apart (sorted by root then
 * frames): names/kinds outermost first with the root (the thread's name,
 * or its split form) as names[0] (kind FRAME_UNKNOWN). Stops at a non-zero
 * return of CB and returns it. */
typedef int (*prof_stack_cb)(void *ctx, const char *const *names,
			     const enum frame_kind *kinds, size_t n, uint64_t count);
int prof__foreach(const struct prof *p, prof_stack_cb cb, void *ctx);

/* Writers: return 0 or a negative errno (write errors included). */
int prof__write_folded(const struct prof *p, FILE *f);
int prof__write_pprof(const struct prof *p, FILE *f);
int prof__write_json(const struct prof *p, FILE *f);
/* Flame graph (tools/lib/flame/flamegraph): TITLE may be NULL. */
int prof__write_svg(const struct prof *p, FILE *f, const char *title);
/* Functions by self and total samples, at most LIMIT rows, 80 columns. */
int prof__write_top(const struct prof *p, FILE *f, size_t limit);

/* Whether P's counts are nanoseconds (off-CPU, wall) rather than samples. */
bool prof__timed(const struct prof *p);
/* What a writer shows of COUNT: samples, or microseconds (rounded) when
 * the counts are nanoseconds, as bcc's offcputime -f. */
uint64_t prof__shown(const struct prof *p, uint64_t count);
/* "CPU", "off-CPU", "wall-clock" or "uprobe". */
const char *prof__mode_name(enum prof_mode m);
/* The off-CPU states STATES counts, in words: "blocked (S, D)", ... */
const char *prof__states_name(unsigned int states);

/* Why a stack or a sample was lost in the kernel (enum map_fail), in
 * words: "full", "out of kernel memory", "busy", "refused". */
const char *prof__fail_name(unsigned int cause);
/* One sentence on stacks or samples lost for CAUSE in the maps WHAT ("the
 * stack store") and what to do about it: for a full map, raise the option
 * OPTION (e.g. "--max-stacks") from NOW. Into BUF (SIZE bytes); returns
 * BUF. */
const char *prof__fail_advice(unsigned int cause, const char *what, const char *option,
			      unsigned long long now, char *buf, size_t size);
/* Append ", WHAT CAUSE N" (no comma first in an empty BUF) to BUF for each
 * cause counted in LOST (MAP_FAIL_N counts). */
void prof__add_fails(char *buf, size_t size, const char *what, const uint64_t *lost);

/* The folded-stack suffix of a kind: "_[k]", "_[j]", "_[r]" or "". */
const char *frame_kind_suffix(enum frame_kind k);

#endif
