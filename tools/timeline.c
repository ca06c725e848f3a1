// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope timeline: CPU samples, uprobe hits and LTTng events of one
 * process on one clock, as one Chrome trace event JSON file (Perfetto UI,
 * chrome://tracing).
 *
 * Three sources run at once:
 *   samples  bpf/timeline.bpf.c on a cpu-clock perf event per CPU, the
 *            target's threads only; {time, thread, stack hash} through a
 *            ring buffer, stacks stored once in a map, symbolized on first
 *            sight (sym/symbolize)
 *   probes   the uprobe engine (uprobe/session) with a sink: each raw
 *            event to its JSON form (uprobe/upfmt), an instant
 *   lttng    a session through liblttng-ctl (timeline/tllttng), read back
 *            at the end with the CTF reader
 * and timeline/timeline writes the document through core/outfile. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "core/cli.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "sym/symbolize.h"
#include "timeline.h"
#include "timeline.skel.h"
#include "timeline/timeline.h"
#include "timeline/tllttng.h"
#include "uprobe/probespec.h"
#include "uprobe/session.h"
#include "uprobe/upfmt.h"

#define MAX_EVENTS 32
#define MAX_STR 256

struct env {
	pid_t pid;
	uint64_t secs, hz, max_stacks, buf_kb, register_ms;
	const char *output;
	char *probes[UP_MAX_PROBES];
	int nprobes;
	char *events[MAX_EVENTS];	/* --lttng-event */
	int nevents;
	bool lttng;
};

struct run {
	struct env env;
	uint64_t start;		/* the target's start time, clock ticks */
	uint64_t ns_per_tick, boot_ticks;
	uint64_t pidns_dev, pidns_ino;
	struct proc_status st;
	uint64_t origin;	/* the BPF clock at the start */
	int64_t rt_off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC then */
	struct outfile *of;
	struct timeline *tl;
	struct symbolizer *sz;
	struct timeline_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks;
	struct probe_spec *specs[UP_MAX_PROBES];	/* the session's, borrowed */
	struct session *s;
	struct upfmt *fmt;
	struct tl_lttng *lt;
	struct tl_lttng_stats lst;
	bool lttng_read;
	uint64_t lost_stacks, oom, probe_lost;
	uint64_t stats[TLSTAT_MAX];
	int ncpus;
};

enum { OPT_LTTNG = 256, OPT_LTTNG_EVENT, OPT_MAX_STACKS, OPT_BUFFER_KB, OPT_REGISTER_WAIT };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PID", "the process (as this PID namespace shows it)" },
	{ 'd', "duration", "S", "seconds to record (default 10; 0: until\n"
				"SIGINT/SIGTERM)" },
	{ 'F', "frequency", "HZ", "CPU samples per second per CPU (default 99)" },
	{ 'e', "probe", "PROBE", "also a uprobe, as 'sidescope uprobe' takes it:\n"
				 "its hits are instants with their arguments;\n"
				 "may be repeated" },
	{ OPT_LTTNG, "lttng", NULL, "also the process's LTTng user-space events\n"
				    "(starts lttng-sessiond when none runs)" },
	{ OPT_LTTNG_EVENT, "lttng-event", "NAME", "only these LTTng events (patterns, as 'lttng\n"
						  "enable-event' takes them; implies --lttng);\n"
						  "may be repeated" },
	{ OPT_REGISTER_WAIT, "register-wait", "MS", "--lttng: how long the app may take to\n"
						    "register with lttng-sessiond (default 5000)" },
	{ 'o', "output", "FILE", "the Chrome trace event JSON file (required)" },
	{ OPT_MAX_STACKS, "max-stacks", "N", "distinct stacks kept in the kernel (default\n"
					     "16384, about 1 KB each)" },
	{ OPT_BUFFER_KB, "buffer-kb", "KB", "ring buffer of the samples in KiB (a power\n"
					    "of 2, default 1024)" },
	{ 'v', "verbose", NULL, "debug messages, libbpf's included" },
	{ 'h', "help", NULL, "print this help" },
	{}
};

static const struct cli cli = {
	.text =
"sidescope timeline: CPU samples, uprobe hits and LTTng events of one process\n"
"on one clock, for Perfetto UI and chrome://tracing\n"
"\n"
"USAGE: sidescope timeline -p PID [-d SECONDS] [-F HZ] [-e PROBE]...\n"
"                          [--lttng [--lttng-event NAME]...] -o FILE.json\n"
"\n"
"Records at once, with BPF timestamps (CLOCK_MONOTONIC): the stacks of the\n"
"process's threads sampled on every CPU, each probe's hits with their\n"
"decoded arguments, and with --lttng its LTTng user-space events, whose\n"
"clock is checked against ours. One track per thread: samples are slices\n"
"named by their leaf function (consecutive samples with the same leaf\n"
"merged, the whole stack in the slice's arguments), probe hits and LTTng\n"
"events instants, LTTng begin/end pairs (Start/Stop, Begin/End) slices.\n"
"\"otherData\" says what was lost.\n"
"\n",
	.opts = opts,
	.tail =
"\n"
"The capture stops at the duration, when the process exits, or on SIGINT or\n"
"SIGTERM; the file then holds what was collected. Open it at\n"
"https://ui.perfetto.dev (Open trace file) or chrome://tracing.\n"
"\n"
"EXAMPLES:\n"
"  sidescope timeline -p 7 -d 10 -o t.json              # CPU samples only\n"
"  sidescope timeline -p 7 -e 'p:/app/server:handle \"%d\", arg1' -o t.json\n"
"  sidescope timeline -p 7 -d 5 --lttng -o t.json       # and its LTTng events\n"
"  sidescope timeline -p 7 --lttng-event 'DotNETRuntime:GC*' -o gc.json # GCs\n"
"  sidescope timeline -p 7 -d 0 -F 999 -o t.json        # until Ctrl-C, 999 Hz\n",
	.col = 26,
};

static int parse_opt(void *ctx, int opt, const char *arg)
{
	struct env *env = ctx;
	uint64_t v;

	switch (opt) {
	case 'p':
		if (parse_u64(arg, 1, INT_MAX, &v))
			return usage_error("invalid PID '%s'", arg);
		env->pid = (pid_t)v;
		return 0;
	case 'd':
		if (parse_u64(arg, 0, 86400ull * 365, &env->secs))
			return usage_error("invalid duration '%s' (seconds)", arg);
		return 0;
	case 'F':
		if (parse_u64(arg, 1, 10000, &env->hz))
			return usage_error("invalid frequency '%s' (1-10000 Hz)", arg);
		return 0;
	case 'e':
		if (env->nprobes == UP_MAX_PROBES)
			return usage_error("at most %d probes", UP_MAX_PROBES);
		env->probes[env->nprobes++] = (char *)arg;
		return 0;
	case OPT_LTTNG:
		env->lttng = true;
		return 0;
	case OPT_LTTNG_EVENT:
		if (env->nevents == MAX_EVENTS)
			return usage_error("at most %d --lttng-event", MAX_EVENTS);
		if (!*arg || strlen(arg) >= 256)
			return usage_error("invalid LTTng event name '%s'", arg);
		env->events[env->nevents++] = (char *)arg;
		env->lttng = true;
		return 0;
	case OPT_REGISTER_WAIT:
		if (parse_u64(arg, 0, 600000, &env->register_ms))
			return usage_error("invalid --register-wait '%s' (milliseconds)", arg);
		return 0;
	case 'o':
		env->output = arg;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_u64(arg, 16, 1u << 22, &env->max_stacks))
			return usage_error("invalid --max-stacks '%s' (16 to 4194304)", arg);
		return 0;
	case OPT_BUFFER_KB:
		if (parse_u64(arg, 4, 1u << 20, &v) || (v & (v - 1)))
			return usage_error("invalid --buffer-kb '%s' (a power of 2, 4 to 1048576)", arg);
		env->buf_kb = v;
		return 0;
	}
	return 2;
}

static int parse_args(int argc, char **argv, struct env *env)
{
	struct stat sb;
	int r;

	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!env->pid)
		return usage_error("give the process: -p PID");
	if (!env->output)
		return usage_error("give the output: -o FILE.json");
	if (strcmp(env->output, "-") && stat(env->output, &sb) == 0 && S_ISDIR(sb.st_mode))
		return usage_error("-o %s: is a directory; give a file in it, e.g. "
				   "%s/timeline.json", env->output, env->output);
	return -1;
}

static const char *cap_hint(enum privhint_need need, int err)
{
	static char buf[192];

	return privhint(need, err, buf, sizeof(buf));
}

/* ---- setting up ----------------------------------------------------------- */

/* The target checked, its start time, our PID namespace. 0 or -1 (said). */
static int find_target(struct run *r)
{
	struct err perr = { 0 };
	long tck;
	int err;

	if (proc__check_target(r->env.pid, &perr)) {
		p_err("%s", perr.msg);
		return -1;
	}
	if (proc__start_time(r->env.pid, &r->start) || proc__read_status(r->env.pid, &r->st)) {
		p_err("cannot read /proc/%d: the process is gone", (int)r->env.pid);
		return -1;
	}
	tck = sysconf(_SC_CLK_TCK);
	r->ns_per_tick = tck > 0 && tck <= 1000000000L ? 1000000000ull / (uint64_t)tck : 10000000;
	r->boot_ticks = proc__timens_boot_ticks(r->ns_per_tick);
	err = proc__pidns(0, &r->pidns_dev, &r->pidns_ino);
	if (err) {
		p_err("cannot read this process's PID namespace: %s", strerror(-err));
		return -1;
	}
	return 0;
}

/* Every probe parsed and finished: 0, 2 (a bad probe: usage) or 1. */
static int parse_probes(struct run *r)
{
	int i;

	for (i = 0; i < r->env.nprobes; i++) {
		const char *text = r->env.probes[i];
		struct err e = { 0 };
		struct probe_spec *ps = probespec__parse(text, &e);

		if (!ps) {
			if (errno == ENOMEM) {
				p_err("out of memory");
				return 1;
			}
			probespec__print_error(text, &e);
			return 2;
		}
		r->specs[i] = ps;
		if (probespec__finish(ps, MAX_STR, &e)) {
			p_err("%s: %s", text, e.msg);
			return 2;
		}
	}
	return 0;
}

/* A uprobe event record: an instant named by its probe, the formatter's
 * JSON object as its arguments. */
static int on_probe(void *arg, const void *rec, size_t size)
{
	struct run *r = arg;
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
static int open_probes(struct run *r)
{
	struct session_opts o = {
		.pid = r->env.pid, .max_str = MAX_STR, .buf_kb = 4096,
		.sink = on_probe, .sink_arg = r,
	};
	struct probe_spec *copy[UP_MAX_PROBES];
	int n = r->env.nprobes;

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
	struct run *r = ctx;
	const struct timeline_sample *smp = data;
	struct timeline_stack st;
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
			symbolizer__revisit(r->sz, r->env.pid, r->start, (const uint64_t *)st.ips,
					    (size_t)n);
			for (i = 0; i < n; i++) {
				/* a caller's address is its return address: one
				 * byte back is inside the call */
				uint64_t ip = i ? st.ips[i] - 1 : st.ips[i];

				if (symbolizer__user_at(r->sz, r->env.pid, ip, i ? SYM_CALLER : 0, &sf))
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

static int open_bpf(struct run *r)
{
	struct timeline_bpf *skel;
	int err;

	skel = r->skel = timeline_bpf__open();
	if (!skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), cap_hint(PRIVHINT_BPF, err));
		return -1;
	}
	skel->rodata->pidns_dev = r->pidns_dev;
	skel->rodata->pidns_ino = r->pidns_ino;
	skel->rodata->target_pid = (__u32)r->env.pid;
	skel->rodata->target_start = r->start > r->boot_ticks ? r->start - r->boot_ticks : 0;
	skel->rodata->ns_per_tick = r->ns_per_tick;
	bpf_map__set_max_entries(skel->maps.stacks, (__u32)r->env.max_stacks);
	bpf_map__set_max_entries(skel->maps.samples, (__u32)r->env.buf_kb * 1024);
	err = timeline_bpf__load(skel);
	if (err) {
		p_err("failed to load BPF program: %s%s", strerror(-err), cap_hint(PRIVHINT_BPF, -err));
		return -1;
	}
	r->rb = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_sample, r, NULL);
	if (!r->rb) {
		p_err("cannot open the BPF ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* A cpu-clock perf event at HZ on every online CPU, each running the
 * sampler. 0 or -1 (said). */
static int attach_bpf(struct run *r)
{
	struct perf_event_attr attr;
	int cpu, fd, err;

	r->ncpus = libbpf_num_possible_cpus();
	r->links = calloc(r->ncpus > 0 ? r->ncpus : 1, sizeof(*r->links));
	if (!r->links) {
		p_err("out of memory");
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = sizeof(attr);
	attr.freq = 1;
	attr.sample_freq = r->env.hz;
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;	/* offline CPU */
			err = errno;
			p_err("failed to open perf event on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_PERF, err));
			return -1;
		}
		r->links[r->nlinks] = bpf_program__attach_perf_event(r->skel->progs.do_sample, fd);
		if (!r->links[r->nlinks]) {
			err = errno;
			close(fd);
			p_err("failed to attach BPF program on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_BPF, err));
			return -1;
		}
		r->nlinks++;
	}
	return 0;
}

static int start_lttng(struct run *r)
{
	const char *apps = getenv("SIDESCOPE_LTTNG_APPS");
	struct stat sb;
	struct tl_lttng_opts o = {
		.pid = r->env.pid, .vpid = r->st.nstgid ? r->st.nstgid : r->env.pid,
		.events = r->env.events, .nevents = r->env.nevents,
		.register_ms = (unsigned int)r->env.register_ms,
		.read_ms = TL_LTTNG_READ_MS,
	};

	if (!r->env.lttng)
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
static int name_threads(struct run *r)
{
	char path[64];
	struct dirent *d;
	uint64_t tid;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->env.pid);
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

/* ---- the capture ---------------------------------------------------------- */

static void read_stats(struct run *r)
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

static void progress(struct run *r, uint64_t t, bool tty)
{
	struct timeline_counts c;

	timeline__counts(r->tl, &c);
	if (tty)
		fprintf(stderr, "\r%s: %llu/%llu s, %llu samples, %llu probe hits ", log__prog(),
			(unsigned long long)(t / 1000000000ull), (unsigned long long)r->env.secs,
			(unsigned long long)c.samples, (unsigned long long)c.instants);
	else
		p_info("%llu s: %llu samples, %llu probe hits",
		       (unsigned long long)(t / 1000000000ull), (unsigned long long)c.samples,
		       (unsigned long long)c.instants);
}

/* Until the duration, a stop or the target's exit. 0 or -1 (said). */
static int run_capture(struct run *r)
{
	uint64_t t0 = now_ns(), now, last_tty = t0, last_line = t0;
	bool tty = isatty(STDERR_FILENO);
	int c;

	p_debug("sampling at %llu Hz on %d CPUs, %d probes%s", (unsigned long long)r->env.hz,
		r->nlinks, r->env.nprobes, r->lt ? ", LTTng" : "");
	while (!run__stop) {
		now = now_ns();
		if (r->env.secs && now - t0 >= r->env.secs * 1000000000ull)
			break;
		if (!proc__alive(r->env.pid, r->start)) {
			p_info("PID %d exited; stopping", (int)r->env.pid);
			break;
		}
		if (tty && now - last_tty >= 500000000ull) {
			last_tty = now;
			progress(r, now - t0, true);
		} else if (!tty && r->env.secs >= 30 && now - last_line >= 10000000000ull) {
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
static int stop_capture(struct run *r)
{
	int i, err = 0;

	for (i = 0; i < r->nlinks; i++)
		bpf_link__destroy(r->links[i]);
	r->nlinks = 0;
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
static void map_threads(struct run *r, pid_t **vt, pid_t **t, int *n)
{
	char path[64];
	struct dirent *d;
	int cap = 0;
	DIR *dir;

	*vt = *t = NULL;
	*n = 0;
	if (r->st.nstgid == 0 || r->st.nstgid == r->env.pid)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->env.pid);
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
static void lttng_budgets(const struct run *r)
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

static int read_lttng(struct run *r)
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

/* ---- the output ----------------------------------------------------------- */

static void other_data(void *arg, struct json *j)
{
	struct run *r = arg;

	json__key(j, "frequency_hz"); json__u64(j, r->env.hz);
	json__key(j, "lost");
	json__obj(j);
	json__key(j, "samples_ring_buffer_full"); json__u64(j, r->stats[TLSTAT_RB_FULL]);
	json__key(j, "user_stack_errors"); json__u64(j, r->stats[TLSTAT_USTACK_ERR]);
	json__key(j, "user_stacks_truncated"); json__u64(j, r->stats[TLSTAT_USTACK_TRUNC]);
	json__key(j, "stack_store_full"); json__u64(j, r->stats[TLSTAT_STACKS_FULL]);
	json__key(j, "stacks_missing"); json__u64(j, r->lost_stacks);
	json__key(j, "pid_reused"); json__u64(j, r->stats[TLSTAT_PID_REUSED]);
	json__key(j, "probe_events"); json__u64(j, r->probe_lost);
	json__key(j, "out_of_memory"); json__u64(j, r->oom);
	if (r->lttng_read) {
		json__key(j, "lttng_discarded_events"); json__u64(j, r->lst.discarded_events);
		json__key(j, "lttng_discarded_packets"); json__u64(j, r->lst.discarded_packets);
		/* the reader's budgets (timeline/tlread.h) */
		json__key(j, "lttng_begins_dropped"); json__u64(j, r->lst.begins_dropped);
		json__key(j, "lttng_begin_args_dropped"); json__u64(j, r->lst.args_dropped);
		json__key(j, "lttng_events_other_threads"); json__u64(j, r->lst.other_threads);
		json__key(j, "lttng_open_begins_unwritten"); json__u64(j, r->lst.unwritten);
	}
	json__end(j);
	json__key(j, "probes");
	json__arr(j);
	for (int i = 0; i < r->env.nprobes; i++)
		json__str(j, r->env.probes[i]);
	json__end(j);
	if (r->lttng_read) {
		json__key(j, "lttng");
		json__obj(j);
		json__key(j, "events"); json__u64(j, r->lst.events);
		json__key(j, "instants"); json__u64(j, r->lst.instants);
		json__key(j, "slices"); json__u64(j, r->lst.slices);
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
}

static int write_output(struct run *r)
{
	int err;

	err = timeline__write(r->tl, outfile__fp(r->of), other_data, r);
	if (err) {
		outfile__abort(r->of);
		r->of = NULL;
		p_err("cannot write %s: %s", r->env.output, strerror(-err));
		return 1;
	}
	err = outfile__commit(r->of);
	r->of = NULL;
	if (err) {
		p_err("cannot write %s: %s", r->env.output, outfile__strerror(err));
		return 1;
	}
	return 0;
}

static void report(struct run *r)
{
	struct timeline_counts c;

	timeline__counts(r->tl, &c);
	p_info("%llu samples (%llu slices) on %llu threads, %llu probe hits%s -> %s",
	       (unsigned long long)c.samples, (unsigned long long)c.slices,
	       (unsigned long long)c.threads, (unsigned long long)c.instants,
	       r->lttng_read ? ", LTTng events below" : "", r->env.output);
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
	if (r->stats[TLSTAT_STACKS_FULL])
		p_warn("%llu stacks lost: the stack store was full (raise --max-stacks)",
		       (unsigned long long)r->stats[TLSTAT_STACKS_FULL]);
}

static void cleanup(struct run *r)
{
	int i;

	for (i = 0; i < r->nlinks; i++)
		bpf_link__destroy(r->links[i]);
	free(r->links);
	ring_buffer__free(r->rb);
	timeline_bpf__destroy(r->skel);
	session__free(r->s);
	if (!r->s)
		for (i = 0; i < r->env.nprobes; i++)
			probespec__free(r->specs[i]);
	upfmt__free(r->fmt);
	tl_lttng__free(r->lt);
	outfile__abort(r->of);
	/* the stacks' names are the symbolizer's: after the timeline */
	timeline__free(r->tl);
	symbolizer__free(r->sz);
}

int cmd_timeline(int argc, char **argv)
{
	struct run r = {
		.env = { .secs = 10, .hz = 99, .max_stacks = 16384, .buf_kb = 1024,
			 .register_ms = 5000 },
	};
	int ret;

	/* first of all: a signal at any later moment ends the capture cleanly */
	run__catch_stop();
	ret = parse_args(argc, argv, &r.env);
	if (ret >= 0)
		return ret;
	ret = parse_probes(&r);
	if (ret)
		goto out;
	ret = 1;
	if (find_target(&r))
		goto out;
	r.of = outfile__open(r.env.output);
	if (!r.of) {
		p_err("cannot write %s: %s", r.env.output, outfile__strerror(errno));
		goto out;
	}
	run__libbpf_quiet_unless_verbose();
	/* LTTng first: the app's registration may take a moment, which is
	 * not part of the capture */
	if (start_lttng(&r)) {
		if (!run__stop)
			goto out;
		/* stopped before the app registered: the file, without LTTng */
		p_warn("stopped before PID %d registered with lttng-sessiond: no LTTng events",
		       (int)r.env.pid);
	}
	r.sz = symbolizer__new();
	r.origin = proc__bpf_clock_ns();
	r.rt_off = upfmt__realtime_offset();
	r.tl = r.sz ? timeline__new(r.env.pid, r.origin, 1000000000ull / r.env.hz) : NULL;
	if (!r.tl) {
		p_err("out of memory");
		goto out;
	}
	symbolizer__watch_start(r.sz, r.env.pid, r.start);
	if (name_threads(&r) || open_probes(&r) || open_bpf(&r) || attach_bpf(&r))
		goto out;
	if (run_capture(&r) || stop_capture(&r) || read_lttng(&r))
		goto out;
	ret = write_output(&r);
	if (!ret)
		report(&r);
out:
	cleanup(&r);
	return ret;
}
