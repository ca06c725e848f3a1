// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope stacks: what every thread of the targets is doing right now,
 * kernel and user stacks named as the profiler names them, without
 * stopping the app (no ptrace). This file parses the command line, finds
 * the targets and runs the rounds; stacks/snap takes the snapshot,
 * stacks/walk walks the user stacks, stacks/dump writes the dump. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/appfile.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "rt/rtnames.h"
#include "stacks/dump.h"
#include "stacks/snap.h"
#include "stacks/walk.h"
#include "sym/cficache.h"
#include "sym/debuginfod.h"
#include "sym/elfsym.h"
#include "sym/symbolize.h"

/* processes a snapshot covers at most (-a, --cgroup) */
#define MAX_TARGETS 4096
/* how long a runtime asked for a perf map is given to write it */
#define NAMES_WAIT_MS 3000

struct env {
	pid_t *pids;
	int npids;
	const char *name, *cgroup, *output, *table_cache;
	bool all, json, hands_off, count_given;
	uint64_t every_ms, count, max_threads, stack_kb, timeout_s;
};

enum { OPT_CGROUP = 256, OPT_JSON, OPT_EVERY, OPT_MAX_THREADS, OPT_STACK_KB, OPT_HANDS_OFF,
       OPT_TABLE_CACHE, OPT_TIMEOUT };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PIDS", "these processes (comma-separated, as this PID\n"
			      "namespace shows them)" },
	{ 'n', "name", "NAME", "the processes of this name (comm, executable or\n"
			       "first argument)", CLI_STORE_ARG(struct env, name) },
	{ OPT_CGROUP, "cgroup", "PATH", "the processes of one cgroup (v2), e.g. a container",
	  CLI_STORE_ARG(struct env, cgroup) },
	{ 'a', "all", NULL, "every process this PID namespace shows",
	  CLI_STORE_TRUE(struct env, all) },
	{ OPT_JSON, "json", NULL, "JSON: every thread, one document a round (JSON\n"
				  "Lines with --every)", CLI_STORE_TRUE(struct env, json) },
	{ 'o', "output", "FILE", "write there instead of stdout",
	  CLI_STORE_ARG(struct env, output) },
	{ OPT_EVERY, "every", "SECONDS", "a snapshot every SECONDS (decimals allowed), to\n"
					 "tell a stuck thread from a busy one" },
	{ 'c', "count", "N", "with --every: N snapshots (default 3; 0: until\n"
			     "SIGINT/SIGTERM)" },
	{ OPT_MAX_THREADS, "max-threads", "N", "threads read per process at most (default\n"
					       "10000); the rest are counted" },
	{ OPT_STACK_KB, "stack-kb", "KB", "user stack memory read per thread, from its\n"
					  "stack pointer (4 to 128, default 128)" },
	{ OPT_TIMEOUT, "timeout", "SECONDS", "time a snapshot of one process may take\n"
					     "(default 10); the threads not read are counted" },
	{ OPT_HANDS_OFF, "hands-off", NULL, "do not ask a .NET or Java runtime without a\n"
					    "perf map to write one (as 'profile')",
	  CLI_STORE_TRUE(struct env, hands_off) },
	{ OPT_TABLE_CACHE, "table-cache", "DIR", "keep unwind and symbol tables there between\n"
						 "runs (default " CFICACHE_DIR "; none: off)" },
	CLI_OPTS_END("debug messages, libbpf's included")
};

static const struct cli cli = {
	.text =
"sidescope stacks: what every thread is doing right now, without stopping the app\n"
"\n"
"USAGE: sidescope stacks {-p PIDS | -n NAME | --cgroup PATH | -a} [--json]\n"
"                        [--every SECONDS [-c N]] [-o FILE]\n"
"\n"
"One snapshot of every thread of the targets: its name and TID, its state\n"
"(running, sleeping, disk wait, ...), the kernel function it waits in, how\n"
"long it has been off its CPU, the CPU, and its kernel and user stacks, named\n"
"as 'profile' names them (unwind tables, ELF symbols, perf maps; a .NET or\n"
"Java runtime without one is asked to write it). No thread is stopped: BPF\n"
"reads each thread's registers and stack as the kernel saved them, and a\n"
"thread running on a CPU is caught there. Threads with the same stack are\n"
"shown once with their count, the rarest first; a thread waiting for a mutex\n"
"shows the thread that holds it, and a deadlock is named.\n"
"\n",
	.opts = opts,
	.tail =
"\n"
"EXAMPLES:\n"
"  sidescope stacks -p 7                 # every thread of PID 7\n"
"  sidescope stacks -n dotnet            # of every process named dotnet\n"
"  sidescope stacks -p 7 --every 2 -c 5  # five snapshots two seconds apart\n"
"  sidescope stacks -a --json -o now.json\n"
"  kubectl exec POD -c sidescope -- sidescope stacks -n app\n",
	.col = 26,
};

static int parse_opt(void *ctx, int opt, const char *arg)
{
	struct env *env = ctx;
	double secs;
	char *end;

	switch (opt) {
	case 'p':
		free(env->pids);
		env->pids = NULL;
		env->npids = parse_pid_list(arg, &env->pids);
		if (env->npids <= 0)
			return usage_error("invalid PID list '%s'", arg);
		return 0;
	case OPT_EVERY:
		errno = 0;
		secs = strtod(arg, &end);
		if (errno || end == arg || *end || !(secs >= 0.1 && secs <= 86400))
			return usage_error("invalid --every '%s' (0.1 to 86400 seconds)", arg);
		env->every_ms = (uint64_t)(secs * 1000 + 0.5);
		return 0;
	case 'c':
		if (parse_u64(arg, 0, 1000000, &env->count))
			return usage_error("invalid count '%s'", arg);
		env->count_given = true;
		return 0;
	case OPT_MAX_THREADS:
		if (parse_u64(arg, 1, 100000, &env->max_threads))
			return usage_error("invalid --max-threads '%s' (1 to 100000)", arg);
		return 0;
	case OPT_STACK_KB:
		if (parse_u64(arg, 4, STACKS_MAX_BYTES / 1024, &env->stack_kb))
			return usage_error("invalid --stack-kb '%s' (4 to %d)", arg,
					   STACKS_MAX_BYTES / 1024);
		return 0;
	case OPT_TIMEOUT:
		if (parse_u64(arg, 1, 3600, &env->timeout_s))
			return usage_error("invalid --timeout '%s' (1 to 3600 seconds)", arg);
		return 0;
	case OPT_TABLE_CACHE:
		env->table_cache = strcmp(arg, "none") ? arg : NULL;
		return 0;
	}
	return 2;
}

static int parse_args(int argc, char **argv, struct env *env)
{
	struct stat sb;
	int r, targets;

	*env = (struct env){ .count = 3, .max_threads = 10000, .stack_kb = STACKS_MAX_BYTES / 1024,
			     .timeout_s = 10, .table_cache = CFICACHE_DIR };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	targets = (env->npids > 0) + !!env->name + !!env->cgroup + env->all;
	if (targets != 1)
		return usage_error("give exactly one target: -p PID, -n NAME, --cgroup PATH or -a");
	if (env->count_given && !env->every_ms)
		return usage_error("-c N counts the snapshots of --every SECONDS; give --every too");
	if (!env->every_ms)
		env->count = 1;
	if (env->output && strcmp(env->output, "-") && stat(env->output, &sb) == 0 &&
	    S_ISDIR(sb.st_mode))
		return usage_error("-o %s: is a directory; give a file in it, e.g. %s/stacks.txt",
				   env->output, env->output);
	return -1;
}

/* ---- targets ---- */

struct target {
	pid_t pid;
	uint64_t start;
	bool seen;	/* said to rtnames */
};

struct run {
	struct env *env;
	struct target *t;
	size_t nt, cap;
	struct stk_snap *snap;
	struct stk_walker *walker;
	struct symbolizer *sz;
	struct rtnames *rt;
	struct cficache *cache;
	struct debuginfod *dbg;		/* debug files fetched into the cache */
	struct stk_dump d;
	uint64_t ips[STK_MAX_FRAMES];
	int walk_err;
	FILE *out;
};

static void add_target(struct run *r, pid_t pid)
{
	uint64_t start;
	size_t i;

	if (pid == getpid() || proc__is_kernel_thread(pid) || proc__start_time(pid, &start))
		return;
	for (i = 0; i < r->nt; i++)
		if (r->t[i].pid == pid)
			return;
	if (r->nt >= MAX_TARGETS ||
	    array__room(&r->t, &r->cap, r->nt + 1, sizeof(*r->t), 16))
		return;
	r->t[r->nt++] = (struct target){ .pid = pid, .start = start };
}

/* the PIDs of cgroup PATH (v2; relative: under /sys/fs/cgroup) */
static int cgroup_pids(struct run *r, const char *cg)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], *buf = NULL, *line, *save = NULL;
	size_t len;
	int err;

	proc__cgroup_dir(cg, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	err = read_file(path, &buf, &len, 16u << 20);
	if (err) {
		p_err("cannot read %s: %s", path, strerror(-err));
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t v;

		if (!parse_u64(line, 1, INT_MAX, &v))
			add_target(r, (pid_t)v);
	}
	free(buf);
	return 0;
}

/* The targets as they are now: -n and --cgroup looked up again each round
 * (processes come and go), -p checked. 0, or -1 once said. */
static int find_targets(struct run *r)
{
	struct env *env = r->env;
	struct err perr;
	pid_t *pids = NULL;
	int n, i;

	r->nt = 0;
	if (env->npids) {
		for (i = 0; i < env->npids; i++) {
			if (proc__check_target(env->pids[i], &perr)) {
				p_err("%s", perr.msg);
				return -1;
			}
			add_target(r, env->pids[i]);
		}
	} else if (env->cgroup) {
		if (cgroup_pids(r, env->cgroup))
			return -1;
	} else {
		n = env->name ? proc__find_by_name(env->name, &pids) : proc__list(&pids);
		if (n < 0) {
			p_err("cannot list processes: %s", strerror(-n));
			return -1;
		}
		for (i = 0; i < n; i++)
			add_target(r, pids[i]);
		free(pids);
	}
	if (!r->nt) {
		if (env->name)
			p_err("no process matches '%s' (see 'sidescope ps')", env->name);
		else
			p_err("no process to read");
		return -1;
	}
	return 0;
}

/* ---- one process ---- */

static int on_thread(void *ctx, const struct stacks_rec *rec, uint64_t ubase,
		     const uint8_t *ustack)
{
	struct run *r = ctx;
	const char *why = NULL;
	int n;

	n = stk_walker__walk(r->walker, rec, ubase, ustack, r->ips, STK_MAX_FRAMES, &why);
	return stk_dump__add(&r->d, rec, r->ips, n, why) ? -1 : 0;
}

/* T's snapshot into r->d, taken again once when the process exec'd while
 * it was read. 0, or -1 when it is gone (said at -v). */
static int take(struct run *r, const struct target *t)
{
	struct proc_status st;
	struct timespec ts;
	int tries, err = 0;
	uint64_t t0;

	for (tries = 0; tries < 2; tries++) {
		stk_dump__reset(&r->d);
		r->d.pid = t->pid;
		if (proc__read_status(t->pid, &st) == 0)
			snprintf(r->d.comm, sizeof(r->d.comm), "%s", st.name);
		err = stk_walker__set_proc(r->walker, t->pid);
		if (err)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		r->d.when_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		t0 = now_ns();
		err = stk_snap__take(r->snap, t->pid, (size_t)r->env->max_threads,
				     t0 + r->env->timeout_s * 1000000000ull, on_thread, r, &r->d.st);
		r->d.took_ns = now_ns() - t0;
		if (proc__read_status(t->pid, &st) == 0)
			r->d.threads_now = (size_t)st.threads;
		if (err)
			break;
		if (stk_walker__proc_same(r->walker) && proc__alive(t->pid, t->start)) {
			p_debug("PID %d: %zu threads%s: iterator %.1f ms; %zu on a CPU: %zu caught "
				"(%.1f ms), %zu read again, %zu as first read", (int)t->pid,
				r->d.st.threads, r->d.retried ? " (taken again: it exec'd)" : "",
				(double)r->d.st.iter_ns / 1e6, r->d.st.on_cpu, r->d.st.caught,
				(double)r->d.st.catch_ns / 1e6, r->d.st.reread, r->d.st.uncaught);
			return 0;
		}
		if (!proc__alive(t->pid, t->start)) {
			err = -ESRCH;
			break;
		}
		r->d.retried = 1;	/* it exec'd: its maps are new */
	}
	if (err == -ESRCH || err == -ENOENT)
		p_debug("PID %d: exited before its snapshot", (int)t->pid);
	else if (err)
		p_warn("PID %d: no snapshot: %s", (int)t->pid, strerror(-err));
	else
		p_warn("PID %d: it exec'd twice while read; no snapshot", (int)t->pid);
	return -1;
}

/* Name the snapshot's frames; when a runtime was just asked for a perf
 * map and frames of its JIT code are unnamed, give it NAMES_WAIT_MS to
 * write it. */
static void name_frames(struct run *r, const struct target *t)
{
	uint64_t end = now_ns() + NAMES_WAIT_MS * 1000000ull, misses;
	size_t i;

	for (;;) {
		for (i = 0; i < r->d.n; i++)
			symbolizer__revisit(r->sz, t->pid, t->start, r->d.th[i].ips + r->d.th[i].nk,
					    (size_t)r->d.th[i].nu);
		misses = symbolizer__jit_misses(r->sz, t->pid);
		stk_dump__name(&r->d, r->sz);
		if (symbolizer__jit_misses(r->sz, t->pid) == misses ||
		    !rtnames__writing(r->rt, t->pid) || now_ns() >= end || run__stop)
			return;
		usleep(300 * 1000);
	}
}

static int write_dump(struct run *r)
{
	struct json j;

	if (r->env->json) {
		json__init(&j, r->out);
		stk_dump__json(&r->d, &j);
		fputc('\n', r->out);
	} else {
		stk_dump__text(&r->d, r->out);
		fputc('\n', r->out);
	}
	fflush(r->out);
	return ferror(r->out) ? -1 : 0;
}

static uint64_t jit_misses(void *sz, pid_t pid)
{
	return symbolizer__jit_misses(sz, pid);
}

static int round_once(struct run *r, int round)
{
	size_t i, done = 0;

	if (find_targets(r))
		return -1;
	/* a JVM's perf map is a snapshot: asked again for code compiled since
	 * (every RTNAMES_REFRESH_NS, or after frames went unnamed) */
	if (round > 0)
		rtnames__refresh(r->rt, now_ns(), RTNAMES_REFRESH_BUDGET_NS, jit_misses, r->sz);
	for (i = 0; i < r->nt; i++) {
		rtnames__see(r->rt, r->t[i].pid);	/* once a process */
		symbolizer__watch_start(r->sz, r->t[i].pid, r->t[i].start);
	}
	for (i = 0; i < r->nt && !run__stop; i++) {
		if (take(r, &r->t[i]))
			continue;
		name_frames(r, &r->t[i]);
		if (write_dump(r)) {
			p_err("cannot write the output: %s", strerror(errno));
			return -1;
		}
		done++;
	}
	symbolizer__sweep(r->sz);
	if (!done && !run__stop) {
		p_err("no snapshot taken: every target exited");
		return -1;
	}
	return 0;
}

static int open_all(struct run *r)
{
	char why[256];

	if (r->env->table_cache) {
		r->cache = cficache__open(r->env->table_cache, CFICACHE_MAX_BYTES, why, sizeof(why));
		if (!r->cache && strcmp(r->env->table_cache, CFICACHE_DIR))
			p_warn("--table-cache %s: %s; tables are built each run", r->env->table_cache,
			       why);
	}
	r->dbg = debuginfod__open(r->cache ? r->env->table_cache : NULL);
	elfsym__set_debuginfod(r->dbg);
	r->sz = symbolizer__new();
	r->walker = stk_walker__new(r->cache);
	r->rt = rtnames__new(&(struct rtnames_opts){ .hands_off = r->env->hands_off });
	if (!r->sz || !r->walker || !r->rt) {
		p_err("out of memory");
		return -1;
	}
	if (r->cache)
		symbolizer__set_cache(r->sz, r->cache);
	r->snap = stk_snap__open((unsigned int)(r->env->stack_kb * 1024 / STACKS_PAGE));
	return r->snap ? 0 : -1;
}

static void close_all(struct run *r)
{
	stk_dump__reset(&r->d);
	stk_snap__close(r->snap);
	if (r->rt) {
		rtnames__restore(r->rt);
		rtnames__free(r->rt);
	}
	stk_walker__free(r->walker);
	symbolizer__free(r->sz);
	elfsym__set_debuginfod(NULL);
	debuginfod__close(r->dbg);
	cficache__close(r->cache);
	free(r->t);
}

/* sleep until T (now_ns()), or a stop */
static void wait_until(uint64_t t)
{
	while (!run__stop) {
		uint64_t now = now_ns();
		struct timespec ts;

		if (now >= t)
			return;
		ts.tv_sec = (time_t)((t - now) / 1000000000ull);
		ts.tv_nsec = (long)((t - now) % 1000000000ull);
		if (ts.tv_sec > 0) {
			ts.tv_sec = 0;
			ts.tv_nsec = 200000000;
		} else if (ts.tv_nsec > 200000000) {
			ts.tv_nsec = 200000000;
		}
		nanosleep(&ts, NULL);
	}
}

int cmd_stacks(int argc, char **argv)
{
	struct env env;
	struct run r = { .env = &env };
	struct outfile *of = NULL;
	uint64_t next, k;
	int ret;

	run__catch_stop();
	ret = parse_args(argc, argv, &env);
	if (ret >= 0) {
		free(env.pids);
		return ret;
	}
	ret = 1;
	r.out = stdout;
	if (env.output && strcmp(env.output, "-")) {
		of = outfile__open_or_say(env.output);
		if (!of)
			goto out;
		r.out = outfile__fp(of);
		if (env.every_ms)
			outfile__publish(of);	/* readable as the rounds come */
	}
	run__libbpf_quiet_unless_verbose();
	if (open_all(&r))
		goto out;
	next = now_ns();
	for (k = 0; !run__stop && (env.count == 0 || k < env.count); k++) {
		if (k)
			wait_until(next);
		if (run__stop)
			break;
		next += env.every_ms * 1000000ull;
		if (round_once(&r, (int)k))
			goto out;
		if (env.every_ms && (env.count == 0 || k + 1 < env.count) && !env.json)
			fprintf(r.out, "----\n\n");
	}
	ret = 0;
	if (of) {
		ret = outfile__commit_or_say(of) ? 1 : 0;
		of = NULL;
	}
out:
	outfile__abort(of);
	close_all(&r);
	free(env.pids);
	return ret;
}
