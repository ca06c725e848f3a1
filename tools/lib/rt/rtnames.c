// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names for a running app's JIT code, asked of its runtime (rt/rtnames.h).
 * Every answer and name here is the app's: the messages are escaped. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "rt/dotnetipc.h"
#include "rt/jattach.h"
#include "rt/rtnames.h"

#define NODE_FLAG "NODE_OPTIONS=--perf-basic-prof-only-functions"

/* One process seen */
struct rt_proc {
	pid_t pid;
	uint64_t start;			/* its start time: the same process */
	enum proc_runtime rt;
	struct dotnetipc *net;		/* .NET: its perf map switched on here */
	struct jattach *jvm;		/* a JVM whose map is asked for again */
	uint64_t last_ns;		/* the JVM's last dump */
	uint64_t misses;		/* its unnamed frames then */
};

struct rtnames {
	struct rtnames_opts o;
	struct rt_proc *p;
	size_t n, cap;
	unsigned int asked, maps;
};

/* PID's runtime from its mappings and executable */
static enum proc_runtime runtime_of(pid_t pid)
{
	char exe[PATH_MAX];
	struct proc_maps *m = proc_maps__load(pid);
	enum proc_runtime rt;

	if (proc__exe(pid, exe, sizeof(exe)))
		exe[0] = '\0';
	rt = proc__detect_runtime(m, exe);
	proc_maps__free(m);
	return rt;
}

/* Whether PID has a perf map now (in its own /tmp, or the shared one) */
static bool has_perfmap(pid_t pid)
{
	struct proc_status st;
	char path[PATH_MAX];

	if (proc__read_status(pid, &st))
		return false;
	return proc__perfmap_path(pid, st.nstgid ? st.nstgid : pid, path, sizeof(path)) == 0;
}

/* A message of the app's making (an error quoting its paths) made safe */
static const char *safe(const char *s, char *buf, size_t size)
{
	escape__str(buf, size, s, strlen(s), 200, 0);
	return buf;
}

enum rtnames_state rtnames__state(pid_t pid, char *hint, size_t size)
{
	enum proc_runtime rt = runtime_of(pid);
	struct err e = { 0 };
	char msg[256];

	hint[0] = '\0';
	if (rt != RUNTIME_DOTNET && rt != RUNTIME_JVM && rt != RUNTIME_NODE)
		return RTNAMES_NONE;
	if (has_perfmap(pid))
		return RTNAMES_NOW;
	if (rt == RUNTIME_NODE) {
		snprintf(hint, size, "%s", NODE_FLAG);
		return RTNAMES_RESTART;
	}
	if (rt == RUNTIME_DOTNET) {
		struct dotnetipc *d = dotnetipc__open(pid, RTNAMES_TIMEOUT_MS, &e);

		dotnetipc__free(d);
		if (d)
			return RTNAMES_ASK;
	} else {
		struct jattach *j = jattach__probe(pid, NULL, &e);

		jattach__free(j);
		if (j)
			return RTNAMES_ASK;
	}
	snprintf(hint, size, "%s", safe(e.msg, msg, sizeof(msg)));
	return RTNAMES_RESTART;
}

const char *rtnames__state_name(enum rtnames_state s)
{
	switch (s) {
	case RTNAMES_NOW:
		return "yes";
	case RTNAMES_ASK:
		return "ask";
	case RTNAMES_RESTART:
		return "restart";
	default:
		return "-";
	}
}

struct rtnames *rtnames__new(const struct rtnames_opts *o)
{
	struct rtnames *r = calloc(1, sizeof(*r));

	if (!r) {
		p_err("out of memory");
		return NULL;
	}
	r->o = *o;
	if (!r->o.timeout_ms)
		r->o.timeout_ms = RTNAMES_TIMEOUT_MS;
	return r;
}

/* The entry of PID as the process that started at START, or a new one
 * (NULL: no memory); *FRESH whether it is new. */
static struct rt_proc *entry(struct rtnames *r, pid_t pid, uint64_t start, bool *fresh)
{
	size_t i;

	*fresh = false;
	for (i = 0; i < r->n; i++)
		if (r->p[i].pid == pid && r->p[i].start == start)
			return &r->p[i];
	if (array__room(&r->p, &r->cap, r->n, sizeof(*r->p), 16))
		return NULL;
	*fresh = true;
	memset(&r->p[r->n], 0, sizeof(r->p[0]));
	r->p[r->n].pid = pid;
	r->p[r->n].start = start;
	return &r->p[r->n++];
}

/* .NET: EnablePerfMap, kept to be undone at the end */
static void ask_dotnet(struct rtnames *r, struct rt_proc *p)
{
	struct err e = { 0 };
	char msg[256];

	p->net = dotnetipc__open(p->pid, (int)r->o.timeout_ms, &e);
	if (p->net && dotnetipc__enable_perfmap(p->net, &e) == 0) {
		r->maps++;
		p_info("PID %d (.NET): its perf map switched on for this capture, off again at its end",
		       (int)p->pid);
		return;
	}
	p_warn("PID %d (.NET): its JIT frames stay unnamed: %s", (int)p->pid,
	       safe(e.msg, msg, sizeof(msg)));
	dotnetipc__free(p->net);
	p->net = NULL;
}

/* A JVM's map now: 0, or -1 (said when SAY) */
static int dump_jvm(struct rtnames *r, struct rt_proc *p, bool say)
{
	struct err e = { 0 };
	char msg[256];

	(void)r;
	p->last_ns = now_ns();
	if (jattach__perfmap(p->jvm, &e) == 0)
		return 0;
	if (say)
		p_warn("PID %d (JVM): its perf map not written: %s", (int)p->pid,
		       safe(e.msg, msg, sizeof(msg)));
	return -1;
}

/* HotSpot: Compiler.perfmap now, and again during the capture */
static void ask_jvm(struct rtnames *r, struct rt_proc *p)
{
	struct jattach_opts jo = { .start_ms = r->o.timeout_ms, .reply_ms = r->o.timeout_ms };
	struct err e = { 0 };
	char msg[256];

	p->jvm = jattach__probe(p->pid, &jo, &e);
	if (!p->jvm) {
		p_warn("PID %d (JVM): its JIT frames stay unnamed: %s", (int)p->pid,
		       safe(e.msg, msg, sizeof(msg)));
		return;
	}
	if (dump_jvm(r, p, true)) {
		jattach__free(p->jvm);
		p->jvm = NULL;
		return;
	}
	r->maps++;
	p_info("PID %d (JVM): its perf map written (jcmd Compiler.perfmap), again every %llu s "
	       "and at the capture's end", (int)p->pid,
	       (unsigned long long)(RTNAMES_REFRESH_NS / 1000000000ull));
}

void rtnames__see(struct rtnames *r, pid_t pid)
{
	struct rt_proc *p;
	uint64_t start = 0;
	bool fresh;

	if (!r || run__stop || proc__start_time(pid, &start))
		return;
	p = entry(r, pid, start, &fresh);
	if (!p || !fresh)
		return;
	p->rt = runtime_of(pid);
	if (p->rt != RUNTIME_DOTNET && p->rt != RUNTIME_JVM && p->rt != RUNTIME_NODE)
		return;
	if (has_perfmap(pid))
		return;		/* named already */
	if (p->rt == RUNTIME_NODE) {
		p_info("PID %d (node): no perf map, its JIT frames stay unnamed; start it with %s",
		       (int)pid, NODE_FLAG);
		return;
	}
	if (r->o.hands_off) {
		p_info("PID %d (%s): no perf map, its runtime not asked for one (--hands-off)",
		       (int)pid, p->rt == RUNTIME_DOTNET ? ".NET" : "JVM");
		return;
	}
	r->asked++;
	if (p->rt == RUNTIME_DOTNET)
		ask_dotnet(r, p);
	else
		ask_jvm(r, p);
}

void rtnames__refresh(struct rtnames *r, uint64_t now, uint64_t budget_ns,
		      rtnames_misses_fn misses, void *ctx)
{
	size_t i;

	for (i = 0; r && i < r->n; i++) {
		struct rt_proc *p = &r->p[i];
		uint64_t m;

		if (!p->jvm)
			continue;
		m = misses ? misses(ctx, p->pid) : p->misses;
		if (now - p->last_ns < RTNAMES_REFRESH_NS &&
		    (m == p->misses || now - p->last_ns < RTNAMES_MISS_NS))
			continue;
		p->misses = m;
		if (now_ns() - now >= budget_ns)
			break;
		if (!proc__alive(p->pid, p->start) || dump_jvm(r, p, false)) {
			/* gone, or it stopped answering: asked no more */
			jattach__free(p->jvm);
			p->jvm = NULL;
		}
	}
}

void rtnames__last_refresh(struct rtnames *r)
{
	size_t i;

	for (i = 0; r && i < r->n; i++)
		if (r->p[i].jvm && proc__alive(r->p[i].pid, r->p[i].start))
			dump_jvm(r, &r->p[i], false);
}

void rtnames__restore(struct rtnames *r)
{
	struct err e = { 0 };
	char msg[256];
	size_t i;

	for (i = 0; r && i < r->n; i++) {
		struct rt_proc *p = &r->p[i];

		if (!p->net || !dotnetipc__should_disable(p->net, false))
			continue;
		if (proc__alive(p->pid, p->start) && dotnetipc__disable_perfmap(p->net, &e))
			p_warn("PID %d (.NET): its perf map could not be switched off again: %s",
			       (int)p->pid, safe(e.msg, msg, sizeof(msg)));
		dotnetipc__free(p->net);
		p->net = NULL;
	}
}

bool rtnames__writing(const struct rtnames *r, pid_t pid)
{
	size_t i;

	for (i = 0; r && i < r->n; i++)
		if (r->p[i].pid == pid && (r->p[i].net || r->p[i].jvm))
			return true;
	return false;
}

void rtnames__counts(const struct rtnames *r, unsigned int *asked, unsigned int *maps)
{
	*asked = r ? r->asked : 0;
	*maps = r ? r->maps : 0;
}

void rtnames__free(struct rtnames *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++) {
		dotnetipc__free(r->p[i].net);
		jattach__free(r->p[i].jvm);
	}
	free(r->p);
	free(r);
}
