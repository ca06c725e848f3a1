// LDLIBS: -Itests/progs -llttng-ust -ldl -lpthread
/* A target for the timeline test: every 10 ms it calls tick(counter),
 * which spins on the CPU for about 2 ms and then emits the LTTng event
 * timeline_app:tick_done with the same counter. A uprobe on tick sees
 * the counter as arg1, about 2 ms before the LTTng event: the test checks
 * that the two clocks agree.
 *
 * USAGE: timeline_app -r READY [-d SECONDS]
 *   -r READY    write "PID\n" here once started (PID in this PID namespace)
 *   -d SECONDS  stop after this long and print the spin loop's iterations
 *               per CPU second of this process (bench/timeline.sh: what a
 *               tracer costs it); without it, run until killed */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "timeline_app_tp.h"

#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t iterations;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* About 2 ms on the CPU, most of it in this function's own loop (the
 * clock is read once every few thousand iterations). */
__attribute__((noinline)) int tick(int counter)
{
	uint64_t until = mono_ns() + 2000000;
	volatile unsigned long acc = 0;
	unsigned long i;

	do {
		for (i = 0; i < 5000; i++)
			acc += i ^ (unsigned long)counter;
		iterations += 5000;
	} while (mono_ns() < until);
	lttng_ust_tracepoint(timeline_app, tick_done, counter);
	return (int)(acc & 1);
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	char tmp[PATH_MAX];
	struct timespec next, cpu;
	uint64_t end = 0;
	FILE *f;
	int c, counter;

	while ((c = getopt(argc, argv, "r:d:")) != -1) {
		if (c == 'r')
			ready = optarg;
		else if (c == 'd')
			end = mono_ns() + strtoull(optarg, NULL, 10) * 1000000000ull;
		else
			return 2;
	}
	if (!ready) {
		fprintf(stderr, "usage: timeline_app -r READY\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, ready)) {
		perror("timeline_app: ready file");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (counter = 1; !end || mono_ns() < end; counter++) {
		tick(counter);
		next.tv_nsec += 10000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("%.1f\n", (double)iterations / ((double)cpu.tv_sec + cpu.tv_nsec / 1e9));
	return 0;
}
