/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A small TAP producer for C unit tests: plan at the end, diagnostics on
 * failure, exit status 1 when anything failed. */
#ifndef SIDESCOPE_TAP_H
#define SIDESCOPE_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do {						\
	long long g_ = (long long)(got), w_ = (long long)(want);		\
	if (!ok(g_ == w_, __VA_ARGS__))						\
		printf("#   got %lld, want %lld\n", g_, w_);			\
} while (0)

#define is_str(got, want, ...) do {						\
	const char *g_ = (got), *w_ = (want);					\
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))			\
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)",	\
		       w_ ? w_ : "(null)");					\
} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* Path of a fixture under tests/data, from $SIDESCOPE_SRC or the cwd. */
static inline const char *fixture(const char *rel)
{
	static char buf[4096];
	const char *src = getenv("SIDESCOPE_SRC");

	snprintf(buf, sizeof(buf), "%s/tests/data/%s", src ? src : ".", rel);
	return buf;
}

#endif
