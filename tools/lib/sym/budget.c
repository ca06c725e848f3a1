// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Deadlines for work on the application's files (budget.h). */
#include "core/run.h"
#include "core/util.h"
#include "sym/budget.h"

/* when the work left after a stop must be done by (0: no stop seen) */
static uint64_t stop_deadline;

void budget__start(struct budget *b, uint64_t ns)
{
	b->deadline = ns ? now_ns() + ns : UINT64_MAX;
}

bool budget__over(const struct budget *b)
{
	uint64_t now;

	if (!b)
		return false;
	now = now_ns();
	if (!run__stop)
		stop_deadline = 0;	/* a test that asked for a stop took it back */
	else if (!stop_deadline)
		stop_deadline = now + BUDGET_STOP_NS;
	return now >= b->deadline || (stop_deadline && now >= stop_deadline);
}
