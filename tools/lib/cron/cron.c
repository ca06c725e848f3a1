// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Cron expressions, checked the way busybox crond would run them.
 *
 * busybox crond (1.35) is lenient where a user would want an error: "*\/0"
 * and "1/2" run once an hour, "5-2" wraps around, month 0 writes outside its
 * table, and a field that fails to parse leaves the job half-scheduled. It
 * also rejects day-of-week 7 and crashes on "@hourly" lines. So sidescope
 * checks strictly here and hands crond the canonical form (cron__format),
 * which it parses into exactly these sets. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron/cron.h"
#include "core/util.h"

enum { F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, F_COUNT };

struct cron_expr {
	uint64_t set[F_COUNT];	/* bit v: value v matches (dow: 0 = Sunday) */
};

struct field_def {
	const char *name;
	unsigned min, max;	/* accepted values; dow accepts 7 for Sunday */
	const char *names;	/* 3-letter names of min..., or NULL */
	const char *names_hint;
};

static const struct field_def fields[F_COUNT] = {
	{ "minute", 0, 59, NULL, NULL },
	{ "hour", 0, 23, NULL, NULL },
	{ "day-of-month", 1, 31, NULL, NULL },
	{ "month", 1, 12, "janfebmaraprmayjunjulaugsepoctnovdec", "jan..dec" },
	{ "day-of-week", 0, 7, "sunmontuewedthufrisat", "sun..sat" },
};

/* the set of a field that covers its whole range */
static uint64_t full_set(int f)
{
	unsigned hi = f == F_DOW ? 6 : fields[f].max;

	return (hi == 63 ? ~0ULL : (1ULL << (hi + 1)) - 1) & ~((1ULL << fields[f].min) - 1);
}

static int fail(struct err *pe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct err *pe, const char *fmt, ...)
{
	va_list ap;

	if (pe) {
		va_start(ap, fmt);
		vsnprintf(pe->msg, sizeof(pe->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Decimal digits s[0..n) (leading zeros too: "08" is 8, as crond's strtol
 * reads it, where parse_u64 would take it for octal) within [min, max]. */
static bool dec_in_range(const char *s, size_t n, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > max)
			return false;
	}
	if (n == 0 || v < min)
		return false;
	*out = (unsigned)v;
	return true;
}

/* Read one value (a number or a 3-letter name) at *p; advance *p. */
static int parse_value(int f, const char *tok, const char **p, unsigned *out, struct err *pe)
{
	const struct field_def *fd = &fields[f];
	const char *s = *p;
	size_t n = 0;

	if (isdigit((unsigned char)*s)) {
		while (isdigit((unsigned char)s[n]))
			n++;
		if (!dec_in_range(s, n, fd->min, fd->max, out))
			return fail(pe, "%s field '%s': %.*s%s is out of range %u-%u%s", fd->name,
				    tok, (int)(n > 12 ? 12 : n), s, n > 12 ? "..." : "", fd->min,
				    fd->max, f == F_DOW ? " (0 and 7 are Sunday)" : "");
		*p = s + n;
		return 0;
	}
	if (isalpha((unsigned char)*s)) {
		while (isalpha((unsigned char)s[n]))
			n++;
		if (!fd->names)
			return fail(pe, "%s field '%s': '%.*s' is not a number", fd->name, tok,
				    (int)(n > 16 ? 16 : n), s);
		if (n == 3) {
			for (unsigned i = 0; fd->names[3 * i]; i++) {
				if (strncasecmp(s, fd->names + 3 * i, 3) == 0) {
					*out = f == F_MON ? i + 1 : i;
					*p = s + 3;
					return 0;
				}
			}
		}
		return fail(pe, "%s field '%s': unknown %s name '%.*s' (%s, or numbers)",
			    fd->name, tok, f == F_MON ? "month" : "day", (int)(n > 16 ? 16 : n), s,
			    fd->names_hint);
	}
	if (*s == '\0' || *s == ',' || *s == '-' || *s == '/')
		return fail(pe, "%s field '%s': a value is missing%s", fd->name, tok,
			    *s == '-' && s == tok ? " (negative numbers are not allowed)" : "");
	if (isprint((unsigned char)*s))
		return fail(pe, "%s field '%s': unexpected '%c'", fd->name, tok, *s);
	return fail(pe, "%s field: unexpected byte 0x%02x", fd->name, (unsigned char)*s);
}

/* One field: a comma-separated list of '*', N, A-B, '*' /S and A-B/S. */
static int parse_field(int f, const char *tok, uint64_t *set, struct err *pe)
{
	const struct field_def *fd = &fields[f];
	unsigned top = f == F_DOW ? 6 : fd->max;
	const char *p = tok;
	int err;

	*set = 0;
	for (;;) {
		unsigned lo, hi, step = 1;
		bool single = false;

		if (*p == '*') {
			lo = fd->min;
			hi = top;
			p++;
		} else {
			err = parse_value(f, tok, &p, &lo, pe);
			if (err)
				return err;
			if (*p == '-') {
				p++;
				if (*p == '\0' || *p == ',' || *p == '/')
					return fail(pe, "%s field '%s': the range '%u-' has no end",
						    fd->name, tok, lo);
				err = parse_value(f, tok, &p, &hi, pe);
				if (err)
					return err;
				/* sat-sun: Sunday as 7 closes a weekend range */
				if (f == F_DOW && hi == 0 && lo > 0)
					hi = 7;
				if (hi < lo)
					return fail(pe, "%s field '%s': the range %u-%u goes backwards "
						    "(write %u-%u,%u-%u)", fd->name, tok, lo, hi,
						    lo, fd->max, fd->min, hi);
			} else {
				hi = lo;
				single = true;
			}
		}
		if (*p == '/') {
			const char *s = ++p;
			size_t n = 0;

			if (single)
				return fail(pe, "%s field '%s': a step needs a range or '*' "
					    "(write %u-%u/N)", fd->name, tok, lo, top);
			while (isdigit((unsigned char)s[n]))
				n++;
			if (n == 0)
				return fail(pe, "%s field '%s': the step after '/' is missing",
					    fd->name, tok);
			if (!dec_in_range(s, n, 1, top, &step))
				return fail(pe, "%s field '%s': step %.*s%s is out of range 1-%u",
					    fd->name, tok, (int)(n > 12 ? 12 : n), s,
					    n > 12 ? "..." : "", top);
			p = s + n;
		}
		for (unsigned v = lo; v <= hi; v += step)
			*set |= 1ULL << (f == F_DOW && v == 7 ? 0 : v);
		if (*p == ',') {
			p++;
			if (*p == '\0' || *p == ',')
				return fail(pe, "%s field '%s': empty element in the list",
					    fd->name, tok);
			continue;
		}
		if (*p == '\0')
			return 0;
		if (isprint((unsigned char)*p))
			return fail(pe, "%s field '%s': unexpected '%c' after a value", fd->name,
				    tok, *p);
		return fail(pe, "%s field: unexpected byte 0x%02x", fd->name, (unsigned char)*p);
	}
}

static bool is_leap(long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(long y, unsigned mon)
{
	static const unsigned char d[] = { 0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return mon == 2 && is_leap(y) ? 29 : d[mon];
}

static bool restricted(const struct cron_expr *e, int f)
{
	return (e->set[f] & full_set(f)) != full_set(f);
}

static bool day_matches(const struct cron_expr *e, unsigned mon, unsigned mday, unsigned wday)
{
	bool dom = e->set[F_DOM] >> mday & 1, dow = e->set[F_DOW] >> wday & 1;
	bool rdom = restricted(e, F_DOM), rdow = restricted(e, F_DOW);

	if (!(e->set[F_MON] >> mon & 1))
		return false;
	if (rdom && rdow)
		return dom || dow;
	return rdom ? dom : rdow ? dow : true;
}

bool cron__matches(const struct cron_expr *e, const struct tm *tm)
{
	if (tm->tm_min < 0 || tm->tm_min > 59 || tm->tm_hour < 0 || tm->tm_hour > 23 ||
	    tm->tm_mday < 1 || tm->tm_mday > 31 || tm->tm_mon < 0 || tm->tm_mon > 11 ||
	    tm->tm_wday < 0 || tm->tm_wday > 6)
		return false;
	return (e->set[F_MIN] >> tm->tm_min & 1) && (e->set[F_HOUR] >> tm->tm_hour & 1) &&
	       day_matches(e, tm->tm_mon + 1, tm->tm_mday, tm->tm_wday);
}

/* A day-of-month restriction that no month of the expression has. */
static int check_reachable(const struct cron_expr *e, const char *dom_tok,
			   const char *mon_tok, struct err *pe)
{
	if (!restricted(e, F_DOM) || restricted(e, F_DOW))
		return 0;
	for (unsigned m = 1; m <= 12; m++) {
		uint64_t days = ((1ULL << (days_in_month(2000, m) + 1)) - 1) & ~1ULL;

		if ((e->set[F_MON] >> m & 1) && (e->set[F_DOM] & days))
			return 0;
	}
	return fail(pe, "day-of-month field '%s': never matches: no month in '%s' has such a day",
		    dom_tok, mon_tok);
}

struct cron_expr *cron__parse(const char *text, struct err *pe)
{
	struct cron_expr *e = NULL;
	char *copy = NULL, *tok[F_COUNT + 1], *p;
	int n = 0, rc = -EINVAL;

	err__clear(pe);
	if (!text)
		goto cleanup;
	for (p = (char *)text; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != ' ' && *p != '\t') {
			fail(pe, "control character 0x%02x in the expression", (unsigned char)*p);
			goto cleanup;
		}
	}
	copy = strdup(text);
	e = calloc(1, sizeof(*e));
	if (!copy || !e) {
		rc = -ENOMEM;
		goto cleanup;
	}
	p = copy + strspn(copy, " \t");
	if (*p == '@') {
		char *end = p + strcspn(p, " \t");
		static const struct { const char *name, *expr; } sc[] = {
			{ "@hourly", "0 * * * *" }, { "@daily", "0 0 * * *" },
			{ "@midnight", "0 0 * * *" }, { "@weekly", "0 0 * * 0" },
			{ "@monthly", "0 0 1 * *" }, { "@yearly", "0 0 1 1 *" },
			{ "@annually", "0 0 1 1 *" },
		};

		*end = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(sc); i++)
			if (strcmp(p, sc[i].name) == 0) {
				fail(pe, "'%s' is not supported: busybox crond 1.35 crashes on "
				     "'@' lines (write '%s')", p, sc[i].expr);
				goto cleanup;
			}
		fail(pe, "'%.32s' is not a schedule (5 fields: minute hour day-of-month "
		     "month day-of-week)", p);
		goto cleanup;
	}
	while (*p) {
		if (n == F_COUNT) {
			fail(pe, "more than 5 fields: '%.32s' is extra (minute hour "
			     "day-of-month month day-of-week)", p);
			goto cleanup;
		}
		tok[n++] = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = '\0';
		p += strspn(p, " \t");
	}
	if (n != F_COUNT) {
		fail(pe, "%d field%s, 5 needed (minute hour day-of-month month day-of-week)",
		     n, n == 1 ? "" : "s");
		goto cleanup;
	}
	for (int f = 0; f < F_COUNT; f++) {
		rc = parse_field(f, tok[f], &e->set[f], pe);
		if (rc)
			goto cleanup;
	}
	rc = check_reachable(e, tok[F_DOM], tok[F_MON], pe);
cleanup:
	free(copy);
	if (rc) {
		free(e);
		errno = -rc;
		return NULL;
	}
	return e;
}

void cron__free(struct cron_expr *e)
{
	free(e);
}

static int put(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off)
		return -ENOSPC;
	*off += n;
	return 0;
}

int cron__format(const struct cron_expr *e, char *buf, size_t len)
{
	size_t off = 0;
	int err;

	if (!buf || len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (int f = 0; f < F_COUNT; f++) {
		unsigned top = f == F_DOW ? 6 : fields[f].max;
		bool first = true;

		if (f && (err = put(buf, len, &off, " ")))
			return err;
		if (!restricted(e, f)) {
			if ((err = put(buf, len, &off, "*")))
				return err;
			continue;
		}
		for (unsigned v = fields[f].min; v <= top; v++) {
			unsigned w = v;

			if (!(e->set[f] >> v & 1))
				continue;
			while (w + 1 <= top && (e->set[f] >> (w + 1) & 1))
				w++;
			if (w == v)
				err = put(buf, len, &off, "%s%u", first ? "" : ",", v);
			else
				err = put(buf, len, &off, "%s%u%s%u", first ? "" : ",", v,
					  w == v + 1 ? "," : "-", w);
			if (err)
				return err;
			first = false;
			v = w;
		}
	}
	return 0;
}

/* The next civil date after (y, mon, mday) whose day fields match, within
 * 'limit' days. wday is that of (y, mon, mday). Return true when found. */
static bool next_day(const struct cron_expr *e, long *y, unsigned *mon, unsigned *mday,
		     unsigned wday, unsigned limit)
{
	while (limit--) {
		wday = (wday + 1) % 7;
		if (++*mday > days_in_month(*y, *mon)) {
			*mday = 1;
			if (++*mon > 12) {
				*mon = 1;
				++*y;
			}
		}
		if (day_matches(e, *mon, *mday, wday))
			return true;
	}
	return false;
}

/* How many times the search may land on a candidate: each step moves to
 * the next matching day, hour or minute, so a match is a few dozen steps
 * away; DST and odd offsets only add a few. */
#define NEXT_MAX_STEPS 100000
#define NEXT_MAX_DAYS (30 * 366)

int cron__next(const struct cron_expr *e, time_t after, time_t *next)
{
	time_t t;
	struct tm tm;

	if (after > INT64_MAX / 2 || after < INT64_MIN / 2)
		return -EOVERFLOW;
	/* the next whole minute strictly after 'after' */
	t = after - ((after % 60) + 60) % 60 + 60;
	for (int step = 0; step < NEXT_MAX_STEPS; step++) {
		uint64_t later;

		if (!localtime_r(&t, &tm) || tm.tm_year > 1000000)
			return -EOVERFLOW;
		if (tm.tm_sec) {
			/* historical offsets with seconds: crond checks whole UTC minutes */
			t += 60 - tm.tm_sec;
			continue;
		}
		if (!day_matches(e, tm.tm_mon + 1, tm.tm_mday, tm.tm_wday)) {
			long y = tm.tm_year + 1900L;
			unsigned mon = tm.tm_mon + 1, mday = tm.tm_mday;
			struct tm nt = { 0 };
			time_t t2;

			if (!next_day(e, &y, &mon, &mday, tm.tm_wday, NEXT_MAX_DAYS))
				return -ERANGE;
			nt.tm_year = y - 1900;
			nt.tm_mon = mon - 1;
			nt.tm_mday = mday;
			nt.tm_isdst = -1;
			errno = 0;
			t2 = mktime(&nt);
			if (t2 == (time_t)-1 && errno == EOVERFLOW)
				return -EOVERFLOW;
			/* local midnight may not exist or be ambiguous: never go back */
			t = t2 > t ? t2 - ((t2 % 60) + 60) % 60 : t + 60;
			continue;
		}
		if (!(e->set[F_HOUR] >> tm.tm_hour & 1)) {
			t += (60 - tm.tm_min) * 60;
			continue;
		}
		later = e->set[F_MIN] >> tm.tm_min;
		if (!later) {
			t += (60 - tm.tm_min) * 60;
			continue;
		}
		if (!(later & 1)) {
			t += (__builtin_ctzll(later)) * 60;
			continue;
		}
		*next = t;
		return 0;
	}
	return -ERANGE;
}
