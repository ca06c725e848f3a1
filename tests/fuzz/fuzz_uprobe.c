// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: uprobe probe specs (typed by users, passed through
 * wrappers), event records (written by BPF, replayed from files) and the
 * UTF-16 decoder (bytes from the traced process). Input: a spec (after a
 * tab, a --by expression), a NUL, then the bytes of one event record, also
 * read as a --by key from the BPF map. */
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
	struct up_bykey key;
	struct err err;
	char *spec, *by, out[1024];
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

	by = strchr(spec, '\t');
	if (by)
		*by++ = '\0';
	ps = probespec__parse(spec, &err);
	if (ps && probespec__finish(ps, 16, &err) == 0) {
		struct upfmt *t = upfmt__new(&ps, 1, false, 0);
		struct upfmt *j = upfmt__new(&ps, 1, true, 0);

		if (t && j) {
			upfmt__line(t, rec, rlen, &len);
			upfmt__line(j, rec, rlen, &len);
		}
		if (t && j && by && probespec__add_value(ps, PS_ROLE_BY, by, &err) == 0 &&
		    rlen >= sizeof(key)) {
			memcpy(&key, rec, sizeof(key));
			upfmt__by_value(t, ps, &key, &len);
			upfmt__by_value(j, ps, &key, &len);
		}
		upfmt__free(t);
		upfmt__free(j);
	}
	probespec__free(ps);
	free(rec);
	free(spec);
	return 0;
}
