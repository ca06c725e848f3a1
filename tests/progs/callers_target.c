// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Target for the uprobe aggregation tests: a function called from known
 * callers with known values, in rounds started from stdin, so that a test
 * knows exactly how many hits of each caller, value and string to expect.
 *   callers_target READY_FILE < commands
 * Command "round N": N times, caller_a calls work() 3 times and caller_b
 * once, with sizes 1, 100, 10000 (from caller_a) and 1000000 (from
 * caller_b), and names u"héllo" (caller_a) or u"wörld ✓" (caller_b); then
 * "done N ns=T" on stdout, T the rounds' time. "quit" ends it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uchar.h>
#include <unistd.h>

#ifdef __clang__
#define PROBE __attribute__((noinline, used, optnone))
#else
#define PROBE __attribute__((noinline, noipa, used))
#endif

volatile long sink;

PROBE long work(long size, const char16_t *name)
{
	sink += size + name[0];
	return size * 2;
}

PROBE void caller_a(void)
{
	work(1, u"héllo");
	work(100, u"héllo");
	work(10000, u"héllo");
}

PROBE void caller_b(void)
{
	work(1000000, u"wörld ✓");
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	char line[128];
	FILE *f;
	long n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: callers_target READY_FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "quit", 4) == 0)
			break;
		if (sscanf(line, "round %ld", &n) != 1)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++) {
			caller_a();
			caller_b();
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("done %ld ns=%lld\n", n, (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		       (t1.tv_nsec - t0.tv_nsec));
	}
	return 0;
}
