// LDLIBS: -Itests/progs -llttng-ust -ldl -lpthread
/* A hostile target for the timeline's LTTng reader: once told to go, it
 * fires N begin events of one name and then N end events, of another name
 * (nothing pairs: every end looks for a begin it will not find) or of the
 * same name (every end pairs, innermost first), or no end at all.
 *
 * USAGE: timeline_flood -r READY -g GO [-n N] [-m xy|xx|open|mix]
 *   -r READY  write "PID\n" here once started (PID in this PID namespace)
 *   -g GO     start firing once this file exists
 *   -n N      begins (and ends) to fire (default 100000)
 *   -m MODE   xy: N x_begin then N y_end (default); xx: N x_begin then
 *             N x_end; open: N x_begin only; mix: N rounds of every event
 *             of the provider, nested, on two threads (a small trace of
 *             every kind, for fuzz seeds)
 * Every 1000 events it yields the CPU for 50 us, so that the consumer
 * daemon keeps up and the trace holds them all. When done it writes
 * "EVENTS\n" to READY.done and waits to be killed. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "timeline_flood_tp.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void pace(long i)
{
	struct timespec ts = { 0, 50000 };

	if (i % 1000 == 999)
		nanosleep(&ts, NULL);
}

static long n = 100000;

/* One thread's rounds of mix: nested pairs, a note, an end alone. */
static void *mix(void *arg)
{
	long i;

	for (i = 0; i < n; i++) {
		lttng_ust_tracepoint(timeline_flood, x_begin, (int)i);
		lttng_ust_tracepoint(timeline_flood, z_begin, arg ? "GET /api/echo" : "GET /");
		lttng_ust_tracepoint(timeline_flood, note, "\x1b[31mred\xff", (int)i);
		lttng_ust_tracepoint(timeline_flood, z_end, (int)i);
		lttng_ust_tracepoint(timeline_flood, x_end, (int)i);
		lttng_ust_tracepoint(timeline_flood, y_end, (int)i);
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
	const char *ready = NULL, *go = NULL, *mode = "xy";
	char buf[PATH_MAX], text[64];
	long i, events = 0;
	pthread_t th;
	char *end;
	int c;

	while ((c = getopt(argc, argv, "r:g:n:m:")) != -1) {
		switch (c) {
		case 'r': ready = optarg; break;
		case 'g': go = optarg; break;
		case 'm': mode = optarg; break;
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 1 || n > 100000000) {
				fprintf(stderr, "timeline_flood: bad -n '%s'\n", optarg);
				return 2;
			}
			break;
		default: return 2;
		}
	}
	if (!ready || !go || (strcmp(mode, "xy") && strcmp(mode, "xx") && strcmp(mode, "open") &&
			       strcmp(mode, "mix"))) {
		fprintf(stderr, "usage: timeline_flood -r READY -g GO [-n N] [-m xy|xx|open|mix]\n");
		return 2;
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write_file(ready, buf)) {
		perror("timeline_flood: ready file");
		return 1;
	}
	for (i = 0; access(go, F_OK) != 0; i++) {
		struct timespec ts = { 0, 5000000 };

		if (i > 120 * 200) {
			fprintf(stderr, "timeline_flood: no go file after 120 s\n");
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	if (!strcmp(mode, "mix")) {
		if (pthread_create(&th, NULL, mix, &th)) {
			fprintf(stderr, "timeline_flood: pthread_create failed\n");
			return 1;
		}
		mix(NULL);
		pthread_join(th, NULL);
		events = 12 * n;
		n = 0;
	}
	for (i = 0; i < n; i++, events++) {
		lttng_ust_tracepoint(timeline_flood, x_begin, (int)i);
		pace(events);
	}
	for (i = 0; i < n && mode[0] == 'x'; i++, events++) {
		if (mode[1] == 'y')
			lttng_ust_tracepoint(timeline_flood, y_end, (int)i);
		else
			lttng_ust_tracepoint(timeline_flood, x_end, (int)i);
		pace(events);
	}
	snprintf(buf, sizeof(buf), "%s.done", ready);
	snprintf(text, sizeof(text), "%ld\n", events);
	if (write_file(buf, text)) {
		perror("timeline_flood: done file");
		return 1;
	}
	for (;;)
		pause();
}
