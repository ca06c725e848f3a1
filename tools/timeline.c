// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope timeline: CPU samples, uprobe hits and LTTng events of one
 * process on one clock, as one Chrome trace event JSON file (Perfetto UI,
 * chrome://tracing). This file parses the command line and writes the
 * file; the capture is timeline/tlcap's. */
#include <errno.h>
#include <limits.h>
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
#include "timeline/tlcap.h"
#include "uprobe/probespec.h"

#define MAX_EVENTS 32

struct env {
	pid_t pid;
	uint64_t secs, hz, max_stacks, buf_kb, register_ms;
	const char *output;
	char *probes[UP_MAX_PROBES];
	int nprobes;
	char *events[MAX_EVENTS];	/* --lttng-event */
	int nevents;
	bool lttng, hands_off;
};


enum { OPT_LTTNG = 256, OPT_LTTNG_EVENT, OPT_MAX_STACKS, OPT_BUFFER_KB, OPT_REGISTER_WAIT,
       OPT_HANDS_OFF };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PID", "the process (as this PID namespace shows it)" },
	{ 'd', "duration", "S", "seconds to record (default 10; 0: until\n"
				"SIGINT/SIGTERM)" },
	{ 'F', "frequency", "HZ", "CPU samples per second per CPU (default 99)" },
	{ 'e', "probe", "PROBE", "also a uprobe, as 'sidescope uprobe' takes it:\n"
				 "its hits are instants with their arguments;\n"
				 "may be repeated" },
	{ OPT_LTTNG, "lttng", NULL, "also the process's LTTng user-space events\n"
				    "and its LTTng agents' log records (Python,\n"
				    "JUL, log4j); starts lttng-sessiond when none\n"
				    "runs",
	  CLI_STORE_TRUE(struct env, lttng) },
	{ OPT_LTTNG_EVENT, "lttng-event", "NAME", "only these LTTng events (patterns, as 'lttng\n"
						  "enable-event' takes them; for agents, logger\n"
						  "names; implies --lttng); may be repeated" },
	{ OPT_REGISTER_WAIT, "register-wait", "MS", "--lttng: how long the app may take to\n"
						    "register with lttng-sessiond (default 5000)" },
	{ 'o', "output", "FILE", "the Chrome trace event JSON file (required)",
	  CLI_STORE_ARG(struct env, output) },
	{ OPT_HANDS_OFF, "hands-off", NULL, "do not ask a .NET or Java runtime without a\n"
					    "perf map to write one (as 'profile')",
	  CLI_STORE_TRUE(struct env, hands_off) },
	{ OPT_MAX_STACKS, "max-stacks", "N", "distinct stacks kept in the kernel (default\n"
					     "16384, about 1 KB each)" },
	{ OPT_BUFFER_KB, "buffer-kb", "KB", "ring buffer of the samples in KiB (a power\n"
					    "of 2, default 1024)" },
	CLI_OPTS_END("debug messages, libbpf's included")
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
"decoded arguments, and with --lttng its LTTng user-space events (its LTTng\n"
"agents' log records too: lttng_python:event, lttng_jul:event... with the\n"
"logger and the message), whose clock is checked against ours. One track\n"
"per thread: samples are slices named by their leaf function (consecutive\n"
"samples with the same leaf merged, the whole stack in the slice's\n"
"arguments), probe hits and LTTng events instants, LTTng begin/end pairs\n"
"(Start/Stop, Begin/End) slices.\n"
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

	*env = (struct env){ .secs = 10, .hz = 99, .max_stacks = 16384, .buf_kb = 1024,
			     .register_ms = 5000 };
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

static int write_doc(void *r, FILE *f)
{
	return tlcap__write(r, f);
}

int cmd_timeline(int argc, char **argv)
{
	struct env env;
	struct outfile *of = NULL;
	struct tlcap *r;
	int ret;

	/* first of all: a signal at any later moment ends the capture cleanly */
	run__catch_stop();
	ret = parse_args(argc, argv, &env);
	if (ret >= 0)
		return ret;
	r = tlcap__new(&(struct tlcap_opts){
		.pid = env.pid, .secs = env.secs, .hz = env.hz, .max_stacks = env.max_stacks,
		.buf_kb = env.buf_kb, .register_ms = env.register_ms, .probes = env.probes,
		.nprobes = env.nprobes, .events = env.events, .nevents = env.nevents,
		.lttng = env.lttng, .hands_off = env.hands_off,
	});
	if (!r)
		return 1;
	ret = tlcap__parse_probes(r);
	if (ret)
		goto out;
	ret = 1;
	if (tlcap__find_target(r))
		goto out;
	of = outfile__open_or_say(env.output);
	if (!of)
		goto out;
	run__libbpf_quiet_unless_verbose();
	if (tlcap__start(r) || tlcap__run(r))
		goto out;
	ret = outfile__finish(of, write_doc, r) ? 1 : 0;
	of = NULL;
	if (!ret)
		tlcap__report(r, env.output);
out:
	outfile__abort(of);
	tlcap__free(r);
	return ret;
}
