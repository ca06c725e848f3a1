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
#include "core/cli.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/json.h"
#include "core/util.h"

enum { OPT_FROM = 256, OPT_JSON };

/* The command line. */
struct env {
	const char *action;	/* "check" or "next" */
	const char *text;	/* the expression */
	const char *from;	/* next: --from, or NULL (now) */
	long count;		/* next: how many times */
	bool counted;		/* -c given */
	bool json;
};

static const struct cli_opt opts[] = {
	{ 'c', "count", "COUNT", "next: how many times to print (1-1000, default 5)" },
	{ OPT_JSON, "json", NULL, "print one JSON object: the canonical form (check) or\n"
				  "the times (next); errors as JSON lines on stderr",
	  CLI_STORE_TRUE(struct env, json) },
	{ OPT_FROM, "from", "TIME", "next: start after TIME, seconds since the epoch or\n"
				    "ISO 8601 (2026-03-29T01:30[:00][Z|+02:00]; no zone:\n"
				    "local time). Default: now",
	  CLI_STORE_ARG(struct env, from) },
	{ 'n', NULL, "N", NULL },	/* refused: a name in every other command */
	CLI_OPTS_END("debug messages")
};

static const struct cli cli = {
	.col = 21,
	.opts = opts,
	.text =
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
"\n",
	.tail =
"\n"
"EXAMPLES:\n"
"  sidescope cron check '*/10 * * * *'        # prints */10 as 0,10,...\n"
"  sidescope cron check '0 9-17 * * mon-fri'  # office hours, on the hour\n"
"  sidescope cron next '0 0 29 2 *' -c 3      # the next three Feb 29ths\n"
"  sidescope cron next '30 2 * * *' --from 2026-03-29T00:00Z\n",
};

/* cli_opt_fn: -c, and -n refused. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;

	switch (key) {
	case 'c':
		if (parse_long(arg, 1, 1000, &env->count))
			return usage_error("invalid count '%s' (1-1000)", arg);
		env->counted = true;
		break;
	case 'n':
		return usage_error("-n is a name in every sidescope command; the count "
				   "is -c %s", arg);
	}
	return 0;
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

/* ISO 8601 local time with its offset ("Z" for UTC) into BUF. */
static const char *iso_time(time_t t, char *buf, size_t size)
{
	struct tm tm;
	char zone[16] = "Z";
	size_t n;
	long off;

	localtime_r(&t, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	off = tm.tm_gmtoff;
	if (off != 0)
		snprintf(zone, sizeof(zone), "%c%02ld:%02ld", off < 0 ? '-' : '+',
			 labs(off) / 3600, labs(off) % 3600 / 60);
	snprintf(buf + n, size - n, "%s", zone);
	return buf;
}

/* The options, the action and the expression into ENV:
 * -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){ .count = 5 };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind >= argc)
		return usage_error("an action is needed: check or next");
	env->action = argv[optind++];
	if (strcmp(env->action, "check") && strcmp(env->action, "next"))
		return usage_error("unknown action '%s' (check or next)", env->action);
	if (optind >= argc)
		return usage_error("%s: the cron expression is missing (quote it: '*/5 * * * *')",
				   env->action);
	env->text = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s' (quote the whole expression)",
				   argv[optind]);
	if (strcmp(env->action, "check") == 0 && (env->from || env->counted))
		return usage_error("-c and --from go with 'next'");
	return -1;
}

/* check: the canonical form. Return the exit status. */
static int check(const struct env *env, const struct cron_expr *e, const char *shown)
{
	char canon[512];
	struct json j;

	if (cron__format(e, canon, sizeof(canon))) {
		p_err("cannot format '%s'", shown);
		return 1;
	}
	if (!env->json) {
		printf("%s\n", canon);
		return 0;
	}
	json__init(&j, stdout);
	json__obj(&j);
	json__key(&j, "expression");
	json__str(&j, env->text);
	json__key(&j, "canonical");
	json__str(&j, canon);
	json__end(&j);
	putchar('\n');
	return 0;
}

/* next: the next COUNT times, all computed before any is printed (an error
 * leaves no half-written JSON). Return the exit status. */
static int next(const struct env *env, const struct cron_expr *e, const char *shown)
{
	static time_t times[1000];
	char buf[64];
	struct json j;
	time_t t;

	if (!env->from)
		t = time(NULL);
	else if (parse_time(env->from, &t))
		return usage_error("invalid --from '%s' (seconds since the epoch, or "
				   "YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM])", env->from);
	for (long i = 0; i < env->count; i++) {
		int rc = cron__next(e, t, &t);

		if (rc == -ERANGE) {
			p_err("'%s' never matches after this time (searched 30 years)", shown);
			return 1;
		}
		if (rc) {
			p_err("next time of '%s': %s", shown, strerror(-rc));
			return 1;
		}
		times[i] = t;
	}
	if (!env->json) {
		for (long i = 0; i < env->count; i++)
			printf("%s\n", iso_time(times[i], buf, sizeof(buf)));
		return 0;
	}
	json__init(&j, stdout);
	json__obj(&j);
	json__key(&j, "expression");
	json__str(&j, env->text);
	json__key(&j, "next");
	json__arr(&j);
	for (long i = 0; i < env->count; i++)
		json__str(&j, iso_time(times[i], buf, sizeof(buf)));
	json__end(&j);
	json__end(&j);
	putchar('\n');
	return 0;
}

int cmd_cron(int argc, char **argv)
{
	struct env env;
	struct cron_expr *e;
	struct err perr;
	char shown[200], why[ESCAPE_MAX(sizeof(perr.msg)) + 1];
	int err;

	err = parse_args(argc, argv, &env);
	if (err >= 0)
		return err;
	quotable(env.text, shown, sizeof(shown));
	e = cron__parse(env.text, &perr);
	if (!e) {
		if (errno == ENOMEM) {
			p_err("out of memory");
			return 1;
		}
		/* the parser's message quotes the expression's tokens */
		if (env.json)
			p_err("bad cron expression '%s': %s", shown,
			      quotable(perr.msg, why, sizeof(why)));
		else
			p_info("bad cron expression '%s': %s", shown,
			       quotable(perr.msg, why, sizeof(why)));
		return 2;
	}
	err = strcmp(env.action, "check") == 0 ? check(&env, e, shown) : next(&env, e, shown);
	cron__free(e);
	if (err == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
		p_err("cannot write output: %s", strerror(errno));
		err = 1;
	}
	return err;
}
