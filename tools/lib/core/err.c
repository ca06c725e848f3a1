// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The library's error side channel (err.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/err.h"

static void vset(struct err *e, int col, const char *fmt, va_list ap)
{
	if (!e)
		return;
	e->col = col;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int err__set(struct err *e, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, 0, fmt, ap);
	va_end(ap);
	return -errnum;
}

int err__set_at(struct err *e, int col, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, col, fmt, ap);
	va_end(ap);
	return -errnum;
}

void err__clear(struct err *e)
{
	if (e) {
		e->col = 0;
		e->msg[0] = '\0';
	}
}
