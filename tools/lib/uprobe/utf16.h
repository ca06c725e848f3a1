/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* UTF-16LE -> UTF-8 for strings copied out of a traced process: surrogate
 * pairs joined, lone surrogates as U+FFFD, bounded input, and a visible
 * marker where a string was cut. */
#ifndef SIDESCOPE_UTF16_H
#define SIDESCOPE_UTF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF16_STOP_NUL	0x1	/* end at the first U+0000 */
#define UTF16_MORE	0x2	/* the source went on past these bytes */
#define UTF16_MARK_CUT	0x4	/* append UTF16_CUT_MARK when the string was cut */

#define UTF16_CUT_MARK	"\xe2\x80\xa6"	/* U+2026 HORIZONTAL ELLIPSIS */

struct utf16_info {
	size_t units;		/* code units decoded */
	size_t replaced;	/* lone surrogates turned into U+FFFD */
	bool nul;		/* stopped at a U+0000 */
	bool cut;		/* the string goes on beyond what was decoded */
};

/* Bytes of output enough for any input of UNITS code units, marker and NUL
 * included. */
size_t utf16__utf8_size(size_t units);

/* Decode at most MAX_UNITS code units of the NBYTES bytes at SRC (an odd
 * last byte is ignored) into DST (always NUL-terminated when DSTSIZE > 0).
 * A string is cut when more units exist than MAX_UNITS, UTF16_MORE is set,
 * or DST is too small; a surrogate pair is never split. Return the length
 * of the UTF-8 written (without the NUL); INFO may be NULL. */
size_t utf16__to_utf8(const void *src, size_t nbytes, size_t max_units, unsigned int flags,
		      char *dst, size_t dstsize, struct utf16_info *info);

#endif
