// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope profile: sample CPU stacks of processes in the pod with BPF,
 * symbolize them (ELF, perf maps, kallsyms) and write folded stacks, pprof,
 * JSON or a top table. This file parses the command line, opens the
 * outputs and writes them; the profiler engine (prof/profiler.h) does the
 * rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "core/cli.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/run.h"
#include "core/util.h"
#include "prof/prof.h"
#include "prof/profiler.h"
#include "prof/writer.h"
#include "sym/cficache.h"
#include "sym/perfmap.h"

#define MAX_OUTPUTS 8

struct output {
	const char *path;
	const struct prof_writer *w;	/* NULL: not told by the name */
	struct outfile *of;	/* opened before sampling, written at the end */
};

/* The command line: what to profile (the engine's options) and what to
 * write. */
struct env {
	struct profiler_opts o;
	bool json, hz_given, min_given, wall_given;
	const struct prof_writer *forced;	/* --format */
	struct output outs[MAX_OUTPUTS];
	int nouts;
};


enum { OPT_CGROUP = 256, OPT_FORMAT, OPT_USER, OPT_KERNEL, OPT_MAX_STACKS,
       OPT_MAX_PERF_MAP, OPT_SPLIT, OPT_JSON, OPT_OFFCPU, OPT_WALL, OPT_STATE, OPT_MIN_BLOCK,
       OPT_MAX_THREADS, OPT_WAKERS, OPT_SWITCH_RATE, OPT_UNWIND, OPT_TABLE_CACHE,
       OPT_HANDS_OFF };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PIDS", "profile these processes (comma-separated); a PID means\n"
			      "the process it names at the start: once that exits,\n"
			      "another process given the same PID is not sampled" },
	{ 'n', "name", "NAME", "profile the processes named NAME (comm, executable or\n"
			       "first argument; '.dll' optional)", CLI_STORE_ARG(struct env, o.name) },
	{ OPT_CGROUP, "cgroup", "PATH", "profile one cgroup (v2), e.g. a container",
	  CLI_STORE_ARG(struct env, o.cgroup) },
	{ 'a', "all", NULL, "profile everything this PID namespace shows",
	  CLI_STORE_TRUE(struct env, o.all) },
	{ 'F', "frequency", "HZ", "samples per second per CPU (default 99)" },
	{ OPT_OFFCPU, "off-cpu", NULL, "profile time off the CPU instead: where threads\n"
				       "block (locks, I/O, sleeps) or wait for a CPU, by\n"
				       "stack, from every context switch" },
	{ OPT_WALL, "wall", NULL, "wall-clock profile: on-CPU samples weighted by their\n"
				  "period plus the time off the CPU ([off-CPU] leaves);\n"
				  "a thread's total is its wall-clock time",
	  CLI_STORE_TRUE(struct env, wall_given) },
	{ OPT_STATE, "state", "STATE", "--off-cpu: count time in interruptible sleep (S),\n"
				       "uninterruptible sleep (D), both, or all (default:\n"
				       "also time runnable but waiting for a CPU)" },
	{ OPT_MIN_BLOCK, "min-block", "US", "--off-cpu: leave out periods shorter than US\n"
					    "microseconds (default 1)" },
	{ OPT_WAKERS, "wakers", NULL, "--off-cpu: also the stack of the task that woke each\n"
				      "thread, above \"--\" (as bcc's offwaketime)",
	  CLI_STORE_TRUE(struct env, o.wakers) },
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
				  "--format json); messages as JSON lines on stderr",
	  CLI_STORE_TRUE(struct env, json) },
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
	{ OPT_HANDS_OFF, "hands-off", NULL, "leave the app as it is: do not ask a .NET or Java\n"
					    "runtime without a perf map to write one (the\n"
					    "default asks; .NET's is switched off again at\n"
					    "the end)", CLI_STORE_TRUE(struct env, o.hands_off) },
	{ OPT_USER, "user-only", NULL, "user-space stacks only",
	  CLI_STORE_TRUE(struct env, o.user_only) },
	{ OPT_KERNEL, "kernel-only", NULL, "kernel stacks only",
	  CLI_STORE_TRUE(struct env, o.kernel_only) },
	{ OPT_MAX_STACKS, "max-stacks", "N", "distinct stacks held in the kernel between two drains\n"
					     "(default 8192, about 1 KB of kernel memory each)" },
	{ OPT_MAX_PERF_MAP, "max-perf-map", "SIZE", "read at most SIZE of each perf map, its newest\n"
						    "lines (default 256M; k, M, G suffixes)" },
	{ OPT_SPLIT, "split", "pid|tid", "folded stacks and flame graphs: one line per process\n"
					 "(NAME-PID) or thread (NAME-PID/TID) instead of one\n"
					 "per stack" },
	CLI_OPTS_END("debug messages, libbpf's included")
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
"A .NET (8+) or Java (HotSpot 17+) process without a perf map is asked to\n"
"write one, so that its JIT code is named with no restart (.NET's switched\n"
"off again at the end; --hands-off asks nothing).\n"
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
"ENVIRONMENT:\n"
"  DEBUGINFOD_URLS     servers to fetch stripped files' debug files from, by\n"
"                      build ID (kept in the table cache's debuginfod/);\n"
"                      DEBUGINFOD_TIMEOUT (s, default 30) and DEBUGINFOD_MAXSIZE\n"
"                      (bytes, default 256 MB) bound each fetch\n"
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
"  sidescope profile -p 7 --table-cache none -o cpu.svg # tables built afresh\n"
"  DEBUGINFOD_URLS=https://debuginfod.debian.net sidescope profile -p 7 -o a.svg\n",
	.col = 22,
};

/* An option of --off-cpu and --wall (parse_opt's): 0, a usage error's
 * status, or -1 when OPT is none of them. */
static int parse_mode_opt(struct env *env, int opt, const char *arg)
{
	switch (opt) {
	case OPT_OFFCPU:
		env->o.mode = PROF_MODE_OFFCPU;
		return 0;
	case OPT_STATE:
		env->o.states_given = true;
		if (!strcmp(arg, "interruptible") || !strcmp(arg, "S"))
			env->o.states = PROF_STATE_SLEEP;
		else if (!strcmp(arg, "uninterruptible") || !strcmp(arg, "D"))
			env->o.states = PROF_STATE_DISK;
		else if (!strcmp(arg, "both"))
			env->o.states = PROF_STATE_SLEEP | PROF_STATE_DISK;
		else if (!strcmp(arg, "all"))
			env->o.states = PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK;
		else
			return usage_error("invalid --state '%s' (interruptible, uninterruptible, "
					   "both or all)", arg);
		return 0;
	case OPT_MIN_BLOCK:
		if (parse_u64(arg, 0, 3600ull * 1000000, &env->o.min_block_us))
			return usage_error("invalid --min-block '%s' (microseconds)", arg);
		env->min_given = true;
		return 0;
	case OPT_SWITCH_RATE:
		if (parse_u64(arg, 0, 100000000, &env->o.switch_rate))
			return usage_error("invalid --switch-rate '%s' (switches a second, 0: all)",
					   arg);
		return 0;
	case OPT_MAX_THREADS:
		if (parse_u64(arg, 16, 1u << 20, &env->o.max_threads))
			return usage_error("invalid --max-threads '%s' (16-1048576)", arg);
		return 0;
	}
	return -1;
}

/* One option OPT with its argument ARG into the struct env at CTX
 * (cli_opt_fn): 0, or the exit status of a usage error. */
static int parse_opt(void *ctx, int opt, const char *arg)
{
	struct env *env = ctx;
	char list[128];
	uint64_t bytes;
	int r = parse_mode_opt(env, opt, arg);

	if (r >= 0)
		return r;
	switch (opt) {
	case 'p':
		free(env->o.pids);
		env->o.pids = NULL;
		env->o.npids = parse_pid_list(arg, &env->o.pids);
		if (env->o.npids <= 0)
			return usage_error("invalid PID list '%s'", arg);
		return 0;
	case 'F':
		if (parse_u64(arg, 1, 10000, &env->o.hz))
			return usage_error("invalid frequency '%s' (1-10000 Hz)", arg);
		env->hz_given = true;
		return 0;
	case OPT_TABLE_CACHE:
		if (!*arg)
			return usage_error("--table-cache needs a directory (or none)");
		env->o.table_cache = strcmp(arg, "none") ? arg : NULL;
		return 0;
	case OPT_UNWIND:
		if (!strcmp(arg, "auto"))
			env->o.unwind = PROFILER_UNWIND_AUTO;
		else if (!strcmp(arg, "fp"))
			env->o.unwind = PROFILER_UNWIND_FP;
		else if (!strcmp(arg, "tables"))
			env->o.unwind = PROFILER_UNWIND_TABLES;
		else
			return usage_error("invalid --unwind '%s' (auto, fp or tables)", arg);
		return 0;
	case 'd':
		if (parse_u64(arg, 0, 31 * 86400, &env->o.secs))
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
	case OPT_MAX_STACKS:
		if (parse_u64(arg, 64, 1u << 20, &env->o.max_stacks))
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
		env->o.split = arg[0] == 'p' ? PROF_SPLIT_PID : PROF_SPLIT_TID;
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
	if (env->wall_given && env->o.mode == PROF_MODE_OFFCPU)
		return usage_error("--off-cpu and --wall exclude each other (--wall holds "
				   "both)");
	if (env->wall_given)
		env->o.mode = PROF_MODE_WALL;
	if (env->o.mode != PROF_MODE_OFFCPU && (env->o.states_given || env->min_given || env->o.wakers))
		return usage_error("--%s needs --off-cpu%s", env->o.states_given ? "state" :
				   env->min_given ? "min-block" : "wakers",
				   env->o.mode == PROF_MODE_WALL ? " (--wall counts every moment)" : "");
	if (env->o.unwind == PROFILER_UNWIND_TABLES && env->o.kernel_only)
		return usage_error("--unwind tables walks user stacks: not with --kernel-only");
	if (env->o.mode == PROF_MODE_OFFCPU && env->hz_given)
		return usage_error("-F does not apply to --off-cpu: every context switch "
				   "counts (use --wall for samples and switches)");
	return 0;
}

/* The command line into ENV: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){
		.o = { .hz = 99, .secs = 30, .max_stacks = 8192, .min_block_us = 1,
		       .max_threads = 16384, .switch_rate = 5000, .table_cache = CFICACHE_DIR,
		       .states = PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK },
	};
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if ((env->o.npids > 0) + (env->o.name != NULL) + (env->o.cgroup != NULL) + env->o.all != 1)
		return usage_error("give exactly one target: -p PID, -n NAME, --cgroup PATH or -a");
	if (env->o.user_only && env->o.kernel_only)
		return usage_error("--user-only and --kernel-only exclude each other");
	if (env->json && env->forced && strcmp(env->forced->name, "json"))
		return usage_error("--json and --format %s exclude each other", env->forced->name);
	r = check_mode(env);
	if (r)
		return r;
	r = check_outputs(env);
	return r ? r : -1;
}

/* Open every output before anything is loaded: a missing or read-only
 * directory, a directory given as a file, a link or FIFO planted there,
 * binary data for a terminal, each is one line now rather than a lost
 * capture later. Return 0, or 1 once every problem is said. */
static int open_outputs(struct output *outs, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		outs[i].of = outfile__open_or_say(outs[i].path);
		if (!outs[i].of) {
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

/* One output's writer and what it writes (outfile__finish's context) */
struct write_ctx {
	const struct prof_writer *w;
	struct prof *p;
	const struct prof_write_opts *wo;
};

static int write_one(void *ctx, FILE *f)
{
	struct write_ctx *c = ctx;

	return c->w->write(c->p, f, c->wo);
}

/* Every output of PR's profile: 0, or 1 when one was not written. */
static int write_outputs(struct env *env, const struct profiler *pr)
{
	struct prof_write_opts wo = { .title = profiler__title(pr), .top_rows = 25 };
	int i, failed = 0;

	for (i = 0; i < env->nouts; i++) {
		struct write_ctx c = { env->outs[i].w, profiler__prof(pr), &wo };
		struct outfile *of = env->outs[i].of;

		env->outs[i].of = NULL;
		if (outfile__finish(of, write_one, &c)) {
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

int cmd_profile(int argc, char **argv)
{
	struct env env;
	struct profiler *pr = NULL;
	int ret, i;

	/* first of all: a signal at any later moment ends the capture cleanly */
	run__catch_stop();
	ret = parse_args(argc, argv, &env);
	if (ret >= 0) {
		free(env.o.pids);
		return ret;
	}
	ret = 1;
	pr = profiler__new(&env.o);	/* the PIDs are its own */
	if (!pr) {
		free(env.o.pids);
		goto out;
	}
	if (profiler__find_targets(pr) || open_outputs(env.outs, env.nouts))
		goto out;
	run__libbpf_quiet_unless_verbose();
	if (profiler__load(pr) || profiler__attach(pr) || profiler__run(pr))
		goto out;
	profiler__report(pr);
	ret = write_outputs(&env, pr);
	p_debug("%llu samples, %zu stacks, %llu drains",
		(unsigned long long)prof__total(profiler__prof(pr)),
		prof__nstacks(profiler__prof(pr)), (unsigned long long)profiler__drains(pr));
out:
	for (i = 0; i < env.nouts; i++)
		outfile__abort(env.outs[i].of);
	profiler__free(pr);
	return ret;
}
