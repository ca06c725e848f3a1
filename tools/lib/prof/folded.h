/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Folded stacks: one stack a line, "outer;...;leaf COUNT", as perf +
 * stackcollapse and 'sidescope profile -f folded' write them. The reader is
 * lenient: CRLF, blank lines, '#' comments and surrounding blanks are fine;
 * a line without a valid count is counted as bad and skipped. Frame kinds
 * come from the suffixes described in frame.h, which the reader strips. */
#ifndef SIDESCOPE_FOLDED_H
#define SIDESCOPE_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sym/frame.h"

struct folded_stats {
	uint64_t lines;		/* lines seen, blank and comments included */
	uint64_t stacks;	/* lines that gave a stack */
	uint64_t bad;		/* lines skipped as malformed */
	uint64_t first_bad;	/* line number of the first bad line (1-based) */
	uint64_t samples;	/* sum of the counts */
};

/* Called once per stack: names outermost first, valid only during the call.
 * The first `same` frames are those of the previous call (a sorted folded
 * file repeats long prefixes); unless FOLDED_FULL was asked for, their
 * names are NULL and not even cut out of the line. Stacks with a count of
 * 0 are not passed. Return 0 to go on, or a negative errno to stop. */
typedef int (*folded_cb)(void *ctx, const char *const *names,
			 const enum frame_kind *kinds, size_t depth, uint64_t count,
			 size_t same);

enum {
	FOLDED_FULL = 1,	/* every name, even of frames shared with the last call */
};

/* Kind of one folded frame name of len bytes; *len loses the suffix. */
enum frame_kind folded__kind(const char *name, size_t *len);

/* Parse len bytes of folded text in buf (modified in place; need not end
 * in a newline). Return 0 or the first negative errno of cb. */
int folded__parse(char *buf, size_t len, unsigned int flags, folded_cb cb,
		  void *ctx, struct folded_stats *st);

/* Stream folded text: first the head_len bytes at head (already read by a
 * caller that sniffed the format; may be 0), then the rest of f, with
 * memory bounded by the longest line. Return 0, a negative errno of cb,
 * -EIO on a read error or -ENOMEM. */
int folded__read(FILE *f, const char *head, size_t head_len, unsigned int flags,
		 folded_cb cb, void *ctx, struct folded_stats *st);

#endif
