/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sidescope stacks: what bpf/stacks.bpf.c hands user space for one thread.
 * A thread off its CPU is read by the task iterator (its user registers as
 * saved at its last entry into the kernel, its kernel stack, its user stack
 * memory from the stack pointer up); a thread on a CPU is caught there by a
 * cpu-clock sample of its own, which reads the same from the thread itself.
 * The record goes through the iterator's output (or, for a catch, a slot of
 * the map caught); the stack bytes go into a slot of an array map, one
 * slot a thread, which user space reads before the next. */
#ifndef SIDESCOPE_STACKS_H
#define SIDESCOPE_STACKS_H

#define STACKS_MAGIC 0x53544b31u	/* "STK1" */
#define STACKS_KSTACK_MAX 64		/* kernel frames kept */
/* user stack bytes are copied a page at a time, at most this many pages */
#define STACKS_PAGE 4096
#define STACKS_MAX_PAGES 32
#define STACKS_MAX_BYTES (STACKS_PAGE * STACKS_MAX_PAGES)
/* slots of the iterator's stack copies; each read of the iterator takes
 * one record, so that one would do */
#define STACKS_ITER_SLOTS 4
/* threads on a CPU caught at once */
#define STACKS_CATCH_SLOTS 64

enum stacks_flags {
	STACKS_F_USER = 1 << 0,		/* ip/sp/bp are the thread's user registers */
	STACKS_F_ON_CPU = 1 << 1,	/* running on a CPU when read */
	STACKS_F_CAUGHT = 1 << 2,	/* read on its CPU by a sample of its own */
	STACKS_F_KTHREAD = 1 << 3,	/* a kernel thread */
	STACKS_F_IN_KERNEL = 1 << 4,	/* caught while in the kernel */
	STACKS_F_SINCE = 1 << 5,	/* since_ns is known */
	STACKS_F_FUTEX = 1 << 6,	/* futex: the 16 bytes at the futex */
	STACKS_F_ARGS = 1 << 7,		/* nr and args[] read (args[0]: RDI) */
};

struct stacks_rec {
	__u32 magic;
	__u32 slot;		/* the stack copy's slot */
	__u32 tid, tgid;	/* in our PID namespace (0: not visible there) */
	__u32 state;		/* task->__state */
	__u32 exit_state;
	__u32 flags;		/* enum stacks_flags */
	__u32 cpu;		/* the CPU it is on, or last ran on */
	__u64 since_ns;		/* off its CPU for this long (STACKS_F_SINCE) */
	__u64 ip, sp, bp;	/* user registers */
	__u64 nr;		/* the system call it is in (orig_ax), or -1 */
	__u64 args[3];		/* and its first arguments */
	__u64 start;		/* task->start_boottime, ns */
	__s32 klen;		/* kernel stack bytes, or a negative errno */
	__u32 ulen;		/* user stack bytes copied from sp */
	__s32 uerr;		/* the copy's stop: 0 at the stack's top or the
				 * limit, else the failed copy's errno */
	__u32 pad;
	/* in futex(2): the 16 bytes at its address (a glibc mutex's lock
	 * word, count and owner's TID) */
	__u32 futex[4];
	__u64 kstack[STACKS_KSTACK_MAX];
	char comm[16];
};

struct stacks_ustack {
	__u8 b[STACKS_MAX_BYTES];
};

#endif
