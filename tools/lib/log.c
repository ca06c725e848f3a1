// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

bool log_verbose;
static const char *prog = "sidescope";

void log__set_prog(const char *p)
{
	prog = p;
}

const char *log__prog(void)
{
	return prog;
}

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	fflush(stdout);
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
	vmsg(NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}

int usage_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}
