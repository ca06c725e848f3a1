// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Cron expressions: canonical forms, every error path, next times in UTC
 * (month ends, leap years, Feb 29, both day fields restricted) and across
 * DST changes of a POSIX TZ rule (no tzdata needed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron/cron.h"
#include "tap.h"

static const struct {
	const char *expr, *canon;
} good[] = {
	{ "* * * * *", "* * * * *" },
	{ "  0   0  *  *  *  ", "0 0 * * *" },
	{ "0\t12\t*\t*\t*", "0 12 * * *" },
	{ "*/10 * * * *", "0,10,20,30,40,50 * * * *" },
	{ "*/1 */1 */1 */1 */1", "* * * * *" },
	{ "0-59 0-23 1-31 1-12 0-6", "* * * * *" },
	{ "0 0 * * 0-7", "0 0 * * *" },
	{ "0 0 * * 7", "0 0 * * 0" },
	{ "0 0 * * 7-7", "0 0 * * 0" },
	{ "0 0 * * 5-7", "0 0 * * 0,5,6" },
	{ "0 0 * * sat-sun", "0 0 * * 0,6" },
	{ "0 0 * * fri-sun", "0 0 * * 0,5,6" },
	{ "0 0 * * Mon-FRI", "0 0 * * 1-5" },
	{ "0 0 * * sun,SAT", "0 0 * * 0,6" },
	{ "0 0 1 JAN-mar,Dec *", "0 0 1 1-3,12 *" },
	{ "0 0 1 jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec *", "0 0 1 * *" },
	{ "1-10/3 * * * *", "1,4,7,10 * * * *" },
	{ "0-59/30 * * * *", "0,30 * * * *" },
	{ "*/59 * * * *", "0,59 * * * *" },
	{ "5,5,5 * * * *", "5 * * * *" },
	{ "3,1,2 * * * *", "1-3 * * * *" },
	{ "08 09 * * *", "8 9 * * *" },
	{ "0 0 */2 * *", "0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 * *" },
	{ "59 23 31 12 6", "59 23 31 12 6" },
	{ "0 0 29 2 *", "0 0 29 2 *" },
	{ "0 0 30 1,2 *", "0 0 30 1,2 *" },
	{ "0 0 31 2 mon", "0 0 31 2 1" },
	{ "0 0 1-15 * mon", "0 0 1-15 * 1" },
	{ "0 0 1-2,4 * *", "0 0 1,2,4 * *" },
	{ "1-1 * * * *", "1 * * * *" },
};

/* every error: the field it names and a word of the reason */
static const struct {
	const char *expr, *field, *why;
} bad[] = {
	{ "", "0 fields", "5 needed" },
	{ "   ", "0 fields", "5 needed" },
	{ "* * * *", "4 fields", "5 needed" },
	{ "* * * * * *", "more than 5 fields", "'*' is extra" },
	{ "61 * * * *", "minute field '61'", "61 is out of range 0-59" },
	{ "60 * * * *", "minute field '60'", "out of range 0-59" },
	{ "* 24 * * *", "hour field '24'", "out of range 0-23" },
	{ "* * 0 * *", "day-of-month field '0'", "out of range 1-31" },
	{ "* * 32 * *", "day-of-month field '32'", "out of range 1-31" },
	{ "* * * 0 *", "month field '0'", "out of range 1-12" },
	{ "* * * 13 *", "month field '13'", "out of range 1-12" },
	{ "* * * * 8", "day-of-week field '8'", "0 and 7 are Sunday" },
	{ "99999999999999999999999 * * * *", "minute field", "999999999999... is out of range" },
	{ "*/0 * * * *", "minute field '*/0'", "step 0 is out of range 1-59" },
	{ "*/60 * * * *", "minute field '*/60'", "step 60 is out of range" },
	{ "* */24 * * *", "hour field '*/24'", "out of range 1-23" },
	{ "*/ * * * *", "minute field '*/'", "step after '/' is missing" },
	{ "*/x * * * *", "minute field '*/x'", "step after '/' is missing" },
	{ "1/2 * * * *", "minute field '1/2'", "a step needs a range" },
	{ "1- * * * *", "minute field '1-'", "the range '1-' has no end" },
	{ "1-/2 * * * *", "minute field '1-/2'", "has no end" },
	{ "5-2 * * * *", "minute field '5-2'", "goes backwards (write 5-59,0-2)" },
	{ "* * * dec-jan *", "month field 'dec-jan'", "goes backwards" },
	{ "1-2-3 * * * *", "minute field '1-2-3'", "unexpected '-' after a value" },
	{ "1-5/2/3 * * * *", "minute field '1-5/2/3'", "unexpected '/'" },
	{ "-1 * * * *", "minute field '-1'", "negative numbers" },
	{ "+1 * * * *", "minute field '+1'", "unexpected '+'" },
	{ "0,,1 * * * *", "minute field '0,,1'", "empty element" },
	{ "0, * * * *", "minute field '0,'", "empty element" },
	{ ",0 * * * *", "minute field ',0'", "a value is missing" },
	{ "x * * * *", "minute field 'x'", "'x' is not a number" },
	{ "mon * * * *", "minute field 'mon'", "not a number" },
	{ "* * * * mon-foo", "day-of-week field 'mon-foo'", "unknown day name 'foo' (sun..sat" },
	{ "* * * * monday", "day-of-week field 'monday'", "unknown day name 'monday'" },
	{ "* * * * jan", "day-of-week field 'jan'", "unknown day name" },
	{ "* * * january *", "month field 'january'", "unknown month name 'january' (jan..dec" },
	{ "* * * mon *", "month field 'mon'", "unknown month name" },
	{ "1.5 * * * *", "minute field '1.5'", "unexpected '.'" },
	{ "0 0 * * * # comment", "more than 5 fields", "'# comment' is extra" },
	{ "0#1 * * * *", "minute field '0#1'", "unexpected '#'" },
	{ "0 0 31 2 *", "day-of-month field '31'", "never matches" },
	{ "0 0 30,31 feb *", "day-of-month field '30,31'", "no month in 'feb'" },
	{ "0 0 31 4,6,9,11 *", "day-of-month field '31'", "never matches" },
	{ "@hourly", "'@hourly' is not supported", "write '0 * * * *'" },
	{ "@daily", "'@daily' is not supported", "write '0 0 * * *'" },
	{ "@weekly", "'@weekly'", "write '0 0 * * 0'" },
	{ "@monthly", "'@monthly'", "write '0 0 1 * *'" },
	{ "@yearly", "'@yearly'", "write '0 0 1 1 *'" },
	{ "@annually", "'@annually'", "crashes" },
	{ "@midnight", "'@midnight'", "crashes" },
	{ "@reboot", "'@reboot' is not a schedule", "5 fields" },
	{ "@every 5m", "'@every' is not a schedule", "5 fields" },
	{ "* * * * *\n* * * * * rm -rf /", "control character 0x0a", "" },
	{ "* * * * *\r", "control character 0x0d", "" },
	{ "\xc3\xa9 * * * *", "minute field", "unexpected byte 0xc3" },
	{ "1\xff * * * *", "minute field", "unexpected byte 0xff" },
};

/* test names stay on one TAP line */
static const char *printable(const char *s)
{
	static char buf[256];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static time_t utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi };

	return timegm(&tm);
}

static const char *iso(time_t t)
{
	static char buf[64];
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M%z", &tm);
	return buf;
}

/* The next n times of expr after 'from', as "ISO ISO ..." */
static const char *nexts(const char *expr, time_t from, int n)
{
	static char out[1024];
	struct cron_expr *e = cron__parse(expr, NULL);
	size_t off = 0;

	out[0] = '\0';
	if (!e)
		return "(parse error)";
	for (int i = 0; i < n; i++) {
		int rc = cron__next(e, from, &from);

		if (rc) {
			snprintf(out + off, sizeof(out) - off, "%s(%s)", i ? " " : "",
				 strerror(-rc));
			break;
		}
		off += snprintf(out + off, sizeof(out) - off, "%s%s", i ? " " : "", iso(from));
	}
	cron__free(e);
	return out;
}

/* Brute force: the first matching minute after 'from', minute by minute. */
static time_t brute_next(const struct cron_expr *e, time_t from, long limit)
{
	time_t t = from - ((from % 60) + 60) % 60 + 60;

	for (long i = 0; i < limit; i++, t += 60) {
		struct tm tm;

		localtime_r(&t, &tm);
		if (cron__matches(e, &tm))
			return t;
	}
	return -1;
}

static void test_parse(void)
{
	struct err perr;
	char *err = perr.msg, canon[512];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct cron_expr *e = cron__parse(good[i].expr, &perr);

		if (!ok(e != NULL, "parses: '%s'", good[i].expr)) {
			diag("error: %s", err);
			continue;
		}
		is_int(cron__format(e, canon, sizeof(canon)), 0, "formats: '%s'", good[i].expr);
		is_str(canon, good[i].canon, "canonical form of '%s'", good[i].expr);
		cron__free(e);
		/* the canonical form reads back as itself */
		e = cron__parse(canon, &perr);
		ok(e != NULL, "canonical '%s' parses", canon);
		if (e) {
			char again[512];

			cron__format(e, again, sizeof(again));
			is_str(again, canon, "canonical form is a fixed point");
		}
		cron__free(e);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cron_expr *e;

		errno = 0;
		e = cron__parse(bad[i].expr, &perr);
		ok(e == NULL && errno == EINVAL, "rejected: '%s'", printable(bad[i].expr));
		cron__free(e);
		if (!ok(strstr(err, bad[i].field) && strstr(err, bad[i].why),
			"error names '%s' and '%s'", bad[i].field, bad[i].why))
			diag("got: %s", err);
	}
	/* a NULL text, a NULL or tiny error buffer */
	ok(cron__parse(NULL, &perr) == NULL, "NULL text: an error");
	ok(cron__parse("61 * * * *", NULL) == NULL, "no error buffer: still an error");
	{
		char longer[2 * ERR_MSG_MAX];

		memset(longer, '9', sizeof(longer) - 1);
		memcpy(longer + sizeof(longer) - 9, " * * * *", 9);
		ok(cron__parse(longer, &perr) == NULL && strlen(err) > 0 &&
		   strlen(err) < ERR_MSG_MAX,
		   "a message longer than its buffer is cut, not overrun");
	}
	cron__free(NULL);
	{
		struct cron_expr *e = cron__parse("*/2 * * * *", NULL);

		is_int(cron__format(e, canon, 10), -ENOSPC, "format into a small buffer: -ENOSPC");
		is_int(cron__format(e, canon, 0), -ENOSPC, "format into no buffer: -ENOSPC");
		cron__free(e);
	}
}

static void test_next_utc(void)
{
	time_t t0 = utc(2026, 12, 1, 9, 27);

	is_str(nexts("* * * * *", t0, 2), "2026-12-01T09:28+0000 2026-12-01T09:29+0000",
	       "every minute: the next whole minutes");
	is_str(nexts("* * * * *", utc(2026, 12, 1, 9, 27) + 59, 1), "2026-12-01T09:28+0000",
	       "strictly after, from within a minute");
	is_str(nexts("28 * * * *", utc(2026, 12, 1, 9, 28), 1), "2026-12-01T10:28+0000",
	       "a matching 'from' is not itself returned");
	is_str(nexts("*/15 * * * *", t0, 3),
	       "2026-12-01T09:30+0000 2026-12-01T09:45+0000 2026-12-01T10:00+0000", "*/15");
	is_str(nexts("0 */6 * * *", t0, 3),
	       "2026-12-01T12:00+0000 2026-12-01T18:00+0000 2026-12-02T00:00+0000", "0 */6");
	is_str(nexts("59 23 31 12 *", t0, 2),
	       "2026-12-31T23:59+0000 2027-12-31T23:59+0000", "the last minute of the year");
	is_str(nexts("0 0 31 * *", utc(2026, 1, 31, 12, 0), 3),
	       "2026-03-31T00:00+0000 2026-05-31T00:00+0000 2026-07-31T00:00+0000",
	       "31st: months without one are skipped");
	is_str(nexts("0 0 30 * *", utc(2026, 1, 30, 12, 0), 2),
	       "2026-03-30T00:00+0000 2026-04-30T00:00+0000", "30th skips February");
	is_str(nexts("0 0 29 2 *", t0, 3),
	       "2028-02-29T00:00+0000 2032-02-29T00:00+0000 2036-02-29T00:00+0000",
	       "Feb 29: leap years only");
	is_str(nexts("0 0 29 2 *", utc(2096, 3, 1, 0, 0), 2),
	       "2104-02-29T00:00+0000 2108-02-29T00:00+0000", "2100 is not a leap year");
	is_str(nexts("0 0 29 2 *", utc(1999, 1, 1, 0, 0), 1), "2000-02-29T00:00+0000",
	       "2000 is a leap year");
	is_str(nexts("0 0 28-29 2 *", utc(2027, 1, 1, 0, 0), 3),
	       "2027-02-28T00:00+0000 2028-02-28T00:00+0000 2028-02-29T00:00+0000",
	       "Feb 28-29 across a leap year");
	is_str(nexts("0 12 1 3 *", utc(2028, 2, 28, 0, 0), 1), "2028-03-01T12:00+0000",
	       "Mar 1 after Feb 29");
	/* 2026-12-01 is a Tuesday */
	is_str(nexts("0 0 * * mon", t0, 2),
	       "2026-12-07T00:00+0000 2026-12-14T00:00+0000", "Mondays");
	is_str(nexts("0 0 * * 7", t0, 1), "2026-12-06T00:00+0000", "7 is Sunday");
	is_str(nexts("0 0 * * 0", t0, 1), "2026-12-06T00:00+0000", "0 is Sunday");
	is_str(nexts("30 8 * * mon-fri", utc(2026, 12, 4, 9, 0), 2),
	       "2026-12-07T08:30+0000 2026-12-08T08:30+0000", "weekdays skip the weekend");
	/* both restricted: either day field (OR) */
	is_str(nexts("0 0 13 * fri", utc(2026, 12, 1, 0, 0), 4),
	       "2026-12-04T00:00+0000 2026-12-11T00:00+0000 2026-12-13T00:00+0000 "
	       "2026-12-18T00:00+0000", "13th or Friday: either matches");
	is_str(nexts("0 0 31 2 mon", utc(2026, 12, 1, 0, 0), 2),
	       "2027-02-01T00:00+0000 2027-02-08T00:00+0000",
	       "an impossible day OR a weekday still matches the weekday");
	/* one restricted: only that one */
	is_str(nexts("0 0 1-31 * fri", utc(2026, 12, 1, 0, 0), 2),
	       "2026-12-04T00:00+0000 2026-12-11T00:00+0000",
	       "a full day-of-month range counts as unrestricted (as busybox)");
	is_str(nexts("0 0 13 * 0-7", utc(2026, 12, 1, 0, 0), 2),
	       "2026-12-13T00:00+0000 2027-01-13T00:00+0000",
	       "a full day-of-week range counts as unrestricted");
	is_str(nexts("0 0 */2 * fri", utc(2026, 12, 1, 0, 0), 3),
	       "2026-12-03T00:00+0000 2026-12-04T00:00+0000 2026-12-05T00:00+0000",
	       "*/2 day-of-month is restricted: OR with Friday");
	is_str(nexts("0 0 1 1 *", 0, 2), "1971-01-01T00:00+0000 1972-01-01T00:00+0000",
	       "from the epoch");
	is_str(nexts("* * * * *", 253402300740 - 60, 2), "9999-12-31T23:59+0000 10000-01-01T00:00+0000",
	       "past year 9999");
}

/* central European time: +1, +2 from the last Sunday of March 02:00 to the
 * last Sunday of October 03:00 */
static void test_next_dst(void)
{
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	is_str(nexts("30 2 * * *", utc(2026, 3, 27, 12, 0), 3),
	       "2026-03-28T02:30+0100 2026-03-30T02:30+0200 2026-03-31T02:30+0200",
	       "spring forward: 02:30 does not exist that day and is skipped, as crond does");
	is_str(nexts("30 2 * * *", utc(2026, 10, 24, 12, 0), 3),
	       "2026-10-25T02:30+0200 2026-10-25T02:30+0100 2026-10-26T02:30+0100",
	       "fall back: 02:30 happens twice and runs twice, as crond does");
	is_str(nexts("0 0 * * *", utc(2026, 3, 28, 12, 0), 2),
	       "2026-03-29T00:00+0100 2026-03-30T00:00+0200", "midnights across spring forward");
	is_str(nexts("0 3 * * *", utc(2026, 3, 28, 12, 0), 1), "2026-03-29T03:00+0200",
	       "03:00 right after the gap");
	is_str(nexts("0 * * * *", utc(2026, 10, 24, 23, 30), 4),
	       "2026-10-25T02:00+0200 2026-10-25T02:00+0100 2026-10-25T03:00+0100 "
	       "2026-10-25T04:00+0100", "hourly through the repeated hour");
	setenv("TZ", "UTC0", 1);
	tzset();
}

/* The stepping search agrees with a minute-by-minute search. */
static void test_against_brute_force(void)
{
	static const char *const exprs[] = {
		"*/7 */5 * * *", "0 0 13 * fri", "15 4 31 * *", "0 12 * 2 sun",
		"59 23 28-31 * *", "1,2,3 4 5 6 *", "0 0 * * 6-7", "*/30 1-3 */3 1-11 mon-wed",
	};
	static const char *const zones[] = { "UTC0", "CET-1CEST,M3.5.0,M10.5.0/3",
					     "<+0545>-5:45", "AEST-10AEDT,M10.1.0,M4.1.0/3" };
	int mismatches = 0, checks = 0;

	for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		setenv("TZ", zones[z], 1);
		tzset();
		for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
			struct cron_expr *e = cron__parse(exprs[i], NULL);
			time_t t = utc(2026, 1, 1, 0, 0) + 7 * (time_t)i;

			if (!e) {
				mismatches++;
				continue;
			}
			for (int k = 0; k < 6; k++) {
				time_t fast, slow = brute_next(e, t, 2L * 366 * 1440);

				checks++;
				if (cron__next(e, t, &fast) || fast != slow) {
					mismatches++;
					diag("%s in %s after %ld: got %ld, want %ld", exprs[i],
					     zones[z], (long)t, (long)fast, (long)slow);
					break;
				}
				t = fast + 17 * 60 * k;
			}
			cron__free(e);
		}
	}
	setenv("TZ", "UTC0", 1);
	tzset();
	is_int(mismatches, 0, "the next time equals a minute-by-minute search (%d checks)", checks);
}

static void test_bounds(void)
{
	struct cron_expr *e = cron__parse("0 0 29 2 *", NULL);
	time_t t;

	is_int(cron__next(e, (time_t)1 << 62, &t), -EOVERFLOW, "an absurd time: -EOVERFLOW");
	is_int(cron__next(e, -((time_t)1 << 62), &t), -EOVERFLOW, "an absurd past: -EOVERFLOW");
	cron__free(e);
}

int main(void)
{
	setenv("TZ", "UTC0", 1);
	tzset();
	test_parse();
	test_next_utc();
	test_next_dst();
	test_against_brute_force();
	test_bounds();
	return done_testing();
}
