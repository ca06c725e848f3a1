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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
#include "ctf/chrome.h"
#include "ctf/child.h"
#include "ctf/ctfpair.h"
#include "ctf/sink.h"
#include "ctf/summary.h"
#include "ctf/trace.h"
#include "timeline/tlread.h"

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
	struct ctfpair *pair;
	struct ctfpair_stats pst;
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

static bool named(const void *tl, int64_t tid)
{
	return tl && timeline__has_thread(tl, (pid_t)tid);
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
	struct ctfpair_event pe;
	int n;

	if (run__stop)
		return cut(r, TL_CUT_SIGNAL);
	if (lim->deadline_ns && (++r->msgs & 63) == 0 && now_ns() >= lim->deadline_ns)
		return cut(r, TL_CUT_TIME);
	if (ctfpair__written(r->pair) >= lim->max_bytes)
		return cut(r, TL_CUT_OUTPUT);
	n = ctf_summary__message(&r->sum, msg, &e);
	if (n <= 0)
		return n;
	if (e.thread == &r->sum.other) {
		r->st->other_threads++;
		return 0;
	}
	pe = (struct ctfpair_event){
		.kind = e.cls->kind, .name = e.cls->name, .base = e.cls->base,
		.thread = e.thread->seq, .pid = r->rd->pid, .tid = tid_of(r, e.thread->vtid),
		.new_thread = e.new_thread, .procname = e.thread->procname,
		.ts = event_time(r, msg), .payload = bt_event_borrow_payload_field_const(e.ev),
	};
	return ctfpair__event(r->pair, &pe);
}

int tl_read__dir(const struct tl_read *rd, struct tl_lttng_stats *st)
{
	struct ctfpair_opts po = {
		.lim = { .max_bytes = rd->lim.max_bytes, .max_open = rd->lim.max_open,
			 .max_depth = rd->lim.max_depth, .max_args = rd->lim.max_args },
		.payload = write_payload, .origin = rd->origin, .cat = "lttng",
		.named = named, .named_ctx = rd->tl,
	};
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
	r.pair = ctfpair__new(rd->fd, &po, &r.pst);
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
	if (ctfpair__finish(r.pair) && !err) {
		p_err("cannot pass the LTTng events on: %s", strerror(errno));
		err = -EIO;
	}
	st->slices = r.pst.slices;
	st->instants = r.pst.instants;
	st->begins_dropped = r.pst.begins_dropped;
	st->args_dropped = r.pst.args_dropped;
	st->unwritten = r.pst.unwritten;
	st->first_ns = r.pst.first_ns;
	st->last_ns = r.pst.last_ns;
cleanup:
	ctfpair__free(r.pair);
	free(r.pairs);
	ctf_summary__free(&r.sum);
	ctf_traces__free(&t);
	return err;
}

/* ---- in a child process ------------------------------------------------------ */

struct forked {
	const struct tl_read *rd;
	const struct tl_lttng_stats *st;
};

/* In the child: read the trace onto OUT, the stats into RESULT. */
static int reader_child(void *arg, int out, void *result)
{
	const struct forked *f = arg;
	struct tl_read crd = *f->rd;
	struct tl_lttng_stats *st = result, cst = *f->st;
	int err;

	crd.fd = out;
	err = tl_read__dir(&crd, &cst);
	*st = cst;
	return err ? 1 : 0;
}

/* The whole events of a reader that did not end well: up to its last
 * ",\n", which no event holds (JSON strings escape their newlines). */
static void whole_events(struct ctf_child *c)
{
	while (c->out_len >= 2 && memcmp(c->out + c->out_len - 2, ",\n", 2))
		c->out_len--;
	c->out_len = c->out_len >= 2 ? c->out_len - 2 : 0;
}

int tl_read__forked(const struct tl_read *rd, struct timeline *tl, struct tl_lttng_stats *st)
{
	/* a signal that came before is the caller's (it chose the deadline);
	 * one during the read ends it: run__stop cleared to see it, then put
	 * back */
	sig_atomic_t stopped = run__stop;
	struct forked f = { rd, st };
	/* what the reader writes at most: its budget, passed by the begins it
	 * closes at the end and by one event */
	struct ctf_child_opts o = {
		.deadline_ns = rd->lim.deadline_ns, .grace_ms = TL_READ_GRACE_MS,
		.max_mem = TL_READ_MAX_MEM, .out_pipe = true,
		.max_out = rd->lim.max_bytes + rd->lim.max_bytes / 4,
	};
	struct ctf_child c;
	uint64_t now = now_ns();
	int err, killed;

	p_debug("reading the LTTng trace: %llu ms, %zu MiB of events, %u open begins (%u of one "
		"thread and name, %u bytes of arguments each), %u threads",
		(unsigned long long)(rd->lim.deadline_ns > now ? (rd->lim.deadline_ns - now) / 1000000 : 0),
		rd->lim.max_bytes >> 20, rd->lim.max_open, rd->lim.max_depth, rd->lim.max_args,
		rd->lim.max_threads);
	err = ctf_child__init(&c, sizeof(*st));
	if (err)
		goto cleanup;
	run__stop = 0;
	err = ctf_child__run(&c, &o, reader_child, &f);
	if (err)
		goto cleanup;
	killed = c.end == CTF_CHILD_KILLED ? TL_CUT_KILLED : c.end == CTF_CHILD_FULL ? TL_CUT_OUTPUT : 0;
	if (!killed && c.done)
		*st = *(struct tl_lttng_stats *)c.result;
	if (killed || !WIFEXITED(c.status) || WEXITSTATUS(c.status)) {
		whole_events(&c);
		st->cut = killed ? killed : TL_CUT_FAILED;
		if (killed == TL_CUT_KILLED)
			p_warn("the LTTng reader did not stop within %d ms of its end: killed, "
			       "%zu bytes of its events kept", TL_READ_GRACE_MS, c.out_len);
		else if (killed == TL_CUT_OUTPUT)
			p_warn("the LTTng reader wrote more than %zu MiB: killed, %zu bytes of its "
			       "events kept", o.max_out >> 20, c.out_len);
		else if (WIFSIGNALED(c.status))
			p_warn("reading the LTTng trace failed: the reader died of signal %d (a "
			       "damaged trace?); %zu bytes of its events kept", WTERMSIG(c.status),
			       c.out_len);
		else
			p_warn("reading the LTTng trace failed; %zu bytes of its events kept", c.out_len);
	}
	if (c.out_len) {
		err = timeline__raw_take(tl, c.out, c.out_len);
		c.out = NULL;
	}
	if (err)
		p_err("out of memory");
cleanup:
	ctf_child__free(&c);
	if (!run__stop)
		run__stop = stopped;
	return err;
}
