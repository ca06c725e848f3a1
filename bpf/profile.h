/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/profile.bpf.c and its user space: tools/profile.c
 * and the capture engine, tools/lib/prof/capture.c. */
#ifndef SIDESCOPE_PROFILE_H
#define SIDESCOPE_PROFILE_H

#define PROFILE_MAX_DEPTH 127
#define PROFILE_COMM_LEN 16

enum profile_filter {
	PROFILE_FILTER_ALL = 0,		/* every task but the idle tasks */
	PROFILE_FILTER_PIDS = 1,	/* tgids in the pids map */
	PROFILE_FILTER_CGROUP = 2,	/* tasks of one cgroup (v2 id) */
};

/* Per-CPU counters, index into the "stats" array. */
enum profile_stat {
	PSTAT_SAMPLES = 0,	/* samples of matching tasks */
	PSTAT_NS_MISS,		/* task not visible in our PID namespace */
	PSTAT_USTACK_ERR,	/* bpf_get_stack(user) failed */
	PSTAT_KSTACK_ERR,	/* bpf_get_stack(kernel) failed */
	PSTAT_USTACK_TRUNC,	/* user stack deeper than PROFILE_MAX_DEPTH */
	PSTAT_KSTACK_TRUNC,
	PSTAT_STACKS_FULL,	/* stack store full: stack lost */
	PSTAT_COUNTS_FULL,	/* count map full: sample lost */
	PSTAT_SCRATCH_ERR,	/* scratch buffer missing (cannot happen) */
	PSTAT_PID_REUSED,	/* another process holding a target's PID */
	PSTAT_NEW_LOST,		/* new-process report lost: ring buffer full */
	PSTAT_MAX,
};

/* Stacks are stored by a 64-bit hash of their addresses; 0 means no stack. */
struct profile_key {
	__u32 pid;	/* tgid in the sidecar's PID namespace */
	__u32 tid;	/* thread id in the sidecar's PID namespace */
	__u64 ustack;	/* hash, 0: none */
	__u64 kstack;
	char comm[PROFILE_COMM_LEN];	/* the thread's name */
};

struct profile_stack {
	__u64 ips[PROFILE_MAX_DEPTH];
};

/* Ring buffer record: a process sampled for the first time (or the first
 * time since its exec, or since its PID was reused), so that user space
 * reads its maps while it lives. */
struct profile_new {
	__u32 pid;	/* tgid in the sidecar's PID namespace */
	__u32 reserved;
};

#endif
