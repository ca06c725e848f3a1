// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope ctf: read the CTF traces lttng-capture leaves, through the
 * libbabeltrace2 graph API (ctf/sink.h), and turn them into a terminal
 * summary (ctf/summary.h) or a Chrome trace event JSON file for Perfetto
 * (ctf/chrome.h). */
#include "ctf/bt2.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "ctf/chrome.h"
#include "ctf/sink.h"
#include "ctf/summary.h"
#include "ctf/trace.h"
#include "core/cli.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/util.h"

enum mode { MODE_SUMMARY, MODE_CHROME };

struct env {
	enum mode mode;
	const char *dir;	/* TRACE_DIR */
	const char *output;	/* chrome: -o FILE */
	const char *by;		/* summary: --by FIELD */
	uint64_t top;		/* summary: --top N */
	bool json;		/* summary: --json */
};

enum { OPT_JSON = 256, OPT_BY, OPT_TOP };

static const struct cli_opt opts[] = {
	{ OPT_BY, "by", "FIELD", "summary: count the values of this payload (or context)\nfield" },
	{ OPT_TOP, "top", "N", "summary: show N values of --by and N threads (default 10)" },
	{ OPT_JSON, "json", NULL, "summary: print one JSON object" },
	{ 'o', "output", "FILE", "chrome: write here ('-' for stdout)" },
	{ 'v', "verbose", NULL, "babeltrace2's warnings too" },
	{ 'h', "help", NULL, "print this help" },
	{}
};

#define CTF_HELP_TEXT \
"sidescope ctf: summarize LTTng CTF traces or convert them for Perfetto\n" \
"\n" \
"USAGE: sidescope ctf summary TRACE_DIR [--by FIELD] [--top N] [--json]\n" \
"       sidescope ctf chrome TRACE_DIR -o FILE\n" \
"\n" \
"TRACE_DIR is searched for CTF traces (directories holding a 'metadata'\n" \
"file), however deep: the output directory of lttng-capture, a session\n" \
"directory, a snapshot or a rotation chunk all work. All traces found are\n" \
"read together.\n" \
"\n" \
"summary: discarded events and packets first, then events per name (count,\n" \
"first and last time relative to the first event, rate), per process and\n" \
"per thread (from the vpid, vtid and procname contexts), and the most\n" \
"frequent values of one field.\n" \
"chrome: Chrome trace event JSON (Perfetto, chrome://tracing): one track per\n" \
"thread, each event an instant with its payload as args; events whose names\n" \
"end in Start/Stop or Begin/End (also GCStart_V2/GCEnd_V1, request_start/\n" \
"request_stop) become duration slices.\n" \
"\n"

#define CTF_HELP_TAIL \
"\n" \
"EXAMPLES:\n" \
"  sidescope ctf summary /out/lttng-20260101-120000   # what happened\n" \
"  sidescope ctf summary /out/trace --by path          # busiest paths\n" \
"  sidescope ctf summary /out/trace --json | jq .events\n" \
"  sidescope ctf chrome /out/trace -o trace.json       # open in Perfetto\n"

/* Before the action only -v and -h; after it, every option. */
static const struct cli top_cli = { .text = CTF_HELP_TEXT, .opts = opts, .tail = CTF_HELP_TAIL,
				    .col = 20, .gap = 1, .in_order = 1 };
static const struct cli action_cli = { .text = CTF_HELP_TEXT, .opts = opts, .tail = CTF_HELP_TAIL,
				       .col = 20, .gap = 1 };

/* The action's options and TRACE_DIR (argv[0] the command, argv[1] the
 * first argument after the action). Return -1 to go on, or the exit
 * status. */
static int parse_action(struct env *env, int argc, char **argv)
{
	int c;

	while ((c = cli__getopt(&action_cli, argc, argv)) >= 0) {
		switch (c) {
		case OPT_BY: env->by = optarg; break;
		case OPT_TOP:
			if (parse_u64(optarg, 1, 1000000, &env->top))
				return usage_error("bad --top '%s' (a number from 1)", optarg);
			break;
		case OPT_JSON: env->json = true; break;
		case 'o': env->output = optarg; break;
		default: return usage_hint();
		}
	}
	if (c != CLI_END)
		return cli__status(c);
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "missing TRACE_DIR" : "too many arguments");
	env->dir = argv[optind];
	if (env->mode == MODE_CHROME && !env->output)
		return usage_error("chrome needs -o FILE");
	if (env->mode == MODE_CHROME && (env->json || env->by))
		return usage_error("--json and --by are summary options");
	if (env->mode == MODE_SUMMARY && env->output)
		return usage_error("-o is a chrome option; summary prints to stdout");
	return -1;
}

/* Return -1 to go on, or the exit status. */
static int parse_args(struct env *env, int argc, char **argv)
{
	const char *sub;
	int c;

	c = cli__getopt(&top_cli, argc, argv);
	if (c >= 0)
		return usage_hint();	/* only -v and -h before the action */
	if (c != CLI_END)
		return cli__status(c);
	if (optind >= argc)
		return usage_error("missing subcommand: summary or chrome");
	sub = argv[optind];
	if (strcmp(sub, "summary") == 0)
		env->mode = MODE_SUMMARY;
	else if (strcmp(sub, "chrome") == 0)
		env->mode = MODE_CHROME;
	else
		return usage_error("unknown subcommand '%s' (summary or chrome)", sub);
	/* drop the action and parse again from scratch (optind = 0 resets
	 * GNU getopt), so options may come before or after TRACE_DIR */
	memmove(&argv[1], &argv[optind + 1], (size_t)(argc - optind) * sizeof(*argv));
	argc -= optind;
	optind = 0;
	return parse_action(env, argc, argv);
}

/* S escaped into BUF for a message: trace directories are named after the
 * application's process (ust/pid/PROCNAME-PID-DATE). */
static const char *shown_str(char *buf, size_t size, const char *s)
{
	escape__str(buf, size, s, strlen(s), 0, 0);
	return buf;
}

/* Find the traces under env->dir and check their metadata. Return 0, or
 * -1 with the error printed. */
static int open_traces(const struct env *env, struct ctf_traces *t)
{
	struct err why;
	char shown[ESCAPE_MAX(PATH_MAX + 128) + 1];
	int err = ctf_traces__find(t, env->dir);
	size_t i;

	if (err < 0) {
		p_err("cannot read trace directory '%s': %s", env->dir, strerror(-err));
		return -1;
	}
	if (err == 0) {
		p_err("no CTF trace under '%s' (no 'metadata' file; give the output "
		      "directory of lttng-capture)", env->dir);
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		p_debug("trace: %s", shown_str(shown, sizeof(shown), t->dirs[i]));
		err = ctf_traces__check_metadata(t->dirs[i], &why);
		if (err == -EBADMSG) {
			p_err("trace '%s' is damaged: %s (a copy cut short or a full disk?)",
			      env->dir, shown_str(shown, sizeof(shown), why.msg));
			return -1;
		}
		if (err) {
			p_err("cannot read '%s/metadata': %s", shown_str(shown, sizeof(shown), t->dirs[i]),
			      strerror(-err));
			return -1;
		}
	}
	return 0;
}

/* What the sink feeds: the counts, and the Chrome writer when there is one. */
struct run {
	struct ctf_summary sum;
	struct chrome chrome;
	bool to_chrome;
};

static int on_message(void *data, const bt_message *msg)
{
	struct run *r = data;
	struct ctf_event e;
	int n = ctf_summary__message(&r->sum, msg, &e);

	if (n < 0)
		return n;
	return n == 1 && r->to_chrome ? chrome__event(&r->chrome, &e) : 0;
}

static int read_traces(const struct env *env, const struct ctf_traces *t, struct run *r)
{
	struct ctf_read rd = { .dirs = t->dirs, .n_dirs = t->n, .shown = env->dir,
			       .ordered = r->to_chrome, .fn = on_message, .data = r };
	int err = ctf_sink__read(&rd);

	if (!err)
		ctf_summary__finish(&r->sum);
	return err;
}

/* What the reading child tells the parent at its end. */
struct counts {
	uint64_t events, discarded_events, discarded_packets;
};

/* babeltrace2 2.0 aborts on an internal check on some damaged stream
 * packets. So the reading runs in a child: its crash becomes one line of
 * error here, and no output. FN(ENV, T, R, OF, COUNTS) runs in the child;
 * its messages reach stderr when it has ended normally (with -v, also after
 * a crash). Return FN's exit status, or 1. */
typedef int (*child_fn)(const struct env *env, const struct ctf_traces *t, struct run *r,
			struct outfile *of, struct counts *c);

static int run_in_child(const struct env *env, const struct ctf_traces *t, struct run *r,
			struct outfile *of, struct counts *c, child_fn fn)
{
	int err_pipe[2], cnt_pipe[2], status = 0, ret;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(err_pipe) || pipe(cnt_pipe)) {
		p_err("cannot create a pipe: %s", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		p_err("cannot fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(err_pipe[0]);
		close(cnt_pipe[0]);
		dup2(err_pipe[1], 2);
		close(err_pipe[1]);
		ret = fn(env, t, r, of, c);
		fflush(stdout);
		fflush(stderr);
		if (write(cnt_pipe[1], c, sizeof(*c)) != (ssize_t)sizeof(*c))
			ret = 1;
		_exit(ret);
	}
	close(err_pipe[1]);
	close(cnt_pipe[1]);
	for (;;) {
		if (len == cap) {
			char *nb = cap < (1u << 20) ? realloc(buf, cap ? 2 * cap : 4096) : NULL;

			if (nb) {
				buf = nb;
				cap = cap ? 2 * cap : 4096;
			}
		}
		if (len < cap) {
			n = read(err_pipe[0], buf + len, cap - len);
		} else {
			char sink[4096];	/* past 1 MiB: read and dropped */

			n = read(err_pipe[0], sink, sizeof(sink));
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len < cap)
			len += (size_t)n;
	}
	close(err_pipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (read(cnt_pipe[0], c, sizeof(*c)) != (ssize_t)sizeof(*c))
		memset(c, 0, sizeof(*c));
	close(cnt_pipe[0]);
	if (WIFEXITED(status) || log_verbose)
		fwrite(buf ? buf : "", 1, len, stderr);
	free(buf);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	p_err("trace '%s' is damaged: babeltrace2 stopped on a failed internal check (%s) "
	      "(a copy cut short or a full disk?)", env->dir, strsignal(WTERMSIG(status)));
	return 1;
}

/* The child of run_chrome: the events into OF, not committed. */
static int chrome_child(const struct env *env, const struct ctf_traces *t, struct run *r,
			struct outfile *of, struct counts *c)
{
	r->to_chrome = true;
	r->sum.all_threads = true;
	chrome__begin(&r->chrome, outfile__fp(of));
	if (read_traces(env, t, r))
		return 1;
	chrome__finish(&r->chrome, &r->sum);
	if (fflush(outfile__fp(of)) || ferror(outfile__fp(of))) {
		p_err("cannot write '%s': %s", env->output, strerror(errno));
		return 1;
	}
	*c = (struct counts){ r->sum.events, r->sum.discarded_events, r->sum.discarded_packets };
	return 0;
}

static int run_chrome(const struct env *env, const struct ctf_traces *t, struct run *r)
{
	struct outfile *of = outfile__open(env->output);
	struct counts c = { 0 };
	int err;

	if (!of) {
		p_err("cannot write '%s': %s", env->output, outfile__strerror(errno));
		return 1;
	}
	if (run_in_child(env, t, r, of, &c, chrome_child)) {
		outfile__abort(of);
		return 1;
	}
	r->sum.events = c.events;
	r->sum.discarded_events = c.discarded_events;
	r->sum.discarded_packets = c.discarded_packets;
	err = outfile__commit(of);
	if (err) {
		p_err("cannot write '%s': %s", env->output, outfile__strerror(err));
		return 1;
	}
	if (r->sum.discarded_events || r->sum.discarded_packets)
		p_warn("%" PRIu64 " events and %" PRIu64 " packets were discarded "
		       "while tracing; the timeline has gaps",
		       r->sum.discarded_events, r->sum.discarded_packets);
	p_info("%" PRIu64 " events from %zu trace dir%s written to %s", r->sum.events, t->n,
	       t->n == 1 ? "" : "s", env->output);
	return 0;
}

static int summary_child(const struct env *env, const struct ctf_traces *t, struct run *r,
			 struct outfile *of, struct counts *c)
{
	r->sum.by = env->by;
	if (read_traces(env, t, r))
		return 1;
	if (ctf_summary__print(&r->sum, stdout, env->dir, t, env->json, (size_t)env->top)) {
		p_err("out of memory");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		p_err("cannot write the summary: %s", strerror(errno));
		return 1;
	}
	if (r->sum.discarded_events || r->sum.discarded_packets)
		p_warn("%" PRIu64 " events and %" PRIu64 " packets were discarded while tracing",
		       r->sum.discarded_events, r->sum.discarded_packets);
	return 0;
}

static int run_summary(const struct env *env, const struct ctf_traces *t, struct run *r)
{
	struct counts c = { 0 };

	return run_in_child(env, t, r, NULL, &c, summary_child);
}

int cmd_ctf(int argc, char **argv)
{
	struct env env = { .top = 10 };
	struct ctf_traces traces = {};
	struct run r = {};
	int ret = parse_args(&env, argc, argv);

	if (ret >= 0)
		return ret;
	ret = 1;
	if (open_traces(&env, &traces) == 0)
		ret = env.mode == MODE_CHROME ? run_chrome(&env, &traces, &r)
					      : run_summary(&env, &traces, &r);
	chrome__free(&r.chrome);
	ctf_summary__free(&r.sum);
	ctf_traces__free(&traces);
	return ret;
}
