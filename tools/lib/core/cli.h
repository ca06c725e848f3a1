/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One table per command for its options and their help, so the help
 * cannot drift from what getopt accepts, and one way to parse them.
 *
 *   static const struct cli_opt opts[] = {
 *       { 'p', "pid", "PIDS", "profile these processes\n(comma-separated)" },
 *       { 'o', "output", "FILE", "write here", CLI_STORE_ARG(struct env, output) },
 *       { OPT_JSON, "json", NULL, "print JSON", CLI_STORE_TRUE(struct env, json) },
 *       CLI_OPTS_END("debug messages")
 *   };
 *   static const struct cli cli = { .text = "...USAGE...\n\n", .opts = opts,
 *                                   .tail = "\nEXAMPLES:\n...", .col = 22 };
 *
 * A flag or a string option is stored by cli__parse itself, where its row
 * says; every other option goes to the command's callback, and parse_args
 * checks what they make together and takes the operands:
 *
 *   // cli_opt_fn: the options the table does not store
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

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What cli__parse does with an option. */
enum cli_store {
	CLI_CALL = 0,		/* gives it to the command's callback */
	CLI_TRUE,		/* sets the bool at .off in the callback's context */
	CLI_ARG,		/* sets the const char * at .off to the argument */
};

struct cli_opt {
	int key;		/* the letter, or a value above 255 for a long-only
				 * option; 0 ends the table */
	const char *name;	/* the long name; NULL: the letter only */
	const char *arg;	/* the argument in the help; NULL: takes none */
	const char *help;	/* the description, lines split by '\n'; NULL:
				 * accepted (e.g. to refuse it with a fix) but not
				 * listed */
	enum cli_store store;	/* set by the macros below; 0: the callback's */
	size_t off;		/* CLI_TRUE, CLI_ARG: where, in the context */
};

/* The end of a row whose option cli__parse stores in FIELD of the context
 * (of TYPE), checked to be a bool or a const char * at compile time. */
#define CLI_STORE_TRUE(type, field) \
	.store = CLI_TRUE, .off = _Generic(((type *)0)->field, bool: offsetof(type, field))
#define CLI_STORE_ARG(type, field) \
	.store = CLI_ARG, .off = _Generic(((type *)0)->field, const char *: offsetof(type, field))

/* The last rows of every table: -v with the command's description of what
 * it adds, and -h, both of which cli__parse handles itself, then the end. */
#define CLI_OPTS_END(verbose_help) \
	{ 'v', "verbose", NULL, verbose_help }, \
	{ 'h', "help", NULL, "print this help" }, \
	{}

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

/* Every option of ARGV stored into CTX as its row says, or through FN.
 * Return -1 once all are taken (the operands are argv[optind..]), or the
 * exit status the command returns: FN's, 0 after -h (the help printed), 2
 * after a bad option (the hint printed). With FN NULL no option but -v and
 * -h is taken (e.g. before a subcommand), the rows' stores neither: any
 * other is a usage error. */
int cli__parse(const struct cli *cli, int argc, char **argv, cli_opt_fn fn, void *ctx);

/* The exit status of a CLI_HELP or CLI_USAGE. */
int cli__status(int c);
void cli__help(const struct cli *cli, FILE *f);

#endif
