/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Time for work on what the application controls: reading a file's
 * symbols, looking for its debug files, loading its DWARF. The app chooses
 * how much of that there is (huge tables, sparse files, many candidates),
 * so each piece of work has a deadline and checks it as it goes; and once a
 * stop is asked (run__stop: SIGINT, SIGTERM) everything still to do gets
 * BUDGET_STOP_NS in all, so that a capture ends within 2 s of the signal.
 * What is over its time is left out (and counted by whoever asked). */
#ifndef SIDESCOPE_BUDGET_H
#define SIDESCOPE_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* After the stop signal: what all the work left may take together. */
#define BUDGET_STOP_NS (1000ull * 1000 * 1000)

struct budget {
	uint64_t deadline;	/* CLOCK_MONOTONIC ns; UINT64_MAX: the stop's alone */
};

/* B runs out NS from now (0: only when a stop's time is over). */
void budget__start(struct budget *b, uint64_t ns);
/* Whether B is over: its deadline passed, or a stop was asked at least
 * BUDGET_STOP_NS ago. NULL: never. Costs a clock read: call it every few
 * thousand steps of a loop, not every step. */
bool budget__over(const struct budget *b);

#endif
