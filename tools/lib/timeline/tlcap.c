// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The timeline's capture (timeline/tlcap.h). Three sources run at once:
 *   samples  bpf/timeline.bpf.c on a cpu-clock perf event per CPU, the
 *            target's threads only; {time, thread, stack hash} through a
 *            ring buffer, stacks stored once in a map, symbolized on first
 *            sight (sym/symbolize)
 *   probes   the uprobe engine (uprobe/session) with a sink: each raw
 *            event to its JSON form (uprobe/upfmt), an instant
 *   lttng    a session through liblttng-ctl (timeline/tllttng), read back
 *            at the end with the CTF reader
 * into the model of timeline/timeline, which writes the document. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/json.h"
#include "core/log.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "prof/perfev.h"
#include "prof/prof.h"
#include "prof/target.h"
#include "rt/rtnames.h"
#include "sym/symbolize.h"
/* bpf/timeline.h, the types the sampler shares (not this directory's) */
#include <timeline.h>
#include "timeline.skel.h"
#include "timeline/timeline.h"
#include "timeline/tlcap.h"
#include "timeline/tllttng.h"
#include "uprobe/probespec.h"
#include "uprobe/session.h"
#include "uprobe/upfmt.h"

#define MAX_STR 256

struct tlcap {
	struct tlcap_opts o;
	uint64_t start;		/* the target's start time, clock ticks */
	struct target_clock clock;
	struct proc_status st;
	uint64_t origin;	/* the BPF clock at the start */
	int64_t rt_off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC then */
	struct timeline *tl;
	struct symbolizer *sz;
	struct timeline_bpf *skel;
	struct ring_buffer *rb;
	struct perfev sampling;
	struct probe_spec *specs[UP_MAX_PROBES];	/* the session's, borrowed */
	struct session *s;
	struct upfmt *fmt;
	struct tl_lttng *lt;
	struct tl_lttng_stats lst;
	struct rtnames *rt;	/* the names of its JIT code asked of its runtime */
	bool lttng_read;
	uint64_t lost_stacks, oom, probe_lost;
	uint64_t stats[TLSTAT_MAX];
};

struct tlcap *tlcap__new(const struct tlcap_opts *o)
{
	struct tlcap *r = calloc(1, sizeof(*r));

	if (!r) {
		p_err("out of memory");
		return NULL;
	}
	r->o = *o;
	return r;
}


/* The target checked, its start time, our PID namespace. 0 or -1 (said). */
int tlcap__find_target(struct tlcap *r)
{
	struct err perr = { 0 };

	if (proc__check_target(r->o.pid, &perr)) {
		p_err("%s", perr.msg);
		return -1;
	}
	if (proc__start_time(r->o.pid, &r->start) || proc__read_status(r->o.pid, &r->st)) {
		p_err("cannot read /proc/%d: the process is gone", (int)r->o.pid);
		return -1;
	}
	return target__clock(&r->clock);
}

/* Every probe parsed and finished: 0, 2 (a bad probe: usage) or 1. */
int tlcap__parse_probes(struct tlcap *r)
{
	int i, ret;

	for (i = 0; i < r->o.nprobes; i++) {
		ret = probespec__parse_say(r->o.probes[i], MAX_STR, &r->specs[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* A uprobe event record: an instant named by its probe, the formatter's
 * JSON object as its arguments. */
static int on_probe(void *arg, const void *rec, size_t size)
{
	struct tlcap *r = arg;
	const struct up_event_hdr *h = rec;
	const char *line;
	char comm[17];
	size_t len;

	line = upfmt__line(r->fmt, rec, size, &len);
	if (!line)
		return -EINVAL;
	while (len && line[len - 1] == '\n')
		len--;
	memcpy(comm, h->comm, 16);
	comm[16] = '\0';
	if (timeline__thread(r->tl, (pid_t)h->tid, comm) ||
	    timeline__instant(r->tl, h->ts, (pid_t)h->tid, r->specs[h->probe]->label, line, len)) {
		r->oom++;
		return -ENOMEM;
	}
	return 0;
}

/* The probes attached (the specs become the session's). 0 or -1 (said). */
static int open_probes(struct tlcap *r)
{
	struct session_opts o = {
		.pid = r->o.pid, .max_str = MAX_STR, .buf_kb = 4096,
		.sink = on_probe, .sink_arg = r,
	};
	struct probe_spec *copy[UP_MAX_PROBES];
	int n = r->o.nprobes;

	if (!n)
		return 0;
	memcpy(copy, r->specs, sizeof(copy));
	r->s = session__new(&o, copy, n, stderr);
	if (!r->s) {
		memset(r->specs, 0, sizeof(r->specs));
		p_err("out of memory");
		return -1;
	}
	r->fmt = upfmt__new(r->specs, n, true, upfmt__realtime_offset());
	if (!r->fmt) {
		p_err("out of memory");
		return -1;
	}
	if (session__resolve(r->s) || session__load(r->s) || session__attach(r->s))
		return -1;
	return 0;
}

/* A sample from the ring buffer: its stack symbolized on first sight. */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct tlcap *r = ctx;
	const struct timeline_sample *smp = data;
	struct profile_stack st;
	const char *names[TIMELINE_MAX_DEPTH];
	struct sym_frame sf;
	int idx = -1, n, i;

	if (size < sizeof(*smp))
		return 0;
	if (smp->ustack) {
		idx = timeline__find_stack(r->tl, smp->ustack);
		if (idx < 0 && bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stacks), &smp->ustack,
						   &st) == 0) {
			for (n = 0; n < TIMELINE_MAX_DEPTH && st.ips[n]; n++)
				;
			symbolizer__revisit(r->sz, r->o.pid, r->start, (const uint64_t *)st.ips,
					    (size_t)n);
			for (i = 0; i < n; i++) {
				/* a caller's address is its return address: one
				 * byte back is inside the call */
				uint64_t ip = i ? st.ips[i] - 1 : st.ips[i];

				if (symbolizer__user_at(r->sz, r->o.pid, ip, i ? SYM_CALLER : 0, &sf))
					break;
				names[i] = sf.name;
			}
			idx = timeline__stack(r->tl, smp->ustack, names, (size_t)i);
			if (idx < 0)
				r->oom++;
		} else if (idx < 0) {
			r->lost_stacks++;
		}
	}
	if (timeline__sample(r->tl, smp->ts, (pid_t)smp->tid, idx, smp->kernel))
		r->oom++;
	return 0;
}

static int open_bpf(struct tlcap *r)
{
	struct timeline_bpf *skel;
	int err;

	skel = r->skel = timeline_bpf__open();
	if (!skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), privhint__msg(PRIVHINT_BPF, err));
		return -1;
	}
	skel->rodata->pidns_dev = r->clock.pidns_dev;
	skel->rodata->pidns_ino = r->clock.pidns_ino;
	skel->rodata->target_pid = (__u32)r->o.pid;
	skel->rodata->target_start = target__bpf_start(&r->clock, r->start);
	skel->rodata->ns_per_tick = r->clock.ns_per_tick;
	bpf_map__set_max_entries(skel->maps.stacks, (__u32)r->o.max_stacks);
	bpf_map__set_max_entries(skel->maps.samples, (__u32)r->o.buf_kb * 1024);
	err = timeline_bpf__load(skel);
	if (err) {
		p_err("failed to load BPF program: %s%s", strerror(-err), privhint__msg(PRIVHINT_BPF, -err));
		return -1;
	}
	r->rb = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_sample, r, NULL);
	if (!r->rb) {
		p_err("cannot open the BPF ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int start_lttng(struct tlcap *r)
{
	const char *apps = getenv("SIDESCOPE_LTTNG_APPS");
	struct stat sb;
	struct tl_lttng_opts o = {
		.pid = r->o.pid, .vpid = r->st.nstgid ? r->st.nstgid : r->o.pid,
		.events = r->o.events, .nevents = r->o.nevents,
		.register_ms = (unsigned int)r->o.register_ms,
		.read_ms = TL_LTTNG_READ_MS,
	};

	if (!r->o.lttng)
		return 0;
	/* where lttng-capture puts the application socket: the app's
	 * /var/run/lttng, mounted here; the default when it is that one */
	if (!apps && stat("/run/lttng-apps", &sb) == 0 && S_ISDIR(sb.st_mode))
		apps = "/run/lttng-apps";
	if (apps && *apps && strcmp(apps, "/var/run/lttng") && strcmp(apps, "/run/lttng"))
		o.apps_dir = apps;
	r->lt = tl_lttng__start(&o);
	return r->lt ? 0 : -1;
}

/* Every thread of the target now, named: a track each, even for those
 * that never run during the capture. */
static int name_threads(struct tlcap *r)
{
	char path[64];
	struct dirent *d;
	uint64_t tid;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->o.pid);
	dir = opendir(path);
	if (!dir)
		return 0;	/* gone: said by the capture */
	while (!err && (d = readdir(dir)))
		if (!parse_u64(d->d_name, 1, INT_MAX, &tid))
			err = timeline__thread(r->tl, (pid_t)tid, NULL);
	closedir(dir);
	if (err)
		p_err("out of memory");
	return err ? -1 : 0;
}

static void read_stats(struct tlcap *r)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	__u64 *vals;
	__u32 i;

	if (ncpus <= 0 || !r->skel)
		return;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return;
	for (i = 0; i < TLSTAT_MAX; i++) {
		r->stats[i] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stats), &i, vals))
			continue;
		for (cpu = 0; cpu < ncpus; cpu++)
			r->stats[i] += vals[cpu];
	}
	free(vals);
}

static void progress(struct tlcap *r, uint64_t t, bool tty)
{
	struct timeline_counts c;

	timeline__counts(r->tl, &c);
	if (tty)
		fprintf(stderr, "\r%s: %llu/%llu s, %llu samples, %llu probe hits ", log__prog(),
			(unsigned long long)(t / 1000000000ull), (unsigned long long)r->o.secs,
			(unsigned long long)c.samples, (unsigned long long)c.instants);
	else
		p_info("%llu s: %llu samples, %llu probe hits",
		       (unsigned long long)(t / 1000000000ull), (unsigned long long)c.samples,
		       (unsigned long long)c.instants);
}

/* Until the duration, a stop or the target's exit. 0 or -1 (said). */
static int sample_loop(struct tlcap *r)
{
	uint64_t t0 = now_ns(), now, last_tty = t0, last_line = t0;
	bool tty = isatty(STDERR_FILENO);
	int c;

	p_debug("sampling at %llu Hz on %d CPUs, %d probes%s", (unsigned long long)r->o.hz,
		r->sampling.n, r->o.nprobes, r->lt ? ", LTTng" : "");
	while (!run__stop) {
		now = now_ns();
		if (r->o.secs && now - t0 >= r->o.secs * 1000000000ull)
			break;
		if (!proc__alive(r->o.pid, r->start)) {
			p_info("PID %d exited; stopping", (int)r->o.pid);
			break;
		}
		/* a JVM's perf map for code compiled since */
		rtnames__refresh(r->rt, now, RTNAMES_REFRESH_BUDGET_NS, NULL, NULL);
		if (tty && now - last_tty >= 500000000ull) {
			last_tty = now;
			progress(r, now - t0, true);
		} else if (!tty && r->o.secs >= 30 && now - last_line >= 10000000000ull) {
			last_line = now;
			progress(r, now - t0, false);
		}
		/* the probes' poll waits; without probes, ours does */
		c = ring_buffer__poll(r->rb, r->s ? 0 : 100);
		if (c < 0 && c != -EINTR) {
			p_err("cannot read the BPF ring buffer: %s", strerror(-c));
			return -1;
		}
		if (r->s) {
			c = session__poll(r->s);
			if (c < 0 && c != -EINTR)
				return -1;
		}
	}
	if (tty)
		fputc('\n', stderr);
	return 0;
}

/* Sampling and probes detached, what is queued read, LTTng stopped. */
static int stop_capture(struct tlcap *r)
{
	int err = 0;

	perfev__close(&r->sampling);
	ring_buffer__consume(r->rb);
	read_stats(r);
	if (r->s) {
		if (session__finish(r->s))
			err = -1;
		r->probe_lost = session__lost(r->s);
	}
	if (r->lt && tl_lttng__stop(r->lt))
		err = -1;
	return err;
}

/* vtid -> tid when the target is in a PID namespace below ours. */
static void map_threads(struct tlcap *r, pid_t **vt, pid_t **t, int *n)
{
	char path[64];
	struct dirent *d;
	int cap = 0;
	DIR *dir;

	*vt = *t = NULL;
	*n = 0;
	if (r->st.nstgid == 0 || r->st.nstgid == r->o.pid)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->o.pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		struct proc_status ts;
		uint64_t tid;

		if (parse_u64(d->d_name, 1, 0x3fffffff, &tid) || proc__read_status((pid_t)tid, &ts))
			continue;
		if (*n == cap) {
			int nc = cap ? cap * 2 : 64;
			pid_t *a = realloc(*vt, (size_t)nc * sizeof(*a));
			pid_t *b = a ? realloc(*t, (size_t)nc * sizeof(*b)) : NULL;

			if (a)
				*vt = a;
			if (!b)
				break;
			*t = b;
			cap = nc;
		}
		(*vt)[*n] = ts.nspid;
		(*t)[*n] = (pid_t)tid;
		(*n)++;
	}
	closedir(dir);
}

/* What the reader's budgets (timeline/tlread.h) left out, said. */
static void lttng_budgets(const struct tlcap *r)
{
	const struct tl_lttng_stats *st = &r->lst;
	double at = st->last_ns > r->origin ? (double)(st->last_ns - r->origin) / 1e9 : 0;

	if (st->begins_dropped)
		p_warn("%llu LTTng begin events dropped, oldest first: more than %u open on one "
		       "thread with one name, or %u in all (their ends are instants)",
		       (unsigned long long)st->begins_dropped, TL_READ_MAX_DEPTH, TL_READ_MAX_OPEN);
	if (st->args_dropped)
		p_warn("%llu LTTng begin events' arguments left out: longer than %u bytes",
		       (unsigned long long)st->args_dropped, TL_READ_MAX_ARGS);
	if (st->other_threads)
		p_warn("%llu LTTng events left out: their threads came after the first %u",
		       (unsigned long long)st->other_threads, TL_READ_MAX_THREADS);
	if (st->unwritten)
		p_warn("%llu LTTng begin events still open at the end left out: the %zu MiB of "
		       "events were written", (unsigned long long)st->unwritten, TL_READ_MAX_BYTES >> 20);
	switch (st->cut) {
	case TL_CUT_SIGNAL:
		p_warn("the LTTng trace was read in part: a signal came; its events after %.3f s "
		       "are left out", at);
		break;
	case TL_CUT_TIME:
		p_warn("the LTTng trace was read in part: its reading took its budget of %u ms "
		       "(%s); its events after %.3f s are left out",
		       run__stop ? TL_LTTNG_READ_STOPPED_MS : TL_LTTNG_READ_MS,
		       run__stop ? "after a signal" : "after the duration", at);
		break;
	case TL_CUT_OUTPUT:
		p_warn("the LTTng trace was read in part: %zu MiB of events were written; its "
		       "events after %.3f s are left out", TL_READ_MAX_BYTES >> 20, at);
		break;
	}
}

static int read_lttng(struct tlcap *r)
{
	pid_t *vt, *t;
	int n, err;

	if (!r->lt)
		return 0;
	map_threads(r, &vt, &t, &n);
	r->lst.our_offset_ns = r->rt_off;
	err = tl_lttng__read(r->lt, r->tl, r->origin, vt, t, n, &r->lst);
	free(vt);
	free(t);
	if (err)
		return -1;
	r->lttng_read = true;
	if (r->lst.events && !r->lst.monotonic)
		p_warn("the LTTng trace's clock is '%s', not monotonic: its times are converted "
		       "through the realtime clock", r->lst.clock);
	else if (r->lst.events && llabs(r->lst.clock_offset_ns - r->rt_off) > 10000000ll)
		p_warn("the LTTng clock's offset differs from ours by %lld us: the realtime "
		       "clock was stepped", (long long)(r->lst.clock_offset_ns - r->rt_off) / 1000);
	if (r->lst.discarded_events)
		p_warn("%llu LTTng events discarded: the buffers were full",
		       (unsigned long long)r->lst.discarded_events);
	lttng_budgets(r);
	return 0;
}

/* Counters as "key": n members of the object J is in */
struct tl_count {
	const char *key;
	uint64_t n;
};

static void put_counts(struct json *j, const struct tl_count *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json__key(j, c[i].key);
		json__u64(j, c[i].n);
	}
}

static void other_data(void *arg, struct json *j)
{
	struct tlcap *r = arg;
	const uint64_t *st = r->stats, *stl = r->stats + TLSTAT_STACKS_LOST;
	const struct tl_count lost[] = {
		{ "samples_ring_buffer_full", st[TLSTAT_RB_FULL] },
		{ "user_stack_errors", st[TLSTAT_USTACK_ERR] },
		{ "user_stacks_truncated", st[TLSTAT_USTACK_TRUNC] },
		{ "stack_store_full", stl[MAP_FAIL_FULL] },
		{ "stack_store_no_memory", stl[MAP_FAIL_NOMEM] },
		{ "stack_store_busy", stl[MAP_FAIL_BUSY] },
		{ "stack_store_refused", stl[MAP_FAIL_OTHER] },
		{ "stacks_missing", r->lost_stacks },
		{ "pid_reused", st[TLSTAT_PID_REUSED] },
		{ "probe_events", r->probe_lost },
		{ "out_of_memory", r->oom },
	}, lttng_lost[] = {
		{ "lttng_discarded_events", r->lst.discarded_events },
		{ "lttng_discarded_packets", r->lst.discarded_packets },
		/* the reader's budgets (timeline/tlread.h) */
		{ "lttng_begins_dropped", r->lst.begins_dropped },
		{ "lttng_begin_args_dropped", r->lst.args_dropped },
		{ "lttng_events_other_threads", r->lst.other_threads },
		{ "lttng_open_begins_unwritten", r->lst.unwritten },
	}, lttng[] = {
		{ "events", r->lst.events },
		{ "instants", r->lst.instants },
		{ "slices", r->lst.slices },
	};

	json__key(j, "frequency_hz"); json__u64(j, r->o.hz);
	json__key(j, "lost");
	json__obj(j);
	put_counts(j, lost, sizeof(lost) / sizeof(lost[0]));
	if (r->lttng_read)
		put_counts(j, lttng_lost, sizeof(lttng_lost) / sizeof(lttng_lost[0]));
	json__end(j);
	json__key(j, "probes");
	json__arr(j);
	for (int i = 0; i < r->o.nprobes; i++)
		json__str(j, r->o.probes[i]);
	json__end(j);
	if (!r->lttng_read)
		return;
	json__key(j, "lttng");
	json__obj(j);
	put_counts(j, lttng, sizeof(lttng) / sizeof(lttng[0]));
	json__key(j, "clock"); json__str(j, r->lst.clock);
	json__key(j, "clock_monotonic"); json__bool(j, r->lst.monotonic);
	json__key(j, "clock_offset_ns"); json__i64(j, r->lst.clock_offset_ns);
	json__key(j, "our_offset_ns"); json__i64(j, r->rt_off);
	json__key(j, "started_daemon"); json__bool(j, r->lst.started_daemon);
	/* what ended the read before the trace's end: "none", "signal",
	 * "time", "output", "killed", "failed" */
	json__key(j, "read_cut"); json__str(j, tl_read__cut_name(r->lst.cut));
	json__end(j);
}

void tlcap__report(struct tlcap *r, const char *output)
{
	struct timeline_counts c;
	int i;

	timeline__counts(r->tl, &c);
	p_info("%llu samples (%llu slices) on %llu threads, %llu probe hits%s -> %s",
	       (unsigned long long)c.samples, (unsigned long long)c.slices,
	       (unsigned long long)c.threads, (unsigned long long)c.instants,
	       r->lttng_read ? ", LTTng events below" : "", output);
	if (r->lttng_read)
		p_info("%llu LTTng events (%llu instants, %llu slices)%s%s%s",
		       (unsigned long long)r->lst.events, (unsigned long long)r->lst.instants,
		       (unsigned long long)r->lst.slices,
		       r->lst.begins_dropped || r->lst.args_dropped || r->lst.other_threads ||
				       r->lst.unwritten ? ", some left out (see above)" : "",
		       r->lst.cut ? ", read cut short: " : "",
		       r->lst.cut ? tl_read__cut_name(r->lst.cut) : "");
	if (r->stats[TLSTAT_RB_FULL])
		p_warn("%llu samples lost: the ring buffer was full (raise --buffer-kb)",
		       (unsigned long long)r->stats[TLSTAT_RB_FULL]);
	for (i = 0; i < MAP_FAIL_N; i++) {
		char advice[256];

		if (r->stats[TLSTAT_STACKS_LOST + i])
			p_warn("%llu stacks lost: %s", (unsigned long long)r->stats[TLSTAT_STACKS_LOST + i],
			       prof__fail_advice((unsigned int)i, "the stack store", "--max-stacks",
						 (unsigned long long)r->o.max_stacks, advice,
						 sizeof(advice)));
	}
}

int tlcap__start(struct tlcap *r)
{
	/* LTTng first: the app's registration may take a moment, which is
	 * not part of the capture */
	if (start_lttng(r)) {
		if (!run__stop)
			return -1;
		/* stopped before the app registered: the file, without LTTng */
		p_warn("stopped before PID %d registered with lttng-sessiond: no LTTng events",
		       (int)r->o.pid);
	}
	r->sz = symbolizer__new();
	r->origin = proc__bpf_clock_ns();
	r->rt_off = upfmt__realtime_offset();
	r->tl = r->sz ? timeline__new(r->o.pid, r->origin, 1000000000ull / r->o.hz) : NULL;
	if (!r->tl) {
		p_err("out of memory");
		return -1;
	}
	symbolizer__watch_start(r->sz, r->o.pid, r->start);
	/* its JIT code's names asked for before sampling begins */
	r->rt = rtnames__new(&(struct rtnames_opts){ .hands_off = r->o.hands_off });
	if (!r->rt)
		return -1;
	rtnames__see(r->rt, r->o.pid);
	if (name_threads(r) || open_probes(r) || open_bpf(r) ||
	    perfev__open(&r->sampling, r->skel->progs.do_sample, (unsigned int)r->o.hz))
		return -1;
	return 0;
}

int tlcap__run(struct tlcap *r)
{
	int err = sample_loop(r) || stop_capture(r);

	/* the app as it was found (a .NET perf map switched on here, off) */
	rtnames__restore(r->rt);
	return err || read_lttng(r) ? -1 : 0;
}

int tlcap__write(struct tlcap *r, FILE *f)
{
	return timeline__write(r->tl, f, other_data, r);
}

void tlcap__free(struct tlcap *r)
{
	int i;

	if (!r)
		return;
	perfev__close(&r->sampling);
	ring_buffer__free(r->rb);
	timeline_bpf__destroy(r->skel);
	session__free(r->s);
	if (!r->s)
		for (i = 0; i < r->o.nprobes; i++)
			probespec__free(r->specs[i]);
	upfmt__free(r->fmt);
	tl_lttng__free(r->lt);
	rtnames__free(r->rt);
	/* the stacks' names are the symbolizer's: after the timeline */
	timeline__free(r->tl);
	symbolizer__free(r->sz);
	free(r);
}
