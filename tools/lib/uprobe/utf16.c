// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "uprobe/utf16.h"

size_t utf16__utf8_size(size_t units)
{
	/* 3 bytes per unit at most (a pair: 4 bytes for 2 units) */
	return units * 3 + sizeof(UTF16_CUT_MARK) + 1;
}

static size_t put_cp(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | (cp >> 6));
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | (cp >> 12));
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | (cp >> 18));
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t utf16__to_utf8(const void *src, size_t nbytes, size_t max_units, unsigned int flags,
		      char *dst, size_t dstsize, struct utf16_info *info)
{
	const uint8_t *s = src;
	size_t avail = nbytes / 2, lim = avail < max_units ? avail : max_units;
	size_t i = 0, o = 0, room;
	struct utf16_info in = { 0 };
	size_t marklen = flags & UTF16_MARK_CUT ? sizeof(UTF16_CUT_MARK) - 1 : 0;

	if (dstsize == 0)
		return 0;
	/* keep space for the marker and the NUL */
	room = dstsize - 1 > marklen ? dstsize - 1 - marklen : 0;
	while (i < lim) {
		uint32_t u = (uint32_t)s[2 * i] | (uint32_t)s[2 * i + 1] << 8, cp = u;
		size_t used = 1, need;
		char tmp[4];

		if (u == 0 && (flags & UTF16_STOP_NUL)) {
			in.nul = true;
			break;
		}
		if (u >= 0xd800 && u <= 0xdbff) {
			if (i + 1 < lim) {
				uint32_t v = (uint32_t)s[2 * i + 2] | (uint32_t)s[2 * i + 3] << 8;

				if (v >= 0xdc00 && v <= 0xdfff) {
					cp = 0x10000 + ((u - 0xd800) << 10) + (v - 0xdc00);
					used = 2;
				} else {
					cp = 0xfffd;
					in.replaced++;
				}
			} else if (i + 1 < avail || ((flags & UTF16_MORE) && i + 1 == avail)) {
				/* its partner lies beyond the limit: cut before the pair */
				in.cut = true;
				break;
			} else {
				cp = 0xfffd;
				in.replaced++;
			}
		} else if (u >= 0xdc00 && u <= 0xdfff) {
			cp = 0xfffd;
			in.replaced++;
		}
		need = put_cp(tmp, cp);
		if (o + need > room) {
			in.cut = true;
			break;
		}
		memcpy(dst + o, tmp, need);
		o += need;
		i += used;
	}
	in.units = i;
	if (!in.nul && i == lim) {
		if (lim < avail) {
			/* a NUL right at the limit ends the string: nothing was cut */
			if (!((flags & UTF16_STOP_NUL) && s[2 * i] == 0 && s[2 * i + 1] == 0))
				in.cut = true;
			else
				in.nul = true;
		} else if (flags & UTF16_MORE) {
			in.cut = true;
		}
	}
	if (in.cut && marklen && o + marklen <= dstsize - 1) {
		memcpy(dst + o, UTF16_CUT_MARK, marklen);
		o += marklen;
	}
	dst[o] = '\0';
	if (info)
		*info = in;
	return o;
}
