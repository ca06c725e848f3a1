// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: uprobe probe specs (typed by users, passed through
 * wrappers), event records (written by BPF, replayed from files) and the
 * UTF-16 decoder (bytes from the traced process). Input: a spec, a NUL,
 * then the bytes of one event record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uprobe/probespec.h"
#include "uprobe/upfmt.h"
#include "uprobe/utf16.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t slen = nul ? (size_t)(nul - data) : size, rlen, len;
	struct probe_spec *ps;
	struct err err;
	char *spec, out[1024];
	uint8_t *rec;

	spec = malloc(slen + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, slen);
	spec[slen] = '\0';
	/* the rest, aligned, as a record and as UTF-16 */
	rlen = nul ? size - slen - 1 : 0;
	rec = malloc(rlen ? rlen : 1);
	if (!rec) {
		free(spec);
		return 0;
	}
	memcpy(rec, nul ? nul + 1 : data, rlen);
	utf16__to_utf8(rec, rlen, rlen, UTF16_STOP_NUL | UTF16_MARK_CUT, out, sizeof(out), NULL);
	utf16__to_utf8(rec, rlen, 3, UTF16_MORE | UTF16_MARK_CUT, out, 5, NULL);

	ps = probespec__parse(spec, &err);
	if (ps && probespec__finish(ps, 16, &err) == 0) {
		struct upfmt *t = upfmt__new(&ps, 1, false, 0);
		struct upfmt *j = upfmt__new(&ps, 1, true, 0);

		if (t && j) {
			upfmt__line(t, rec, rlen, &len);
			upfmt__line(j, rec, rlen, &len);
		}
		upfmt__free(t);
		upfmt__free(j);
	}
	probespec__free(ps);
	free(rec);
	free(spec);
	return 0;
}
