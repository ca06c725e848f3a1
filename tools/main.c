// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope: one binary, one subcommand per technique. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/log.h"
#include "core/util.h"
#include "sym/debuginfod.h"

#ifndef SIDESCOPE_VERSION
#define SIDESCOPE_VERSION "unknown"
#endif

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* NULL: not listed (plumbing for the scripts) */
};

static const struct cmd cmds[] = {
	{ "ps", cmd_ps, "list the processes in the pod and what can be traced in each" },
	{ "profile", cmd_profile, "CPU, off-CPU and wall-clock stack profiles: top, folded, pprof, svg, json" },
	{ "ctf", cmd_ctf, "summarize LTTng CTF traces or convert them for Perfetto" },
	{ "dotnet-methods", cmd_dotnet_methods, "list a .NET ReadyToRun image's methods and file offsets" },
	{ "flame", cmd_flame, "draw stacks (folded or pprof) as an interactive SVG flame graph" },
	{ "stacks", cmd_stacks, "every thread's kernel and user stack now, without stopping the app" },
	{ "uprobe", cmd_uprobe, "print arguments and return values of functions (UTF-16 too)" },
	{ "timeline", cmd_timeline, "CPU samples, uprobe hits and LTTng events on one clock (Perfetto)" },
	{ "cron", cmd_cron, "check a cron schedule and show when it runs next" },
	{ "plumbing", cmd_plumbing, NULL },
	{ "debuginfod-fetch", debuginfod__fetch_main, NULL },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"sidescope: look inside a running application from a sidecar container\n"
		"\n"
		"USAGE: sidescope COMMAND [OPTIONS]\n"
		"       sidescope help [COMMAND]\n"
		"       sidescope --version\n"
		"\n"
		"COMMANDS:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (cmds[i].summary)
			fprintf(f, "  %-14s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n"
		"Run 'sidescope COMMAND --help' for the options and examples of one command.\n");
}

/* The command NAME, or NULL after saying there is none. */
static const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	fprintf(stderr, "sidescope: unknown command '%s'\n", name);
	fprintf(stderr, "Try 'sidescope help' for the list of commands.\n");
	return NULL;
}

static int run(const struct cmd *c, int argc, char **argv)
{
	static char prog[64];

	snprintf(prog, sizeof(prog), "sidescope %s", c->name);
	log__set_prog(prog);
	argv[0] = prog;
	log__set_args(argc, argv);
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	name = argv[1];
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 ||
	    strcmp(name, "version") == 0) {
		printf("sidescope %s\n", SIDESCOPE_VERSION);
		return 0;
	}
	if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 ||
	    strcmp(name, "-h") == 0) {
		char *help_argv[] = { NULL, "--help", NULL };

		if (argc < 3 || name[0] == '-') {
			usage(stdout);
			return 0;
		}
		c = find_cmd(argv[2]);
		return c ? run(c, 2, help_argv) : 2;
	}
	c = find_cmd(name);
	return c ? run(c, argc - 1, argv + 1) : 2;
}
