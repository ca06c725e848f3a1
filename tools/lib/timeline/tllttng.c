// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* LTTng for sidescope timeline (tllttng.h).
 *
 * One clock. The BPF side stamps with bpf_ktime_get_ns, CLOCK_MONOTONIC.
 * lttng-ust's default clock is CLOCK_MONOTONIC too (read in the app), and
 * the trace's clock class says so: named "monotonic", frequency 1 GHz, an
 * offset that is CLOCK_REALTIME - CLOCK_MONOTONIC as the session daemon
 * measured it when it wrote the metadata. So an event's cycles, turned
 * into ns at the class's frequency, are on our clock, and babeltrace2's
 * "ns from origin" (cycles + offset) is not. We check the agreement: the
 * class's offset against ours, measured when the capture started (they
 * differ by the realtime clock's adjustments since, microseconds), and
 * the events' times against the capture's span. A clock that is not
 * monotonic (an lttng-ust clock plugin) is converted from its origin
 * (the Unix epoch) with our realtime offset instead, and said.
 * A target in a time namespace of its own has another CLOCK_MONOTONIC:
 * not corrected (Kubernetes does not make them). */
#include "ctf/bt2.h"
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <lttng/lttng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/dynlib.h"
#include "core/json.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
#include "ctf/chrome.h"
#include "ctf/ctfpair.h"
#include "ctf/sink.h"
#include "ctf/summary.h"
#include "ctf/trace.h"
#include "timeline/tllttng.h"

/* liblttng-ctl, loaded by tl_lttng__start (core/dynlib.h): linked, it
 * and libxml2 and ICU behind it cost every sidescope command ~5 ms */
#define LTTNG_FUNCS(X) X(lttng_session_daemon_alive) X(lttng_strerror)			\
	X(lttng_list_tracepoints) X(lttng_event_create) X(lttng_event_destroy)		\
	X(lttng_enable_event_with_exclusions) X(lttng_add_context)			\
	X(lttng_session_get_tracker_handle)						\
	X(lttng_process_attr_tracker_handle_set_tracking_policy)			\
	X(lttng_process_attr_virtual_process_id_tracker_handle_add_pid)		\
	X(lttng_process_attr_tracker_handle_destroy) X(lttng_create_session)		\
	X(lttng_create_handle) X(lttng_destroy_handle) X(lttng_start_tracing)		\
	X(lttng_stop_tracing) X(lttng_destroy_session)
DYNLIB_DEFINE(lttngctl, "liblttng-ctl.so.0", LTTNG_FUNCS);
#define lttng_session_daemon_alive (lttngctl.lttng_session_daemon_alive)
#define lttng_strerror (lttngctl.lttng_strerror)
#define lttng_list_tracepoints (lttngctl.lttng_list_tracepoints)
#define lttng_event_create (lttngctl.lttng_event_create)
#define lttng_event_destroy (lttngctl.lttng_event_destroy)
#define lttng_enable_event_with_exclusions (lttngctl.lttng_enable_event_with_exclusions)
#define lttng_add_context (lttngctl.lttng_add_context)
#define lttng_session_get_tracker_handle (lttngctl.lttng_session_get_tracker_handle)
#define lttng_process_attr_tracker_handle_set_tracking_policy \
	(lttngctl.lttng_process_attr_tracker_handle_set_tracking_policy)
#define lttng_process_attr_virtual_process_id_tracker_handle_add_pid \
	(lttngctl.lttng_process_attr_virtual_process_id_tracker_handle_add_pid)
#define lttng_process_attr_tracker_handle_destroy \
	(lttngctl.lttng_process_attr_tracker_handle_destroy)
#define lttng_create_session (lttngctl.lttng_create_session)
#define lttng_create_handle (lttngctl.lttng_create_handle)
#define lttng_destroy_handle (lttngctl.lttng_destroy_handle)
#define lttng_start_tracing (lttngctl.lttng_start_tracing)
#define lttng_stop_tracing (lttngctl.lttng_stop_tracing)
#define lttng_destroy_session (lttngctl.lttng_destroy_session)

struct tl_lttng {
	struct tl_lttng_opts o;
	char name[64];		/* the session's */
	char dir[4096];		/* the trace's, ours */
	struct lttng_handle *h;
	bool created, started, daemon_started;
};

/* ---- the session daemon ------------------------------------------------ */

/* Start lttng-sessiond as scripts/lttng-capture does (root, no kernel
 * tracer, the application socket where the app's /var/run/lttng is
 * shared, our group for its client socket), --daemonize: it returns once
 * the daemon is ready. 0, or -1 (said). */
static int start_daemon(const struct tl_lttng_opts *o)
{
	char sock[4200], grp[300];
	const char *argv[8];
	struct group *g = getgrgid(getgid());
	int n = 0, status = 0, i;
	pid_t pid;

	argv[n++] = "lttng-sessiond";
	argv[n++] = "--daemonize";
	argv[n++] = "--no-kernel";
	if (o->apps_dir) {
		snprintf(sock, sizeof(sock), "--apps-sock=%s/lttng-ust-sock-8", o->apps_dir);
		argv[n++] = sock;
	}
	if (g) {
		snprintf(grp, sizeof(grp), "--group=%s", g->gr_name);
		argv[n++] = grp;
	}
	argv[n] = NULL;
	p_info("starting lttng-sessiond (application socket in %s)",
	       o->apps_dir ? o->apps_dir : "/var/run/lttng");
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		p_err("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* the daemon's home is its own, not a directory of ours */
		unsetenv("LTTNG_HOME");
		if (chdir("/"))
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		p_err("lttng-sessiond not found (install lttng-tools)");
		return -1;
	}
	for (i = 0; i < 50 && lttng_session_daemon_alive() != 1; i++)
		usleep(100000);
	if (lttng_session_daemon_alive() != 1) {
		p_err("lttng-sessiond failed to start (run 'doctor lttng'; 'lttng-sessiond "
		      "--no-kernel -vvv' shows why)");
		return -1;
	}
	return 0;
}

/* ---- the session -------------------------------------------------------- */

static int lerr(const char *what, int code)
{
	p_err("lttng: cannot %s: %s", what, lttng_strerror(code < 0 ? code : -code));
	return -1;
}

/* Whether the target has registered with the daemon: it lists events
 * under its vpid. */
static bool registered(struct tl_lttng *l)
{
	struct lttng_event *evs = NULL;
	bool found = false;
	int n, i;

	n = lttng_list_tracepoints(l->h, &evs);
	for (i = 0; i < n && !found; i++)
		found = evs[i].pid == l->o.vpid;
	free(evs);
	return found;
}

static int wait_registered(struct tl_lttng *l)
{
	uint64_t until = now_ns() + (uint64_t)l->o.register_ms * 1000000ull;

	while (!registered(l)) {
		if (run__stop)
			return -1;
		if (now_ns() >= until) {
			p_err("PID %d did not register with lttng-sessiond within %ums: it does not "
			      "load lttng-ust, or cannot reach the daemon's application socket "
			      "(its /var/run/lttng must be shared here; run 'doctor lttng')",
			      (int)l->o.pid, l->o.register_ms);
			return -1;
		}
		usleep(100000);
	}
	return 0;
}

static int enable_events(struct tl_lttng *l)
{
	char filter[64];
	int i, n = l->o.nevents ? l->o.nevents : 1, r = 0;

	/* the tracker keeps other apps' events out of the buffers; the
	 * filter is the same rule again, as lttng-capture has it */
	snprintf(filter, sizeof(filter), "$ctx.vpid == %d", (int)l->o.vpid);
	for (i = 0; i < n && !r; i++) {
		struct lttng_event *ev = lttng_event_create();

		if (!ev) {
			p_err("out of memory");
			return -1;
		}
		ev->type = LTTNG_EVENT_TRACEPOINT;
		ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
		snprintf(ev->name, sizeof(ev->name), "%s", l->o.nevents ? l->o.events[i] : "*");
		r = lttng_enable_event_with_exclusions(l->h, ev, NULL, filter, 0, NULL);
		lttng_event_destroy(ev);
		if (r < 0)
			return lerr("enable the events", r);
	}
	return 0;
}

static int add_contexts(struct tl_lttng *l)
{
	static const enum lttng_event_context_type ctxs[] = {
		LTTNG_EVENT_CONTEXT_VPID, LTTNG_EVENT_CONTEXT_VTID, LTTNG_EVENT_CONTEXT_PROCNAME,
	};
	size_t i;
	int r;

	for (i = 0; i < sizeof(ctxs) / sizeof(ctxs[0]); i++) {
		struct lttng_event_context c;

		memset(&c, 0, sizeof(c));
		c.ctx = ctxs[i];
		r = lttng_add_context(l->h, &c, NULL, NULL);
		if (r < 0)
			return lerr("add the vpid, vtid and procname contexts", r);
	}
	return 0;
}

static int track_vpid(struct tl_lttng *l)
{
	struct lttng_process_attr_tracker_handle *th = NULL;
	enum lttng_error_code e;
	int bad;

	e = lttng_session_get_tracker_handle(l->name, LTTNG_DOMAIN_UST,
					     LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID, &th);
	if (e != LTTNG_OK)
		return lerr("get the vpid tracker", (int)e);
	bad = lttng_process_attr_tracker_handle_set_tracking_policy(
		      th, LTTNG_TRACKING_POLICY_INCLUDE_SET) != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK ||
	      lttng_process_attr_virtual_process_id_tracker_handle_add_pid(th, l->o.vpid) !=
		      LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK;
	lttng_process_attr_tracker_handle_destroy(th);
	if (bad) {
		p_err("lttng: cannot track vpid %d", (int)l->o.vpid);
		return -1;
	}
	return 0;
}

struct tl_lttng *tl_lttng__start(const struct tl_lttng_opts *o)
{
	struct lttng_domain dom;
	struct tl_lttng *l;
	const char *tmp = getenv("TMPDIR");
	char url[4200];
	struct err e;
	int r;

	if (dynlib__load(&lttngctl_lib, &e)) {
		p_err("%s (install liblttng-ctl0; the image has it)", e.msg);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		p_err("out of memory");
		return NULL;
	}
	l->o = *o;
	if (lttng_session_daemon_alive() != 1) {
		if (start_daemon(o))
			goto fail;
		l->daemon_started = true;
	}
	/* a new directory (mkdtemp: O_EXCL, 0700) in our private TMPDIR */
	snprintf(l->dir, sizeof(l->dir), "%s/sidescope-timeline.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(l->dir)) {
		p_err("cannot create a directory for the LTTng trace in %s: %s",
		      tmp && *tmp ? tmp : "/tmp", strerror(errno));
		l->dir[0] = '\0';
		goto fail;
	}
	/* the consumer daemon takes absolute paths only */
	if (l->dir[0] != '/') {
		char *abs = realpath(l->dir, NULL);

		if (!abs || strlen(abs) >= sizeof(l->dir)) {
			p_err("cannot resolve %s: %s", l->dir, strerror(abs ? ENAMETOOLONG : errno));
			free(abs);
			goto fail;
		}
		strcpy(l->dir, abs);
		free(abs);
	}
	snprintf(l->name, sizeof(l->name), "sidescope-timeline-%d-%d", (int)o->pid, (int)getpid());
	snprintf(url, sizeof(url), "file://%s/trace", l->dir);
	r = lttng_create_session(l->name, url);
	if (r < 0) {
		lerr("create a session", r);
		goto fail;
	}
	l->created = true;
	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_UST;
	dom.buf_type = LTTNG_BUFFER_PER_UID;
	l->h = lttng_create_handle(l->name, &dom);
	if (!l->h) {
		p_err("out of memory");
		goto fail;
	}
	if (wait_registered(l) || enable_events(l) || add_contexts(l) || track_vpid(l))
		goto fail;
	r = lttng_start_tracing(l->name);
	if (r < 0) {
		lerr("start tracing", r);
		goto fail;
	}
	l->started = true;
	return l;
fail:
	tl_lttng__free(l);
	return NULL;
}

int tl_lttng__stop(struct tl_lttng *l)
{
	int r, ret = 0;

	if (l->started) {
		/* waits until the consumer has written every buffer */
		r = lttng_stop_tracing(l->name);
		if (r < 0)
			ret = lerr("stop tracing", r);
		l->started = false;
	}
	if (l->created) {
		r = lttng_destroy_session(l->name);
		if (r < 0 && !ret)
			ret = lerr("destroy the session", r);
		l->created = false;
	}
	return ret ? -EIO : 0;
}

/* nftw: remove what we can, go on past what we cannot */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path))
		p_debug("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

void tl_lttng__free(struct tl_lttng *l)
{
	if (!l)
		return;
	tl_lttng__stop(l);
	lttng_destroy_handle(l->h);
	/* ours (mkdtemp in our TMPDIR): depth first, links not followed */
	if (l->dir[0])
		nftw(l->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(l);
}

/* ---- reading the trace back ----------------------------------------------- */

/* A begin event waiting for its end. */
struct open_slice {
	pid_t tid;
	const char *base;	/* the class's, lives with the summary */
	uint64_t ts;
	char *args;		/* its payload as JSON text */
};

struct reader {
	struct tl_lttng *l;
	const pid_t *vtids, *tids;
	int ntids;
	const struct timeline *tl;
	uint64_t origin;
	FILE *out;		/* the events, ",\n" between them */
	bool first;
	struct ctf_summary sum;
	struct tl_lttng_stats *st;
	bool clock_seen;
	pid_t *named;		/* threads named here */
	size_t n_named, cap_named;
	struct open_slice *open;
	size_t n_open, cap_open;
};

static pid_t tid_of(const struct reader *r, int64_t vtid)
{
	int i;

	for (i = 0; i < r->ntids; i++)
		if (r->vtids[i] == (pid_t)vtid)
			return r->tids[i];
	return (pid_t)vtid;
}

static void event_start(struct reader *r, struct json *j)
{
	timeline__event_start(r->out, &r->first, j);
}

/* The event's time on our clock, from its clock snapshot; the class's
 * description noted on the first event. */
static uint64_t event_time(struct reader *r, const bt_message *msg)
{
	const bt_clock_class *cc = bt_message_event_borrow_stream_class_default_clock_class_const(msg);
	const bt_clock_snapshot *cs;
	uint64_t cycles, freq, ns;
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
	ns = (uint64_t)(from_origin - r->st->our_offset_ns);
	return ns;
}

/* A thread_name for TID on its first event unless the timeline has it. */
static int name_thread(struct reader *r, pid_t tid, const char *procname)
{
	struct json j;
	size_t i;

	if (timeline__has_thread(r->tl, tid))
		return 0;
	for (i = 0; i < r->n_named; i++)
		if (r->named[i] == tid)
			return 0;
	if (r->n_named == r->cap_named) {
		size_t cap = r->cap_named ? r->cap_named * 2 : 16;
		pid_t *n = realloc(r->named, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->named = n;
		r->cap_named = cap;
	}
	r->named[r->n_named++] = tid;
	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, "thread_name");
	json__key(&j, "pid"); json__i64(&j, r->l->o.pid);
	json__key(&j, "tid"); json__i64(&j, tid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "name"); json__str(&j, procname && *procname ? procname : "?");
	json__end(&j);
	json__end(&j);
	return 0;
}

static char *payload_text(const bt_field *payload)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	json__init(&j, m);
	if (payload)
		chrome__field_json(&j, payload);
	else
		json__null(&j);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void put_slice(struct reader *r, const struct open_slice *s, uint64_t end,
		      const bt_field *eargs, bool unfinished)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "X");
	json__key(&j, "cat"); json__str(&j, "lttng");
	json__key(&j, "name"); json__str(&j, s->base);
	timeline__put_time(&j, "ts", s->ts, r->origin);
	timeline__put_time(&j, "dur", end > s->ts ? end : s->ts, s->ts);
	json__key(&j, "pid"); json__i64(&j, r->l->o.pid);
	json__key(&j, "tid"); json__i64(&j, s->tid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "begin"); json__num(&j, "%s", s->args ? s->args : "null");
	if (eargs) {
		json__key(&j, "end");
		chrome__field_json(&j, eargs);
	}
	if (unfinished) {
		json__key(&j, "unfinished");
		json__bool(&j, true);
	}
	json__end(&j);
	json__end(&j);
	r->st->slices++;
}

static int on_event(struct reader *r, const struct ctf_event *e, uint64_t ts)
{
	const bt_field *payload = bt_event_borrow_payload_field_const(e->ev);
	pid_t tid = tid_of(r, e->thread ? e->thread->vtid : 0);
	struct json j;
	size_t i;

	if (name_thread(r, tid, e->thread ? e->thread->procname : NULL))
		return -ENOMEM;
	if (!r->st->first_ns || ts < r->st->first_ns)
		r->st->first_ns = ts;
	if (ts > r->st->last_ns)
		r->st->last_ns = ts;
	if (e->cls->kind == CTFPAIR_BEGIN) {
		if (r->n_open == r->cap_open) {
			size_t cap = r->cap_open ? r->cap_open * 2 : 16;
			struct open_slice *n = realloc(r->open, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			r->open = n;
			r->cap_open = cap;
		}
		r->open[r->n_open] = (struct open_slice){ tid, e->cls->base, ts,
							  payload_text(payload) };
		r->n_open++;
		return 0;
	}
	if (e->cls->kind == CTFPAIR_END) {
		/* the innermost open begin of the same base on this thread */
		for (i = r->n_open; i-- > 0;) {
			struct open_slice s = r->open[i];

			if (s.tid != tid || strcmp(s.base, e->cls->base))
				continue;
			put_slice(r, &s, ts, payload, false);
			free(s.args);
			memmove(&r->open[i], &r->open[i + 1], (r->n_open - i - 1) * sizeof(*r->open));
			r->n_open--;
			return 0;
		}
		/* an end without its begin: an instant */
	}
	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "i");
	json__key(&j, "s"); json__str(&j, "t");
	json__key(&j, "cat"); json__str(&j, "lttng");
	json__key(&j, "name"); json__str(&j, e->cls->name);
	timeline__put_time(&j, "ts", ts, r->origin);
	json__key(&j, "pid"); json__i64(&j, r->l->o.pid);
	json__key(&j, "tid"); json__i64(&j, tid);
	json__key(&j, "args");
	if (payload) {
		chrome__field_json(&j, payload);
	} else {
		json__obj(&j);
		json__end(&j);
	}
	json__end(&j);
	r->st->instants++;
	return 0;
}

static int on_message(void *data, const bt_message *msg)
{
	struct reader *r = data;
	struct ctf_event e;
	int n = ctf_summary__message(&r->sum, msg, &e);

	if (n <= 0)
		return n;
	return on_event(r, &e, event_time(r, msg));
}

/* In the child: read every trace under the session's directory onto OUT. */
static int read_child(struct reader *r)
{
	struct ctf_traces t = { 0 };
	struct err e = { 0 };
	size_t i;
	int n, err = 0;

	n = ctf_traces__find(&t, r->l->dir);
	if (n < 0) {
		p_err("cannot read the LTTng trace in %s: %s", r->l->dir, strerror(-n));
		return n;
	}
	for (i = 0; i < t.n && !err; i++) {
		err = ctf_traces__check_metadata(t.dirs[i], &e);
		if (err)
			p_err("LTTng trace %s: %s", t.dirs[i], e.msg[0] ? e.msg : strerror(-err));
	}
	if (!err && t.n) {
		struct ctf_read rd = { .dirs = t.dirs, .n_dirs = t.n, .shown = "the LTTng trace",
				       .ordered = true, .fn = on_message, .data = r };

		err = ctf_sink__read(&rd);
		if (!err)
			ctf_summary__finish(&r->sum);
	}
	/* begins still open at the end: until the last event, unfinished */
	for (i = 0; !err && i < r->n_open; i++)
		put_slice(r, &r->open[i], r->st->last_ns, NULL, true);
	r->st->events = r->sum.events;
	r->st->discarded_events = r->sum.discarded_events;
	r->st->discarded_packets = r->sum.discarded_packets;
	ctf_traces__free(&t);
	if (fflush(r->out) || ferror(r->out))
		err = -EIO;
	return err;
}

/* Read all of FD into *BUF (*LEN). 0 or -ENOMEM. */
static int slurp(int fd, char **buf, size_t *len)
{
	size_t cap = 0;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	for (;;) {
		if (*len + 4096 > cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = realloc(*buf, ncap);

			if (!nb)
				return -ENOMEM;
			*buf = nb;
			cap = ncap;
		}
		n = read(fd, *buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		*len += (size_t)n;
	}
}

int tl_lttng__read(struct tl_lttng *l, struct timeline *tl, uint64_t origin,
		   const pid_t *vtids, const pid_t *tids, int ntids, struct tl_lttng_stats *st)
{
	int data[2], cnt[2], status = 0, err;
	char *buf = NULL;
	size_t len = 0;
	pid_t pid;

	st->started_daemon = l->daemon_started;
	fflush(stdout);
	fflush(stderr);
	if (pipe(data)) {
		p_err("cannot create a pipe: %s", strerror(errno));
		return -errno;
	}
	if (pipe(cnt)) {
		p_err("cannot create a pipe: %s", strerror(errno));
		close(data[0]);
		close(data[1]);
		return -EIO;
	}
	pid = fork();
	if (pid < 0) {
		p_err("cannot fork: %s", strerror(errno));
		return -EIO;
	}
	if (pid == 0) {
		struct reader r = { .l = l, .vtids = vtids, .tids = tids, .ntids = ntids, .tl = tl,
				    .origin = origin, .first = true, .st = st };

		close(data[0]);
		close(cnt[0]);
		r.sum.all_threads = true;
		r.out = fdopen(data[1], "w");
		err = r.out ? read_child(&r) : -ENOMEM;
		if (r.out && fclose(r.out))
			err = -EIO;
		if (write(cnt[1], st, sizeof(*st)) != (ssize_t)sizeof(*st))
			err = -EIO;
		_exit(err ? 1 : 0);
	}
	close(data[1]);
	close(cnt[1]);
	err = slurp(data[0], &buf, &len);
	close(data[0]);
	if (read(cnt[0], st, sizeof(*st)) != (ssize_t)sizeof(*st))
		status = -1;
	close(cnt[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!err && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		if (WIFSIGNALED(status))
			p_err("reading the LTTng trace failed: the reader died of signal %d "
			      "(a damaged trace?)", WTERMSIG(status));
		else
			p_err("reading the LTTng trace failed");
		err = -EIO;
	}
	if (!err)
		err = timeline__raw_events(tl, buf ? buf : "", len);
	free(buf);
	return err;
}
