// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The capture loop without BPF: its clock (prof/caploop: when it ends,
 * drains and looks, how long it waits) driven by a clock of the test's
 * own, and the queue of BPF's reports (capture__queue_news and
 * capture__handle_news: each report once, bounded, handled within a time
 * however slow one is; a stop signal ends the handling). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/run.h"
#include "core/util.h"
#include "prof/capture.h"
#include "prof/caploop.h"
#include "tap.h"

#define S 1000000000ull
#define MS 1000000ull

static void test_clock(void)
{
	struct caploop l;
	uint64_t t0 = 1000 * S;

	/* 5 s, drains every 2 s, looks every 2 s, no 100 ms ticks */
	caploop__init(&l, t0, 5, 2 * S, 2 * S, false);
	is_int(caploop__due(&l, t0), 0, "nothing due at the start");
	is_int(caploop__wait_ms(&l, t0), 1000, "a wait is one second at the most");
	is_int(caploop__wait_ms(&l, t0 + 1500 * MS), 500, "the wait ends at the drain");
	is_int(caploop__due(&l, t0 + 2 * S), CAPLOOP_DRAIN | CAPLOOP_LOOK, "a drain and a look at 2 s");
	is_int(caploop__due(&l, t0 + 2 * S + 1), 0, "and not again at once");
	is_int(caploop__wait_ms(&l, t0 + 3900 * MS), 100, "next at 4 s");
	is_int(caploop__due(&l, t0 + 4 * S), CAPLOOP_DRAIN | CAPLOOP_LOOK, "both again at 4 s");
	is_int(caploop__wait_ms(&l, t0 + 4700 * MS), 300, "the end comes before the next drain");
	is_int(caploop__due(&l, t0 + 5 * S), CAPLOOP_END, "the end at 5 s");
	is_int(caploop__due(&l, t0 + 9 * S), CAPLOOP_END, "and after it");
	is_int(caploop__wait_ms(&l, t0 + 6 * S), 1, "past everything: the shortest wait");

	/* until stopped: no end; no looks; ticks every 100 ms */
	caploop__init(&l, t0, 0, 2 * S, 0, true);
	is_int(caploop__due(&l, t0 + 100 * S) & CAPLOOP_END, 0, "no duration: never ends by itself");
	is_int(caploop__due(&l, t0 + 100 * S) & CAPLOOP_LOOK, 0, "no looks when none asked");
	is_int(caploop__wait_ms(&l, t0 + 100 * S), 100, "ticks of 100 ms");
	/* a drain late (the loop was busy): the next one 2 s after it ran */
	caploop__init(&l, t0, 0, 2 * S, 0, false);
	is_int(caploop__due(&l, t0 + 7 * S), CAPLOOP_DRAIN, "a late drain");
	is_int(caploop__wait_ms(&l, t0 + 7 * S), 1000, "then a full wait");
}

static int slow_calls, want_calls;
static pid_t want_pids[8];

/* a report's handling that takes 50 ms (an app's huge maps) */
static void slow_want(void *arg, pid_t pid, uint32_t idx)
{
	struct timespec ts = { 0, 50 * MS };

	(void)arg;
	(void)idx;
	if (want_calls < 8)
		want_pids[want_calls] = pid;
	want_calls++;
	slow_calls++;
	nanosleep(&ts, NULL);
	if (slow_calls == 100)
		run__stop = SIGTERM;	/* a stop signal while handling */
}

static void test_queue(void)
{
	struct capture c;
	uint64_t t;
	int n, i;

	memset(&c, 0, sizeof(c));
	c.on_want = slow_want;
	capture__queue_news(&c, 10, 3);
	capture__queue_news(&c, 10, 3);
	capture__queue_news(&c, 11, 3);
	capture__queue_news(&c, 10, 4);
	is_int(c.news_n - c.news_head, 3, "the same report twice is queued once");
	n = capture__handle_news(&c, now_ns() + 10 * S);
	is_int(n, 3, "all handled within a generous time");
	is_int(want_pids[0] * 100 + want_pids[1] * 10 + want_pids[2], 10 * 100 + 11 * 10 + 10,
	       "in the order they came");
	is_int(c.news_n, 0, "the queue is empty");

	/* 20 slow reports and 120 ms: three handled, the others wait */
	want_calls = 0;
	for (i = 0; i < 20; i++)
		capture__queue_news(&c, 100 + i, 3);
	t = now_ns();
	n = capture__handle_news(&c, t + 120 * MS);
	t = now_ns() - t;
	ok(n >= 2 && n <= 4, "a budget of 120 ms: %d of 50 ms each handled", n);
	ok(t < 250 * MS, "and the call returned in time (%llu ms)", (unsigned long long)(t / MS));
	is_int(c.news_n - c.news_head, 20 - n, "the rest still queued");
	is_int(capture__handle_news(&c, now_ns()), 1, "a time already past: one handled all the same");
	n = capture__handle_news(&c, now_ns() + 10 * S);
	is_int((int)(c.news_n - c.news_head), 0, "the rest later (%d)", n);

	/* bounded: past CAPTURE_NEWS_MAX waiting, counted */
	for (i = 0; i < CAPTURE_NEWS_MAX + 5; i++)
		capture__queue_news(&c, 1000 + i, 1);
	is_int(c.news_n - c.news_head, CAPTURE_NEWS_MAX, "at most %d waiting", CAPTURE_NEWS_MAX);
	is_int(c.news_dropped, 5, "the ones past it counted as lost");

	/* a stop signal ends the handling */
	slow_calls = 90;
	t = now_ns();
	n = capture__handle_news(&c, t + 60 * S);
	is_int(n, 10, "SIGTERM at the 100th handled: the handling ends there");
	ok(now_ns() - t < 2 * S, "well within the stop's 2 s");
	run__stop = 0;
	capture__free(&c);
}

int main(void)
{
	test_clock();
	test_queue();
	return done_testing();
}
