/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Flame graph builder and SVG writer, shared by 'sidescope flame' and
 * 'sidescope profile -o x.svg'. Feed it stacks, then write one
 * self-contained interactive SVG. The parts behind this interface (tree,
 * layout, diff, SVG) are described in flame_int.h. */
#ifndef SIDESCOPE_FLAMEGRAPH_H
#define SIDESCOPE_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sym/frame.h"

enum flame_colors {
	FLAME_COLORS_KIND,	/* by frame kind, with a legend (default) */
	FLAME_COLORS_HASH,	/* by a hash of the name: stable across graphs */
	FLAME_COLORS_MONO,
	FLAME_COLORS_BLOCKED,	/* blues by frame kind: time off the CPU */
};

struct flame_opts {
	const char *title;	/* NULL: "CPU profile" */
	const char *subtitle;	/* NULL: none */
	unsigned int width;	/* pixels; 0: 1200 */
	double min_width;	/* pixels; frames narrower are merged; 0: 0.1,
				 * raised if needed (see max_frames) */
	bool inverted;		/* icicle: root at the top */
	bool reverse;		/* merge stacks by leaf */
	enum flame_colors colors;
	const char *count_name;	/* "samples" unless set */
	bool normalize;		/* diff: scale "before" to the "after" total */
	size_t max_frames;	/* with min_width 0: raise the minimum width from
				 * 0.1 px until at most this many frames are
				 * drawn (0: 30000, about 4 MB of SVG) */
};

struct flamegraph;

/* An empty graph, or NULL with errno set; freed with flame__free (which
 * takes NULL). */
struct flamegraph *flame__new(void);
/* Add COUNT samples of one stack, outermost frame first. names[i] need not
 * outlive the call; kinds may be NULL (kinds then come from the folded
 * suffixes _[k] _[j] _[r], which are stripped). Return 0 or -ENOMEM. */
int flame__add_stack(struct flamegraph *fg, const char *const *names,
		     const enum frame_kind *kinds, size_t depth, uint64_t count);
/* For differential graphs: the same stacks from the "before" profile. */
int flame__add_stack_before(struct flamegraph *fg, const char *const *names,
			    const enum frame_kind *kinds, size_t depth, uint64_t count);
/* Like flame__add_stack (or _before), for readers of sorted input: the
 * first `shared` frames are those of the previous call on fg, and their
 * names[] entries are not read. -EINVAL if there were not that many. */
int flame__add_stack_shared(struct flamegraph *fg, const char *const *names,
			    const enum frame_kind *kinds, size_t depth, uint64_t count,
			    size_t shared, bool before);
/* Samples added (not with _before); 0 for NULL. */
uint64_t flame__total(const struct flamegraph *fg);
/* Write the SVG to OUT (flushed, not closed); OPTS NULL: the defaults.
 * The same graph and options give the same bytes. Return 0 or a negative
 * errno (write errors included). */
int flame__write_svg(struct flamegraph *fg, FILE *out, const struct flame_opts *opts);
void flame__free(struct flamegraph *fg);

/* After flame__write_svg: frames drawn, and frames that were narrower than
 * min_width and went into merged boxes instead. */
size_t flame__frames_drawn(const struct flamegraph *fg);
size_t flame__frames_elided(const struct flamegraph *fg);
/* Samples added with flame__add_stack_before. */
uint64_t flame__total_before(const struct flamegraph *fg);

#endif
