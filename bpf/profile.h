/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/profile.bpf.c and its user space: tools/profile.c
 * and the capture engine, tools/lib/prof/capture.c. */
#ifndef SIDESCOPE_PROFILE_H
#define SIDESCOPE_PROFILE_H

#include "mapfail.h"

#define PROFILE_MAX_DEPTH 127
#define PROFILE_COMM_LEN 16

/* What the counts measure (const volatile "mode"). */
enum profile_mode {
	PROFILE_MODE_CPU = 0,	/* on-CPU samples, counted one by one */
	PROFILE_MODE_OFFCPU = 1,	/* off-CPU time in nanoseconds (sched_switch) */
	PROFILE_MODE_WALL = 2,	/* both in nanoseconds: a sample weighs its period */
};

/* Thread states whose off-CPU time counts (const volatile "off_states"). */
#define PROFILE_STATE_RUNNABLE 0x1u	/* preempted or yielding: waiting for a CPU */
#define PROFILE_STATE_SLEEP 0x2u	/* interruptible sleep (S) */
#define PROFILE_STATE_DISK 0x4u		/* uninterruptible sleep (D) */
#define PROFILE_STATE_ALL 0x7u

/* profile_key.flags */
#define PROFILE_KEY_OFFCPU 0x100u	/* off-CPU time; the low byte: the state
					 * it left the CPU in (PROFILE_STATE_*) */

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
	PSTAT_STACKS_LOST,	/* stack not stored: lost; MAP_FAIL_N counters,
				 * one per cause (PSTAT_STACKS_LOST + cause) */
	PSTAT_COUNTS_LOST = PSTAT_STACKS_LOST + MAP_FAIL_N,	/* sample not
				 * counted, by cause likewise */
	PSTAT_SCRATCH_ERR = PSTAT_COUNTS_LOST + MAP_FAIL_N,	/* scratch buffer
				 * missing (cannot happen) */
	PSTAT_PID_REUSED,	/* another process holding a target's PID */
	PSTAT_NEW_LOST,		/* new-process report lost: ring buffer full */
	PSTAT_OFF_COUNTED,	/* off-CPU periods counted (each noted one
				 * standing for its weight) */
	PSTAT_OFF_FULL,		/* off-CPU start map full: a period lost */
	PSTAT_WAKER_FULL,	/* --wakers: waker map full, a waker not known */
	PSTAT_UNWIND_TABLES,	/* user stacks walked by unwind tables */
	PSTAT_UNWIND_CUT,	/* of those, walks that stopped before the
				 * outermost frame (no rule, unreadable) */
	PSTAT_UNWIND_WAIT,	/* of the cut ones, walks that stopped at an
				 * object whose table was still to be loaded */
	PSTAT_UNWIND_UNMAPPED,	/* frames of those walks in no mapping with a
				 * table (JIT code, a library not yet seen) */
	PSTAT_MAX,
};

/* --unwind tables: one row of an object's unwind table, sym/cfitab.h's
 * struct cfi_row packed into the 8 bytes of an array element (its 12
 * would take 16): every page of rows written at load is a page less to
 * touch. The CFA's offset is a multiple of 8 on x86-64 (the stack stays
 * 8-byte aligned) and counted in eights, up to 512 KB; a row whose offset
 * does not fit is marked CFI_CFA_UNSUPPORTED, one whose caller's RBP is
 * saved further than fp_off reaches CFI_FP_UNKNOWN. */
struct unwind_row {
	__u32 pc;	/* the object's address less its table's base */
	__u16 cfa_off8;	/* the CFA's offset / 8 */
	__s8 fp_off;	/* where the caller's RBP is, from the CFA; for
			 * CFI_CFA_PLT, the stub's offset of its push */
	__u8 rules;	/* enum cfi_cfa_rule | enum cfi_fp_rule << 4 */
};

#define UNWIND_ROW_CFA(r) ((r)->rules & 15)
#define UNWIND_ROW_FP(r) ((r)->rules >> 4)
#define UNWIND_ROW_CFA_OFF(r) ((__u64)(r)->cfa_off8 << 3)
/* row index entries (__u32) a row slot holds */
#define UNWIND_INDEX_PER_ROW (sizeof(struct unwind_row) / sizeof(__u32))

/* One executable mapping of a process with a table: rows
 * [first, first + count) of the row map unwind_rows[shard], for the
 * addresses [start, end) whose row pc is the address less adj.
 *
 * The rows' index, where there is one (nblocks > 0): a row search starts
 * from the block of 4 KB its pc is in, not from the whole table, so that a
 * sample's cold look-ups touch one or two pages of rows, not ten. Entry k
 * (of nblocks + 1) is how many rows have a pc at or below (block0 + k) <<
 * UNWIND_BLOCK_SHIFT; the entries are __u32s packed two to a row slot
 * (UNWIND_INDEX_PER_ROW), from slot idx_first of the same row map. */
struct unwind_map {
	__u64 start, end, adj;
	__u32 first, count;
	__u32 shard, nblocks;
	__u32 idx_first, block0;
	__u32 want;	/* set by the walk that asked for its table */
	__u32 pad;
};

/* An unwind_map whose object's table is loaded when a walk first reaches
 * it: shard UNWIND_SHARD_WAIT, no rows, adj without the table's base; the
 * walk that finds want 0 sets it and asks user space for the table
 * (struct profile_new, want), which then writes the mapping whole, and
 * again with its shard. */
#define UNWIND_SHARD_WAIT 0xffffffffu

#define UNWIND_BLOCK_SHIFT 12

#define UNWIND_MAX_MAPS 64	/* mappings with tables a process */
#define UNWIND_MAX_SHARDS 64	/* row maps, made by user space as needed */

/* Stacks are stored by a 64-bit hash of their addresses; 0 means no stack. */
struct profile_key {
	__u32 pid;	/* tgid in the sidecar's PID namespace */
	__u32 tid;	/* thread id in the sidecar's PID namespace */
	__u64 ustack;	/* hash, 0: none */
	__u64 kstack;
	char comm[PROFILE_COMM_LEN];	/* the thread's name */
	__u32 flags;	/* PROFILE_KEY_*; 0 for on-CPU samples */
	__u32 waker_pid;	/* --wakers: the process that woke the thread */
	__u64 waker_ustack;	/* and its stacks as it did, 0: none */
	__u64 waker_kstack;
	char waker_comm[PROFILE_COMM_LEN];	/* "": not known */
};

/* --wakers: who woke a thread off the CPU, by its kernel TID, until it
 * runs. */
struct profile_waker {
	__u64 ustack;
	__u64 kstack;
	__u32 pid;	/* in the sidecar's namespace, 0: not visible there */
	__u32 reserved;
	char comm[PROFILE_COMM_LEN];
};

/* Where and when a thread left the CPU (off-CPU and wall modes), by its
 * kernel TID, until it runs again. */
struct profile_offstart {
	__u64 ts;	/* bpf_ktime_get_ns (CLOCK_MONOTONIC) after the stack
			 * walks; 0 while they run */
	__u64 ts0;	/* before them, when the thread left the CPU */
	__u64 waking;	/* when it was woken, 0 until then */
	__u32 cpu;	/* the CPU it left */
	__u32 wcpu;	/* the CPU its waker ran on */
	__u64 ustack;
	__u64 kstack;
	__u32 pid;	/* as in profile_key */
	__u32 tid;
	__u32 state;	/* PROFILE_STATE_* */
	__u32 weight;	/* the periods it stands for: off_every when noted */
	char comm[PROFILE_COMM_LEN];
};

struct profile_stack {
	__u64 ips[PROFILE_MAX_DEPTH];
};

/* Ring buffer record: a process sampled for the first time (or the first
 * time since its exec, or since its PID was reused), so that user space
 * reads its maps while it lives. */
struct profile_new {
	__u32 pid;	/* tgid in the sidecar's PID namespace */
	__u32 want;	/* 0; or a walk's request instead: 1 + the index in
			 * unwind_maps of a mapping of PID whose table it
			 * needs (UNWIND_SHARD_WAIT), or UNWIND_WANT_MAPS */
};

/* profile_new.want: a walk met a pc in none of PID's mappings with tables
 * (code without one, or a mapping made since its maps were read: dlopen);
 * asked at most once every UNWIND_ASK_NS a process */
#define UNWIND_WANT_MAPS 0xffffffffu
#define UNWIND_ASK_NS 1000000000ull

#endif
