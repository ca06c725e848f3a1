/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internals of the flame graph, shared by its parts only:
 *
 *   flame_tree.c    the model: stacks merged into a prefix tree, names
 *                   interned; the tree merged by leaf (--reverse)
 *   flame_layout.c  the frames to draw, in preorder, with their positions
 *   flame_diff.c    differential graphs: the change of each frame, its colour
 *   flame_svg.c     the SVG writer (flame__write_svg)
 *
 * The tree's nodes live in one array (nodes[0] is the root, children come
 * after their parents) and are found through one open-addressing hash
 * keyed by (parent, name), so a million stacks cost a few allocations, not
 * millions. Names are interned once into an arena. */
#ifndef SIDESCOPE_FLAME_INT_H
#define SIDESCOPE_FLAME_INT_H

#include "flame/flamegraph.h"

#define FLAME_NONE UINT32_MAX

struct fname {
	uint32_t off;		/* into names arena */
	uint32_t len;
	uint32_t rank;		/* position in sorted order, set at write time */
	uint8_t kind;
};

struct fnode {
	uint32_t name;
	uint32_t parent;
	uint32_t child;		/* first child */
	uint32_t sibling;
	uint32_t nchild;	/* children; past FANOUT_HASHED they are hashed */
	uint64_t after;		/* samples: the profile drawn */
	uint64_t before;	/* samples of the "before" profile (diff) */
};

/* Most nodes have a few children, found faster by walking the sibling
 * list than by probing a big hash table; only the children of nodes with
 * more than this many go into the (parent, name) hash. */
#define FANOUT_HASHED 8

/* A node's hash slot keeps a tag of the key so that a probe touches the
 * node array only when it is likely to match. */
struct nslot {
	uint32_t id;
	uint32_t tag;
};

struct flamegraph {
	char *arena;
	size_t arena_len, arena_cap;
	struct fname *names;
	uint32_t n_names, names_cap;
	uint32_t *name_ht;	/* name id + 1; 0 empty */
	uint32_t name_ht_cap;	/* power of two */

	struct fnode *nodes;	/* nodes[0] is the root */
	uint32_t n_nodes, nodes_cap;
	struct nslot *node_ht;	/* id 0: empty (the root is never a child) */
	uint32_t node_ht_cap;
	uint32_t n_hashed;

	bool has_before;
	size_t drawn, elided;

	/* the previous stack's path: sorted inputs share long prefixes, and
	 * comparing names beats probing the hash for every frame */
	uint32_t *prev;
	size_t prev_len, prev_cap;
};

/* ---- the tree (flame_tree.c) ---- */

/* The id of name (s, len, kind), added if new: ids count up from 0 in the
 * order names are first seen. FLAME_NONE when out of memory. */
uint32_t flame__intern(struct flamegraph *fg, const char *s, size_t len, uint8_t kind);
/* The child of PARENT named NAME, created (with no samples) if missing;
 * FLAME_NONE when out of memory. */
uint32_t flame__child(struct flamegraph *fg, uint32_t parent, uint32_t name);
/* A new tree of FG's stacks merged by leaf: callers above callees, the same
 * name ids. Return it (the caller frees it with flame__free), or NULL with
 * errno set. */
struct flamegraph *flame__reversed(const struct flamegraph *fg);

/* ---- the layout (flame_layout.c) ---- */

/* One frame as drawn: a node, or a box standing for merged narrow frames. */
struct drawn {
	uint32_t node;		/* FLAME_NONE: merged box */
	uint32_t depth;
	uint32_t merged;	/* merged box: how many sibling subtrees */
	uint64_t x;		/* offset in samples from the left edge */
	uint64_t after, before;
};

struct layout {
	struct drawn *v;	/* the frames to draw, in preorder */
	size_t n, cap;
	uint32_t max_depth;
	double scale;		/* pixels per sample */
	double min_width;	/* the minimum width finally used */
	uint32_t *subtree;	/* nodes in each subtree */
	uint32_t *tmp;		/* children scratch, one slice per depth */
	size_t tmp_cap, tmp_len;
	size_t elided;		/* nodes in the merged boxes */
};

/* Lay FG out for frames that span SPAN pixels with O's minimum width (raised
 * until at most O's max_frames are drawn when O leaves it 0): children in
 * name order, frames narrower than the minimum merged into one box per
 * parent. Sets the names' ranks. Return 0 or -ENOMEM; L (zeroed by the
 * caller) is freed with flame__layout_free either way. */
int flame__layout(struct flamegraph *fg, const struct flame_opts *o, unsigned int span,
		  struct layout *L);
void flame__layout_free(struct layout *L);

/* ---- differential graphs (flame_diff.c) ---- */

struct flame_diff {
	bool on;		/* the graph has a "before" profile */
	double before_scale;	/* "before" counts times this (1 unless normalized) */
	double max_delta;	/* the largest change of a drawn frame but the root */
};

/* The scale and the largest change of the frames L draws of FG. */
void flame__diff_prepare(const struct flamegraph *fg, const struct layout *L, bool normalize,
			 struct flame_diff *d);
/* The colour of drawn frame DR: white when unchanged, saturating towards
 * red (grew) or blue (shrank) as its change nears the largest. */
void flame__diff_color(const struct flame_diff *d, const struct drawn *dr, unsigned char rgb[3]);

#endif
