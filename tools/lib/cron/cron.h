/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* 5-field cron expressions (minute hour day-of-month month day-of-week) as
 * busybox crond runs them: parsing with errors that name the field, a
 * canonical form crond reads the same way, and the next matching times. */
#ifndef SIDESCOPE_CRON_H
#define SIDESCOPE_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/err.h"

struct cron_expr;

/* Parse text. Return a new expression, or NULL with errno set (EINVAL: a
 * message naming the field, the offending text and why goes to ERR, which
 * may be NULL; ENOMEM). An expression that can never match ("0 0 31 2 *")
 * is an error. */
struct cron_expr *cron__parse(const char *text, struct err *err);
void cron__free(struct cron_expr *e);

/* Write the canonical form: "*" for every field that covers its whole range,
 * else values and ranges ("0-5,30"), day-of-week 7 written as 0. busybox
 * crond parses it into the same sets. Return 0 or -ENOSPC. */
int cron__format(const struct cron_expr *e, char *buf, size_t len);

/* Does the broken-down local time tm (tm_min..tm_wday) match? When both day
 * fields are restricted a day matches either (OR); a field that covers its
 * whole range ("*", "1-31", "0-7") counts as unrestricted, as in busybox. */
bool cron__matches(const struct cron_expr *e, const struct tm *tm);

/* The first minute strictly after 'after' that matches, in local time as
 * crond sees it (localtime_r). Bounded work. Return 0, -ERANGE when there is
 * no match within 30 years, -EOVERFLOW when the time is not representable. */
int cron__next(const struct cron_expr *e, time_t after, time_t *next);

#endif
