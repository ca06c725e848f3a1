// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The clock and PID namespace BPF programs know their targets by
 * (prof/target.h). */
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/proc.h"
#include "prof/target.h"

int target__clock(struct target_clock *tc)
{
	long tck = sysconf(_SC_CLK_TCK);
	int err;

	/* USER_HZ is 100 wherever Linux runs; the value asked, when sane */
	tc->ns_per_tick = tck > 0 && tck <= 1000000000L ? 1000000000ull / (uint64_t)tck : 10000000;
	tc->boot_ticks = proc__timens_boot_ticks(tc->ns_per_tick);
	err = proc__pidns(0, &tc->pidns_dev, &tc->pidns_ino);
	if (err) {
		p_err("cannot read this process's PID namespace: %s", strerror(-err));
		return -1;
	}
	return 0;
}
