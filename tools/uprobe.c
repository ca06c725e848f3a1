// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope uprobe: attach uprobes/uretprobes to functions of any binary in
 * the pod and print their arguments and return values, UTF-16 strings
 * (.NET System.String, char16_t*) included. The command line is read here;
 * the tracing engine is tools/lib/uprobe/session.c. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "dotnet/r2r.h"
#include "prof/writer.h"
#include "uprobe/probespec.h"
#include "uprobe/session.h"
#include "uprobe/uplink.h"
#include "uprobe/uptarget.h"

#define DEFAULT_MAX_STR	256
#define STR_(x)		#x
#define STR(x)		STR_(x)

#define DEFAULT_TOP	20
#define DEFAULT_MAX_KEYS	10240
#define DEFAULT_MAX_STACKS	8192

enum { OPT_JSON = 256, OPT_MAXSTR, OPT_LATENCY, OPT_BUFKB, OPT_SAVE, OPT_REPLAY, OPT_CHECK,
       OPT_STACKS, OPT_BY, OPT_HIST, OPT_TOP, OPT_MAXKEYS };

/* The command line. */
struct env {
	pid_t pid;
	uint64_t duration;
	uint64_t count;
	uint64_t max_str;
	uint64_t buf_kb;
	const char *output;
	const char *save;
	const char *replay;
	bool json;
	bool latency;
	bool check;
	bool stacks;
	const char *by;
	const char *hist;
	uint64_t top;
	uint64_t max_keys;
	char **probes;
	int nprobes;
};

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PID", "trace this process only (PIDs as the pod shows them)" },
	{ 'd', "duration", "S", "stop after S seconds (default: until Ctrl-C, or until\nPID exits)" },
	{ 'c', "count", "N", "stop after N events" },
	{ 'o', "output", "FILE", "write events to FILE as they come (tail -f works); with\n"
	  "--stacks, the stacks: .folded, .svg, .pb.gz or .json",
	  CLI_STORE_ARG(struct env, output) },
	{ OPT_JSON, "json", NULL, "one JSON object a line, with typed values",
	  CLI_STORE_TRUE(struct env, json) },
	{ OPT_STACKS, "stacks", NULL, "count hits per user stack (in BPF): the callers, as a\n"
	  "top table, or a flame graph, pprof... with -o", CLI_STORE_TRUE(struct env, stacks) },
	{ OPT_BY, "by", "EXPR", "count hits per value of EXPR (in BPF), e.g. arg2 or\n"
	  "'str16(arg1)' (strings: the first " STR(UP_BY_BYTES) " bytes)",
	  CLI_STORE_ARG(struct env, by) },
	{ OPT_HIST, "hist", "EXPR", "log2 histogram of EXPR (a number), e.g. arg3",
	  CLI_STORE_ARG(struct env, hist) },
	{ OPT_TOP, "top", "N", "rows of --by and --stacks tables (default " STR(DEFAULT_TOP) ")" },
	{ OPT_MAXKEYS, "max-keys", "N", "--by: distinct values counted (default "
	  STR(DEFAULT_MAX_KEYS) ")" },
	{ OPT_MAXSTR, "max-str", "N", "cut strings after N characters (default "
	  STR(DEFAULT_MAX_STR) ", max " STR(UP_MAX_UNITS) ")" },
	{ OPT_LATENCY, "latency", NULL, "pair entry and return per thread; log2 histograms",
	  CLI_STORE_TRUE(struct env, latency) },
	{ OPT_BUFKB, "buffer-kb", "N", "ring buffer size in KiB (power of 2; default 4096)" },
	{ OPT_SAVE, "save", "FILE", "also save raw events for --replay",
	  CLI_STORE_ARG(struct env, save) },
	{ OPT_REPLAY, "replay", "FILE", "decode and print saved events (no tracing)",
	  CLI_STORE_ARG(struct env, replay) },
	{ OPT_CHECK, "check", NULL, "probe a function of sidescope itself: do uprobes work\n"
	  "here, with these privileges? ('doctor uprobe' runs it)",
	  CLI_STORE_TRUE(struct env, check) },
	CLI_OPTS_END("debug messages and libbpf output")
};

static const struct cli cli = {
	.text =
	"sidescope uprobe: print arguments and return values of functions, UTF-16 too\n"
	"\n"
	"USAGE: sidescope uprobe [-p PID] [-d SECONDS] [-c COUNT] [-o FILE] [--json]\n"
	"                        [--max-str N] [--latency] [--hist EXPR] [--by EXPR]\n"
	"                        [--stacks] PROBE...\n"
	"\n"
	"PROBE:\n"
	"  p:BINARY:SYMBOL[+OFFSET] [(FILTER)] [\"FORMAT\"[, ARG...]]   on entry\n"
	"  r:BINARY:SYMBOL [(FILTER)] [\"FORMAT\"[, ARG...]]            on return\n"
	"  p:BINARY:0xFILEOFFSET ...                                  at a file offset\n"
	"  BINARY: an absolute path (with -p, in the target's mount namespace) or a\n"
	"  library name: 'c' is libc.so.6 (with -p, among the files PID has mapped).\n"
	"  .NET assemblies (.dll) take method names when this build has the\n"
	"  ReadyToRun resolver, else a file offset.\n"
	"  ARG: arg1..arg6, retval, numbers, +/- constants, *(u8|u16|u32|u64|s8|...\n"
	"  *)(EXPR); str(E[,MAX]) bytes, str16(E[,MAX]) NUL-terminated UTF-16,\n"
	"  str16(E,LEN) or str16n(E,LEN) LEN UTF-16 units, dotnet_string(E[,MAX]).\n"
	"  Go: reg(ax|bx|cx|dx|si|di|bp|sp|r8..r15|ip) registers (Go's arguments are\n"
	"  in ax, bx, cx, di, si, r8...), gostr(PTR,LEN[,MAX]) and gostr(HDR) strings;\n"
	"  r: on Go code probes each RET instruction (a uretprobe would kill it).\n"
	"  FILTER: == != < <= > >= && || ! over ARG expressions (run in BPF).\n"
	"  FORMAT: %d %i %u %x %lx %ld %p %c %s %%, widths like %-10s.\n"
	"\n",
	.opts = opts,
	.tail =
	"\n"
	"A probe stays on the file it was attached to. If BINARY is replaced on disk\n"
	"(renamed over, deleted) tracing goes on with a warning: processes started\n"
	"from the new file are not traced. If BINARY is modified in place, tracing\n"
	"stops with a warning, since the probes would no longer match its code.\n"
	"SIGINT and SIGTERM end the trace at any moment: the output holds every\n"
	"event read, the exit status is 0 (128+N only for a signal in the first\n"
	"milliseconds, before sidescope has set up, with no output written).\n"
	"\n"
	"EXAMPLES:\n"
	"  sidescope uprobe -p 42 'p:c:open \"%s\", str(arg1)'     # files PID 42 opens\n"
	"  sidescope uprobe -p 42 'r:c:malloc (retval == 0) \"NULL\"'  # failed mallocs\n"
	"  sidescope uprobe -p 42 'p:/app/app:greet \"%s\", str16(arg1)' # char16_t*\n"
	"  sidescope uprobe -p 42 --json 'p:/app/App.dll:App.Echo \"%s\",\n"
	"      dotnet_string(arg1)'                    # a .NET string argument\n"
	"  sidescope uprobe -p 42 --latency -d 10 p:z:deflate  # deflate() durations\n"
	"  sidescope uprobe -p 42 --stacks -d 10 -o malloc.svg p:c:malloc  # who mallocs\n"
	"  sidescope uprobe -p 42 --by 'str(arg1)' -d 10 p:c:open   # opens per file name\n"
	"  sidescope uprobe -p 42 --hist arg1 -d 10 p:c:malloc      # malloc sizes\n"
	"\n"
	"--latency, --hist, --by and --stacks aggregate in the kernel and report at\n"
	"the end (or at Ctrl-C); a probe prints a line per call only when it has a\n"
	"FORMAT.\n"
	"\n"
	"PRIVILEGES: CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE where the kernel has\n"
	"uprobe_multi links (6.6 and newer); older kernels need CAP_SYS_ADMIN too.\n"
	"SIDESCOPE_UPROBE_LINK=perf forces uprobe perf events.\n",
	.col = 21,
};

/* cli_opt_fn: the options with a value to check. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;
	long l;
	uint64_t v;

	switch (key) {
	case 'p':
		if (parse_long(arg, 1, INT_MAX, &l))
			return usage_error("invalid PID '%s'", arg);
		env->pid = (pid_t)l;
		break;
	case 'd':
		if (parse_u64(arg, 0, 365ULL * 86400, &env->duration))
			return usage_error("invalid duration '%s' (seconds; 0: until Ctrl-C)", arg);
		break;
	case 'c':
		if (parse_u64(arg, 1, UINT64_MAX, &env->count))
			return usage_error("invalid count '%s'", arg);
		break;
	case OPT_MAXSTR:
		if (parse_u64(arg, 1, UP_MAX_UNITS, &env->max_str))
			return usage_error("invalid --max-str '%s' (1 to %d)", arg, UP_MAX_UNITS);
		break;
	case OPT_BUFKB:
		if (parse_u64(arg, 4, 1 << 20, &v) || (v & (v - 1)))
			return usage_error("invalid --buffer-kb '%s' (a power of 2, 4 to 1048576)",
					   arg);
		env->buf_kb = v;
		break;
	case OPT_TOP:
		if (parse_u64(arg, 1, 1000000, &env->top))
			return usage_error("invalid --top '%s' (1 to 1000000)", arg);
		break;
	case OPT_MAXKEYS:
		if (parse_u64(arg, 1, 1 << 22, &env->max_keys))
			return usage_error("invalid --max-keys '%s' (1 to %d)", arg, 1 << 22);
		break;
	}
	return 0;
}

/* The options and the PROBEs into ENV: -1 to go on, else
 * the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){ .output = "-", .max_str = DEFAULT_MAX_STR, .buf_kb = 4096,
			     .top = DEFAULT_TOP, .max_keys = DEFAULT_MAX_KEYS };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	env->probes = argv + optind;
	env->nprobes = argc - optind;
	if (env->replay) {
		if (env->nprobes)
			return usage_error("--replay takes its probes from the capture, not from arguments");
		return -1;
	}
	if (env->check) {
		if (env->nprobes)
			return usage_error("--check takes no probes: it probes sidescope itself");
		return -1;
	}
	if (!env->nprobes)
		return usage_error("no probe given (e.g. 'p:c:malloc \"%%d\", arg1')");
	if (env->save && (env->stacks || env->by || env->hist))
		return usage_error("--save keeps events for --replay, not the counts of %s",
				   env->stacks ? "--stacks" : env->by ? "--by" : "--hist");
	if (env->stacks && strcmp(env->output, "-") && !prof__writer_by_path(env->output)) {
		char list[128];

		return usage_error("with --stacks, -o names the stacks' file: end it in %s",
				   prof__writer_list(list, sizeof(list), true));
	}
	if (env->nprobes > UP_MAX_PROBES)
		return usage_error("too many probes (at most %d)", UP_MAX_PROBES);
	return -1;
}

/* --replay: the saved events onto the output. */
static int replay(const struct env *env)
{
	struct outfile *of = outfile__open_or_say(env->output);

	if (!of)
		return 1;
	if (session__replay(env->replay, outfile__fp(of), env->json)) {
		outfile__abort(of);
		return 1;
	}
	return outfile__commit_or_say(of) ? 1 : 0;
}

/* --check probes this function of our own executable. */
__attribute__((noinline)) void uprobe__check_point(void)
{
	__asm__ volatile("" ::: "memory");
}

/* "p:EXE:0xOFFSET" for uprobe__check_point, from our own mappings, so that
 * it works on a stripped binary too. */
static int check_spec(char *buf, size_t size)
{
	uint64_t addr = (uint64_t)(uintptr_t)&uprobe__check_point;
	struct proc_maps *m = proc_maps__load(getpid());
	const struct proc_map *map;
	int r = -ENOENT;

	if (!m)
		return -errno;
	map = proc_maps__find(m, addr);
	if (map && map->path[0] == '/') {
		snprintf(buf, size, "p:%s:0x%llx", map->path,
			 (unsigned long long)(addr - map->start + map->offset));
		r = 0;
	}
	proc_maps__free(m);
	return r;
}

/* --by or --hist TEXT (NULL: none) compiled into probe PS. 0, or -1 when
 * said. */
static int add_value(struct probe_spec *ps, enum ps_role role, const char *opt,
		     const char *text)
{
	struct err e = { 0 };
	int col;

	if (!text || probespec__add_value(ps, role, text, &e) == 0)
		return 0;
	col = e.col > 0 ? e.col : 1;
	p_err("bad %s at column %d: %s (for %s)", opt, col, e.msg, ps->text);
	fprintf(stderr, "  %s\n  %*s^\n", text, col - 1, "");
	return -1;
}

/* Every probe parsed and finished before the system is touched. Return 0,
 * 2 (a bad probe: usage) or 1. */
static int parse_probes(const struct env *env, struct probe_spec **specs)
{
	bool aggregate = env->latency || env->stacks || env->by || env->hist;
	int i, r;

	for (i = 0; i < env->nprobes; i++) {
		struct probe_spec *ps;

		r = probespec__parse_say(env->probes[i], (unsigned int)env->max_str, &specs[i]);
		if (r)
			return r;
		ps = specs[i];
		if (add_value(ps, PS_ROLE_BY, "--by", env->by) ||
		    add_value(ps, PS_ROLE_HIST, "--hist", env->hist))
			return 2;
		ps->recipe.latency = env->latency;
		ps->recipe.stacks = env->stacks;
		/* aggregations report at the end: a line per call only for a
		 * probe with a format (-c and --save count events) */
		ps->recipe.no_events = aggregate && !ps->has_format && !env->count && !env->save;
	}
	return 0;
}


/* The session over the parsed probes, with its save file: NULL when it
 * failed (said). */
static struct session *open_session(const struct env *env, struct probe_spec **specs,
				    bool quiet, FILE *out)
{
	struct session_opts o = {
		.pid = env->pid, .duration_s = env->duration, .count_limit = env->count,
		.max_str = (unsigned int)env->max_str, .buf_kb = (unsigned int)env->buf_kb,
		.json = env->json, .latency = env->latency, .quiet = quiet,
		.stacks = env->stacks, .top = (size_t)env->top,
		.max_keys = (unsigned int)env->max_keys, .max_stacks = DEFAULT_MAX_STACKS,
		/* ReadyToRun code in the stacks named as the profiler names it */
		.pe = getenv("SIDESCOPE_NO_R2R") ? NULL : &r2r__pe_resolver,
	};
	struct session *s = session__new(&o, specs, env->nprobes, out);

	if (!s) {
		p_err("out of memory");
		return NULL;
	}
	if (env->save && session__save(s, env->save)) {
		session__free(s);
		return NULL;
	}
	return s;
}

/* --check: fire the probe in this process and wait for its event. */
static int run_check(struct session *s)
{
	uprobe__check_point();
	if (!session__wait_first(s)) {
		p_err("the check probe attached but no event arrived");
		return 1;
	}
	printf("uprobes work: probe attached through %s, event received\n",
	       uplink__multi_supported() ? "a uprobe_multi link" : "a perf event");
	return 0;
}

static int run(const struct env *env, struct session *s)
{
	int n = env->nprobes;

	if (env->pid > 0)
		p_info("tracing %d probe%s in PID %d; Ctrl-C to end", n, n == 1 ? "" : "s",
		       (int)env->pid);
	else
		p_info("tracing %d probe%s in every process of this PID namespace; Ctrl-C to end",
		       n, n == 1 ? "" : "s");
	if (session__run(s) || session__finish(s))
		return 1;
	return 0;
}

/* --stacks: the hits per stack into OF (-o; or the terminal's table, or
 * JSON). 0 or 1 (said). */
static int write_stacks(const struct env *env, struct session *s, struct outfile *of)
{
	const struct prof *p = session__profile(s);
	const struct prof_writer *w = prof__writer_by_path(env->output);
	struct prof_write_opts wo = { .title = "uprobe hits", .top_rows = (size_t)env->top };
	int err;

	if (!strcmp(env->output, "-"))
		w = prof__writer_by_name(env->json ? "json" : "top");
	if (!p || !w)
		return 1;
	if (!prof__total(p))
		p_warn("no hits: no stack to show");
	err = w->write(p, outfile__fp(of), &wo);
	if (err) {
		p_err("cannot write %s: %s", env->output, strerror(-err));
		return 1;
	}
	return 0;
}

/* Whether lines per call are printed: not when every probe aggregates
 * without a format of its own. */
static bool prints_calls(const struct env *env, struct probe_spec *const *specs)
{
	int i;

	if (!(env->latency || env->stacks || env->by || env->hist))
		return true;
	for (i = 0; i < env->nprobes; i++)
		if (specs[i]->has_format)
			return true;
	return false;
}

/* Trace the probes of ENV: parse, check the target and the output, open,
 * load, attach, run, clean up. Return the exit status. */
static int trace(const struct env *env)
{
	struct probe_spec *specs[UP_MAX_PROBES] = { 0 };
	struct outfile *of = NULL, *events = NULL;
	struct session *s = NULL;
	struct err perr;
	bool quiet;
	int err, i;

	err = parse_probes(env, specs);
	if (err)
		goto cleanup;
	quiet = !prints_calls(env, specs);
	err = 1;
	run__libbpf_quiet_unless_verbose();
	if (env->pid > 0 && proc__check_target(env->pid, &perr)) {
		p_err("%s", perr.msg);
		goto cleanup;
	}
	/* every output is checked before anything is attached */
	of = outfile__open_or_say(env->output);
	if (!of)
		goto cleanup;
	/* with --stacks, -o is the stacks' file and lines go to stdout */
	events = env->stacks && strcmp(env->output, "-") ? outfile__open("-") : NULL;
	s = open_session(env, specs, quiet, outfile__fp(events ? events : of));
	memset(specs, 0, sizeof(specs));	/* the session's now */
	if (!s || session__resolve(s) || session__load(s) || session__attach(s))
		goto cleanup;
	/* attached: the file takes the old one's place and grows line by line */
	if (!env->stacks && !env->check && outfile__publish(of)) {
		p_err("cannot write %s: %s", env->output, outfile__strerror(errno));
		goto cleanup;
	}
	err = env->check ? run_check(s) : run(env, s);
	if (!err && env->stacks)
		err = write_stacks(env, s, of);
	if (err || env->check)
		goto cleanup;
	err = outfile__commit_or_say(of) ? 1 : 0;
	of = NULL;
cleanup:
	if (events)
		outfile__commit(events);
	outfile__abort(of);
	session__free(s);
	for (i = 0; i < UP_MAX_PROBES; i++)
		probespec__free(specs[i]);
	return err;
}

int cmd_uprobe(int argc, char **argv)
{
	struct env env;
	char check_buf[PATH_MAX + 64];
	char *check_probes[] = { check_buf };
	int r;

	/* first of all: a signal at any later moment ends the trace cleanly */
	run__catch_stop();
	r = parse_args(argc, argv, &env);
	if (r >= 0)
		return r;
	if (env.replay)
		return replay(&env);
	if (env.check) {
		r = check_spec(check_buf, sizeof(check_buf));
		if (r) {
			p_err("cannot find this executable's own code: %s", strerror(-r));
			return 1;
		}
		env.probes = check_probes;
		env.nprobes = 1;
		env.pid = getpid();
		env.output = "/dev/null";
	}
	/* .NET method names in PE images resolve through the R2R reader */
	uptarget__set_pe_resolver(r2r__uprobe_resolve);
	return trace(&env);
}
