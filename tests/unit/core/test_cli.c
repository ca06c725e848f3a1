// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The option-and-help table: getopt's short and long options come from it,
 * -v and -h are handled, unknown options are usage errors, and the help
 * lists every described option at its column with continuation lines. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/log.h"
#include "tap.h"

enum { OPT_JSON = 256 };

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PIDS", "these processes\n(comma-separated)" },
	{ OPT_JSON, "json", NULL, "JSON" },
	{ 'n', NULL, "N", NULL },
	{ 'a', NULL, NULL, "a letter alone" },
	{ 'x', "a-very-long-option", "ARGUMENT", "past the column" },
	{ 'v', "verbose", NULL, "debug messages" },
	{ 'h', "help", NULL, "print this help" },
	{}
};

static const struct cli cli = {
	.text = "t: a test\n\n",
	.opts = opts,
	.tail = "\nEXAMPLES:\n  t -p 1\n",
	.col = 20,
};

static const struct cli cli2 = {
	.text = "t2\n\n",
	.opts = opts,
	.in_order = 1,
};

/* Parse ARGS (NULL-terminated) with C; the keys and arguments as "k=arg ...". */
static void parse(const struct cli *c, char **args, char *out, size_t size, int *last)
{
	int argc = 0, k;
	size_t used = 0;

	while (args[argc])
		argc++;
	optind = 0;
	out[0] = '\0';
	while ((k = cli__getopt(c, argc, args)) >= 0)
		used += snprintf(out + used, size - used, "%s%d=%s", used ? " " : "", k,
				 optarg ? optarg : "");
	*last = k;
	if (k == CLI_END && optind < argc)
		snprintf(out + used, size - used, " rest=%s", args[optind]);
}

/* What a table stores itself, and what it gives to the callback. */
struct stored {
	const char *out;
	bool json, wide;
	int called;
	int last_key;
};

static const struct cli_opt store_opts[] = {
	{ 'o', "output", "FILE", "write here", CLI_STORE_ARG(struct stored, out) },
	{ OPT_JSON, "json", NULL, "JSON", CLI_STORE_TRUE(struct stored, json) },
	{ 'w', "wide", NULL, "wide", CLI_STORE_TRUE(struct stored, wide) },
	{ 'p', "pid", "PID", "a value to check" },
	CLI_OPTS_END("debug messages")
};

static const struct cli store_cli = { .text = "s\n\n", .opts = store_opts };

static int store_opt(void *ctx, int key, const char *arg)
{
	struct stored *st = ctx;

	st->called++;
	st->last_key = key;
	return 0;
}

/* A cli_opt_fn: counts the options, stops with 7 at -x. */
static int count_opt(void *ctx, int key, const char *arg)
{
	int *n = ctx;

	(*n)++;
	return key == 'x' ? 7 : 0;
}

int main(void)
{
	char out[256], *help = NULL;
	size_t len = 0;
	int last;
	FILE *f;

	opterr = 0;
	{
		char *a[] = { "t", "-p", "1,2", "--json", "-n", "3", "-v", "op", NULL };

		log_verbose = false;
		parse(&cli, a, out, sizeof(out), &last);
		is_str(out, "112=1,2 256= 110=3 rest=op", "short, long and help-less options");
		is_int(last, CLI_END, "ends with CLI_END");
		ok(log_verbose, "-v sets log_verbose and is not returned");
	}
	{
		char *a[] = { "t", "--pid=4", "-a", "--a-very-long-option", "z", NULL };

		parse(&cli, a, out, sizeof(out), &last);
		is_str(out, "112=4 97= 120=z", "--name=value, a letter alone, a long option");
	}
	{
		char *a[] = { "t", "-q", NULL };

		parse(&cli, a, out, sizeof(out), &last);
		is_int(last, CLI_USAGE, "an unknown option: CLI_USAGE");
		is_int(cli__status(last), 2, "exit status 2");
		is_int(cli__status(CLI_HELP), 0, "help: exit status 0");
	}
	{
		char *a[] = { "t", "-p", NULL };

		parse(&cli, a, out, sizeof(out), &last);
		is_int(last, CLI_USAGE, "an option without its value: CLI_USAGE");
	}
	{
		char *a[] = { "t", "act", "-p", "1", NULL };

		parse(&cli2, a, out, sizeof(out), &last);
		is_str(out, " rest=act", "in order: stops at the first operand");
		parse(&cli, a, out, sizeof(out), &last);
		is_str(out, "112=1 rest=act", "otherwise options after operands are taken");
	}

	{
		char *a[] = { "t", "-p", "1", "-a", "op", NULL };
		char *b[] = { "t", "-a", "-x", "z", "-a", NULL };
		char *c[] = { "t", "-a", "-q", NULL };
		int n = 0;

		optind = 0;
		is_int(cli__parse(&cli, 5, a, count_opt, &n), -1, "cli__parse: -1 once all are taken");
		is_int(n, 2, "every option went through the callback");
		is_int(optind, 4, "the operands follow");
		n = 0;
		optind = 0;
		is_int(cli__parse(&cli, 5, b, count_opt, &n), 7, "the callback's exit status stops it");
		is_int(n, 2, "nothing after it is taken");
		n = 0;
		optind = 0;
		is_int(cli__parse(&cli, 3, c, count_opt, &n), 2, "a bad option: exit status 2");
	}

	{
		char *a[] = { "t", "--json", "-o", "x.svg", "op", "-w", "-p", "1", NULL };
		struct stored st = { 0 };

		optind = 0;
		is_int(cli__parse(&store_cli, 8, a, store_opt, &st), -1, "stores: all taken");
		is_str(st.out, "x.svg", "CLI_STORE_ARG: the argument stored");
		ok(st.json && st.wide, "CLI_STORE_TRUE: the flags set");
		is_int(st.called, 1, "only the option without a store reaches the callback");
		is_int(st.last_key, 'p', "... with its key");
		is_str(a[optind], "op", "the operand follows");
	}
	{
		char *a[] = { "t", "-v", "act", "--json", NULL };
		char *b[] = { "t", "--json", "act", NULL };
		char *c[] = { "t", "-o", "x", "act", NULL };
		struct stored st = { 0 };

		optind = 0;
		is_int(cli__parse(&cli2, 4, a, NULL, NULL), -1, "no callback: -v is taken");
		is_int(optind, 2, "... and it stops at the subcommand");
		optind = 0;
		is_int(cli__parse(&cli2, 3, b, NULL, NULL), 2, "no callback: any other option is a usage error");
		optind = 0;
		is_int(cli__parse(&store_cli, 4, c, NULL, &st), 2, "... a stored one too");
		ok(!st.out, "... and it is not stored");
	}

	f = open_memstream(&help, &len);
	cli__help(&cli, f);
	fclose(f);
	is_str(help,
	       "t: a test\n\n"
	       "OPTIONS:\n"
	       "  -p, --pid PIDS    these processes\n"
	       "                    (comma-separated)\n"
	       "      --json        JSON\n"
	       "  -a                a letter alone\n"
	       "  -x, --a-very-long-option ARGUMENT  past the column\n"
	       "  -v, --verbose     debug messages\n"
	       "  -h, --help        print this help\n"
	       "\nEXAMPLES:\n  t -p 1\n",
	       "the help: options at the column, continuations aligned, hidden ones left out");
	free(help);
	return done_testing();
}
