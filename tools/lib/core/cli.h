/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One table per command for its options and their help, so the help
 * cannot drift from what getopt accepts.
 *
 *   static const struct cli_opt opts[] = {
 *       { 'p', "pid", "PIDS", "profile these processes\n(comma-separated)" },
 *       { OPT_JSON, "json", NULL, "messages as JSON lines" },
 *       { 'v', "verbose", NULL, "debug messages" },
 *       { 'h', "help", NULL, "print this help" },
 *       {}
 *   };
 *   static const struct cli cli = { .text = "...USAGE...\n\n", .opts = opts,
 *                                   .tail = "\nEXAMPLES:\n...", .col = 22 };
 *
 * Every command parses the same way: one callback takes each option, and
 * parse_args checks what they make together and takes the operands.
 *
 *   static int parse_opt(void *ctx, int key, const char *arg)
 *   {
 *       struct env *env = ctx;
 *
 *       switch (key) { case 'p': ...; }
 *       return 0;		// or the exit status of a usage error
 *   }
 *
 *   // -1 to go on, or the exit status (help, usage error)
 *   static int parse_args(int argc, char **argv, struct env *env)
 *   {
 *       int r;
 *
 *       *env = (struct env){ ...defaults... };
 *       r = cli__parse(&cli, argc, argv, parse_opt, env);
 *       if (r >= 0)
 *           return r;
 *       ...operands from argv[optind], checks across options...
 *       return -1;
 *   }
 *
 * cli__parse sets log_verbose for 'v' and prints the help for 'h' itself. */
#ifndef SIDESCOPE_CLI_H
#define SIDESCOPE_CLI_H

#include <stdio.h>

struct cli_opt {
	int key;		/* the letter, or a value above 255 for a long-only
				 * option; 0 ends the table */
	const char *name;	/* the long name; NULL: the letter only */
	const char *arg;	/* the argument in the help; NULL: takes none */
	const char *help;	/* the description, lines split by '\n'; NULL:
				 * accepted (e.g. to refuse it with a fix) but not
				 * listed */
};

struct cli {
	const char *text;	/* the help before "OPTIONS:" (ends in "\n\n") */
	const struct cli_opt *opts;
	const char *tail;	/* the help after the options, or NULL */
	int col;		/* column of the descriptions (0: 22) */
	int gap;		/* the fewest spaces before a description (0: 2) */
	int in_order;		/* stop at the first non-option (a subcommand) */
};

#define CLI_END		(-1)	/* no more options: argv[optind] is the first operand */
#define CLI_HELP	(-2)	/* -h: the help is printed; exit 0 */
#define CLI_USAGE	(-3)	/* a bad option: the hint is printed; exit 2 */

/* The next option's key (its argument in optarg), or one of CLI_*: the
 * step cli__parse repeats. */
int cli__getopt(const struct cli *cli, int argc, char **argv);
/* One option, KEY with its argument ARG (NULL if it takes none), into the
 * command's CTX: 0 to go on, or the exit status to stop with (2 for a
 * usage error). */
typedef int (*cli_opt_fn)(void *ctx, int key, const char *arg);

/* Every option of ARGV through FN. Return -1 once all are taken (the
 * operands are argv[optind..]), or the exit status the command returns: FN's,
 * 0 after -h (the help printed), 2 after a bad option (the hint printed). */
int cli__parse(const struct cli *cli, int argc, char **argv, cli_opt_fn fn, void *ctx);

/* The exit status of a CLI_HELP or CLI_USAGE. */
int cli__status(int c);
void cli__help(const struct cli *cli, FILE *f);

#endif
