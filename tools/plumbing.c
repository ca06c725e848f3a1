// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope plumbing: what the C already knows, asked by the wrapper
 * scripts (scripts/lib/common.sh) instead of restating it in sh: a size,
 * a JSON string, text made safe for a terminal, whether a PID can be a
 * target. Each answer is made for a shell to read; the words of a message
 * stay the script's. Not listed by 'sidescope help' (docs/cli.md has it). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/appfile.h"
#include "core/cli.h"
#include "core/escape.h"
#include "core/json.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/util.h"

/* The most 'json' reads: a script's message or path, with room to spare. */
#define PLUMBING_JSON_MAX (64u << 20)

static const struct cli_opt opts[] = {
	{ 'v', "verbose", NULL, "debug messages" },
	{ 'h', "help", NULL, "print this help" },
	{}
};

#define PLUMBING_HELP_TEXT \
"sidescope plumbing: sidescope's own rules, asked by the wrapper scripts\n" \
"\n" \
"USAGE: sidescope plumbing size SIZE\n" \
"       sidescope plumbing json < TEXT\n" \
"       sidescope plumbing tty-safe < TEXT\n" \
"       sidescope plumbing target PID\n" \
"\n" \
"What scripts/lib/common.sh asks instead of restating a rule in sh. The\n" \
"answers are for a shell to read; a script words its own messages.\n" \
"\n" \
"size      SIZE in bytes, in the grammar of every size sidescope takes: digits,\n" \
"          then nothing or k, M or G (either case; powers of 1024), that\n" \
"          optionally followed by 'i', then by 'B' (512, 64k, 4M, 2Gi, 16KiB),\n" \
"          at most 2^63-1. Exit 1, nothing printed, when SIZE is no such size.\n" \
"json      stdin, all of it, as one JSON string (quotes included) as\n" \
"          sidescope's JSON writes strings: control characters escaped, C1\n" \
"          too, each byte of invalid UTF-8 as U+FFFD.\n" \
"tty-safe  stdin to stdout line by line, escaped as sidescope escapes names\n" \
"          the app chose (C0, DEL, C1 and invalid UTF-8), backslashes kept,\n" \
"          NUL bytes dropped, each line ended by a newline.\n" \
"target    whether PID can be the target of a capture: prints 'ok' (exit 0)\n" \
"          or what it is instead (exit 1): 'none' (no such process in this\n" \
"          PID namespace, or no PID at all), 'thread TGID', 'kernel-thread'\n" \
"          or 'exited'.\n" \
"\n"

#define PLUMBING_HELP_TAIL \
"\n" \
"EXAMPLES:\n" \
"  sidescope plumbing size 64M                   # 67108864\n" \
"  printf '%s' \"$msg\" | sidescope plumbing json  # \"...\", escaped\n" \
"  lttng list -u | sidescope plumbing tty-safe   # app names, escaped\n" \
"  sidescope plumbing target 42                  # ok, or 'thread 7', ...\n"

/* Before the action only -v and -h; after it, those and "--". */
static const struct cli top_cli = { .text = PLUMBING_HELP_TEXT, .opts = opts,
				    .tail = PLUMBING_HELP_TAIL, .col = 20, .in_order = 1 };
static const struct cli action_cli = { .text = PLUMBING_HELP_TEXT, .opts = opts,
				       .tail = PLUMBING_HELP_TAIL, .col = 20 };

enum action { ACT_SIZE, ACT_JSON, ACT_TTY_SAFE, ACT_TARGET };

static const struct {
	const char *name;
	enum action act;
	bool operand;	/* takes one operand; else reads stdin */
} actions[] = {
	{ "size", ACT_SIZE, true },
	{ "json", ACT_JSON, false },
	{ "tty-safe", ACT_TTY_SAFE, false },
	{ "target", ACT_TARGET, true },
};

/* The command line. */
struct env {
	enum action act;
	const char *arg;	/* the operand of size and target */
};

/* Return -1 to go on, or the exit status. */
static int parse_args(struct env *env, int argc, char **argv)
{
	const char *name;
	size_t i;
	int c;

	c = cli__getopt(&top_cli, argc, argv);
	if (c >= 0)
		return usage_hint();
	if (c != CLI_END)
		return cli__status(c);
	if (optind >= argc)
		return usage_error("missing action: size, json, tty-safe or target");
	name = argv[optind];
	for (i = 0; i < ARRAY_SIZE(actions) && strcmp(actions[i].name, name); i++)
		;
	if (i == ARRAY_SIZE(actions))
		return usage_error("unknown action '%s' (size, json, tty-safe or target)", name);
	env->act = actions[i].act;
	/* drop the action and parse again (optind = 0 resets GNU getopt): a
	 * SIZE after "--" may start with a dash */
	memmove(&argv[1], &argv[optind + 1], (size_t)(argc - optind) * sizeof(*argv));
	argc -= optind;
	optind = 0;
	c = cli__getopt(&action_cli, argc, argv);
	if (c >= 0)
		return usage_hint();
	if (c != CLI_END)
		return cli__status(c);
	if (!actions[i].operand) {
		if (optind < argc)
			return usage_error("%s reads stdin; unexpected argument '%s'", name,
					   argv[optind]);
		return -1;
	}
	if (optind >= argc)
		return usage_error("%s needs its %s", name, env->act == ACT_SIZE ? "SIZE" : "PID");
	if (optind + 1 < argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	env->arg = argv[optind];
	return -1;
}

/* The bytes of SIZE on stdout; 1, silently, when it is no size. */
static int do_size(const char *s)
{
	uint64_t v;

	if (parse_size(s, 0, INT64_MAX, &v))
		return 1;
	printf("%" PRIu64 "\n", v);
	return 0;
}

static int do_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = appfile__read(STDIN_FILENO, PLUMBING_JSON_MAX, false, &buf, &len, NULL);
	if (err) {
		p_err("cannot read stdin: %s", err == -EFBIG ? "more than 64 MiB" : strerror(-err));
		return 1;
	}
	json_write_stringn(stdout, buf, len);
	putchar('\n');
	free(buf);
	return 0;
}

static int do_tty_safe(void)
{
	char *line = NULL;
	size_t cap = 0, n, i, k;
	ssize_t got;
	int err = 0;

	while ((got = getline(&line, &cap, stdin)) > 0) {
		bool ended;

		n = (size_t)got;
		ended = line[n - 1] == '\n';
		n -= ended;
		/* a NUL says nothing on a terminal: gone, not shown, as if it
		 * had never been there (NULs alone after the last newline are
		 * no line) */
		for (i = k = 0; i < n; i++)
			if (line[i])
				line[k++] = line[i];
		if (!ended && k == 0)
			break;
		err = escape__fwrite(stdout, line, k, ESCAPE_KEEP_BACKSLASH);
		if (err || putchar('\n') == EOF)
			break;
	}
	if (ferror(stdin)) {
		p_err("cannot read stdin: %s", strerror(errno));
		err = -EIO;
	}
	free(line);
	return err ? 1 : 0;
}

/* PID as the script has it, as /proc names a process: decimal digits
 * without a leading zero, up to INT_MAX. 0 when it names none (a name,
 * "007", "+7", "").*/
static pid_t pid_of(const char *s)
{
	long v;

	if (s[0] < '1' || s[0] > '9' || strspn(s, "0123456789") != strlen(s) ||
	    parse_long(s, 1, INT_MAX, &v))
		return 0;
	return (pid_t)v;
}

static int do_target(const char *s)
{
	struct proc_status st;
	pid_t pid = pid_of(s);

	switch (pid ? proc__target_kind(pid, &st) : PROC_TARGET_NONE) {
	case PROC_TARGET_OK:
		puts("ok");
		return 0;
	case PROC_TARGET_THREAD:
		printf("thread %d\n", (int)st.tgid);
		break;
	case PROC_TARGET_KTHREAD:
		puts("kernel-thread");
		break;
	case PROC_TARGET_EXITED:
		puts("exited");
		break;
	case PROC_TARGET_NONE:
		puts("none");
		break;
	}
	return 1;
}

int cmd_plumbing(int argc, char **argv)
{
	struct env env = { 0 };
	int r;

	r = parse_args(&env, argc, argv);
	if (r >= 0)
		return r;
	switch (env.act) {
	case ACT_SIZE:
		r = do_size(env.arg);
		break;
	case ACT_JSON:
		r = do_json();
		break;
	case ACT_TTY_SAFE:
		r = do_tty_safe();
		break;
	case ACT_TARGET:
		r = do_target(env.arg);
		break;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		p_err("cannot write output: %s", strerror(errno));
		return 1;
	}
	return r;
}
