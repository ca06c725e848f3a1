// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The timeline model and writer (tools/lib/timeline/timeline.c): samples
 * merged into slices by thread and leaf (in any order of arrival), a
 * slice cut at the next one of its thread and broken after a gap,
 * instants, times from the origin (negative before it), raw events, and a
 * hostile thread name escaped. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "timeline/timeline.h"

#define ORIGIN 1000000ull
#define PERIOD 10000ull		/* 10 us */
#define RAW1 "{\"ph\":\"i\",\"name\":\"raw1\"}"
#define RAW2 "{\"ph\":\"i\",\"name\":\"raw2\"}"

static const char *const A[] = { "tick", "main" };
static const char *const B[] = { "spin", "tick", "main" };

struct smp {
	uint64_t ts;
	int tid;
	char stack;	/* 'A', 'B', 0: none */
};

/* shuffled on purpose: the writer sorts by thread and time */
static const struct smp samples[] = {
	{ ORIGIN + 1100000, 100, 'A' },	/* after a gap: a slice of its own */
	{ ORIGIN + 20000, 100, 'A' },
	{ ORIGIN, 100, 'A' },
	{ ORIGIN + 30000, 100, 'B' },	/* another leaf: a new slice */
	{ ORIGIN + 10000, 100, 'A' },
	{ ORIGIN + 5000, 101, 0 },
	{ ORIGIN, 102, 'A' },
	{ ORIGIN + 5000, 102, 'B' },	/* before A's period ends: A is cut */
};

/* Whether the document OUT holds NEEDLE; said when not. */
static int has(const char *out, const char *needle)
{
	if (strstr(out, needle))
		return 1;
	diag("missing: %s", needle);
	return 0;
}

int main(void)
{
	struct timeline *tl = timeline__new(getpid(), ORIGIN, PERIOD);
	struct timeline_counts c;
	char *out = NULL, want[256];
	size_t len = 0, i;
	int a, b, pid = (int)getpid();
	FILE *m;

	ok(tl != NULL, "a timeline of this process");
	a = timeline__stack(tl, 11, A, 2);
	b = timeline__stack(tl, 22, B, 3);
	ok(a >= 0 && b >= 0 && a != b, "two stacks");
	is_int(timeline__stack(tl, 11, B, 3), a, "a hash already added keeps its stack");
	is_int(timeline__find_stack(tl, 22), b, "found by hash");
	is_int(timeline__find_stack(tl, 33), -2 /* -ENOENT */, "an unknown hash: -ENOENT");
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct smp *s = &samples[i];

		ok(timeline__sample(tl, s->ts, s->tid, s->stack == 'A' ? a : s->stack == 'B' ? b : -1,
				    false) == 0, "sample %zu", i);
	}
	ok(timeline__instant(tl, ORIGIN + 2000, 100, "tick", "{\"x\":1}", 7) == 0, "an instant");
	ok(timeline__instant(tl, ORIGIN - 1500, 100, "early", NULL, 0) == 0,
	   "an instant before the origin");
	/* a thread /proc does not know, named by a hostile hint */
	ok(timeline__thread(tl, 2147483000, "a\x1b[31m\xff") == 0, "a thread with a hostile name");
	ok(timeline__raw_events(tl, RAW1, strlen(RAW1)) == 0 &&
	   timeline__raw_events(tl, RAW2, strlen(RAW2)) == 0 && timeline__raw_events(tl, "", 0) == 0,
	   "raw events");
	m = open_memstream(&out, &len);
	ok(m && timeline__write(tl, m, NULL, NULL) == 0, "written");
	fclose(m);
	timeline__counts(tl, &c);
	is_int(c.samples, 8, "8 samples");
	is_int(c.slices, 6, "6 slices: 3 on thread 100, 1 on 101, 2 on 102");

	ok(has(out, "{\"traceEvents\":[\n"), "the document starts with traceEvents");
	ok(has(out, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"source\":\"sidescope timeline\""),
	   "displayTimeUnit and otherData");
	snprintf(want, sizeof(want), "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,", pid);
	ok(has(out, want), "process_name");
	snprintf(want, sizeof(want), "\"name\":\"tick\",\"ts\":0.000,\"dur\":30.000,\"pid\":%d,"
		 "\"tid\":100,\"args\":{\"samples\":3,\"stack\":[\"tick\",\"main\"]}}", pid);
	ok(has(out, want), "three samples of tick: one slice of three periods, the stack in args");
	ok(has(out, "\"name\":\"spin\",\"ts\":30.000,\"dur\":10.000,"),
	   "a new leaf starts a slice; the gap after it ends it at one period");
	ok(has(out, "\"name\":\"tick\",\"ts\":1100.000,\"dur\":10.000,"), "after the gap, a new slice");
	ok(has(out, "\"name\":\"[no user stack]\",\"ts\":5.000,\"dur\":10.000,"),
	   "a sample without a stack");
	ok(has(out, "\"name\":\"tick\",\"ts\":0.000,\"dur\":5.000,") &&
	   has(out, "\"name\":\"spin\",\"ts\":5.000,\"dur\":10.000,"),
	   "a slice is cut where the next one of its thread starts");
	ok(has(out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"uprobe\",\"name\":\"tick\",\"ts\":2.000,"),
	   "the instant, scoped to its thread");
	ok(has(out, "\"tid\":100,\"args\":{\"x\":1}}"), "with its args object");
	ok(has(out, "\"name\":\"early\",\"ts\":-1.500,") && has(out, "\"args\":{}}"),
	   "before the origin: a negative time; no args: an empty object");
	ok(has(out, "{\"ph\":\"i\",\"name\":\"raw1\"},\n{\"ph\":\"i\",\"name\":\"raw2\"}\n]"),
	   "raw events last, separated");
	ok(has(out, "\"tid\":2147483000,\"args\":{\"name\":\"a\\u001b[31m"),
	   "the hostile name escaped");
	ok(!memchr(out, 0x1b, len) && !memchr(out, 0xff, len), "no raw control or invalid byte");
	free(out);
	timeline__free(tl);
	timeline__free(NULL);
	return done_testing();
}
