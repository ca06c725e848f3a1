// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope cron: check a cron schedule before busybox crond silently
 * ignores it, and show when it runs. capture-loop calls 'check' and gives
 * crond the canonical form it prints. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "cron/cron.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/json.h"
#include "core/util.h"

static void help(void)
{
	printf(
"sidescope cron: check cron expressions and show when they run\n"
"\n"
"USAGE: sidescope cron check EXPR\n"
"       sidescope cron next EXPR [-c COUNT] [--from EPOCH|ISO] [--json]\n"
"\n"
"EXPR has 5 fields, as busybox crond reads them: minute (0-59), hour\n"
"(0-23), day-of-month (1-31), month (1-12 or jan-dec), day-of-week (0-7 or\n"
"sun-sat; 0 and 7 are Sunday). Each field is '*', a value, a range A-B, a\n"
"step */N or A-B/N, or a comma-separated list of those. When both day\n"
"fields are restricted, a day matching either runs. Times are local, as\n"
"crond sees them (TZ; UTC in most containers).\n"
"\n"
"'check' prints the expression in the canonical form that capture-loop\n"
"hands to crond, or says which field is wrong and why (exit 2). '@hourly'\n"
"and the other '@' shortcuts are refused: busybox crond 1.35 crashes on\n"
"them.\n"
"\n"
"OPTIONS:\n"
"  -c, --count COUNT  next: how many times to print (1-1000, default 5)\n"
"      --json         print one JSON object: the canonical form (check) or\n"
"                     the times (next); errors as JSON lines on stderr\n"
"      --from TIME    next: start after TIME, seconds since the epoch or\n"
"                     ISO 8601 (2026-03-29T01:30[:00][Z|+02:00]; no zone:\n"
"                     local time). Default: now\n"
"  -v, --verbose      debug messages\n"
"  -h, --help         print this help\n"
"\n"
"EXAMPLES:\n"
"  sidescope cron check '*/10 * * * *'        # prints */10 as 0,10,...\n"
"  sidescope cron check '0 9-17 * * mon-fri'  # office hours, on the hour\n"
"  sidescope cron next '0 0 29 2 *' -c 3      # the next three Feb 29ths\n"
"  sidescope cron next '30 2 * * *' --from 2026-03-29T00:00Z\n");
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* Fixed-width decimal at s[0..n) within [min, max]; leading zeros are
 * decimal here ("09"), not octal. */
static int num_at(const char *s, size_t n, long min, long max, int *out)
{
	long v = 0;

	if (n > 6 || !all_digits(s, n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	if (v < min || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Seconds since the epoch, or YYYY-MM-DD[T ]HH:MM[:SS][Z|+HH:MM|-HH:MM]. */
static int parse_time(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec = 0, oh = 0, om = 0;
	bool utc = false;
	const char *p;
	uint64_t v;
	time_t t;

	if (all_digits(s, strlen(s))) {
		v = 0;
		/* decimal (no octal for leading zeros), up to 9999-12-31 */
		for (p = s; *p; p++) {
			v = v * 10 + (uint64_t)(*p - '0');
			if (v > 253402300799ULL)
				return -EINVAL;
		}
		*out = (time_t)v;
		return 0;
	}
	if (strlen(s) < 16 || num_at(s, 4, 1970, 9999, &y) || s[4] != '-' ||
	    num_at(s + 5, 2, 1, 12, &mo) || s[7] != '-' || num_at(s + 8, 2, 1, 31, &d) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || num_at(s + 11, 2, 0, 23, &h) ||
	    s[13] != ':' || num_at(s + 14, 2, 0, 59, &mi))
		return -EINVAL;
	p = s + 16;
	if (*p == ':') {
		if (num_at(p + 1, 2, 0, 59, &sec))
			return -EINVAL;
		p += 3;
	}
	if (*p == 'Z' || *p == 'z') {
		utc = true;
		p++;
	} else if (*p == '+' || *p == '-') {
		if (num_at(p + 1, 2, 0, 23, &oh) || p[3] != ':' || num_at(p + 4, 2, 0, 59, &om))
			return -EINVAL;
		if (*p == '-') {
			oh = -oh;
			om = -om;
		}
		utc = true;
		p += 6;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	if (utc) {
		t = timegm(&tm);
		t -= (time_t)oh * 3600 + (time_t)om * 60;
	} else {
		t = mktime(&tm);
	}
	/* timegm/mktime normalise Feb 30 into March: refuse it */
	if (tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -EINVAL;
	*out = t;
	return 0;
}

/* The expression as messages quote it: one line, control characters
 * escaped, cut with "..." when it does not fit. */
static const char *quotable(const char *s, char *buf, size_t len)
{
	escape__str(buf, len, s, strlen(s), 0, 0);
	return buf;
}

/* ISO 8601 local time with its offset ("Z" for UTC), a line or, for
 * --json, a quoted array element. */
static void print_time(time_t t, bool json, bool first)
{
	struct tm tm;
	char buf[64], zone[16] = "Z";
	long off;

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	off = tm.tm_gmtoff;
	if (off != 0)
		snprintf(zone, sizeof(zone), "%c%02ld:%02ld", off < 0 ? '-' : '+',
			 labs(off) / 3600, labs(off) % 3600 / 60);
	if (json)
		printf("%s\"%s%s\"", first ? "" : ",", buf, zone);
	else
		printf("%s%s\n", buf, zone);
}

int cmd_cron(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_JSON };
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *action, *text, *from = NULL;
	struct cron_expr *e = NULL;
	struct err perr;
	char canon[512], shown[200], why[ESCAPE_MAX(sizeof(perr.msg)) + 1];
	long count = 5;
	bool json = false, counted = false;
	static time_t times[1000];
	time_t t;
	int c, err = 1;

	while ((c = getopt_long(argc, argv, "c:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_long(optarg, 1, 1000, &count))
				return usage_error("invalid count '%s' (1-1000)", optarg);
			counted = true;
			break;
		case 'n':
			return usage_error("-n is a name in every sidescope command; the count "
					   "is -c %s", optarg);
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'h':
			help();
			return 0;
		default:
			return usage_hint();
		}
	}
	if (optind >= argc)
		return usage_error("an action is needed: check or next");
	action = argv[optind++];
	if (strcmp(action, "check") && strcmp(action, "next"))
		return usage_error("unknown action '%s' (check or next)", action);
	if (optind >= argc)
		return usage_error("%s: the cron expression is missing (quote it: '*/5 * * * *')",
				   action);
	text = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s' (quote the whole expression)",
				   argv[optind]);
	if (strcmp(action, "check") == 0 && (from || counted))
		return usage_error("-c and --from go with 'next'");

	quotable(text, shown, sizeof(shown));
	e = cron__parse(text, &perr);
	if (!e) {
		if (errno == ENOMEM) {
			p_err("out of memory");
			return 1;
		}
		/* the parser's message quotes the expression's tokens */
		if (json)
			p_err("bad cron expression '%s': %s", shown,
			      quotable(perr.msg, why, sizeof(why)));
		else
			p_info("bad cron expression '%s': %s", shown,
			       quotable(perr.msg, why, sizeof(why)));
		return 2;
	}
	if (strcmp(action, "check") == 0) {
		if (cron__format(e, canon, sizeof(canon))) {
			p_err("cannot format '%s'", shown);
			goto cleanup;
		}
		if (json) {
			fputs("{\"expression\":", stdout);
			json_write_string(stdout, text);
			fputs(",\"canonical\":", stdout);
			json_write_string(stdout, canon);
			fputs("}\n", stdout);
		} else {
			printf("%s\n", canon);
		}
	} else {
		if (!from) {
			t = time(NULL);
		} else if (parse_time(from, &t)) {
			err = usage_error("invalid --from '%s' (seconds since the epoch, or "
					  "YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM])", from);
			goto cleanup;
		}
		/* all computed first: an error leaves no half-written JSON */
		for (long i = 0; i < count; i++) {
			int rc = cron__next(e, t, &t);

			if (rc == -ERANGE) {
				p_err("'%s' never matches after this time (searched 30 years)", shown);
				goto cleanup;
			}
			if (rc) {
				p_err("next time of '%s': %s", shown, strerror(-rc));
				goto cleanup;
			}
			times[i] = t;
		}
		if (json) {
			fputs("{\"expression\":", stdout);
			json_write_string(stdout, text);
			fputs(",\"next\":[", stdout);
		}
		for (long i = 0; i < count; i++)
			print_time(times[i], json, i == 0);
		if (json)
			fputs("]}\n", stdout);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		p_err("cannot write output: %s", strerror(errno));
		goto cleanup;
	}
	err = 0;
cleanup:
	cron__free(e);
	return err;
}
