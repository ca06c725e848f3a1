// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Escaping of hostile text for terminals and line formats (see escape.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/util.h"

/* The longest escaped form of one input unit: "\u00NN". */
#define TOKEN_MAX 6

static const char hex[] = "0123456789abcdef";

/* Escape the unit (one byte or one UTF-8 sequence) at S, N > 0 bytes left,
 * into D (TOKEN_MAX bytes of room). Set *USED to the input bytes taken and
 * *COLS to the display columns of the output; return the output bytes. */
static inline size_t esc_unit(char *d, const unsigned char *s, size_t n, unsigned int flags,
			      size_t *used, size_t *cols)
{
	unsigned char c = s[0];
	size_t l;

	*used = 1;
	if (c >= 0x20 && c < 0x7f && (c != '\\' || (flags & ESCAPE_KEEP_BACKSLASH))) {
		d[0] = (char)c;
		*cols = 1;
		return 1;
	}
	if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
		d[0] = '\\';
		d[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\';
		*cols = 2;
		return 2;
	}
	if (c >= 0x80 && (l = utf8_seq_len(s, n))) {
		*used = l;
		if (l == 2 && c == 0xc2 && s[1] < 0xa0) {
			/* C1 controls U+0080..U+009F */
			memcpy(d, "\\u00", 4);
			d[4] = hex[s[1] >> 4];
			d[5] = hex[s[1] & 15];
			*cols = 6;
			return 6;
		}
		memcpy(d, s, l);
		*cols = 1;
		return l;
	}
	/* other C0, DEL, and each byte of invalid UTF-8 */
	d[0] = '\\';
	d[1] = 'x';
	d[2] = hex[c >> 4];
	d[3] = hex[c & 15];
	*cols = 4;
	return 4;
}

size_t escape__mem(char *dst, const char *str, size_t n, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, out = 0, used, cols;

	while (i < n) {
		unsigned char c = s[i];

		/* the common case, a run of plain ASCII, without the call */
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			dst[out++] = (char)c;
			i++;
			continue;
		}
		out += esc_unit(dst + out, s + i, n - i, flags, &used, &cols);
		i += used;
	}
	return out;
}

size_t escape__str(char *dst, size_t size, const char *str, size_t n, size_t maxcols,
		   unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t maxb, i = 0, out = 0, ncols = 0, used, cols, b;
	size_t mark = 0, mark_cols = 0;	/* the last place "..." still fits after */
	char tok[TOKEN_MAX];

	if (size == 0)
		return 0;
	maxb = size - 1;
	if (maxcols == 0)
		maxcols = (size_t)-1;
	while (i < n) {
		b = esc_unit(tok, s + i, n - i, flags, &used, &cols);
		if (out + b > maxb || ncols + cols > maxcols) {
			size_t dots = 3;

			out = mark;
			ncols = mark_cols;
			if (dots > maxb - out)
				dots = maxb - out;
			if (dots > maxcols - ncols)
				dots = maxcols - ncols;
			memset(dst + out, '.', dots);
			out += dots;
			ncols += dots;
			break;
		}
		memcpy(dst + out, tok, b);
		out += b;
		ncols += cols;
		i += used;
		if (out + 3 <= maxb && ncols + 3 <= maxcols) {
			mark = out;
			mark_cols = ncols;
		}
	}
	dst[out] = '\0';
	return ncols;
}

int escape__fwrite(FILE *f, const char *str, size_t n, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str;
	char buf[4096];
	size_t i = 0, len = 0, used, cols;

	/* unit by unit, so that no sequence is split between two writes */
	while (i < n) {
		len += esc_unit(buf + len, s + i, n - i, flags, &used, &cols);
		i += used;
		if (len > sizeof(buf) - TOKEN_MAX || i == n) {
			if (fwrite(buf, 1, len, f) != len)
				return -EIO;
			len = 0;
		}
	}
	return 0;
}

char *escape__dup(const char *s, size_t n, unsigned int flags)
{
	char *d;
	size_t len;

	if (n > ((size_t)-1 - 1) / 4) {
		errno = ENOMEM;
		return NULL;
	}
	d = malloc(ESCAPE_MAX(n) + 1);
	if (!d)
		return NULL;
	len = escape__mem(d, s, n, flags);
	d[len] = '\0';
	return d;
}
