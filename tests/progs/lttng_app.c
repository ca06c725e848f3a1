// LDLIBS: -Itests/progs -llttng-ust -ldl -lpthread
/* A target for the LTTng tests: two threads that, once told to go, emit a
 * fixed number of rounds of sidescope_app:WorkStart, sidescope_app:request
 * and sidescope_app:WorkStop events, then report and wait to be killed.
 *
 * USAGE: lttng_app -r READY -g GO [-n ROUNDS] [-f]
 *   -r READY  write "PID\n" here once started (PID in this PID namespace)
 *   -g GO     start emitting once this file exists
 *   -n ROUNDS rounds per thread (default 100)
 *   -f        flood: no pause between rounds, a long payload
 * When done it writes "ROUNDS-per-thread THREADS\n" to READY.done. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_app_tp.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 2

static long rounds = 100;
static int flood;

static __attribute__((noinline)) long work(int id)
{
	volatile long acc = 0;
	int i;

	for (i = 0; i < 1000; i++)
		acc += (long)i * id;
	return acc;
}

static void *run(void *arg)
{
	static const char *paths[] = { "/api/fib", "/api/echo", "/health" };
	char longpath[256];
	int base = (int)(long)arg * 1000000;
	struct timespec ts = { 0, 200000 };
	long r;

	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	for (r = 0; r < rounds; r++) {
		int id = base + (int)r;
		long res;

		lttng_ust_tracepoint(sidescope_app, WorkStart, id);
		res = work(id);
		lttng_ust_tracepoint(sidescope_app, request, id,
				     flood ? longpath : paths[r % 3],
				     r % 10 == 0 ? 500 : 200);
		lttng_ust_tracepoint(sidescope_app, WorkStop, id, res);
		if (!flood)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static int write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *go = NULL;
	pthread_t th[THREADS];
	char buf[PATH_MAX];
	long i;
	int c;

	while ((c = getopt(argc, argv, "r:g:n:f")) != -1) {
		switch (c) {
		case 'r': ready = optarg; break;
		case 'g': go = optarg; break;
		case 'n': {
			char *end;

			errno = 0;
			rounds = strtol(optarg, &end, 10);
			if (errno || *end || rounds < 1 || rounds > 100000000) {
				fprintf(stderr, "lttng_app: bad -n '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'f': flood = 1; break;
		default: return 2;
		}
	}
	if (!ready || !go) {
		fprintf(stderr, "usage: lttng_app -r READY -g GO [-n ROUNDS] [-f]\n");
		return 2;
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write_file(ready, buf)) {
		perror("lttng_app: ready file");
		return 1;
	}
	for (i = 0; access(go, F_OK) != 0; i++) {
		struct timespec ts = { 0, 5000000 };

		if (i > 120 * 200) {
			fprintf(stderr, "lttng_app: no go file after 120 s\n");
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, run, (void *)(i + 1))) {
			fprintf(stderr, "lttng_app: pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	snprintf(buf, sizeof(buf), "%s.done", ready);
	{
		char text[64];

		snprintf(text, sizeof(text), "%ld %d\n", rounds, THREADS);
		if (write_file(buf, text)) {
			perror("lttng_app: done file");
			return 1;
		}
	}
	for (;;)
		pause();
}
