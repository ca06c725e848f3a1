// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The timeline's LTTng reader (tools/lib/timeline/tlread.c, ctf/ctfpair.c)
 * over a stream lttng-ust wrote (tests/data/timeline) and streams written
 * here in its layout: begins paired with their ends innermost first, and
 * every budget spent and counted (open begins per thread and name and in
 * all, threads, a begin's arguments, bytes of output, the deadline, a
 * signal); in a child process, a reader stuck in babeltrace2 (a packet
 * that says its size is 0) killed on time, sooner after a signal, with its
 * memory bounded. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/run.h"
#include "core/util.h"
#include "tap.h"
#include "timeline/timeline.h"
#include "timeline/tlread.h"

/* event ids in the metadata */
enum { X_BEGIN, X_END, Y_END, Z_BEGIN, Z_END, NOTE };

#define PID 4242
#define T0 1000000000ull

static char dir[4096];
static char *metadata;		/* tests/data/timeline/metadata */

/* ---- writing a stream ----------------------------------------------------- */

struct stream {
	unsigned char *buf;
	size_t len, cap;
	size_t pkt;		/* where the open packet starts */
	uint64_t ts;		/* of the last event */
	unsigned nev;		/* events in the open packet */
};

static void grow(struct stream *s, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->buf = realloc(s->buf, s->cap);
		if (!s->buf)
			abort();
	}
}

static void put(struct stream *s, const void *p, size_t n)
{
	grow(s, n);
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void put_u64(struct stream *s, uint64_t v) { put(s, &v, 8); }
static void put_u32(struct stream *s, uint32_t v) { put(s, &v, 4); }

static void pad8(struct stream *s)
{
	static const unsigned char z[8];

	put(s, z, (8 - s->len % 8) % 8);
}

/* The trace's uuid, from the metadata, as bytes. */
static void uuid(unsigned char out[16])
{
	const char *u = strstr(metadata, "uuid = \"") + 8;
	int i = 0;

	for (; i < 16; u++) {
		if (*u == '-')
			continue;
		sscanf(u, "%2hhx", &out[i++]);
		u++;
	}
}

static void packet_open(struct stream *s)
{
	unsigned char id[16];

	s->pkt = s->len;
	s->nev = 0;
	uuid(id);
	put_u32(s, 0xC1FC1FC1u);
	put(s, id, 16);
	put_u32(s, 0);			/* stream_id */
	put_u64(s, 0);			/* stream_instance_id */
	put_u64(s, s->ts);		/* timestamp_begin */
	put_u64(s, 0);			/* timestamp_end: set on close */
	put_u64(s, 0);			/* content_size */
	put_u64(s, 0);			/* packet_size */
	put_u64(s, 0);			/* packet_seq_num */
	put_u64(s, 0);			/* events_discarded */
	put_u32(s, 0);			/* cpu_id */
}

/* Close the open packet; SIZE0: saying its size (and its content's) is 0. */
static void packet_close(struct stream *s, bool size0)
{
	uint64_t bits = size0 ? 0 : (uint64_t)(s->len - s->pkt) * 8;

	pad8(s);
	memcpy(s->buf + s->pkt + 40, &s->ts, 8);
	memcpy(s->buf + s->pkt + 48, &bits, 8);
	bits = size0 ? 0 : (uint64_t)(s->len - s->pkt) * 8;
	memcpy(s->buf + s->pkt + 56, &bits, 8);
}

/* One event ID of thread VTID, 100 ns after the last; N or STR its
 * payload as the class has it. */
static void event(struct stream *s, int id, int vtid, int n, const char *str)
{
	char procname[17] = "timeline_flood";
	uint16_t id16 = (uint16_t)id;

	if (s->nev == 4096) {
		packet_close(s, false);
		packet_open(s);
	}
	s->nev++;
	s->ts += 100;
	/* the header is byte-aligned (TSDL's align is in bits): no padding */
	put(s, &id16, 2);
	put_u32(s, (uint32_t)s->ts);
	put_u32(s, PID);
	put_u32(s, (uint32_t)vtid);
	put(s, procname, 17);
	if (id == Z_BEGIN || id == NOTE)
		put(s, str, strlen(str) + 1);
	if (id != Z_BEGIN)
		put_u32(s, (uint32_t)n);
}

static void stream_start(struct stream *s)
{
	memset(s, 0, sizeof(*s));
	s->ts = T0;
	packet_open(s);
}

/* The stream closed and written as the trace's only one. */
static void stream_save(struct stream *s, bool size0)
{
	char path[4200];
	FILE *f;

	packet_close(s, size0);
	snprintf(path, sizeof(path), "%s/stream_0", dir);
	f = fopen(path, "w");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f))
		abort();
	free(s->buf);
	s->buf = NULL;
}

/* ---- reading it ------------------------------------------------------------ */

struct result {
	struct tl_lttng_stats st;
	int err;
	char *out;		/* the events written */
	size_t len;
};

static void read_with(const struct tl_read_limits *lim, struct result *res)
{
	struct tl_read rd = { .dir = dir, .pid = PID, .origin = T0, .lim = *lim };
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/out", dir);
	f = fopen(path, "w+");
	if (!f)
		abort();
	memset(res, 0, sizeof(*res));
	rd.fd = fileno(f);
	res->err = tl_read__dir(&rd, &res->st);
	fflush(f);
	fclose(f);
	if (read_file(path, &res->out, &res->len, 1 << 30))
		abort();
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void limits(struct tl_read_limits *lim)
{
	tl_read__default_limits(lim);
}

/* ---- the cases ----------------------------------------------------------------- */

/* The stream lttng-ust wrote: two threads, three rounds each of x_begin,
 * z_begin, note, z_end, x_end, y_end. */
static void test_real(void)
{
	struct tl_read_limits lim;
	struct result r;
	char path[4200], *buf = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stream_0", dir);
	f = fopen(path, "w");
	if (read_file(fixture("timeline/mix-two-threads"), &buf, &len, 1 << 20) || !f ||
	    fwrite(buf, 1, len, f) != len || fclose(f))
		abort();
	free(buf);
	limits(&lim);
	read_with(&lim, &r);
	is_int(r.err, 0, "real: read");
	is_int(r.st.events, 36, "real: 36 events");
	is_int(r.st.slices, 12, "real: x and z pairs are 12 slices");
	is_int(r.st.instants, 12, "real: note and y_end 12 instants");
	is_int(count(r.out, "\"name\":\"timeline_flood:x\""), 6, "real: 6 named by their base");
	ok(strstr(r.out, "\"args\":{\"begin\":{\"s\":\"GET /api/echo\"},\"end\":{\"n\":0}}") != NULL,
	   "real: a slice has its begin's and end's arguments");
	ok(strstr(r.out, "\"s\":\"\\u001b[31mred\\ufffd\"") != NULL,
	   "real: an escape and invalid UTF-8 in a payload, escaped");
	is_int(count(r.out, "\"thread_name\""), 2, "real: both threads named");
	ok(r.st.monotonic && !strcmp(r.st.clock, "monotonic"), "real: its clock is monotonic");
	free(r.out);
}

static void test_pairs(void)
{
	struct tl_read_limits lim;
	struct stream s;
	struct result r;
	const char *p;
	int i, bad = 0, pairs = 0;

	/* 3000 x_begin, then 3000 x_end: the first 1024 ends close the newest
	 * 1024 begins, innermost first; 1976 begins dropped */
	stream_start(&s);
	for (i = 0; i < 3000; i++)
		event(&s, X_BEGIN, 7, i, NULL);
	for (i = 0; i < 3000; i++)
		event(&s, X_END, 7, i, NULL);
	stream_save(&s, false);
	limits(&lim);
	read_with(&lim, &r);
	is_int(r.err, 0, "pairs: read");
	is_int(r.st.events, 6000, "pairs: 6000 events");
	is_int(r.st.slices, 1024, "pairs: 1024 slices (the depth budget)");
	is_int(r.st.begins_dropped, 3000 - 1024, "pairs: the oldest 1976 begins dropped, counted");
	is_int(r.st.instants, 3000 - 1024, "pairs: their ends are instants");
	is_int(r.st.cut, TL_CUT_NONE, "pairs: read to the end");
	for (p = r.out; (p = strstr(p, "\"begin\":{\"n\":")); p++) {
		int b, e;

		if (sscanf(p, "\"begin\":{\"n\":%d},\"end\":{\"n\":%d}", &b, &e) != 2 || b + e != 2999)
			bad++;
		pairs++;
	}
	is_int(pairs, 1024, "pairs: every slice has its begin's and end's arguments");
	is_int(bad, 0, "pairs: end k closes begin 2999 - k (innermost first)");
	ok(strstr(r.out, "\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":7,"
		      "\"args\":{\"name\":\"timeline_flood\"}") != NULL, "pairs: the thread is named");
	free(r.out);

	/* begins of another name never pair: 20000 and 20000, in time */
	stream_start(&s);
	for (i = 0; i < 20000; i++)
		event(&s, X_BEGIN, 7, i, NULL);
	for (i = 0; i < 20000; i++)
		event(&s, Y_END, 7, i, NULL);
	stream_save(&s, false);
	read_with(&lim, &r);
	is_int(r.st.instants, 20000, "unpaired: every y_end an instant");
	is_int(r.st.slices, 1024, "unpaired: the begins kept end unfinished");
	is_int(count(r.out, "\"unfinished\":true"), 1024, "unpaired: said so");
	free(r.out);
}

/* Random begins and ends of two names on 300 threads, no budget reached:
 * every end closes the innermost open begin of its thread and name, as a
 * stack per key says (the key table grows, and loses keys as their last
 * begin closes, over and over). */
static void test_random(void)
{
	enum { EVENTS = 20000, THREADS = 300 };
	static int stack[THREADS][2][EVENTS / 4], depth[THREADS][2], want[EVENTS];
	struct tl_read_limits lim;
	struct stream s;
	struct result r;
	unsigned seed = 1;
	const char *p;
	int i, paired = 0, open = 0, got = 0, bad = 0;
	char num[16];

	stream_start(&s);
	for (i = 0; i < EVENTS; i++) {
		int t = rand_r(&seed) % THREADS, z = rand_r(&seed) % 2;
		bool begin = rand_r(&seed) % 2 && depth[t][z] < EVENTS / 4;

		want[i] = -1;
		if (begin) {
			stack[t][z][depth[t][z]++] = i;
			snprintf(num, sizeof(num), "%d", i);
			event(&s, z ? Z_BEGIN : X_BEGIN, 10 + t, i, num);
			open++;
			continue;
		}
		if (depth[t][z]) {
			want[i] = stack[t][z][--depth[t][z]];
			paired++;
			open--;
		}
		event(&s, z ? Z_END : X_END, 10 + t, i, NULL);
	}
	stream_save(&s, false);
	limits(&lim);
	lim.max_open = EVENTS;
	read_with(&lim, &r);
	is_int(r.st.slices, paired + open, "random: %d pairs and %d unfinished", paired, open);
	is_int(r.st.begins_dropped, 0, "random: no begin dropped");
	for (p = r.out; (p = strstr(p, "\"args\":{\"begin\":")); p++) {
		int b, e;

		if (sscanf(p, "\"args\":{\"begin\":{\"n\":%d},\"end\":{\"n\":%d}", &b, &e) != 2 &&
		    sscanf(p, "\"args\":{\"begin\":{\"s\":\"%d\"},\"end\":{\"n\":%d}", &b, &e) != 2)
			continue;
		got++;
		if (e < 0 || e >= EVENTS || want[e] != b)
			bad++;
	}
	is_int(got, paired, "random: every pair found");
	is_int(bad, 0, "random: each end closed the begin a stack per thread and name says");
	free(r.out);
}

/* An end finds its begin without looking through all the open ones:
 * 60,000 ends that match none take about as long with 8,192 begins open as
 * with none (looking through them all: 12 times as long). */
static double timed_read(bool open)
{
	struct tl_read_limits lim;
	struct stream s;
	struct result r;
	uint64_t t0;
	int i;

	stream_start(&s);
	for (i = 0; i < 8192; i++)
		event(&s, open ? X_BEGIN : NOTE, 10 + i % 128, i, "n");
	for (i = 0; i < 60000; i++)
		event(&s, Y_END, 10 + i % 128, i, NULL);
	stream_save(&s, false);
	limits(&lim);
	t0 = now_ns();
	read_with(&lim, &r);
	t0 = now_ns() - t0;
	free(r.out);
	return (double)t0 / 1e6;
}

static void test_complexity(void)
{
	double none = timed_read(false), open = timed_read(true);

	/* the better of two, against a machine busy with other things */
	none = fmin(none, timed_read(false));
	open = fmin(open, timed_read(true));
	ok(open < 3 * none, "complexity: 60,000 unmatched ends with 8,192 begins open: %.0f ms, "
	   "with none: %.0f ms", open, none);
}

static void test_budgets(void)
{
	struct tl_read_limits lim;
	struct stream s;
	struct result r;
	char big[5000];
	int t, i;

	/* 100 threads, 100 open begins each: 1000 kept in all, the newest */
	stream_start(&s);
	for (i = 0; i < 100; i++)
		for (t = 0; t < 100; t++)
			event(&s, X_BEGIN, 1000 + t, i, NULL);
	stream_save(&s, false);
	limits(&lim);
	lim.max_open = 1000;
	lim.max_threads = 1000;
	read_with(&lim, &r);
	is_int(r.st.begins_dropped, 9000, "open: 9000 of 10000 begins dropped");
	is_int(r.st.slices, 1000, "open: 1000 kept, closed unfinished at the end");
	ok(strstr(r.out, "\"begin\":{\"n\":89}") == NULL && strstr(r.out, "\"begin\":{\"n\":90}"),
	   "open: the oldest went first");
	free(r.out);

	/* the same with 10 threads told apart: the others' events left out */
	lim.max_threads = 10;
	read_with(&lim, &r);
	is_int(r.st.other_threads, 9000, "threads: the events of 90 threads past 10 left out");
	is_int(r.st.slices, 1000, "threads: the 10 threads' 1000 begins kept");
	is_int(count(r.out, "\"thread_name\""), 10, "threads: 10 named");
	free(r.out);

	/* a begin's arguments: kept up to max_args bytes */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	stream_start(&s);
	event(&s, Z_BEGIN, 7, 0, big);
	event(&s, Z_BEGIN, 7, 0, "GET /");
	event(&s, Z_END, 7, 1, NULL);
	event(&s, Z_END, 7, 2, NULL);
	stream_save(&s, false);
	limits(&lim);
	read_with(&lim, &r);
	is_int(r.st.slices, 2, "args: two slices");
	is_int(r.st.args_dropped, 1, "args: one begin's arguments over 2048 bytes left out");
	ok(strstr(r.out, "\"begin\":null,\"begin_too_long\":true,\"end\":{\"n\":2}") &&
	   strstr(r.out, "\"begin\":{\"s\":\"GET /\"},\"end\":{\"n\":1}"), "args: and said so");
	free(r.out);

	/* bytes of output */
	stream_start(&s);
	for (i = 0; i < 20000; i++)
		event(&s, NOTE, 7, i, "hello");
	stream_save(&s, false);
	limits(&lim);
	lim.max_bytes = 64 << 10;
	read_with(&lim, &r);
	is_int(r.st.cut, TL_CUT_OUTPUT, "output: the read stops at its byte budget");
	ok(r.len >= lim.max_bytes && r.len < lim.max_bytes + 70000,
	   "output: %zu bytes written, about the budget", r.len);
	ok(r.st.instants < 20000, "output: %llu of 20000 events written",
	   (unsigned long long)r.st.instants);
	free(r.out);

	/* the deadline, then a signal */
	limits(&lim);
	lim.deadline_ns = 1;
	read_with(&lim, &r);
	is_int(r.st.cut, TL_CUT_TIME, "time: a deadline passed stops the read");
	ok(r.st.instants < 100, "time: at once (%llu events)", (unsigned long long)r.st.instants);
	free(r.out);
	limits(&lim);
	run__stop = SIGTERM;
	read_with(&lim, &r);
	run__stop = 0;
	is_int(r.st.cut, TL_CUT_SIGNAL, "signal: SIGTERM stops the read");
	is_int(r.st.instants, 0, "signal: at once");
	free(r.out);
}

static void on_alarm(int sig)
{
	run__stop = SIGTERM;
}

/* A stream babeltrace2 2.0 indexes without end (its packet's size is 0),
 * read in a child. */
static void test_forked(void)
{
	struct tl_read rd = { .dir = dir, .pid = PID, .origin = T0 };
	struct tl_lttng_stats st = { 0 };
	struct timeline *tl = timeline__new(PID, T0, 1000);
	struct itimerval it = { .it_value = { 0, 200000 } };
	struct rusage ru;
	struct stream s;
	uint64_t t0, took;
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	int i, err;

	/* a good trace: its events on the timeline */
	stream_start(&s);
	for (i = 0; i < 10; i++)
		event(&s, X_BEGIN, 7, i, NULL);
	for (i = 0; i < 10; i++)
		event(&s, X_END, 7, i, NULL);
	stream_save(&s, false);
	tl_read__default_limits(&rd.lim);
	rd.lim.deadline_ns = now_ns() + 10000000000ull;
	err = tl_read__forked(&rd, tl, &st);
	is_int(err, 0, "forked: read");
	is_int(st.slices, 10, "forked: its stats come back");
	f = open_memstream(&out, &len);
	ok(f && timeline__write(tl, f, NULL, NULL) == 0 && fclose(f) == 0 &&
	   count(out, "\"cat\":\"lttng\"") == 10, "forked: its 10 slices on the timeline");
	free(out);

	stream_start(&s);
	for (i = 0; i < 10; i++)
		event(&s, Y_END, 7, i, NULL);
	stream_save(&s, true);
	memset(&st, 0, sizeof(st));
	t0 = now_ns();
	rd.lim.deadline_ns = t0 + 1000000000ull;
	err = tl_read__forked(&rd, tl, &st);
	took = now_ns() - t0;
	is_int(err, 0, "stuck: not an error");
	ok(st.cut == TL_CUT_KILLED || st.cut == TL_CUT_FAILED, "stuck: killed or failed (%s)",
	   tl_read__cut_name(st.cut));
	ok(took >= 1000000000ull && took < 1000000000ull + TL_READ_GRACE_MS * 1000000ull + 500000000ull,
	   "stuck: ended %llu ms after it started, its deadline 1000 ms and grace %d ms",
	   (unsigned long long)(took / 1000000), TL_READ_GRACE_MS);
	getrusage(RUSAGE_CHILDREN, &ru);
	if (getenv("SANITIZE") && !strcmp(getenv("SANITIZE"), "1"))
		diag("the reader's memory is not limited under ASan (peak %ld KiB)", ru.ru_maxrss);
	else
		ok((size_t)ru.ru_maxrss * 1024 <= TL_READ_MAX_MEM + (64 << 20),
		   "stuck: the reader's memory stayed bounded (%ld KiB)", ru.ru_maxrss);

	/* a signal 200 ms in: the reader is told, and killed after its grace,
	 * long before its deadline */
	run__catch_stop();
	signal(SIGALRM, on_alarm);
	memset(&st, 0, sizeof(st));
	t0 = now_ns();
	rd.lim.deadline_ns = t0 + 10000000000ull;
	setitimer(ITIMER_REAL, &it, NULL);
	err = tl_read__forked(&rd, tl, &st);
	took = now_ns() - t0;
	is_int(err, 0, "signal: not an error");
	ok(took < 200000000ull + TL_READ_GRACE_MS * 1000000ull + 500000000ull,
	   "signal: ended %llu ms after it started (10 s deadline)",
	   (unsigned long long)(took / 1000000));
	is_int(run__stop, SIGTERM, "signal: still seen by the caller");
	run__stop = 0;
	timeline__free(tl);
}

int main(void)
{
	const char *b = getenv("SIDESCOPE_BUILD");
	char path[4200];
	size_t len;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/test_tlread.XXXXXX", b ? b : "/tmp");
	if (b) {
		snprintf(path, sizeof(path), "%s/tmp", b);
		mkdir(path, 0700);
		snprintf(dir, sizeof(dir), "%s/tmp/test_tlread.XXXXXX", b);
	}
	if (!mkdtemp(dir)) {
		ok(0, "cannot make a directory: %s", strerror(errno));
		return done_testing();
	}
	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "w");
	if (read_file(fixture("timeline/metadata"), &metadata, &len, 1 << 20) || !f ||
	    fputs(metadata, f) < 0 || fclose(f)) {
		ok(0, "cannot write the metadata");
		return done_testing();
	}
	test_real();
	test_pairs();
	test_random();
	test_complexity();
	test_budgets();
	test_forked();
	unlink(path);
	snprintf(path, sizeof(path), "%s/stream_0", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/out", dir);
	unlink(path);
	rmdir(dir);
	free(metadata);
	return done_testing();
}
