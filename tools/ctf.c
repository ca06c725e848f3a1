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
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "ctf/chrome.h"
#include "ctf/child.h"
#include "ctf/ctfpair.h"
#include "ctf/sink.h"
#include "ctf/summary.h"
#include "ctf/trace.h"
#include "core/cli.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/run.h"
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
	{ OPT_BY, "by", "FIELD", "summary: count the values of this payload (or context)\nfield",
	  CLI_STORE_ARG(struct env, by) },
	{ OPT_TOP, "top", "N", "summary: show N values of --by and N threads (default 10)" },
	{ OPT_JSON, "json", NULL, "summary: print one JSON object",
	  CLI_STORE_TRUE(struct env, json) },
	{ 'o', "output", "FILE", "chrome: write here ('-' for stdout)",
	  CLI_STORE_ARG(struct env, output) },
	CLI_OPTS_END("babeltrace2's warnings too")
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

/* cli_opt_fn: --top, the one option the table does not store. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;

	if (parse_u64(arg, 1, 1000000, &env->top))
		return usage_error("bad --top '%s' (a number from 1)", arg);
	return 0;
}

/* The action's options and TRACE_DIR (argv[0] the command, argv[1] the
 * first argument after the action). Return -1 to go on, or the exit
 * status. */
static int parse_action(int argc, char **argv, struct env *env)
{
	int r = cli__parse(&action_cli, argc, argv, parse_opt, env);

	if (r >= 0)
		return r;
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

/* The action, then its options and TRACE_DIR, into ENV:
 * -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	const char *sub;
	int r;

	*env = (struct env){ .top = 10 };
	/* no callback: only -v and -h may come before the action */
	r = cli__parse(&top_cli, argc, argv, NULL, NULL);

	if (r >= 0)
		return r;
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
	return parse_action(argc, argv, env);
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

/* The budgets of both actions: the trace is the traced app's work, its
 * names, threads and payloads hostile input. Threads and --by values are
 * told apart up to these (a thread costs about 100 bytes, a value at most
 * 300: some MiB), the events of the others counted; the pairing of begins
 * and ends has ctfpair.h's. */
#define CTF_MAX_THREADS 65536u
#define CTF_MAX_VALUES 262144u
/* How long the reading child has, once a signal came, to write what it
 * has before it is killed: it stops at its next message. */
#define CTF_GRACE_MS 500

/* What the reading child leaves, as it goes, where the parent reads it
 * (ctf/child.h): all a parent has of a child it killed. */
struct live {
	struct chrome_totals tot;
	uint64_t discarded_events_msgs, discarded_packets_msgs;
};

/* What the sink feeds: the counts, and the Chrome writer when there is one. */
struct run {
	const struct env *env;
	const struct ctf_traces *t;
	struct ctf_summary sum;
	struct chrome chrome;
	bool to_chrome;
	struct live *live;
	const char *cut;	/* the read ended early: "signal" */
};

static int on_message(void *data, const bt_message *msg)
{
	struct run *r = data;
	struct ctf_event e;
	int n;

	if (run__stop) {
		r->cut = "signal";
		return -ECANCELED;
	}
	n = ctf_summary__message(&r->sum, msg, &e);
	if (n < 0)
		return n;
	r->live->tot.events = r->sum.events;
	r->live->tot.discarded_events = r->sum.discarded_events;
	r->live->tot.discarded_packets = r->sum.discarded_packets;
	r->live->discarded_events_msgs = r->sum.discarded_events_msgs;
	r->live->discarded_packets_msgs = r->sum.discarded_packets_msgs;
	return n == 1 && r->to_chrome ? chrome__event(&r->chrome, &r->sum, &e) : 0;
}

/* Read the traces into R. 0 when read to the end or stopped by a signal
 * (R->cut), -errno (said) when not. */
static int read_traces(struct run *r)
{
	struct ctf_read rd = { .dirs = r->t->dirs, .n_dirs = r->t->n, .shown = r->env->dir,
			       .ordered = r->to_chrome, .fn = on_message, .data = r };
	int err = ctf_sink__read(&rd);

	if (err == -ECANCELED)
		err = 0;
	if (!err)
		ctf_summary__finish(&r->sum);
	return err;
}

/* What the budgets left out and a read cut short, one warning each. */
static void say_left_out(const struct run *r)
{
	const struct ctfpair_stats *p = &r->live->tot.pair;

	if (r->cut)
		p_warn("the trace was read in part: a signal came after %" PRIu64 " events; the "
		       "later ones are left out", r->sum.events);
	if (r->sum.other.count)
		p_warn("%" PRIu64 " events of threads past the first %u %s", r->sum.other.count,
		       CTF_MAX_THREADS, r->to_chrome ? "left out" : "counted together, not per thread");
	if (p->begins_dropped)
		p_warn("%" PRIu64 " begin events dropped, oldest first: more than %u open on one "
		       "thread with one name, or %u in all (their ends are instants)",
		       p->begins_dropped, CTFPAIR_MAX_DEPTH, CTFPAIR_MAX_OPEN);
	if (p->args_dropped)
		p_warn("%" PRIu64 " begin events had arguments over %u bytes: left out "
		       "(\"begin_too_long\")", p->args_dropped, CTFPAIR_MAX_ARGS);
	if (r->sum.values_left_out)
		p_warn("%" PRIu64 " events with --by values past the first %u distinct ones not "
		       "counted", r->sum.values_left_out, CTF_MAX_VALUES);
}

/* babeltrace2 2.0 aborts on an internal check on some damaged stream
 * packets and loops on others: the reading runs in a child (ctf/child.h),
 * its crash one line of error here, and no output; a signal ends it within
 * CTF_GRACE_MS, with what it read. Its messages reach stderr when it has
 * ended by itself (with -v, in every case). Return its exit status, -1
 * when it was killed after a signal, or 1 when it crashed or could not
 * run (said). */
static int run_child(struct run *r, struct ctf_child *c, ctf_child_fn fn)
{
	struct ctf_child_opts o = { .grace_ms = CTF_GRACE_MS, .max_mem = CTF_CHILD_MAX_MEM,
				    .keep_stderr = true };

	if (ctf_child__run(c, &o, fn, r))
		return 1;
	if ((c->end == CTF_CHILD_EXITED && WIFEXITED(c->status)) || log_verbose)
		fwrite(c->err ? c->err : "", 1, c->err_len, stderr);
	if (c->end != CTF_CHILD_EXITED)
		return -1;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	p_err("trace '%s' is damaged: babeltrace2 stopped on a failed internal check (%s) "
	      "(a copy cut short or a full disk?)", r->env->dir, strsignal(WTERMSIG(c->status)));
	return 1;
}

/* The child of run_chrome: the events into the file begun, not committed. */
static int chrome_child(void *arg, int out, void *result)
{
	struct run *r = arg;

	if (read_traces(r))
		return 1;
	if (chrome__close_slices(&r->chrome) || chrome__end(&r->chrome, r->cut)) {
		p_err("cannot write '%s': %s", r->env->output, strerror(errno));
		return 1;
	}
	say_left_out(r);
	return 0;
}

static int run_chrome(struct run *r)
{
	const struct env *env = r->env;
	struct outfile *of = outfile__open(env->output);
	struct ctfpair_limits lim;
	struct ctf_child c = { 0 };
	const struct chrome_totals *tot;
	int err, ret = 1;

	if (!of) {
		p_err("cannot write '%s': %s", env->output, outfile__strerror(errno));
		return 1;
	}
	if (ctf_child__init(&c, sizeof(*r->live)))
		goto fail;
	r->live = c.result;
	tot = &r->live->tot;
	r->to_chrome = true;
	r->sum.all_threads = true;
	ctfpair__default_limits(&lim);
	err = chrome__begin(&r->chrome, outfile__fp(of), &r->live->tot, &lim);
	if (err) {
		p_err("cannot write '%s': %s", env->output, strerror(-err));
		goto fail;
	}
	ret = run_child(r, &c, chrome_child);
	if (ret < 0) {
		/* killed: what it wrote, ended here with what it counted */
		err = chrome__salvage(&r->chrome);
		if (!err)
			err = chrome__end(&r->chrome, "killed");
		if (err) {
			p_err("the trace's reader did not stop within %d ms of the signal: killed, "
			      "and '%s' cannot be ended: %s", CTF_GRACE_MS, env->output,
			      err == -ESPIPE ? "not a file, it is cut short" : strerror(-err));
			ret = 1;
			goto fail;
		}
		p_warn("the trace's reader did not stop within %d ms of the signal: killed, the "
		       "whole events it wrote kept", CTF_GRACE_MS);
		ret = 0;
	}
	if (ret)
		goto fail;
	err = outfile__commit(of);
	of = NULL;
	if (err) {
		p_err("cannot write '%s': %s", env->output, outfile__strerror(err));
		ret = 1;
		goto fail;
	}
	if (tot->discarded_events || tot->discarded_packets)
		p_warn("%" PRIu64 " events and %" PRIu64 " packets were discarded "
		       "while tracing; the timeline has gaps",
		       tot->discarded_events, tot->discarded_packets);
	p_info("%" PRIu64 " events from %zu trace dir%s written to %s", tot->events, r->t->n,
	       r->t->n == 1 ? "" : "s", env->output);
fail:
	outfile__abort(of);
	ctf_child__free(&c);
	r->live = NULL;
	return ret;
}

static int summary_child(void *arg, int out, void *result)
{
	struct run *r = arg;
	const struct env *env = r->env;

	r->sum.by = env->by;
	r->sum.max_values = CTF_MAX_VALUES;
	if (read_traces(r))
		return 1;
	r->sum.cut = r->cut;
	if (ctf_summary__print(&r->sum, stdout, env->dir, r->t, env->json, (size_t)env->top)) {
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
	say_left_out(r);
	return 0;
}

static int run_summary(struct run *r)
{
	const struct env *env = r->env;
	struct ctf_child c = { 0 };
	int ret = 1;

	if (ctf_child__init(&c, sizeof(*r->live)))
		goto out;
	r->live = c.result;
	ret = run_child(r, &c, summary_child);
	if (ret < 0) {
		/* killed: the totals it left */
		struct ctf_summary s = {
			.cut = "killed", .events = r->live->tot.events,
			.discarded_events = r->live->tot.discarded_events,
			.discarded_packets = r->live->tot.discarded_packets,
			.discarded_events_msgs = r->live->discarded_events_msgs,
			.discarded_packets_msgs = r->live->discarded_packets_msgs,
		};

		ret = 0;
		if (ctf_summary__print(&s, stdout, env->dir, r->t, env->json, (size_t)env->top) ||
		    fflush(stdout) || ferror(stdout)) {
			p_err("cannot write the summary: %s", strerror(errno));
			ret = 1;
		}
		ctf_summary__free(&s);
		p_warn("the trace's reader did not stop within %d ms of the signal: killed, only "
		       "the count of events it read is known", CTF_GRACE_MS);
	}
out:
	ctf_child__free(&c);
	r->live = NULL;
	return ret;
}

int cmd_ctf(int argc, char **argv)
{
	struct env env;
	struct ctf_traces traces = {};
	struct run r = { .env = &env, .t = &traces };
	int ret = parse_args(argc, argv, &env);

	if (ret >= 0)
		return ret;
	run__catch_stop();
	/* secret: the app chooses the threads and values hashed */
	if (getrandom(&r.sum.seed, sizeof(r.sum.seed), GRND_NONBLOCK) != sizeof(r.sum.seed))
		r.sum.seed = now_ns() ^ ((uint64_t)getpid() << 32);
	r.sum.max_threads = CTF_MAX_THREADS;
	ret = 1;
	if (open_traces(&env, &traces) == 0)
		ret = env.mode == MODE_CHROME ? run_chrome(&r) : run_summary(&r);
	chrome__free(&r.chrome);
	ctf_summary__free(&r.sum);
	ctf_traces__free(&traces);
	return ret;
}
