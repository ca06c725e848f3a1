// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading a timeline's LTTng trace within budgets (tlread.h).
 *
 * One clock. The BPF side stamps with bpf_ktime_get_ns, CLOCK_MONOTONIC.
 * lttng-ust's default clock is CLOCK_MONOTONIC too (read in the app), and
 * the trace's clock class says so: named "monotonic", frequency 1 GHz, an
 * offset that is CLOCK_REALTIME - CLOCK_MONOTONIC as the session daemon
 * measured it when it wrote the metadata. So an event's cycles, turned
 * into ns at the class's frequency, are on our clock, and babeltrace2's
 * "ns from origin" (cycles + offset) is not. tools/timeline.c checks the
 * agreement: the class's offset against ours, measured when the capture
 * started (they differ by the realtime clock's adjustments since,
 * microseconds), and the events' times against the capture's span. A clock
 * that is not monotonic (an lttng-ust clock plugin) is converted from its
 * origin (the Unix epoch) with our realtime offset instead, and said.
 * A target in a time namespace of its own has another CLOCK_MONOTONIC:
 * not corrected (Kubernetes does not make them). */
#include "ctf/bt2.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
#include "ctf/chrome.h"
#include "ctf/sink.h"
#include "ctf/summary.h"
#include "ctf/trace.h"
#include "timeline/tlpair.h"
#include "timeline/tlread.h"

#if defined(__SANITIZE_ADDRESS__)
#define TL_READ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_READ_ASAN 1
#endif
#endif

const char *tl_read__cut_name(int cut)
{
	switch (cut) {
	case TL_CUT_NONE: return "none";
	case TL_CUT_SIGNAL: return "signal";
	case TL_CUT_TIME: return "time";
	case TL_CUT_OUTPUT: return "output";
	case TL_CUT_KILLED: return "killed";
	case TL_CUT_FAILED: return "failed";
	}
	return "?";
}

void tl_read__default_limits(struct tl_read_limits *lim)
{
	*lim = (struct tl_read_limits){
		.max_bytes = TL_READ_MAX_BYTES, .max_open = TL_READ_MAX_OPEN,
		.max_depth = TL_READ_MAX_DEPTH, .max_threads = TL_READ_MAX_THREADS,
		.max_args = TL_READ_MAX_ARGS,
	};
}

/* ---- events ----------------------------------------------------------------- */

struct pair {
	pid_t vtid, tid;
};

struct reader {
	const struct tl_read *rd;
	struct tl_lttng_stats *st;
	struct tl_pair *pair;
	struct ctf_summary sum;
	bool clock_seen;
	struct pair *pairs;	/* vtid -> tid, sorted by vtid */
	size_t n_pairs;
	uint64_t msgs;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->vtid > y->vtid) - (x->vtid < y->vtid);
}

static pid_t tid_of(const struct reader *r, int64_t vtid)
{
	struct pair key = { (pid_t)vtid, 0 }, *p;

	if (!r->n_pairs)
		return (pid_t)vtid;
	p = bsearch(&key, r->pairs, r->n_pairs, sizeof(*r->pairs), cmp_pair);
	return p ? p->tid : (pid_t)vtid;
}

static int make_pairs(struct reader *r)
{
	const struct tl_read *rd = r->rd;
	int i;

	if (rd->ntids <= 0)
		return 0;
	r->pairs = malloc((size_t)rd->ntids * sizeof(*r->pairs));
	if (!r->pairs)
		return -ENOMEM;
	for (i = 0; i < rd->ntids; i++)
		r->pairs[i] = (struct pair){ rd->vtids[i], rd->tids[i] };
	r->n_pairs = (size_t)rd->ntids;
	qsort(r->pairs, r->n_pairs, sizeof(*r->pairs), cmp_pair);
	return 0;
}

/* The event's time on our clock, from its clock snapshot; the class's
 * description noted on the first event. */
static uint64_t event_time(struct reader *r, const bt_message *msg)
{
	const bt_clock_class *cc = bt_message_event_borrow_stream_class_default_clock_class_const(msg);
	const bt_clock_snapshot *cs;
	uint64_t cycles, freq;
	int64_t sec, from_origin;
	uint64_t ocyc;

	if (!cc)
		return 0;
	cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	cycles = bt_clock_snapshot_get_value(cs);
	freq = bt_clock_class_get_frequency(cc);
	if (!r->clock_seen) {
		const char *name = bt_clock_class_get_name(cc);

		r->clock_seen = true;
		bt_clock_class_get_offset(cc, &sec, &ocyc);
		r->st->clock_offset_ns = sec * 1000000000ll +
					 (int64_t)(freq ? (unsigned __int128)ocyc * 1000000000u / freq : 0);
		snprintf(r->st->clock, sizeof(r->st->clock), "%s", name ? name : "");
		r->st->monotonic = name && !strcmp(name, "monotonic");
	}
	if (r->st->monotonic && freq)
		return (uint64_t)((unsigned __int128)cycles * 1000000000u / freq);
	/* another clock: from its origin, through our realtime offset */
	if (bt_clock_snapshot_get_ns_from_origin(cs, &from_origin) !=
	    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
		return 0;
	return (uint64_t)(from_origin - r->st->our_offset_ns);
}

static void write_payload(struct json *j, const void *payload)
{
	chrome__field_json(j, payload);
}

/* End the read early: the sink stops on -ECANCELED without a word. */
static int cut(struct reader *r, int why)
{
	r->st->cut = why;
	return -ECANCELED;
}

static int on_message(void *data, const bt_message *msg)
{
	struct reader *r = data;
	const struct tl_read_limits *lim = &r->rd->lim;
	struct ctf_event e;
	struct tl_event te;
	int n;

	if (run__stop)
		return cut(r, TL_CUT_SIGNAL);
	if (lim->deadline_ns && (++r->msgs & 63) == 0 && now_ns() >= lim->deadline_ns)
		return cut(r, TL_CUT_TIME);
	if (tl_pair__written(r->pair) >= lim->max_bytes)
		return cut(r, TL_CUT_OUTPUT);
	n = ctf_summary__message(&r->sum, msg, &e);
	if (n <= 0)
		return n;
	if (e.thread == &r->sum.other) {
		r->st->other_threads++;
		return 0;
	}
	te = (struct tl_event){
		.kind = e.cls->kind, .name = e.cls->name, .base = e.cls->base,
		.tid = tid_of(r, e.thread ? e.thread->vtid : 0), .new_thread = e.new_thread,
		.procname = e.thread ? e.thread->procname : NULL, .ts = event_time(r, msg),
		.payload = bt_event_borrow_payload_field_const(e.ev),
	};
	return tl_pair__event(r->pair, &te);
}

int tl_read__dir(const struct tl_read *rd, struct tl_lttng_stats *st)
{
	struct tl_pair_opts po = { .pid = rd->pid, .origin = rd->origin, .tl = rd->tl,
				   .lim = &rd->lim, .payload = write_payload };
	struct reader r = { .rd = rd, .st = st };
	struct ctf_traces t = { 0 };
	struct err e = { 0 };
	uint64_t seed;
	size_t i;
	int n, err = 0;

	/* secret: the app chooses the threads hashed */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = now_ns() ^ ((uint64_t)getpid() << 32);
	r.sum.all_threads = true;
	r.sum.max_threads = rd->lim.max_threads;
	r.sum.seed = seed;
	st->cut = TL_CUT_NONE;
	r.pair = tl_pair__new(rd->fd, &po, st);
	if (!r.pair || make_pairs(&r)) {
		err = -ENOMEM;
		p_err("out of memory");
		goto cleanup;
	}
	n = ctf_traces__find(&t, rd->dir);
	if (n < 0) {
		p_err("cannot read the LTTng trace in %s: %s", rd->dir, strerror(-n));
		err = n;
		goto cleanup;
	}
	for (i = 0; i < t.n && !err; i++) {
		err = ctf_traces__check_metadata(t.dirs[i], &e);
		if (err)
			p_err("LTTng trace %s: %s", t.dirs[i], e.msg[0] ? e.msg : strerror(-err));
	}
	if (!err && t.n) {
		struct ctf_read cr = { .dirs = t.dirs, .n_dirs = t.n, .shown = "the LTTng trace",
				       .ordered = true, .fn = on_message, .data = &r };

		err = ctf_sink__read(&cr);
		if (err == -ECANCELED)
			err = 0;
	}
	st->events = r.sum.events;
	st->discarded_events = r.sum.discarded_events;
	st->discarded_packets = r.sum.discarded_packets;
	/* what was opened is closed, after an error too: whole events */
	if (tl_pair__finish(r.pair) && !err) {
		p_err("cannot pass the LTTng events on: %s", strerror(errno));
		err = -EIO;
	}
cleanup:
	tl_pair__free(r.pair);
	free(r.pairs);
	ctf_summary__free(&r.sum);
	ctf_traces__free(&t);
	return err;
}

/* ---- in a child process ------------------------------------------------------ */

/* A reader's own stop: run__stop, as the parent's handler sets it, but with
 * SA_RESTART, so that babeltrace2's reads are not failed by it. */
static void reader_on_signal(int sig)
{
	run__stop = sig;
}

/* In the child: its memory limited, read the trace onto RD->fd, then the
 * stats onto CNT. */
static void __attribute__((noreturn))
reader_child(const struct tl_read *rd, int cnt, pid_t parent, struct tl_lttng_stats *st)
{
	struct sigaction sa;
	int err;

	/* the parent killed, or gone before this was set: no orphan reads on */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reader_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
#ifndef TL_READ_ASAN
	/* babeltrace2 2.0 indexes a stream whose packet says its size is 0
	 * over and over, growing without end until it is killed; with ASan
	 * the shadow memory counts as data, so no limit there */
	{
		struct rlimit rl = { TL_READ_MAX_MEM, TL_READ_MAX_MEM };

		setrlimit(RLIMIT_DATA, &rl);
	}
#endif
	err = tl_read__dir(rd, st);
	if (write(cnt, st, sizeof(*st)) != (ssize_t)sizeof(*st))
		err = -EIO;
	_exit(err ? 1 : 0);
}

/* The parent's end of the reader's pipe. */
struct inbuf {
	char *buf;
	size_t len, cap, max;
};

/* Read what FD has into B. 1: more may come; 0: its end; -EFBIG: B is
 * full (B->max); -ENOMEM; -errno. */
static int inbuf_read(struct inbuf *b, int fd)
{
	ssize_t n;

	if (b->len >= b->max)
		return -EFBIG;
	if (b->cap - b->len < 65536 && b->cap < b->max + 1) {
		size_t ncap = b->cap ? b->cap * 2 : 1 << 20;
		char *nb;

		if (ncap > b->max + 1)
			ncap = b->max + 1;
		nb = realloc(b->buf, ncap);
		if (!nb)
			return -ENOMEM;
		b->buf = nb;
		b->cap = ncap;
	}
	n = read(fd, b->buf + b->len, b->cap - 1 - b->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	b->len += (size_t)n;
	return n > 0;
}

/* The whole events of a reader that did not end well: up to its last
 * ",\n", which no event holds (JSON strings escape their newlines). */
static void whole_events(struct inbuf *b)
{
	while (b->len >= 2 && memcmp(b->buf + b->len - 2, ",\n", 2))
		b->len--;
	b->len = b->len >= 2 ? b->len - 2 : 0;
}

/* Collect the reader's events until it ends, is told to end (a signal
 * here, forwarded) or passes its deadline by TL_READ_GRACE_MS. Return 0
 * when it ended on its own, TL_CUT_KILLED or TL_CUT_OUTPUT when it must
 * be killed, or a negative errno. */
static int collect(pid_t pid, int fd, struct inbuf *b, uint64_t deadline)
{
	const uint64_t grace = TL_READ_GRACE_MS * 1000000ull;
	uint64_t hard = deadline + grace, now;
	bool told = false;
	int r;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		now = now_ns();
		if (run__stop && !told) {
			kill(pid, SIGTERM);
			told = true;
			if (hard > now + grace)
				hard = now + grace;
		}
		if (now >= hard)
			return TL_CUT_KILLED;
		r = poll(&pfd, 1, (int)((hard - now) / 1000000) + 1);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		r = inbuf_read(b, fd);
		if (r == -EFBIG)
			return TL_CUT_OUTPUT;
		if (r <= 0)
			return r;
	}
}

int tl_read__forked(const struct tl_read *rd, struct timeline *tl, struct tl_lttng_stats *st)
{
	/* a signal that came before is the caller's (it chose the deadline);
	 * one during the read ends it: run__stop cleared to see it, then put
	 * back */
	sig_atomic_t stopped = run__stop;
	struct tl_read crd = *rd;
	struct inbuf b = { 0 };
	int data[2] = { -1, -1 }, cnt[2] = { -1, -1 }, status = 0, err = 0, killed, i;
	struct tl_lttng_stats cst;
	uint64_t now = now_ns();
	pid_t pid, self = getpid();

	/* what the reader writes at most: its budget, passed by the begins it
	 * closes at the end and by one event */
	b.max = rd->lim.max_bytes + rd->lim.max_bytes / 4;
	p_debug("reading the LTTng trace: %llu ms, %zu MiB of events, %u open begins (%u of one "
		"thread and name, %u bytes of arguments each), %u threads",
		(unsigned long long)(rd->lim.deadline_ns > now ? (rd->lim.deadline_ns - now) / 1000000 : 0),
		rd->lim.max_bytes >> 20, rd->lim.max_open, rd->lim.max_depth, rd->lim.max_args,
		rd->lim.max_threads);
	fflush(stdout);
	fflush(stderr);
	if (pipe2(data, O_CLOEXEC) || pipe2(cnt, O_CLOEXEC)) {
		err = -errno;
		p_err("cannot create a pipe: %s", strerror(errno));
		goto cleanup;
	}
	run__stop = 0;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		p_err("cannot fork: %s", strerror(errno));
		goto cleanup;
	}
	if (pid == 0) {
		close(data[0]);
		close(cnt[0]);
		crd.fd = data[1];
		cst = *st;
		reader_child(&crd, cnt[1], self, &cst);
	}
	close(data[1]);
	close(cnt[1]);
	data[1] = cnt[1] = -1;
	killed = collect(pid, data[0], &b, rd->lim.deadline_ns);
	if (killed)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (killed < 0) {
		err = killed;
		p_err("cannot read the LTTng events: %s", strerror(-err));
		goto cleanup;
	}
	/* the child writes its stats before its end of the events closes */
	fcntl(cnt[0], F_SETFL, O_NONBLOCK);
	if (!killed && read(cnt[0], &cst, sizeof(cst)) == (ssize_t)sizeof(cst))
		*st = cst;
	if (killed || !WIFEXITED(status) || WEXITSTATUS(status)) {
		whole_events(&b);
		st->cut = killed ? killed : TL_CUT_FAILED;
		if (killed == TL_CUT_KILLED)
			p_warn("the LTTng reader did not stop within %d ms of its end: killed, "
			       "%zu bytes of its events kept", TL_READ_GRACE_MS, b.len);
		else if (killed == TL_CUT_OUTPUT)
			p_warn("the LTTng reader wrote more than %zu MiB: killed, %zu bytes of its "
			       "events kept", b.max >> 20, b.len);
		else if (WIFSIGNALED(status))
			p_warn("reading the LTTng trace failed: the reader died of signal %d (a "
			       "damaged trace?); %zu bytes of its events kept", WTERMSIG(status), b.len);
		else
			p_warn("reading the LTTng trace failed; %zu bytes of its events kept", b.len);
	}
	if (b.len)
		err = timeline__raw_take(tl, b.buf, b.len);
	else
		free(b.buf);
	b.buf = NULL;
	if (err)
		p_err("out of memory");
cleanup:
	if (!run__stop)
		run__stop = stopped;
	free(b.buf);
	for (i = 0; i < 2; i++) {
		if (data[i] >= 0)
			close(data[i]);
		if (cnt[i] >= 0)
			close(cnt[i]);
	}
	return err;
}
