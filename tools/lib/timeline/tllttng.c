// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* LTTng for sidescope timeline (tllttng.h): the session through
 * liblttng-ctl, and the reading of its trace in a child process (tlread.c
 * is the reader, and says how its times become ours) that the capture's
 * end, a signal and a deadline all bound. */
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <lttng/lttng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/dynlib.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
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
	X(lttng_stop_tracing_no_wait) X(lttng_data_pending) X(lttng_destroy_session_no_wait)
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
#define lttng_stop_tracing_no_wait (lttngctl.lttng_stop_tracing_no_wait)
#define lttng_data_pending (lttngctl.lttng_data_pending)
#define lttng_destroy_session_no_wait (lttngctl.lttng_destroy_session_no_wait)

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
	for (i = 0; i < 50 && !run__stop && lttng_session_daemon_alive() != 1; i++)
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

	p_debug("waiting for PID %d to register with lttng-sessiond", (int)l->o.pid);
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

/* The log records of the LTTng agents (Python logging, java.util.logging,
 * log4j) are lttng-ust events of the app's process too (lttng_python:event,
 * lttng_jul:event, lttng_log4j:event). Enabled in each agent domain, the
 * daemon hands the enabling to an agent whenever it registers, later ones
 * included; the ust domain's vpid tracker keeps other apps' records out. A
 * name given applies to the loggers as well. Before add_contexts: the
 * daemon makes each domain's channel here, and the contexts go to every
 * channel there is. */
static int enable_agent_events(struct tl_lttng *l)
{
	static const enum lttng_domain_type doms[] = {
		LTTNG_DOMAIN_PYTHON, LTTNG_DOMAIN_JUL, LTTNG_DOMAIN_LOG4J,
	};
	int i, d, n = l->o.nevents ? l->o.nevents : 1, r = 0;

	for (d = 0; d < (int)(sizeof(doms) / sizeof(doms[0])) && !r; d++) {
		struct lttng_domain dom;
		struct lttng_handle *h;

		memset(&dom, 0, sizeof(dom));
		dom.type = doms[d];
		/* the agents' channel is in the ust domain: its buffers */
		dom.buf_type = LTTNG_BUFFER_PER_UID;
		h = lttng_create_handle(l->name, &dom);
		if (!h) {
			p_err("out of memory");
			return -1;
		}
		for (i = 0; i < n && !r; i++) {
			struct lttng_event *ev = lttng_event_create();

			if (!ev) {
				p_err("out of memory");
				r = -ENOMEM;
				break;
			}
			ev->type = LTTNG_EVENT_TRACEPOINT;
			ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
			snprintf(ev->name, sizeof(ev->name), "%s",
				 l->o.nevents ? l->o.events[i] : "*");
			r = lttng_enable_event_with_exclusions(h, ev, NULL, NULL, 0, NULL);
			lttng_event_destroy(ev);
			if (r < 0)
				lerr("enable the agents' events", r);
		}
		lttng_destroy_handle(h);
	}
	return r < 0 ? -1 : 0;
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
	if (wait_registered(l) || enable_events(l) || enable_agent_events(l) || add_contexts(l) ||
	    track_vpid(l))
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

/* How long the consumer may take to write the buffers out once tracing
 * stopped; after a signal, less. An app that keeps it busy past that costs
 * the last packets (the reader keeps what it can read). */
#define FLUSH_MS 2000
#define FLUSH_STOPPED_MS 500

/* Wait until the consumer has written the session's buffers, within
 * FLUSH_MS (FLUSH_STOPPED_MS from a signal). 0, or -1 (said). */
static int wait_flushed(struct tl_lttng *l)
{
	uint64_t t0 = now_ns(), until = t0 + FLUSH_MS * 1000000ull, now;
	int r;

	for (;;) {
		r = lttng_data_pending(l->name);
		if (r <= 0)
			break;
		now = now_ns();
		if (run__stop && until > now + FLUSH_STOPPED_MS * 1000000ull)
			until = now + FLUSH_STOPPED_MS * 1000000ull;
		if (now >= until) {
			p_warn("lttng: the consumer daemon did not write the trace out within %llu ms: "
			       "its last packets may be missing",
			       (unsigned long long)((now - t0) / 1000000));
			return 0;
		}
		usleep(20000);
	}
	if (r < 0)
		return lerr("wait for the trace to be written", r);
	p_debug("lttng: the trace was written out in %llu ms",
		(unsigned long long)((now_ns() - t0) / 1000000));
	return 0;
}

int tl_lttng__stop(struct tl_lttng *l)
{
	int r, ret = 0;

	if (l->started) {
		/* lttng_stop_tracing would wait for the consumer as long as it
		 * takes, deaf to signals */
		r = lttng_stop_tracing_no_wait(l->name);
		if (r < 0)
			ret = lerr("stop tracing", r);
		else
			ret = wait_flushed(l);
		l->started = false;
	}
	if (l->created) {
		r = lttng_destroy_session_no_wait(l->name);
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

int tl_lttng__read(struct tl_lttng *l, struct timeline *tl, uint64_t origin,
		   const pid_t *vtids, const pid_t *tids, int ntids, struct tl_lttng_stats *st)
{
	struct tl_read rd = { .dir = l->dir, .pid = l->o.pid, .tl = tl, .origin = origin,
			      .vtids = vtids, .tids = tids, .ntids = ntids };
	uint64_t budget = run__stop ? TL_LTTNG_READ_STOPPED_MS : l->o.read_ms;

	st->started_daemon = l->daemon_started;
	tl_read__default_limits(&rd.lim);
	rd.lim.deadline_ns = now_ns() + budget * 1000000ull;
	return tl_read__forked(&rd, tl, st);
}
