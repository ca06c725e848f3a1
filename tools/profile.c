// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope profile: sample CPU stacks of processes in the pod with BPF,
 * symbolize them (ELF, perf maps, kallsyms) and write folded stacks, pprof,
 * JSON or a top table.
 *
 * Counts are aggregated in the kernel in one of two maps; every few seconds
 * user space flips the "active" index, waits for in-flight programs (they
 * run for microseconds in the timer interrupt) and drains the idle map, so
 * memory stays bounded and no increment races with the drain
 * (prof/capture.h). This file parses the command line, opens, loads and
 * attaches the BPF program, runs the capture and writes the outputs. */
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
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "dotnet/r2r.h"
#include "prof/capture.h"
#include "prof/kbtf.h"
#include "prof/unwind.h"
#include "sym/cficache.h"
#include "prof/prof.h"
#include "prof/writer.h"
#include "profile.h"
#include "profile.skel.h"
#include "sym/perfmap.h"
#include "sym/stackcache.h"
#include "sym/symbolize.h"

#define MAX_OUTPUTS 8
#define DRAIN_NS (2ull * 1000000000ull)
/* --unwind tables: the targets' maps read again this often (dlopen), as
 * well as when a walk meets a pc in none of their mappings with tables */
#define UNWIND_LOOK_NS (2ull * 1000000000ull)

struct output {
	const char *path;
	const struct prof_writer *w;	/* NULL: not told by the name */
	struct outfile *of;	/* opened before sampling, written at the end */
};

/* The command line. */
struct env {
	pid_t *pids;		/* -p, or what -n found */
	int npids;
	const char *name;	/* -n */
	const char *cgroup;	/* --cgroup */
	bool all, user_only, kernel_only, json;
	enum prof_mode mode;	/* --off-cpu, --wall */
	unsigned int states;	/* --state: PROF_STATE_* */
	bool hz_given, states_given, min_given, wall_given, wakers;
	uint64_t hz, secs, max_stacks, min_block_us, max_threads, switch_rate;
	unsigned int split;	/* PROF_SPLIT_* */
	enum { UNWIND_AUTO, UNWIND_FP, UNWIND_TABLES } unwind;
	const char *table_cache;	/* --table-cache: NULL for none */
	const struct prof_writer *forced;	/* --format */
	struct output outs[MAX_OUTPUTS];
	int nouts;
};

/* One run: the command line, the targets and what is set up for them. */
struct profiler {
	struct env env;
	uint64_t *starts;	/* the targets' start times (clock ticks) */
	uint64_t ns_per_tick, boot_ticks;
	uint64_t cgid;		/* --cgroup: the cgroup's id */
	char cgroup_procs[PATH_MAX + 16];
	uint64_t pidns_dev, pidns_ino;
	char title[128];	/* the flame graph's */
	uint64_t rate_t, rate_periods;	/* --switch-rate: the last look */
	struct capture c;
	struct profile_bpf *skel;
	struct bpf_link **links, *exec_link, *switch_link, *wakeup_link;
	int nlinks;
	bool tables;		/* --unwind: user stacks by unwind tables */
	struct unwinder *uw;
	struct cficache *cache;	/* --table-cache */
};

enum { OPT_CGROUP = 256, OPT_FORMAT, OPT_USER, OPT_KERNEL, OPT_MAX_STACKS,
       OPT_MAX_PERF_MAP, OPT_SPLIT, OPT_JSON, OPT_OFFCPU, OPT_WALL, OPT_STATE, OPT_MIN_BLOCK,
       OPT_MAX_THREADS, OPT_WAKERS, OPT_SWITCH_RATE, OPT_UNWIND, OPT_TABLE_CACHE };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PIDS", "profile these processes (comma-separated); a PID means\n"
			      "the process it names at the start: once that exits,\n"
			      "another process given the same PID is not sampled" },
	{ 'n', "name", "NAME", "profile the processes named NAME (comm, executable or\n"
			       "first argument; '.dll' optional)" },
	{ OPT_CGROUP, "cgroup", "PATH", "profile one cgroup (v2), e.g. a container" },
	{ 'a', "all", NULL, "profile everything this PID namespace shows" },
	{ 'F', "frequency", "HZ", "samples per second per CPU (default 99)" },
	{ OPT_OFFCPU, "off-cpu", NULL, "profile time off the CPU instead: where threads\n"
				       "block (locks, I/O, sleeps) or wait for a CPU, by\n"
				       "stack, from every context switch" },
	{ OPT_WALL, "wall", NULL, "wall-clock profile: on-CPU samples weighted by their\n"
				  "period plus the time off the CPU ([off-CPU] leaves);\n"
				  "a thread's total is its wall-clock time" },
	{ OPT_STATE, "state", "STATE", "--off-cpu: count time in interruptible sleep (S),\n"
				       "uninterruptible sleep (D), both, or all (default:\n"
				       "also time runnable but waiting for a CPU)" },
	{ OPT_MIN_BLOCK, "min-block", "US", "--off-cpu: leave out periods shorter than US\n"
					    "microseconds (default 1)" },
	{ OPT_WAKERS, "wakers", NULL, "--off-cpu: also the stack of the task that woke each\n"
				      "thread, above \"--\" (as bcc's offwaketime)" },
	{ OPT_SWITCH_RATE, "switch-rate", "N", "--off-cpu/--wall: in a storm of context switches\n"
					       "note about N a second (default 5000), 1 in K\n"
					       "at random, each counted K times; 0: every one" },
	{ OPT_MAX_THREADS, "max-threads", "N", "--off-cpu/--wall: threads off the CPU at one time\n"
					       "that are tracked (default 16384)" },
	{ 'd', "duration", "S", "seconds to sample (default 30; 0: until SIGINT/SIGTERM)" },
	{ 'o', "output", "FILE", "write FILE; the format follows the extension: .folded\n"
				 "or .txt (folded stacks), .pb.gz or .pprof (pprof),\n"
				 ".json, .svg (flame graph); may be repeated" },
	{ OPT_FORMAT, "format", "FMT", "folded, pprof, svg, top or json (overrides extension)" },
	{ OPT_JSON, "json", NULL, "without -o: the profile as JSON on stdout (as -o -\n"
				  "--format json); messages as JSON lines on stderr" },
	{ OPT_UNWIND, "unwind", "MODE", "user stacks: fp (frame pointers), tables (the\n"
					"objects' .eh_frame unwind tables, in BPF; frame\n"
					"pointers where there is none, as in JIT code) or\n"
					"auto (the default: tables on Linux 5.17 and newer,\n"
					"else fp)" },
	{ OPT_TABLE_CACHE, "table-cache", "DIR", "keep unwind tables, symbol tables and the\n"
						 "kernel types the BPF program needs in DIR,\n"
						 "for later captures,\n"
						 "a directory of the sidecar's own, mode 0700\n"
						 "(default " CFICACHE_DIR ", at most 64M);\n"
						 "none: build them every time" },
	{ OPT_USER, "user-only", NULL, "user-space stacks only" },
	{ OPT_KERNEL, "kernel-only", NULL, "kernel stacks only" },
	{ OPT_MAX_STACKS, "max-stacks", "N", "distinct stacks held in the kernel between two drains\n"
					     "(default 8192, about 1 KB of kernel memory each)" },
	{ OPT_MAX_PERF_MAP, "max-perf-map", "SIZE", "read at most SIZE of each perf map, its newest\n"
						    "lines (default 256M; k, M, G suffixes)" },
	{ OPT_SPLIT, "split", "pid|tid", "folded stacks and flame graphs: one line per process\n"
					 "(NAME-PID) or thread (NAME-PID/TID) instead of one\n"
					 "per stack" },
	{ 'v', "verbose", NULL, "debug messages, libbpf's included" },
	{ 'h', "help", NULL, "print this help" },
	{}
};

static const struct cli cli = {
	.text =
"sidescope profile: CPU, off-CPU and wall-clock profiles of processes in the pod\n"
"\n"
"USAGE: sidescope profile [-p PID[,PID...]] [-n NAME] [--cgroup PATH] [-a]\n"
"                         [-F HZ] [-d SECONDS] [-o FILE]... [--format FMT]\n"
"                         [--off-cpu [--state STATE] [--min-block US] [--wakers]\n"
"                          | --wall]\n"
"                         [--user-only|--kernel-only] [-v]\n"
"\n"
"Samples on-CPU stacks with BPF (software cpu-clock, every CPU), counts them\n"
"in the kernel and symbolizes them with ELF symbols, perf maps of JIT\n"
"runtimes (/tmp/perf-PID.map, also in the app container's own /tmp) and\n"
"kernel symbols. PIDs are those of this PID namespace (the pod's).\n"
"With --off-cpu it measures, on every context switch of the targets, how\n"
"long each thread stays off the CPU and where (its stacks as it left); with\n"
"--wall, both. Their folded stacks and flame graphs count microseconds,\n"
"pprof nanoseconds (off_cpu or wall), the top table milliseconds.\n"
"\n",
	.opts = opts,
	.tail =
"\n"
"Without -o, prints the functions with the most samples (self and total).\n"
"Every output is opened before sampling starts: a missing or read-only\n"
"directory, a directory given as FILE or an unknown extension fails at\n"
"once. pprof is never written to a terminal.\n"
"With -p or -n the capture stops once every target has exited (\"target PID\n"
"N exited\"). SIGINT and SIGTERM end it early, at any moment: the outputs\n"
"hold what was collected (nothing, before sampling began) and the exit\n"
"status is 0; only a signal in the first milliseconds, before sidescope has\n"
"set up, ends it with 128+N and no output.\n"
"\n"
"EXAMPLES:\n"
"  sidescope profile -n dotnet -d 30                 # top functions\n"
"  sidescope profile -p 7 -o cpu.pb.gz -o cpu.folded # pprof and folded\n"
"  sidescope profile -a -F 999 -d 10 -o all.json     # whole pod, 999 Hz\n"
"  sidescope profile -p 7 -d 0 -o cpu.pb.gz          # until Ctrl-C/SIGTERM\n"
"  sidescope profile -p 7 --off-cpu -d 10 -o off.svg # where threads block\n"
"  sidescope profile -n dotnet --off-cpu --state uninterruptible --min-block 1000\n"
"  sidescope profile -p 7 --wall --split tid -o wall.folded # per thread\n"
"  sidescope profile -p 7 --off-cpu --wakers -o wake.svg # and who woke them\n"
"  sidescope profile -p 7 --unwind tables -o cpu.svg # code without frame pointers\n"
"  sidescope profile -p 7 --table-cache none -o cpu.svg # tables built afresh\n",
	.col = 22,
};

/* One option OPT with its argument ARG into the struct env at CTX
 * (cli_opt_fn): 0, or the exit status of a usage error. */
static int parse_opt(void *ctx, int opt, const char *arg)
{
	struct env *env = ctx;
	char list[128];
	uint64_t bytes;

	switch (opt) {
	case 'p':
		free(env->pids);
		env->pids = NULL;
		env->npids = parse_pid_list(arg, &env->pids);
		if (env->npids <= 0)
			return usage_error("invalid PID list '%s'", arg);
		return 0;
	case 'n':
		env->name = arg;
		return 0;
	case OPT_CGROUP:
		env->cgroup = arg;
		return 0;
	case 'a':
		env->all = true;
		return 0;
	case 'F':
		if (parse_u64(arg, 1, 10000, &env->hz))
			return usage_error("invalid frequency '%s' (1-10000 Hz)", arg);
		env->hz_given = true;
		return 0;
	case OPT_OFFCPU:
		env->mode = PROF_MODE_OFFCPU;
		return 0;
	case OPT_WALL:
		env->wall_given = true;
		return 0;
	case OPT_STATE:
		env->states_given = true;
		if (!strcmp(arg, "interruptible") || !strcmp(arg, "S"))
			env->states = PROF_STATE_SLEEP;
		else if (!strcmp(arg, "uninterruptible") || !strcmp(arg, "D"))
			env->states = PROF_STATE_DISK;
		else if (!strcmp(arg, "both"))
			env->states = PROF_STATE_SLEEP | PROF_STATE_DISK;
		else if (!strcmp(arg, "all"))
			env->states = PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK;
		else
			return usage_error("invalid --state '%s' (interruptible, uninterruptible, "
					   "both or all)", arg);
		return 0;
	case OPT_MIN_BLOCK:
		if (parse_u64(arg, 0, 3600ull * 1000000, &env->min_block_us))
			return usage_error("invalid --min-block '%s' (microseconds)", arg);
		env->min_given = true;
		return 0;
	case OPT_SWITCH_RATE:
		if (parse_u64(arg, 0, 100000000, &env->switch_rate))
			return usage_error("invalid --switch-rate '%s' (switches a second, 0: all)",
					   arg);
		return 0;
	case OPT_WAKERS:
		env->wakers = true;
		return 0;
	case OPT_TABLE_CACHE:
		if (!*arg)
			return usage_error("--table-cache needs a directory (or none)");
		env->table_cache = strcmp(arg, "none") ? arg : NULL;
		return 0;
	case OPT_UNWIND:
		if (!strcmp(arg, "auto"))
			env->unwind = UNWIND_AUTO;
		else if (!strcmp(arg, "fp"))
			env->unwind = UNWIND_FP;
		else if (!strcmp(arg, "tables"))
			env->unwind = UNWIND_TABLES;
		else
			return usage_error("invalid --unwind '%s' (auto, fp or tables)", arg);
		return 0;
	case OPT_MAX_THREADS:
		if (parse_u64(arg, 16, 1u << 20, &env->max_threads))
			return usage_error("invalid --max-threads '%s' (16-1048576)", arg);
		return 0;
	case 'd':
		if (parse_u64(arg, 0, 31 * 86400, &env->secs))
			return usage_error("invalid duration '%s' (seconds)", arg);
		return 0;
	case 'o':
		if (env->nouts == MAX_OUTPUTS)
			return usage_error("at most %d outputs", MAX_OUTPUTS);
		env->outs[env->nouts++] = (struct output){ arg, prof__writer_by_path(arg), NULL };
		return 0;
	case OPT_FORMAT:
		env->forced = prof__writer_by_name(arg);
		if (!env->forced)
			return usage_error("unknown format '%s' (%s)", arg,
					   prof__writer_list(list, sizeof(list), false));
		return 0;
	case OPT_USER:
		env->user_only = true;
		return 0;
	case OPT_KERNEL:
		env->kernel_only = true;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_u64(arg, 64, 1u << 20, &env->max_stacks))
			return usage_error("invalid --max-stacks '%s' (64-1048576)", arg);
		return 0;
	case OPT_MAX_PERF_MAP:
		if (parse_size(arg, 1 << 20, 4ull << 30, &bytes))
			return usage_error("invalid --max-perf-map '%s' (a size from 1M to 4G, "
					   "e.g. 512M)", arg);
		perfmap__set_max((size_t)bytes);
		return 0;
	case OPT_SPLIT:
		if (strcmp(arg, "pid") && strcmp(arg, "tid"))
			return usage_error("invalid --split '%s' (pid or tid)", arg);
		env->split = arg[0] == 'p' ? PROF_SPLIT_PID : PROF_SPLIT_TID;
		return 0;
	case OPT_JSON:
		env->json = true;
		return 0;
	}
	return usage_hint();
}

/* The outputs after the options: stdout when none, --format over every
 * name, no directory and no unknown format. 0 or a usage error's status. */
static int check_outputs(struct env *env)
{
	const struct prof_writer *w;
	char list[128];
	int i;

	if (!env->nouts) {
		w = env->forced ? env->forced : prof__writer_by_name(env->json ? "json" : "top");
		env->outs[env->nouts++] = (struct output){ "-", w, NULL };
	}
	for (i = 0; i < env->nouts; i++) {
		struct output *o = &env->outs[i];
		struct stat sb;

		if (env->forced)
			o->w = env->forced;
		if (strcmp(o->path, "-") && stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode))
			return usage_error("-o %s: is a directory; give a file in it, e.g. "
					   "%s/cpu.pb.gz", o->path, o->path);
		if (!o->w)
			return usage_error("cannot tell the format of '%s' from its name: end it in "
					   "%s, or use --format", o->path,
					   prof__writer_list(list, sizeof(list), true));
	}
	return 0;
}

/* --off-cpu and --wall with what goes with them. 0 or a usage error's
 * status. */
static int check_mode(struct env *env)
{
	if (env->wall_given && env->mode == PROF_MODE_OFFCPU)
		return usage_error("--off-cpu and --wall exclude each other (--wall holds "
				   "both)");
	if (env->wall_given)
		env->mode = PROF_MODE_WALL;
	if (env->mode != PROF_MODE_OFFCPU && (env->states_given || env->min_given || env->wakers))
		return usage_error("--%s needs --off-cpu%s", env->states_given ? "state" :
				   env->min_given ? "min-block" : "wakers",
				   env->mode == PROF_MODE_WALL ? " (--wall counts every moment)" : "");
	if (env->unwind == UNWIND_TABLES && env->kernel_only)
		return usage_error("--unwind tables walks user stacks: not with --kernel-only");
	if (env->mode == PROF_MODE_OFFCPU && env->hz_given)
		return usage_error("-F does not apply to --off-cpu: every context switch "
				   "counts (use --wall for samples and switches)");
	return 0;
}

/* The command line into ENV: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if ((env->npids > 0) + (env->name != NULL) + (env->cgroup != NULL) + env->all != 1)
		return usage_error("give exactly one target: -p PID, -n NAME, --cgroup PATH or -a");
	if (env->user_only && env->kernel_only)
		return usage_error("--user-only and --kernel-only exclude each other");
	if (env->json && env->forced && strcmp(env->forced->name, "json"))
		return usage_error("--json and --format %s exclude each other", env->forced->name);
	r = check_mode(env);
	if (r)
		return r;
	r = check_outputs(env);
	return r ? r : -1;
}

/* "-n NAME: PIDs 7, 12 (dotnet)": what a name chose, before sampling */
static void say_chosen(const char *name, const pid_t *pids, int n)
{
	char list[256], ename[256];
	size_t len = 0;
	int i;

	list[0] = '\0';
	for (i = 0; i < n && len < sizeof(list) - 16; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? ", " : "",
					(int)pids[i]);
	if (i < n)
		snprintf(list + len, sizeof(list) - len, ", ... (%d in all)", n);
	escape__str(ename, sizeof(ename), name, strlen(name), 64, 0);
	p_info("-n %s: PID%s %s", ename, n == 1 ? "" : "s", list);
}

/* --cgroup PATH: its id and its cgroup.procs. 0, or -1 once said. */
static int find_cgroup(struct profiler *pr, const char *cgroup)
{
	char path[PATH_MAX];
	struct stat sb, u;

	/* relative paths: under the v2 hierarchy, which a hybrid layout
	 * mounts at /sys/fs/cgroup/unified */
	snprintf(path, sizeof(path), "%s%s",
		 cgroup[0] == '/' ? "" :
		 stat("/sys/fs/cgroup/unified/cgroup.procs", &u) == 0 ?
		 "/sys/fs/cgroup/unified/" : "/sys/fs/cgroup/", cgroup);
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
		p_err("no cgroup directory %s", path);
		return -1;
	}
	pr->cgid = sb.st_ino;	/* a v2 cgroup's id is its directory's inode */
	snprintf(pr->cgroup_procs, sizeof(pr->cgroup_procs), "%s/cgroup.procs", path);
	return 0;
}

/* -p checked, -n resolved, --cgroup found. 0, or -1 once said. */
static int resolve_targets(struct profiler *pr)
{
	struct env *env = &pr->env;
	struct err perr;
	int i;

	if (env->npids) {
		for (i = 0; i < env->npids; i++)
			if (proc__check_target(env->pids[i], &perr)) {
				p_err("%s", perr.msg);
				return -1;
			}
	} else if (env->name) {
		env->npids = proc__find_by_name(env->name, &env->pids);
		if (env->npids < 0) {
			p_err("cannot list processes: %s", strerror(-env->npids));
			return -1;
		}
		if (env->npids == 0) {
			p_err("no process matches '%s' (see 'sidescope ps')", env->name);
			return -1;
		}
		say_chosen(env->name, env->pids, env->npids);
	} else if (env->cgroup) {
		return find_cgroup(pr, env->cgroup);
	}
	return 0;
}

/* The targets as the processes their PIDs name now (PIDs get reused), the
 * title, our PID namespace. 0, or -1 once said. */
static int find_targets(struct profiler *pr)
{
	struct env *env = &pr->env;
	long tck;
	int i, err;

	if (resolve_targets(pr))
		return -1;
	tck = sysconf(_SC_CLK_TCK);
	if (tck > 0 && tck <= 1000000000L)
		pr->ns_per_tick = 1000000000ull / (uint64_t)tck;
	pr->boot_ticks = proc__timens_boot_ticks(pr->ns_per_tick);
	pr->starts = calloc(env->npids > 0 ? env->npids : 1, sizeof(*pr->starts));
	if (!pr->starts) {
		p_err("out of memory");
		return -1;
	}
	for (i = 0; i < env->npids; i++)
		if (proc__start_time(env->pids[i], &pr->starts[i]))
			pr->starts[i] = 0;
	if (env->npids == 1) {
		struct proc_status st;

		if (proc__read_status(env->pids[0], &st) == 0)
			snprintf(pr->title, sizeof(pr->title), "%s profile: %s (PID %d)",
				 prof__mode_name(env->mode), st.name, (int)env->pids[0]);
	} else if (env->npids) {
		snprintf(pr->title, sizeof(pr->title), "%s profile: %d processes",
			 prof__mode_name(env->mode), env->npids);
	} else {
		snprintf(pr->title, sizeof(pr->title), "%s profile: %s",
			 prof__mode_name(env->mode), env->cgroup ? env->cgroup : "all");
	}
	err = proc__pidns(0, &pr->pidns_dev, &pr->pidns_ino);
	if (err) {
		p_err("cannot read this process's PID namespace: %s", strerror(-err));
		return -1;
	}
	return 0;
}

/* Open every output before anything is loaded: a missing or read-only
 * directory, a directory given as a file, a link or FIFO planted there,
 * binary data for a terminal, each is one line now rather than a lost
 * capture later. Return 0, or 1 once every problem is said. */
static int open_outputs(struct output *outs, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		outs[i].of = outfile__open(outs[i].path);
		if (!outs[i].of) {
			p_err("cannot write %s: %s", outs[i].path, outfile__strerror(errno));
			bad = 1;
			continue;
		}
		if (outs[i].w->binary && isatty(fileno(outfile__fp(outs[i].of)))) {
			p_err("%s is binary: not writing it to a terminal (give -o FILE%s, "
			      "or pipe it)", outs[i].w->name, outs[i].w->suffixes[0]);
			bad = 1;
		}
	}
	if (bad)
		for (i = 0; i < n; i++) {
			outfile__abort(outs[i].of);
			outs[i].of = NULL;
		}
	return bad;
}

/* Capture the maps of a cgroup's processes now, so that those that exit
 * before the first drain are still symbolized. */
static void watch_cgroup(struct symbolizer *sz, const char *procs)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	long pid;

	if (read_file(procs, &buf, &len, 0))
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (parse_long(line, 1, INT_MAX, &pid) == 0)
			symbolizer__watch(sz, (pid_t)pid);
	free(buf);
}

static void open_cache(struct profiler *pr);

/* The symbolizer (symbol tables kept in the table cache), the profile and
 * the stack cache, the targets watched from now on. 0, or -1 once said. */
static int open_model(struct profiler *pr)
{
	struct env *env = &pr->env;
	struct capture *c = &pr->c;
	int i;

	open_cache(pr);
	c->sz = symbolizer__new();
	if (c->sz && pr->cache)
		symbolizer__set_cache(c->sz, pr->cache);
	/* ReadyToRun code in mapped .dll images is named from the image itself;
	 * SIDESCOPE_NO_R2R=1 leaves it to perf maps (for comparisons) */
	if (c->sz && !getenv("SIDESCOPE_NO_R2R"))
		symbolizer__set_pe_resolver(c->sz, &r2r__pe_resolver);
	c->prof = prof__new();
	c->stacks = stackcache__new();
	if (!c->sz || !c->prof || !c->stacks) {
		p_err("out of memory");
		return -1;
	}
	prof__set_split(c->prof, env->split);
	for (i = 0; i < env->npids; i++)
		if (pr->starts[i])
			symbolizer__watch_start(c->sz, env->pids[i], pr->starts[i]);
	if (pr->cgroup_procs[0])
		watch_cgroup(c->sz, pr->cgroup_procs);
	if (env->all) {
		/* the pod's processes as they are now: a short-lived one is
		 * still symbolized after it exits */
		pid_t *list = NULL;
		int n = proc__list(&list);

		for (i = 0; i < n; i++)
			if (list[i] != getpid() && !proc__is_kernel_thread(list[i]))
				symbolizer__watch(c->sz, list[i]);
		free(list);
	}
	return 0;
}

/* What the kernel's refusal means (a missing capability, seccomp). */
static const char *cap_hint(enum privhint_need need, int err)
{
	static char buf[192];

	return privhint(need, err, buf, sizeof(buf));
}

/* --unwind tables: rows (8 bytes each; row maps made as the tables need
 * them, up to this many in all) and processes held in the kernel */
#define UNWIND_ROWS (1u << 21)
#define UNWIND_PROCS 256u

/* Processes whose tables are held: the targets alone when they are given
 * (only they are sampled), else UNWIND_PROCS. Each takes UNWIND_MAX_MAPS
 * mappings of unwind_maps, made (and zeroed) whole at load. */
static uint32_t unwind_procs(const struct env *env)
{
	return env->npids > 0 && (uint32_t)env->npids < UNWIND_PROCS ? (uint32_t)env->npids :
								      UNWIND_PROCS;
}

/* --table-cache: tables of earlier captures. A directory that cannot be
 * used is no error; one that is not the sidecar's own (a link, another
 * user's, open to others) is said, the default's other failures (a
 * read-only root, no /run) only with -v. */
static void open_cache(struct profiler *pr)
{
	char why[PATH_MAX + 128];
	int err;

	if (!pr->env.table_cache || pr->cache)
		return;
	pr->cache = cficache__open(pr->env.table_cache, CFICACHE_MAX_BYTES, why, sizeof(why));
	if (pr->cache)
		return;
	err = errno;
	if (err == EPERM || err == ELOOP || err == ENOTDIR ||
	    strcmp(pr->env.table_cache, CFICACHE_DIR))
		p_warn("table cache not used: %s", why);
	else
		p_debug("table cache not used: %s", why);
}

/* Capture hook: a process sampled for the first time gets its tables. */
static void unwind_new(void *arg, pid_t pid)
{
	struct profiler *pr = arg;

	if (pr->uw)
		unwinder__add(pr->uw, pid);
}

/* Capture hook: a walk reached an object whose table waits, or a pc in
 * none of the mappings with tables (its maps are read again: dlopen). */
static void unwind_want(void *arg, pid_t pid, uint32_t idx)
{
	struct profiler *pr = arg;

	if (!pr->uw)
		return;
	if (idx == UNWIND_WANT_MAPS - 1)
		unwinder__add(pr->uw, pid);
	else
		unwinder__want(pr->uw, pid, idx);
}

/* -v: how many instructions the verifier went through for each program
 * loaded, most of a capture's start-up (a change to the walk once doubled
 * them unseen) */
static void say_verified(struct bpf_object *obj)
{
	struct bpf_program *p;

	if (!log_verbose)
		return;
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(p) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		p_debug("program %s: %u instructions verified", bpf_program__name(p),
			info.verified_insns);
	}
}

/* Open the BPF object, its CO-RE relocations against the kernel types in
 * TYPES (a BTF file) or else the kernel's BTF, size its maps and filter
 * for the targets, load it. 0; or -1, once said, or with *LOAD_ERR the
 * load's error, not said. */
static int load_bpf(struct profiler *pr, const char *types, int *load_err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = types);
	struct env *env = &pr->env;
	struct profile_bpf *skel;
	__u32 max = (__u32)env->max_stacks;
	int err;

	*load_err = 0;
	skel = pr->skel = profile_bpf__open_opts(&oo);
	if (!skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), cap_hint(PRIVHINT_BPF, err));
		return -1;
	}
	skel->rodata->pidns_dev = pr->pidns_dev;
	skel->rodata->pidns_ino = pr->pidns_ino;
	skel->rodata->filter_mode = env->npids ? PROFILE_FILTER_PIDS :
				    env->cgroup ? PROFILE_FILTER_CGROUP : PROFILE_FILTER_ALL;
	skel->rodata->filter_cgroup = pr->cgid;
	skel->rodata->want_user = !env->kernel_only;
	skel->rodata->want_kernel = !env->user_only;
	skel->rodata->ns_per_tick = pr->ns_per_tick;
	skel->rodata->mode = (__u32)env->mode;
	/* wall-clock: a sample stands for its period of time on the CPU */
	skel->rodata->sample_weight = env->mode == PROF_MODE_WALL ? 1000000000ull / env->hz : 1;
	skel->rodata->off_states = env->states;
	skel->rodata->min_block_ns = env->min_block_us * 1000;
	/* the sched_switch program only where it is used: nothing to verify,
	 * nothing to need, for CPU profiles */
	/* --off-cpu samples nothing: its sampling program is not checked */
	bpf_program__set_autoload(skel->progs.do_sample, env->mode != PROF_MODE_OFFCPU);
	bpf_program__set_autoload(skel->progs.on_switch, env->mode != PROF_MODE_CPU);
	bpf_program__set_autoload(skel->progs.on_waking, env->mode != PROF_MODE_CPU);
	skel->rodata->want_wakers = env->wakers;
	/* --unwind tables needs bpf_loop (5.17); auto: tables where they apply
	 * and the kernel has it, else frame pointers */
	if (env->unwind != UNWIND_FP && !env->kernel_only) {
		bool has_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop,
							NULL) == 1;

		if (env->unwind == UNWIND_TABLES && !has_loop) {
			p_err("--unwind tables needs the bpf_loop helper (Linux 5.17 or newer); "
			      "use --unwind fp");
			return -1;
		}
		pr->tables = has_loop;
		if (!has_loop)
			p_debug("no bpf_loop in this kernel: user stacks by frame pointers");
	}
	skel->rodata->want_tables = pr->tables;
	bpf_map__set_max_entries(skel->maps.unwind_rows, pr->tables ? UNWIND_MAX_SHARDS : 1);
	bpf_map__set_max_entries(skel->maps.unwind_procs, pr->tables ? unwind_procs(env) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_pids, pr->tables ? unwind_procs(env) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_asked, pr->tables ? unwind_procs(env) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_maps,
				 pr->tables ? unwind_procs(env) * UNWIND_MAX_MAPS : 1);
	bpf_map__set_max_entries(skel->maps.wakers, env->wakers ? (__u32)env->max_threads : 1);
	bpf_map__set_max_entries(skel->maps.offstart, env->mode != PROF_MODE_CPU ?
				 (__u32)env->max_threads : 1);
	bpf_map__set_max_entries(skel->maps.pids, env->npids > 0 ? env->npids : 1);
	/* about 1.2 KB of kernel memory a stack and its counts; allocated as
	 * stacks come where perf_event programs may use such maps (6.1, the
	 * BPF memory allocator), not all at load: at the default 8192, 11 MB
	 * less held by the capture, and a tenth of its start-up */
	bpf_map__set_max_entries(skel->maps.stacks, max);
	bpf_map__set_max_entries(skel->maps.counts0, max);
	bpf_map__set_max_entries(skel->maps.counts1, max);
	if (kernel_at_least(6, 1)) {
		struct bpf_map *grow[] = { skel->maps.stacks, skel->maps.counts0,
					   skel->maps.counts1 };
		size_t g;

		for (g = 0; g < sizeof(grow) / sizeof(grow[0]); g++)
			bpf_map__set_map_flags(grow[g], bpf_map__map_flags(grow[g]) |
							BPF_F_NO_PREALLOC);
	}
	/* processes reported once: the targets, or as many as a pod runs */
	bpf_map__set_max_entries(skel->maps.seen, env->npids ? (__u32)env->npids * 2 + 64 : 16384);
	err = profile_bpf__load(skel);
	if (err) {
		*load_err = err;
		return -1;
	}
	say_verified(skel->obj);
	return 0;
}

/* The kernel types the BPF object needs, kept by an earlier capture under
 * KEY: a memory file holding them, or -1 */
static int kept_kernel_types(struct profiler *pr, uint64_t key)
{
	void *buf;
	size_t len;
	int fd;

	if (cficache__get_blob(pr->cache, key, KBTF_MAX_BYTES, &buf, &len))
		return -1;
	fd = kbtf__memfd(buf, len);
	cficache__blob_free(buf, len);
	if (fd < 0) {
		p_debug("kept kernel types unusable: %s", strerror(errno));
		cficache__drop_blob(pr->cache, key);
	}
	return fd;
}

/* Keep the kernel types the loaded object needs, for the next capture */
static void keep_kernel_types(struct profiler *pr, uint64_t key)
{
	void *buf;
	size_t len;
	int err = kbtf__make(bpf_object__btf(pr->skel->obj), &buf, &len);

	if (!err)
		err = cficache__put_blob(pr->cache, key, buf, len);
	free(buf);
	if (err)
		p_debug("kernel types not kept: %s", strerror(-err));
	else
		p_debug("kernel types kept for the next capture (%zu bytes)", len);
}

/* load_bpf, with the kernel types an earlier capture kept where there are
 * some (no read of the kernel's whole BTF), else the kernel's. 0, or -1
 * once said. */
static int open_load_bpf(struct profiler *pr)
{
	char types[32];
	size_t elf_len;
	const void *elf = profile_bpf__elf_bytes(&elf_len);
	uint64_t key = 0;
	int kfd = -1, err, ret;

	open_cache(pr);
	if (pr->cache && (key = kbtf__key(elf, elf_len)))
		kfd = kept_kernel_types(pr, key);
	snprintf(types, sizeof(types), "/proc/self/fd/%d", kfd);
	ret = load_bpf(pr, kfd >= 0 ? types : NULL, &err);
	if (ret && err && kfd >= 0) {
		p_debug("the kept kernel types would not do (%s): the kernel's own", strerror(-err));
		cficache__drop_blob(pr->cache, key);
		profile_bpf__destroy(pr->skel);
		pr->skel = NULL;
		ret = load_bpf(pr, NULL, &err);
	} else if (!ret && kfd >= 0) {
		p_debug("kernel types from the cache");
	}
	if (kfd >= 0)
		close(kfd);
	if (ret && err)
		p_err("failed to load BPF program: %s%s", strerror(-err), cap_hint(PRIVHINT_BPF, -err));
	else if (!ret && key && kfd < 0)
		keep_kernel_types(pr, key);
	return ret;
}

/* A perf event sampling at HZ on every online CPU, each running the
 * sampling program. 0 or a negative errno, said. */
static int open_perf_events(struct profiler *pr, unsigned int hz)
{
	struct perf_event_attr attr;
	int ncpus = libbpf_num_possible_cpus(), cpu, fd, err;

	pr->links = calloc(ncpus > 0 ? ncpus : 1, sizeof(*pr->links));
	if (!pr->links)
		return -ENOMEM;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = sizeof(attr);
	attr.freq = 1;
	attr.sample_freq = hz;
	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;	/* offline CPU */
			err = errno;
			p_err("failed to open perf event on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_PERF, err));
			return -err;
		}
		pr->links[pr->nlinks] = bpf_program__attach_perf_event(pr->skel->progs.do_sample, fd);
		if (!pr->links[pr->nlinks]) {
			err = errno;
			close(fd);
			p_err("failed to attach BPF program on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_BPF, err));
			return -err;
		}
		pr->nlinks++;
	}
	return 0;
}

/* The capture on the loaded maps, the targets in the filter, then the
 * programs attached: sampling begins. 0, or -1 once said. */
static int attach_bpf(struct profiler *pr)
{
	struct profile_bpf *skel = pr->skel;
	struct env *env = &pr->env;
	struct capture *c = &pr->c;
	struct timespec wall;
	int i, err;

	c->pids = env->pids;
	c->starts = pr->starts;
	c->npids = env->npids;
	c->maps = (struct capture_maps){
		.counts = { bpf_map__fd(skel->maps.counts0), bpf_map__fd(skel->maps.counts1) },
		.stacks = bpf_map__fd(skel->maps.stacks),
		.stats = bpf_map__fd(skel->maps.stats),
		.news = bpf_map__fd(skel->maps.news),
		.offstart = env->mode != PROF_MODE_CPU ? bpf_map__fd(skel->maps.offstart) : -1,
		.active = &skel->bss->active,
	};
	if (pr->tables) {
		pr->uw = unwinder__new(bpf_map__fd(skel->maps.unwind_rows), UNWIND_ROWS,
				       bpf_map__fd(skel->maps.unwind_procs), unwind_procs(env),
				       bpf_map__fd(skel->maps.unwind_maps),
				       bpf_map__fd(skel->maps.unwind_pids));
		if (!pr->uw) {
			p_err("cannot map the unwind table map: %s", strerror(errno));
			return -1;
		}
		if (pr->cache)
			unwinder__set_cache(pr->uw, pr->cache);
		/* no table built past the capture's end (set again at its start) */
		if (env->secs)
			unwinder__set_deadline(pr->uw, now_ns() + env->secs * 1000000000ull);
		for (i = 0; i < env->npids; i++)
			unwinder__watch(pr->uw, env->pids[i]);
		c->on_new = unwind_new;
		c->on_want = unwind_want;
		c->on_new_arg = pr;
	}
	err = capture__start(c);
	if (err) {
		p_err("cannot read the BPF ring buffer: %s", strerror(-err));
		return -1;
	}
	/* an exec makes the next sample report the process again (its maps
	 * changed); without it, the next drain still finds the new maps */
	pr->exec_link = bpf_program__attach(skel->progs.on_exec);
	if (!pr->exec_link)
		p_debug("no exec tracepoint (%s): new program images are read at drains",
			strerror(errno));
	for (i = 0; i < env->npids; i++) {
		__u32 k = (__u32)env->pids[i];
		__u64 v = pr->starts[i] > pr->boot_ticks ? pr->starts[i] - pr->boot_ticks : 0;

		bpf_map_update_elem(bpf_map__fd(skel->maps.pids), &k, &v, BPF_ANY);
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	c->meta.time_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	c->meta.mode = env->mode;
	if (env->mode != PROF_MODE_CPU) {
		c->meta.off_states = env->states;
		c->meta.min_block_ns = env->min_block_us * 1000;
		pr->switch_link = bpf_program__attach(skel->progs.on_switch);
		if (!pr->switch_link) {
			err = errno;
			p_err("cannot attach to the sched_switch tracepoint: %s%s", strerror(err),
			      cap_hint(PRIVHINT_BPF, err));
			return -1;
		}
		pr->wakeup_link = bpf_program__attach(skel->progs.on_waking);
		if (!pr->wakeup_link) {
			err = errno;
			p_err("cannot attach to the sched_waking tracepoint: %s%s", strerror(err),
			      cap_hint(PRIVHINT_BPF, err));
			return -1;
		}
	}
	if (env->mode == PROF_MODE_OFFCPU)
		return 0;	/* no sampling */
	c->meta.hz = (unsigned int)env->hz;
	c->meta.period_ns = 1000000000ull / env->hz;
	return open_perf_events(pr, (unsigned int)env->hz) ? -1 : 0;
}

/* The progress line on a terminal, at T ns after the start. */
static void show_progress(struct profiler *pr, uint64_t t)
{
	uint64_t secs = pr->env.secs;

	const struct prof_meta *m = &pr->c.meta;
	char what[96];

	capture__read_stats(&pr->c);
	if (pr->env.mode == PROF_MODE_OFFCPU)
		snprintf(what, sizeof(what), "%llu off-CPU periods",
			 (unsigned long long)m->off_periods);
	else if (pr->env.mode == PROF_MODE_WALL)
		snprintf(what, sizeof(what), "%llu samples, %llu off-CPU periods",
			 (unsigned long long)m->samples, (unsigned long long)m->off_periods);
	else
		snprintf(what, sizeof(what), "%llu samples", (unsigned long long)m->samples);
	if (secs)
		fprintf(stderr, "\r%s: %llu/%llu s, %s ", log__prog(),
			(unsigned long long)(t / 1000000000ull), (unsigned long long)secs, what);
	else
		fprintf(stderr, "\r%s: %llu s, %s (Ctrl-C to stop) ", log__prog(),
			(unsigned long long)(t / 1000000000ull), what);
}

/* A drain while sampling: 1 when every target has exited, 0 to go on, -1
 * once an error is said. */
static int drain_now(struct profiler *pr)
{
	struct env *env = &pr->env;
	int err;

	err = capture__drain(&pr->c);
	if (err) {
		p_err("cannot read the counts: %s", strerror(-err));
		return -1;
	}
	/* forget exited processes, or -a over hours grows */
	symbolizer__sweep(pr->c.sz);
	if (pr->uw) {
		unwinder__sweep(pr->uw);
		/* -a, -n, --cgroup: the processes sampled so far, their new
		 * mappings (dlopen); -p targets are looked at more often */
		if (!env->npids)
			unwinder__refresh(pr->uw);
	}
	if (env->npids && !capture__any_alive(&pr->c)) {
		if (env->npids == 1)
			p_info("target PID %d exited; stopping", (int)env->pids[0]);
		else
			p_info("every target process has exited; stopping");
		return 1;
	}
	return 0;
}

/* --switch-rate: from the switches counted since the last look, how many
 * of them the program notes from now on (1 in K). */
static void adjust_sampling(struct profiler *pr, uint64_t now)
{
	struct capture *c = &pr->c;
	uint64_t dt = now - pr->rate_t, periods, rate, every;
	volatile __u32 *cur = &pr->skel->data->off_every;

	capture__read_stats(c);
	periods = c->meta.off_periods - pr->rate_periods;
	pr->rate_t = now;
	pr->rate_periods = c->meta.off_periods;
	if (!dt)
		return;
	rate = periods * 1000000000ull / dt;
	every = (rate + pr->env.switch_rate - 1) / pr->env.switch_rate;
	if (every > 4096)
		every = 4096;
	if (every < 1)
		every = 1;
	/* up at once, down once well below: no flapping at the edge */
	if (every > *cur || every * 2 <= *cur) {
		if (every != *cur)
			p_debug("%llu switches a second: noting 1 in %llu", (unsigned long long)rate,
				(unsigned long long)every);
		*cur = (__u32)every;
	}
	if (*cur > c->meta.off_every_max)
		c->meta.off_every_max = *cur;
}

/* Milliseconds from NOW until the capture loop has something to do: the
 * end, a drain, a look at the targets' maps (unwind tables), or with
 * EVERY_100MS the sampling rate or the progress line; 1 to 1000 (a
 * signal or a BPF report ends the wait sooner). */
static int poll_ms(const struct profiler *pr, uint64_t now, uint64_t t0, uint64_t last_drain,
		   uint64_t last_unwind, bool every_100ms)
{
	uint64_t next = last_drain + DRAIN_NS, ms;

	if (pr->env.secs && t0 + pr->env.secs * 1000000000ull < next)
		next = t0 + pr->env.secs * 1000000000ull;
	if (pr->uw && last_unwind + UNWIND_LOOK_NS < next)
		next = last_unwind + UNWIND_LOOK_NS;
	if (every_100ms && now + 100000000ull < next)
		next = now + 100000000ull;
	ms = next > now ? (next - now + 999999) / 1000000 : 1;
	return ms < 1 ? 1 : ms > 1000 ? 1000 : (int)ms;
}

/* Sample until the duration is over, a signal or every target gone,
 * draining every DRAIN_NS. 0, or -1 once said. */
static int run_capture(struct profiler *pr, uint64_t t0)
{
	uint64_t secs = pr->env.secs, last_drain = t0, now, last_tty = 0, last_unwind = t0;
	bool adapt = pr->env.mode != PROF_MODE_CPU && pr->env.switch_rate;
	bool tty = isatty(STDERR_FILENO);
	int err = 0, i;

	if (pr->env.mode == PROF_MODE_OFFCPU)
		p_debug("tracing context switches");
	else if (pr->env.mode == PROF_MODE_WALL)
		p_debug("tracing context switches, sampling at %llu Hz on %d CPUs",
			(unsigned long long)pr->env.hz, pr->nlinks);
	else
		p_debug("sampling at %llu Hz on %d CPUs", (unsigned long long)pr->env.hz,
			pr->nlinks);
	while (!run__stop) {
		now = now_ns();
		if (secs && now - t0 >= secs * 1000000000ull)
			break;
		if (now - last_drain >= DRAIN_NS) {
			err = drain_now(pr);
			if (err)
				break;
			last_drain = now;
		}
		if (adapt && now - pr->rate_t >= 100000000ull)
			adjust_sampling(pr, now);
		/* the targets' new mappings (dlopen) get their tables; a
		 * walk that meets one asks sooner (unwind_want) */
		if (pr->uw && now - last_unwind >= UNWIND_LOOK_NS) {
			last_unwind = now;
			for (i = 0; i < pr->env.npids; i++)
				unwinder__watch(pr->uw, pr->env.pids[i]);
		}
		if (tty && now - last_tty >= 100000000ull) {
			last_tty = now;
			show_progress(pr, now - t0);
		}
		/* processes first sampled: watched within milliseconds, while
		 * they live (a signal ends the wait early); else asleep until
		 * the next of the above is due. A signal that came during the
		 * work above would not end the wait: the loop ends now */
		if (run__stop)
			break;
		err = capture__poll(&pr->c, poll_ms(pr, now, t0, last_drain, last_unwind, adapt || tty));
		if (err < 0 && err != -EINTR) {
			p_err("cannot read the BPF ring buffer: %s", strerror(-err));
			return -1;
		}
		err = 0;
	}
	if (err < 0)
		return -1;
	if (tty)
		fputc('\n', stderr);
	return 0;
}

/* The context switches the sched_switch program missed: the kernel skips
 * a program that would run inside another on the same CPU. */
static void missed_switches(struct profiler *pr)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (pr->env.mode == PROF_MODE_CPU)
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(pr->skel->progs.on_switch), &info, &len) == 0)
		pr->c.meta.missed_switches = info.recursion_misses;
}

/* Stop sampling, then take what both maps still hold. 0, or -1 once
 * said. */
static int stop_capture(struct profiler *pr, uint64_t t0)
{
	uint64_t end;
	int i, err;

	for (i = 0; i < pr->nlinks; i++)
		bpf_link__destroy(pr->links[i]);
	pr->nlinks = 0;
	/* the capture's end for the threads still off the CPU, read before
	 * the switch program goes: one that runs again after it is not seen,
	 * and counting it up to the flush below would count the drains' time,
	 * K times for a period noted 1 in K */
	end = proc__bpf_clock_ns();
	bpf_link__destroy(pr->switch_link);
	pr->switch_link = NULL;
	bpf_link__destroy(pr->wakeup_link);
	pr->wakeup_link = NULL;
	bpf_link__destroy(pr->exec_link);
	pr->exec_link = NULL;
	pr->c.meta.duration_ns = now_ns() - t0;
	missed_switches(pr);
	/* the processes first sampled at the end watched (a poll's time at
	 * most: what still waits after it goes unnamed) */
	capture__poll(&pr->c, 0);
	err = capture__drain(&pr->c);
	if (!err)
		err = capture__drain(&pr->c);
	/* threads still off the CPU: their time up to the end */
	if (!err && pr->env.mode != PROF_MODE_CPU)
		err = capture__flush_offstart(&pr->c, end);
	if (err) {
		p_err("cannot read the counts: %s", strerror(-err));
		return -1;
	}
	capture__read_stats(&pr->c);
	return 0;
}

/* Append ", NAME N" to BUF when N is not 0. */
static void add_count(char *buf, size_t size, const char *name, uint64_t n)
{
	size_t len = strlen(buf);

	if (n)
		snprintf(buf + len, size - len, "%s%s %llu", len ? ", " : "", name,
			 (unsigned long long)n);
}

/* One line of what was lost or cut short, naming only what was; nothing
 * when nothing was. */
static void report_losses(const struct prof_meta *m)
{
	char lost[256] = "", cut[128] = "";

	add_count(lost, sizeof(lost), "user stack unreadable", m->lost_ustack);
	add_count(lost, sizeof(lost), "kernel stack unreadable", m->lost_kstack);
	prof__add_fails(lost, sizeof(lost), "stack store", m->lost_stacks);
	prof__add_fails(lost, sizeof(lost), "count map", m->lost_counts);
	add_count(lost, sizeof(lost), "missing from the store", m->missing_stacks);
	add_count(lost, sizeof(lost), "off-CPU periods (too many threads off the CPU at once)",
		  m->lost_off_full);
	add_count(lost, sizeof(lost), "context switches missed", m->missed_switches);
	add_count(lost, sizeof(lost), "wakers (too many at once)", m->lost_wakers);
	add_count(cut, sizeof(cut), "user", m->trunc_ustack);
	add_count(cut, sizeof(cut), "kernel", m->trunc_kstack);
	if (lost[0] && cut[0])
		p_warn("stacks lost: %s; truncated at %d frames: %s", lost, PROFILE_MAX_DEPTH, cut);
	else if (lost[0])
		p_warn("stacks lost: %s", lost);
	else if (cut[0])
		p_warn("no stack lost; truncated at %d frames: %s", PROFILE_MAX_DEPTH, cut);
}

/* The profile's nanoseconds off the CPU: all of an off-CPU profile; in a
 * wall-clock one, what is not samples. */
static uint64_t off_total(const struct prof *p)
{
	const struct prof_meta *m = prof__meta(p);
	uint64_t on = m->mode == PROF_MODE_WALL ? m->samples * m->period_ns : 0;

	return prof__total(p) > on ? prof__total(p) - on : 0;
}

/* Objects without a table named by default; -v names them all */
#define MISSING_SAID 8

static void say_missing(const char *path, const char *why, void *arg)
{
	size_t *n = arg;
	char safe[256];

	if ((*n)++ >= MISSING_SAID && !log_verbose)
		return;
	escape__str(safe, sizeof(safe), path, strlen(path), 120, 0);
	p_info("no unwind table for %s (%s): its frames by frame pointer", safe, why);
}

/* --unwind tables: what was loaded, what had no table, what was cut. */
static void report_unwind(struct profiler *pr)
{
	const struct prof_meta *m = &pr->c.meta;
	struct unwinder_stats st;

	unwinder__stats(pr->uw, &st);
	char wait[96] = "";

	if (m->unwind_wait)
		snprintf(wait, sizeof(wait), " (%llu at an object whose table was being loaded)",
			 (unsigned long long)m->unwind_wait);
	p_info("unwind tables: %zu objects, %llu rows in %zu row map%s (%llu KB of at most "
	       "%llu), built in %.0f ms (%zu from the cache), %zu of them when a walk first "
	       "reached them, %zu more mapped but never reached; %llu user stacks walked by "
	       "them, %llu of them cut short%s",
	       st.files, (unsigned long long)st.rows, st.shards, st.shards == 1 ? "" : "s",
	       (unsigned long long)(st.alloc_rows * sizeof(struct unwind_row) / 1024),
	       (unsigned long long)(st.max_rows * sizeof(struct unwind_row) / 1024), st.build_ms,
	       st.cached, st.files_wanted, st.files_wait,
	       (unsigned long long)m->unwind_tables, (unsigned long long)m->unwind_cut, wait);
	size_t said = 0;

	unwinder__foreach_missing(pr->uw, say_missing, &said);
	if (said > MISSING_SAID && !log_verbose)
		p_info("and %zu more objects without an unwind table (-v names them)",
		       said - MISSING_SAID);
	if (st.files_pe)
		p_info("%zu .NET assemblies (PE images): their code by frame pointer, which it keeps",
		       st.files_pe);
	if (st.files_full || st.procs_full)
		p_warn("unwind tables left out: %zu objects (no room in the row maps), %zu "
		       "processes (more than %u)", st.files_full, st.procs_full,
		       unwind_procs(&pr->env));
	if (st.files_share || st.files_slow)
		p_warn("unwind tables left out: %zu objects over their process's share of the "
		       "rows (%llu a process, twice that for its executable and C library; "
		       "beyond it only while %llu stay free for the others), %zu over their "
		       "process's %u ms for building tables (-v names them)", st.files_share,
		       (unsigned long long)st.share_rows, (unsigned long long)st.reserve_rows,
		       st.files_slow, UNWIND_BUILD_MS);
	if (st.files_cut)
		p_debug("unwind tables left out: %zu objects whose tables were still to be built "
			"when the capture ended", st.files_cut);
	if (st.maps_deferred)
		p_debug("%zu looks at a process's mappings put off: reading its maps took long "
			"(read again after %d times that)", st.maps_deferred, UW_MAPS_COST_FACTOR);
}

/* What the capture missed, said once it is over; its metadata into the
 * profile. */
static void report_capture(struct profiler *pr)
{
	struct capture *c = &pr->c;
	struct symbolizer_stats ss;

	if (c->pid_reused)
		p_info("left out %llu samples of another process that got a target's PID",
		       (unsigned long long)c->pid_reused);
	symbolizer__stats(c->sz, &ss);
	c->meta.perfmap_bad_lines = ss.perfmap_bad_lines;
	c->meta.off_pending = c->off_pending;
	if (ss.kallsyms_err && !pr->env.user_only)
		p_warn("kernel symbols unavailable: %s (needs CAP_SYSLOG)",
		       strerror(-ss.kallsyms_err));
	p_debug("symbols: %zu files of the targets, %zu of them mapped but not read (no frame "
		"fell in them)", ss.files, ss.files_waiting);
	if (ss.files_denied)
		p_warn("%zu binar%s of the targets unreadable: permission denied (other "
		       "users' processes need CAP_SYS_PTRACE; run 'doctor')",
		       ss.files_denied, ss.files_denied == 1 ? "y" : "ies");
	prof__set_meta(c->prof, &c->meta);
	report_losses(&c->meta);
	if (pr->uw)
		report_unwind(pr);
	if (c->news_lost)
		p_info("%llu reports of processes sampled for the first time were lost (ring "
		       "buffer full); their maps were read at the next drain",
		       (unsigned long long)c->news_lost);
	capture__say_fail_hints(c, "--max-stacks", pr->env.max_stacks);
	if (c->meta.lost_off_full)
		p_warn("the off-CPU start map was full: raise --max-threads (now %llu)",
		       (unsigned long long)pr->env.max_threads);
	if (pr->env.mode != PROF_MODE_CPU)
		p_info("%llu off-CPU periods, %.3f s off the CPU in all%s",
		       (unsigned long long)(c->meta.off_periods + c->off_pending),
		       off_total(c->prof) / 1e9, c->off_pending ? " (threads still off the CPU "
		       "at the end counted up to it)" : "");
	if (c->meta.off_every_max > 1)
		p_info("in a storm of context switches 1 in %llu at the most was noted, its time "
		       "counted as many times (--switch-rate %llu; 0 notes every one)",
		       (unsigned long long)c->meta.off_every_max,
		       (unsigned long long)pr->env.switch_rate);
	if (prof__total(c->prof))
		return;
	if (pr->env.mode == PROF_MODE_OFFCPU && pr->env.states_given)
		p_warn("no off-CPU time in %s: the targets did not leave the CPU in that state "
		       "while tracing", prof__states_name(pr->env.states));
	else if (pr->env.mode == PROF_MODE_OFFCPU)
		p_warn("no off-CPU time: the targets did not leave the CPU while tracing");
	else
		p_warn("no samples: the targets did not run on a CPU while sampling");
}

/* Write and commit one output opened by open_outputs. */
static int write_output(struct profiler *pr, struct output *o)
{
	struct prof_write_opts wo = { .title = pr->title, .top_rows = 25 };
	struct outfile *of = o->of;
	int err;

	o->of = NULL;
	err = o->w->write(pr->c.prof, outfile__fp(of), &wo);
	if (err) {
		outfile__abort(of);
		p_err("cannot write %s: %s", o->path, strerror(-err));
		return err;
	}
	err = outfile__commit(of);
	if (err)
		p_err("cannot write %s: %s", o->path, outfile__strerror(err));
	return err;
}

/* Every output: 0, or 1 when one was not written. */
static int write_outputs(struct profiler *pr)
{
	struct env *env = &pr->env;
	int i, failed = 0;

	for (i = 0; i < env->nouts; i++) {
		if (write_output(pr, &env->outs[i])) {
			failed++;
			continue;
		}
		if (strcmp(env->outs[i].path, "-"))
			p_info("wrote %s", env->outs[i].path);
	}
	if (failed && env->nouts > 1)
		p_err("%d of %d outputs not written", failed, env->nouts);
	return failed ? 1 : 0;
}

static void cleanup(struct profiler *pr)
{
	int i;

	for (i = 0; i < pr->env.nouts; i++)
		outfile__abort(pr->env.outs[i].of);
	for (i = 0; i < pr->nlinks; i++)
		bpf_link__destroy(pr->links[i]);
	free(pr->links);
	bpf_link__destroy(pr->exec_link);
	bpf_link__destroy(pr->switch_link);
	bpf_link__destroy(pr->wakeup_link);
	capture__free(&pr->c);
	unwinder__free(pr->uw);
	cficache__close(pr->cache);
	profile_bpf__destroy(pr->skel);
	stackcache__free(pr->c.stacks);
	symbolizer__free(pr->c.sz);
	prof__free(pr->c.prof);
	free(pr->env.pids);
	free(pr->starts);
}

int cmd_profile(int argc, char **argv)
{
	struct profiler pr = {
		.env = { .hz = 99, .secs = 30, .max_stacks = 8192, .min_block_us = 1,
			 .max_threads = 16384, .switch_rate = 5000, .table_cache = CFICACHE_DIR,
			 .states = PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK },
		.ns_per_tick = 10000000,
	};
	uint64_t t0;
	int ret;

	/* first of all: a signal at any later moment ends the capture cleanly */
	run__catch_stop();
	ret = parse_args(argc, argv, &pr.env);
	if (ret >= 0)
		goto out;
	ret = 1;
	if (find_targets(&pr) || open_outputs(pr.env.outs, pr.env.nouts))
		goto out;
	run__libbpf_quiet_unless_verbose();
	if (open_model(&pr) || open_load_bpf(&pr) || attach_bpf(&pr))
		goto out;
	t0 = now_ns();
	pr.rate_t = t0;
	if (pr.uw && pr.env.secs)
		unwinder__set_deadline(pr.uw, t0 + pr.env.secs * 1000000000ull);
	if (run_capture(&pr, t0) || stop_capture(&pr, t0))
		goto out;
	report_capture(&pr);
	ret = write_outputs(&pr);
	p_debug("%llu samples, %zu stacks, %llu drains",
		(unsigned long long)prof__total(pr.c.prof), prof__nstacks(pr.c.prof),
		(unsigned long long)pr.c.drains);
out:
	cleanup(&pr);
	return ret;
}
