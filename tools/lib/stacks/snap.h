/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One snapshot of every thread of a process without stopping it
 * (bpf/stacks.bpf.c): the task iterator reads each thread off its CPU
 * (registers saved at its kernel entry, kernel stack, user stack memory);
 * the threads found on a CPU are then caught there by a cpu-clock sample of
 * their own (STK_CATCH_MS at most), and those not caught in time, which
 * left their CPU meanwhile, are read once more by the iterator. Each
 * thread's record is handed to a callback as soon as it is read, with its
 * stack memory valid for that call only: nothing grows with the size of the
 * stacks, and the number of threads and the time are bounded. */
#ifndef SIDESCOPE_STACKS_SNAP_H
#define SIDESCOPE_STACKS_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include <stacks.h>

/* how long on-CPU threads are waited for on their CPU */
#define STK_CATCH_MS 50

struct stk_snap;

/* The thread's record, its user stack from UBASE (REC->ulen bytes at
 * USTACK), for this call only. Return 0, or -1 to stop the snapshot. */
typedef int (*stk_thread_fn)(void *ctx, const struct stacks_rec *rec, uint64_t ubase,
			     const uint8_t *ustack);

struct stk_snap_stats {
	size_t threads;		/* records handed over */
	size_t on_cpu;		/* of them, found on a CPU */
	size_t caught;		/* caught there */
	size_t reread;		/* read again once off it */
	size_t uncaught;	/* neither: handed over as first read */
	size_t left_out;	/* past the limit of threads or of time */
	uint64_t iter_ns;	/* the iterator's reads */
	uint64_t catch_ns;	/* waiting for on-CPU threads */
};

/* Load the BPF program: user stacks of at most MAX_PAGES pages (<=
 * STACKS_MAX_PAGES). NULL once said. */
struct stk_snap *stk_snap__open(unsigned int max_pages);
/* Every thread of PID (as our PID namespace numbers it) to FN, at most
 * MAX_THREADS of them, until DEADLINE_NS (CLOCK_MONOTONIC; 0: none). ST
 * filled in. 0, or a negative errno (-ESRCH: no such process; the
 * attach's error, said). */
int stk_snap__take(struct stk_snap *s, pid_t pid, size_t max_threads, uint64_t deadline_ns,
		   stk_thread_fn fn, void *ctx, struct stk_snap_stats *st);
void stk_snap__close(struct stk_snap *s);

/* "running", "sleeping", "disk wait", ... for a record's state */
const char *stk__state_name(const struct stacks_rec *r);
/* The one-letter state, as ps shows it: R S D T t Z X I P */
char stk__state_letter(const struct stacks_rec *r);

#endif
