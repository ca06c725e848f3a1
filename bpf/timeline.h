/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/timeline.bpf.c and its user space, the timeline
 * engine (tools/lib/timeline/). */
#ifndef SIDESCOPE_TIMELINE_H
#define SIDESCOPE_TIMELINE_H

#define TIMELINE_MAX_DEPTH 127

/* Per-CPU counters, index into the "stats" array. */
enum timeline_stat {
	TLSTAT_SAMPLES = 0,	/* samples of the target's threads */
	TLSTAT_NS_MISS,		/* task not visible in our PID namespace */
	TLSTAT_PID_REUSED,	/* another process holding the target's PID */
	TLSTAT_USTACK_ERR,	/* bpf_get_stack(user) failed */
	TLSTAT_USTACK_TRUNC,	/* user stack deeper than TIMELINE_MAX_DEPTH */
	TLSTAT_STACKS_FULL,	/* stack store full: the sample has no stack */
	TLSTAT_RB_FULL,		/* ring buffer full: the sample is lost */
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

/* The leaf first, 0-terminated when shorter than TIMELINE_MAX_DEPTH. */
struct timeline_stack {
	__u64 ips[TIMELINE_MAX_DEPTH];
};

#endif
