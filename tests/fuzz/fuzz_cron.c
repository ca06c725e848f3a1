// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: cron expressions, which come from the pod spec
 * (SIDESCOPE_SCHEDULE). Beyond not crashing: an accepted expression has a
 * canonical form that parses back to itself, and its next times match and
 * increase. The first line is the expression; bytes after it pick the start
 * time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err perr;
	char *buf = malloc(size + 1), canon[512], again[512];
	struct cron_expr *e = NULL, *e2 = NULL;
	time_t t = 1764581220;	/* 2025-12-01T09:27Z */
	const uint8_t *nl;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nl = memchr(data, '\n', size);
	if (nl) {
		/* up to 5 bytes of start time: years around 1970..2100 */
		uint64_t v = 0;

		for (const uint8_t *p = nl + 1; p < data + size && p < nl + 6; p++)
			v = v << 8 | *p;
		t = (time_t)(v % 4102444800ULL);
		buf[nl - data] = '\0';
	}
	e = cron__parse(buf, &perr);
	if (!e) {
		if (!perr.msg[0])
			abort();	/* every error says why */
		goto cleanup;
	}
	if (cron__format(e, canon, sizeof(canon)))
		abort();
	e2 = cron__parse(canon, &perr);
	if (!e2 || cron__format(e2, again, sizeof(again)) || strcmp(canon, again))
		abort();
	for (int i = 0; i < 3; i++) {
		time_t next;
		struct tm tm;

		if (cron__next(e, t, &next))
			break;
		if (next <= t || next % 60 || !localtime_r(&next, &tm) || !cron__matches(e, &tm) ||
		    !cron__matches(e2, &tm))
			abort();
		t = next;
	}
cleanup:
	cron__free(e2);
	cron__free(e);
	free(buf);
	return 0;
}
