// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* replace_v1, replace_v2: two builds of one program, for the tests that
 * replace a probed binary. Each line read from stdin holding a number N
 * calls probed_fn(N) and prints "called N"; "quit" (or EOF) ends it. The
 * first line printed is "ready PID". replace_v2 has more code before
 * probed_fn, so the function sits at another file offset.
 *   replace_v1 [loop]   with "loop": call probed_fn every millisecond */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE __attribute__((noinline, used))

volatile long sink;

#ifdef REPLACE_V2
PROBE long v2_only(long a, long b)
{
	long i, r = 0;

	for (i = 0; i < a; i++)
		r += (i * b) ^ (r >> 3);
	sink = r;
	return r * 7 + a - b;
}
#endif

PROBE int probed_fn(int n)
{
	sink = n;
	return n + 1;
}

int main(int argc, char **argv)
{
	char line[64];
	int i;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "loop"))
		for (i = 0;; i++) {
			probed_fn(i);
			usleep(1000);
		}
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4)) {
		int n = atoi(line);

		printf("called %d -> %d\n", n, probed_fn(n));
		fflush(stdout);
	}
	return 0;
}
