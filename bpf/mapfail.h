/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Why the kernel refused to add an element to a hash map (the stack store,
 * a count map), shared by the BPF programs (maps.bpf.h: map_fail_of) and
 * user space, which counts and explains each: the counters of a cause are
 * consecutive, in this order. */
#ifndef SIDESCOPE_MAPFAIL_H
#define SIDESCOPE_MAPFAIL_H

enum map_fail {
	MAP_FAIL_FULL = 0,	/* -E2BIG: as many elements as max_entries */
	MAP_FAIL_NOMEM,		/* -ENOMEM: maps filled as they go
				 * (BPF_F_NO_PREALLOC) found no free element
				 * in the BPF memory allocator's per-CPU cache */
	MAP_FAIL_BUSY,		/* -EBUSY, -EDEADLK, -ETIMEDOUT: the element's
				 * bucket was locked (a program on this CPU, or
				 * a long wait for another CPU) */
	MAP_FAIL_OTHER,		/* any other error */
	MAP_FAIL_N,
};

#endif
