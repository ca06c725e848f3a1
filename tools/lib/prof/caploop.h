/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The capture loop's clock: when a capture ends, drains, looks at its
 * targets' maps again and refreshes what it shows, and how long it may
 * wait for BPF's reports meanwhile. Times are now_ns() values; no BPF, no
 * system call: the profiler's loop asks it, a unit test drives it with a
 * clock of its own. */
#ifndef SIDESCOPE_CAPLOOP_H
#define SIDESCOPE_CAPLOOP_H

#include <stdbool.h>
#include <stdint.h>

struct caploop {
	uint64_t t0;		/* the start */
	uint64_t end;		/* the end (0: none, until a signal) */
	uint64_t drain_every, last_drain;
	uint64_t look_every, last_look;	/* 0: no looks */
	bool every_100ms;	/* the rate and the progress line, 10 a second */
};

enum caploop_due {
	CAPLOOP_END = 1,	/* the duration is over */
	CAPLOOP_DRAIN = 2,	/* a drain is due (its time taken as done) */
	CAPLOOP_LOOK = 4,	/* a look at the targets' maps (likewise) */
};

/* A loop that starts at T0 and lasts SECS (0: until stopped), draining
 * every DRAIN_NS and, with LOOK_NS, looking every LOOK_NS. */
void caploop__init(struct caploop *l, uint64_t t0, uint64_t secs, uint64_t drain_ns,
		   uint64_t look_ns, bool every_100ms);
/* What is due at NOW (enum caploop_due), the drain and the look marked
 * done at NOW; 0: nothing. */
unsigned int caploop__due(struct caploop *l, uint64_t now);
/* Milliseconds from NOW until something is due: 1 to 1000 (a signal or
 * a BPF report ends the wait sooner). */
int caploop__wait_ms(const struct caploop *l, uint64_t now);

#endif
