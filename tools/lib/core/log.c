// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>

#include <getopt.h>
#include <string.h>

#include "core/log.h"
#include "core/json.h"
#include "core/util.h"

bool log_verbose;
static const char *prog = "sidescope";
static bool json_mode;
static int saved_argc;
static char **saved_argv;

void log__set_prog(const char *p)
{
	prog = p;
}

const char *log__prog(void)
{
	return prog;
}

void log__set_args(int argc, char **argv)
{
	int i;

	saved_argc = argc;
	saved_argv = argv;
	json_mode = false;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			json_mode = true;
	/* getopt's own messages are not JSON: under --json we say it */
	opterr = !json_mode;
}

bool log__json(void)
{
	return json_mode;
}

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (json_mode) {
		char buf[4096];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		fprintf(stderr, "{\"level\":\"%s\",\"program\":", level ? level : "info");
		json_write_string(stderr, prog);
		fputs(",\"message\":", stderr);
		json_write_string(stderr, buf);
		fputs("}\n", stderr);
		return;
	}
	if (level)
		fprintf(stderr, "%s: %s: ", prog, level);
	else
		fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning", fmt, ap);
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void p_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vmsg("debug", fmt, ap);
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(json_mode ? "error" : NULL, fmt, ap);
	va_end(ap);
	if (!json_mode)
		fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}

int usage_hint(void)
{
	if (json_mode) {
		const char *arg = optind > 0 && optind <= saved_argc && saved_argv ?
				  saved_argv[optind - 1] : "?";

		return usage_error("unknown option, or an option without its value: '%s'", arg);
	}
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}
