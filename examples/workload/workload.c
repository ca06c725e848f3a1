// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* workload: the bundled sample for demos, tests and benchmarks. It burns CPU
 * in a known call tree, built with frame pointers and without inlining so a
 * profiler can check that it sees exactly these frames:
 *
 *   main -> run_workers -> worker_loop -> compute_outer -> compute_middle
 *                                         -> compute_inner -> hash_leaf
 *                                      -> parse_outer -> parse_inner
 *                                         -> checksum_leaf
 *
 * compute_* takes about three quarters of the time, parse_* a quarter.
 * At exit it prints the work done, so benchmarks can measure how much a
 * profiler slows it down.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

struct worker {
	pthread_t tid;
	uint64_t iterations;
};

NOINLINE uint64_t hash_leaf(uint64_t x, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 29;
	}
	return x;
}

NOINLINE uint64_t compute_inner(uint64_t x)
{
	return hash_leaf(x, 3000) + 1;
}

NOINLINE uint64_t compute_middle(uint64_t x)
{
	return compute_inner(x ^ 0x9e3779b97f4a7c15ull) + 1;
}

NOINLINE uint64_t compute_outer(uint64_t x)
{
	return compute_middle(x + 7) + 1;
}

NOINLINE uint64_t checksum_leaf(uint64_t x, int rounds)
{
	uint64_t a = 1, b = x;

	for (int i = 0; i < rounds; i++) {
		a = (a + (b & 0xff)) % 65521;
		b = (b >> 1) ^ (a << 7) ^ (uint64_t)i;
	}
	return a ^ b;
}

NOINLINE uint64_t parse_inner(uint64_t x)
{
	return checksum_leaf(x, 1000) + 1;
}

NOINLINE uint64_t parse_outer(uint64_t x)
{
	return parse_inner(x * 3) + 1;
}

NOINLINE void *worker_loop(void *arg)
{
	struct worker *w = arg;
	uint64_t x = (uintptr_t)arg;

	while (!stop) {
		x = compute_outer(x);
		x = parse_outer(x);
		w->iterations++;
	}
	sink = x;
	return NULL;
}

NOINLINE int run_workers(int n, struct worker *workers)
{
	int i, err;

	for (i = 1; i < n; i++) {
		err = pthread_create(&workers[i].tid, NULL, worker_loop, &workers[i]);
		if (err) {
			fprintf(stderr, "workload: cannot start thread: %s\n", strerror(err));
			return -1;
		}
	}
	/* the first worker runs on the main thread */
	worker_loop(&workers[0]);
	for (i = 1; i < n; i++)
		pthread_join(workers[i].tid, NULL);
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void *timer_main(void *arg)
{
	const struct timespec *ts = arg;

	while (nanosleep(ts, NULL) && errno == EINTR && !stop)
		;
	stop = 1;
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
"workload: burn CPU in a known call tree (sidescope's bundled sample)\n"
"\n"
"USAGE: workload [-d SECONDS] [-t THREADS] [-r READY_FILE]\n"
"\n"
"  -d SECONDS     run this long (default: until SIGINT/SIGTERM)\n"
"  -t THREADS     worker threads (default 1)\n"
"  -r READY_FILE  write this file (holding the PID) once running\n"
"\n"
"EXAMPLES:\n"
"  workload -d 10          # ten seconds on one thread\n"
"  workload -t 2 &         # two threads until killed\n");
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	double seconds = 0;
	struct worker *workers;
	struct sigaction sa;
	struct timespec t0, t1, ts;
	uint64_t total = 0;
	int threads = 1, c, i;
	char *end;

	while ((c = getopt(argc, argv, "d:t:r:h")) != -1) {
		switch (c) {
		case 'd':
			seconds = strtod(optarg, &end);
			if (*end || seconds < 0 || seconds > 86400) {
				fprintf(stderr, "workload: invalid duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 't':
			threads = (int)strtol(optarg, &end, 10);
			if (*end || threads < 1 || threads > 256) {
				fprintf(stderr, "workload: invalid thread count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			ready = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	workers = calloc(threads, sizeof(*workers));
	if (!workers)
		return 1;
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			fprintf(stderr, "workload: cannot write %s\n", ready);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (seconds > 0) {
		pthread_t timer;

		ts.tv_sec = (time_t)seconds;
		ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
		if (pthread_create(&timer, NULL, timer_main, &ts) == 0)
			pthread_detach(timer);
	}
	if (run_workers(threads, workers))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < threads; i++)
		total += workers[i].iterations;
	printf("iterations %llu seconds %.3f rate %.1f\n", (unsigned long long)total,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       total / ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	free(workers);
	return 0;
}
