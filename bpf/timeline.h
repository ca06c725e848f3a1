/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/timeline.bpf.c and its user space, the timeline
 * engine (tools/lib/timeline/). */
#ifndef SIDESCOPE_TIMELINE_H
#define SIDESCOPE_TIMELINE_H

#include "mapfail.h"
#include "profile.h"	/* struct profile_stack: the stack store's */

#define TIMELINE_MAX_DEPTH PROFILE_MAX_DEPTH

/* Per-CPU counters, index into the "stats" array. */
enum timeline_stat {
	TLSTAT_SAMPLES = 0,	/* samples of the target's threads */
	TLSTAT_NS_MISS,		/* task not visible in our PID namespace */
	TLSTAT_PID_REUSED,	/* another process holding the target's PID */
	TLSTAT_USTACK_ERR,	/* bpf_get_stack(user) failed */
	TLSTAT_USTACK_TRUNC,	/* user stack deeper than TIMELINE_MAX_DEPTH */
	TLSTAT_STACKS_LOST,	/* stack not stored: the sample has no stack;
				 * MAP_FAIL_N counters, by cause */
	TLSTAT_RB_FULL = TLSTAT_STACKS_LOST + MAP_FAIL_N,	/* ring buffer
				 * full: the sample is lost */
	TLSTAT_SCRATCH_ERR,	/* scratch buffer missing (cannot happen) */
	TLSTAT_MAX,
};

/* Ring buffer record: one sample. The stack is stored once, by hash, in
 * the "stacks" map; 0 means none. */
struct timeline_sample {
	__u64 ts;	/* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 ustack;	/* hash of the user stack, 0: none */
	__u32 pid;	/* tgid in the sidecar's PID namespace */
	__u32 tid;	/* thread id there */
	__u32 cpu;
	__u32 kernel;	/* 1: the sample hit kernel code (a syscall, a fault) */
};


#endif
