// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Folded-stack reader. Works in place on line buffers: frame names are
 * cut out with NULs, so a million lines cost no allocation per line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof/folded.h"
#include "core/util.h"

enum frame_kind folded__kind(const char *s, size_t *len)
{
	size_t n = *len;

	if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']') {
		switch (s[n - 2]) {
		case 'k':
			*len = n - 4;
			return FRAME_KERNEL;
		case 'j':
			*len = n - 4;
			return FRAME_JIT;
		case 'r':
			*len = n - 4;
			return FRAME_R2R;
		}
	}
	if (n == 9 && memcmp(s, "[unknown]", 9) == 0)
		return FRAME_UNKNOWN;
	/* "module+0x1234": an address nobody could name. Scan back over the
	 * hex digits: names end in few of them, so this stays cheap. */
	{
		const char *p = s + n;

		while (p > s && ((p[-1] >= '0' && p[-1] <= '9') || (p[-1] >= 'a' && p[-1] <= 'f') ||
				 (p[-1] >= 'A' && p[-1] <= 'F')))
			p--;
		if (p < s + n && p - s >= 3 && p[-3] == '+' && p[-2] == '0' && p[-1] == 'x')
			return FRAME_UNKNOWN;
	}
	return FRAME_NATIVE;
}

struct frames {
	const char **names;
	enum frame_kind *kinds;
	size_t cap;
	unsigned int flags;
	/* the previous stack's text and where each of its frames ends */
	char *prev;
	size_t prev_len, prev_cap;
	size_t *prev_end;
	size_t prev_depth;
};

static int frames_grow(struct frames *fr)
{
	size_t cap = fr->cap ? fr->cap * 2 : 128;
	const char **n = realloc(fr->names, cap * sizeof(*n));
	enum frame_kind *k;
	size_t *e;

	if (!n)
		return -ENOMEM;
	fr->names = n;
	k = realloc(fr->kinds, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	fr->kinds = k;
	e = realloc(fr->prev_end, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	fr->prev_end = e;
	fr->cap = cap;
	return 0;
}

static void frames_free(struct frames *fr)
{
	free(fr->names);
	free(fr->kinds);
	free(fr->prev);
	free(fr->prev_end);
}

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static size_t common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	uint64_t x, y;

	while (i + 8 <= n) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* One line without its newline, NUL-terminated at s[n]. */
static int parse_line(char *s, size_t n, struct frames *fr, folded_cb cb, void *ctx,
		      struct folded_stats *st)
{
	char *count, *p, *end;
	uint64_t c;
	size_t depth = 0, same = 0, slen, common, i;
	int err;

	st->lines++;
	while (n && is_blank(s[n - 1]))
		s[--n] = '\0';
	while (n && is_blank(*s))
		s++, n--;
	if (!n || *s == '#')
		return 0;
	count = s + n;
	while (count > s && !is_blank(count[-1]))
		count--;
	if (count == s || parse_u64(count, 0, UINT64_MAX, &c))
		goto bad;
	end = count;
	while (end > s && is_blank(end[-1]))
		end--;
	*end = '\0';
	slen = end - s;

	/* frames whose text and separator match the previous line are shared */
	common = common_prefix(s, fr->prev, slen < fr->prev_len ? slen : fr->prev_len);
	if (common == slen && slen == fr->prev_len) {
		same = fr->prev_depth;
	} else {
		while (same < fr->prev_depth && fr->prev_end[same] < common)
			same++;
	}
	if (same > fr->cap || fr->flags & FOLDED_FULL)
		same = 0;
	/* keep this line's text for the next one before cutting it up */
	if (slen > fr->prev_cap) {
		size_t cap = slen * 2;
		char *v = realloc(fr->prev, cap);

		if (!v)
			return -ENOMEM;
		fr->prev = v;
		fr->prev_cap = cap;
	}
	memcpy(fr->prev, s, slen);
	fr->prev_len = slen;

	depth = same;
	for (i = 0; i < same; i++)
		fr->names[i] = NULL;
	p = same ? s + fr->prev_end[same - 1] + 1 : s;
	while (p < end) {
		char *semi = memchr(p, ';', end - p);
		size_t len;

		if (!semi)
			semi = end;
		len = semi - p;
		if (len) {
			if (depth == fr->cap && (err = frames_grow(fr)))
				return err;
			fr->prev_end[depth] = semi - s;
			fr->kinds[depth] = folded__kind(p, &len);
			p[len] = '\0';
			fr->names[depth++] = p;
		}
		p = semi + 1;
	}
	fr->prev_depth = depth;
	if (!depth)
		goto bad;
	st->stacks++;
	st->samples += c;
	if (!c) {
		fr->prev_len = fr->prev_depth = 0;	/* the callback did not see it */
		return 0;
	}
	return cb(ctx, fr->names, fr->kinds, depth, c, same);
bad:
	fr->prev_len = fr->prev_depth = 0;
	if (!st->bad)
		st->first_bad = st->lines;
	st->bad++;
	return 0;
}

static int parse_lines(char *buf, size_t len, bool final, size_t *used, struct frames *fr,
		       folded_cb cb, void *ctx, struct folded_stats *st)
{
	char *p = buf, *end = buf + len, *nl;
	int err;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl) {
			if (!final)
				break;
			nl = end;	/* the caller left room for a NUL */
		}
		*nl = '\0';
		err = parse_line(p, nl - p, fr, cb, ctx, st);
		if (err)
			return err;
		p = nl + 1;
	}
	*used = p > end ? len : (size_t)(p - buf);
	return 0;
}

int folded__parse(char *buf, size_t len, unsigned int flags, folded_cb cb, void *ctx,
		  struct folded_stats *st)
{
	struct frames fr = { .flags = flags };
	struct folded_stats dummy;
	char *copy = NULL;
	size_t used;
	int err;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	/* the last line needs room for its terminating NUL */
	if (len && buf[len - 1] != '\n') {
		copy = malloc(len + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, buf, len);
		copy[len] = '\n';
		buf = copy;
		len++;
	}
	err = parse_lines(buf, len, true, &used, &fr, cb, ctx, st);
	free(copy);
	frames_free(&fr);
	return err;
}

int folded__read(FILE *f, const char *head, size_t head_len, unsigned int flags,
		 folded_cb cb, void *ctx, struct folded_stats *st)
{
	struct frames fr = { .flags = flags };
	struct folded_stats dummy;
	size_t cap = 1 << 20, len = 0, used, got;
	char *buf;
	int err = 0;
	bool eof = false;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (head_len + 1 > cap)
		cap = head_len + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	if (head_len)
		memcpy(buf, head, head_len);
	len = head_len;
	for (;;) {
		if (!eof && f) {
			if (len + 1 >= cap) {
				/* one line longer than the buffer */
				char *b = realloc(buf, cap * 2);

				if (!b) {
					err = -ENOMEM;
					goto cleanup;
				}
				buf = b;
				cap *= 2;
			}
			got = fread(buf + len, 1, cap - 1 - len, f);
			len += got;
			if (got == 0) {
				if (ferror(f)) {
					err = -EIO;
					goto cleanup;
				}
				eof = true;
			}
		} else {
			eof = true;
		}
		if (eof && len && buf[len - 1] != '\n')
			buf[len++] = '\n';	/* cap - 1 kept this byte free */
		err = parse_lines(buf, len, eof, &used, &fr, cb, ctx, st);
		if (err || eof)
			goto cleanup;
		memmove(buf, buf + used, len - used);
		len -= used;
	}
cleanup:
	free(buf);
	frames_free(&fr);
	return err;
}
