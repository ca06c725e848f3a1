// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -lm
/* cbrt_loop: spins calling libm's cbrt, a victim for the test that no other
 * process's files name its frames (a look-alike of libm with the same build
 * id mapped by another process must not).
 *   cbrt_loop [-r PIDFILE] [-d SECONDS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
/* through a pointer: the compiler neither folds nor inlines the call */
static double (*volatile cbrt_fn)(double) = cbrt;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void cbrt_round(double x)
{
	int i;

	for (i = 0; i < 10000; i++)
		sink += cbrt_fn(x + i);
}

int main(int argc, char **argv)
{
	const char *pidfile = NULL;
	double secs = 30, end;
	int c;

	while ((c = getopt(argc, argv, "r:d:")) != -1) {
		switch (c) {
		case 'r': pidfile = optarg; break;
		case 'd': secs = atof(optarg); break;
		default:
			fprintf(stderr, "USAGE: cbrt_loop [-r PIDFILE] [-d SECONDS]\n");
			return 2;
		}
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 1;
	}
	end = now_s() + secs;
	while (now_s() < end)
		cbrt_round(sink > 1e300 ? 0 : 2.0);
	return 0;
}
