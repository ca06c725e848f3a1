// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* short_spin: a process that spends about MS milliseconds (default 30) on
 * the CPU in one named function, then exits.
 *   short_spin [MS [DEPTH [VARY]]]
 * With DEPTH, short_spin_work runs under DEPTH frames of short_spin_deeper
 * (deeper than the profiler's 127-frame stacks from 127 on); with VARY 1,
 * each round of the spin goes down to another depth (1 to DEPTH), so that
 * a profile sees up to DEPTH distinct stacks. For the profiler's tests of
 * short-lived processes and of its loss reports. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) void short_spin_work(unsigned long long end)
{
	unsigned long i;

	/* the vDSO's clock_gettime between rounds is a small share */
	do {
		for (i = 0; i < 20000; i++)
			sink += i * 7;
	} while (now_ns() < end);
}

__attribute__((noinline)) void short_spin_deeper(int depth, unsigned long long end)
{
	if (depth > 0)
		short_spin_deeper(depth - 1, end);
	else
		short_spin_work(end);
	sink++;	/* not a tail call */
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 30;
	long depth = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int vary = argc > 3 && argv[3][0] == '1';
	unsigned long long end, step;
	long d = 0;

	if (ms < 1 || ms > 100000 || depth < 0 || depth > 10000)
		return 2;
	end = now_ns() + (unsigned long long)ms * 1000000ull;
	if (!vary) {
		short_spin_deeper((int)depth, end);
		return 0;
	}
	/* one depth a millisecond, round and round */
	for (step = now_ns(); step < end; step = now_ns()) {
		short_spin_deeper((int)(d % depth) + 1, step + 1000000ull < end ? step + 1000000ull : end);
		d++;
	}
	return 0;
}
