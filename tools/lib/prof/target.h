/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a BPF program needs to know its targets by, shared by the profiler
 * and the timeline: the clock of /proc/PID/stat's start times (USER_HZ) and
 * the boot time in it (a time namespace moves it), and this process's PID
 * namespace, at whose level the programs key tasks (bpf/pidns.h). */
#ifndef SIDESCOPE_TARGET_H
#define SIDESCOPE_TARGET_H

#include <stdint.h>

struct target_clock {
	uint64_t ns_per_tick;	/* nanoseconds a clock tick */
	uint64_t boot_ticks;	/* our time namespace's boot, in ticks */
	uint64_t pidns_dev, pidns_ino;	/* our PID namespace */
};

/* TC filled in. 0, or -1 once said. */
int target__clock(struct target_clock *tc);

/* A start time in ticks since our boot as the kernel counts it (the
 * programs read task->start_boottime): 0 for none. */
static inline uint64_t target__bpf_start(const struct target_clock *tc, uint64_t start)
{
	return start > tc->boot_ticks ? start - tc->boot_ticks : 0;
}

#endif
