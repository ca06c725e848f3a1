// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Options and their help from one table (cli.h). */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "core/log.h"

#define CLI_MAX_OPTS	64

/* The getopt tables of the last command parsed: one per process. */
static const struct cli *built;
static struct option longs[CLI_MAX_OPTS + 1];
static char shorts[3 * CLI_MAX_OPTS + 2];

static void build(const struct cli *cli)
{
	size_t nl = 0, ns = 0;
	const struct cli_opt *o;

	memset(longs, 0, sizeof(longs));
	if (cli->in_order)
		shorts[ns++] = '+';
	for (o = cli->opts; o->key && nl < CLI_MAX_OPTS; o++) {
		if (o->name)
			longs[nl++] = (struct option){ o->name,
						       o->arg ? required_argument : no_argument,
						       NULL, o->key };
		if (o->key < 256) {
			shorts[ns++] = (char)o->key;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	built = cli;
}

int cli__getopt(const struct cli *cli, int argc, char **argv)
{
	int c;

	if (built != cli)
		build(cli);
	for (;;) {
		c = getopt_long(argc, argv, shorts, longs, NULL);
		if (c == -1)
			return CLI_END;
		if (c == '?' || c == ':')
			return usage_hint(), CLI_USAGE;
		if (c == 'h') {
			cli__help(cli, stdout);
			return CLI_HELP;
		}
		if (c == 'v') {
			log_verbose = true;
			continue;
		}
		return c;
	}
}

/* The row of option KEY (the first, when two long names share it). */
static const struct cli_opt *row_of(const struct cli *cli, int key)
{
	const struct cli_opt *o;

	for (o = cli->opts; o->key; o++)
		if (o->key == key)
			return o;
	return NULL;
}

int cli__parse(const struct cli *cli, int argc, char **argv, cli_opt_fn fn, void *ctx)
{
	const struct cli_opt *o;
	int c, r;

	while ((c = cli__getopt(cli, argc, argv)) >= 0) {
		if (!fn)
			return usage_hint();
		o = row_of(cli, c);
		if (o && o->store == CLI_TRUE) {
			*(bool *)((char *)ctx + o->off) = true;
			continue;
		}
		if (o && o->store == CLI_ARG) {
			*(const char **)((char *)ctx + o->off) = optarg;
			continue;
		}
		r = fn(ctx, c, optarg);
		if (r)
			return r;
	}
	return c == CLI_END ? -1 : cli__status(c);
}

int cli__status(int c)
{
	return c == CLI_HELP ? 0 : 2;
}

void cli__help(const struct cli *cli, FILE *f)
{
	int col = cli->col ? cli->col : 22, gap = cli->gap ? cli->gap : 2;
	const struct cli_opt *o;

	fputs(cli->text, f);
	fputs("OPTIONS:\n", f);
	for (o = cli->opts; o->key; o++) {
		const char *h = o->help, *nl;
		int n;

		if (!h)
			continue;
		if (o->key < 256 && o->name)
			n = fprintf(f, "  -%c, --%s", o->key, o->name);
		else if (o->key < 256)
			n = fprintf(f, "  -%c", o->key);
		else
			n = fprintf(f, "      --%s", o->name);
		if (o->arg)
			n += fprintf(f, " %s", o->arg);
		fprintf(f, "%*s", n + gap <= col ? col - n : gap, "");
		for (;;) {
			nl = strchr(h, '\n');
			if (!nl) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, col, "");
			h = nl + 1;
		}
	}
	if (cli->tail)
		fputs(cli->tail, f);
}
