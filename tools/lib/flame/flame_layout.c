// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The flame graph's layout: the frames to draw, in preorder (the order the
 * inline script rebuilds the tree from), children sorted by name, frames
 * narrower than the minimum width folded into one box per parent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame/flame_int.h"

static int cmp_name_id(const void *a, const void *b, void *ctx)
{
	const struct flamegraph *fg = ctx;
	const struct fname *x = &fg->names[*(const uint32_t *)a];
	const struct fname *y = &fg->names[*(const uint32_t *)b];
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(fg->arena + x->off, fg->arena + y->off, n);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int rank_names(struct flamegraph *fg)
{
	uint32_t *ids, i;

	if (!fg->n_names)
		return 0;
	ids = malloc(fg->n_names * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < fg->n_names; i++)
		ids[i] = i;
	qsort_r(ids, fg->n_names, sizeof(*ids), cmp_name_id, fg);
	for (i = 0; i < fg->n_names; i++)
		fg->names[ids[i]].rank = i;
	free(ids);
	return 0;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const struct flamegraph *fg = ctx;
	const struct fnode *x = &fg->nodes[*(const uint32_t *)a];
	const struct fnode *y = &fg->nodes[*(const uint32_t *)b];
	uint32_t rx = fg->names[x->name].rank, ry = fg->names[y->name].rank;

	return rx < ry ? -1 : rx > ry;
}

static int push_drawn(struct layout *L, const struct drawn *d)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 1024;
		struct drawn *v = realloc(L->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		L->v = v;
		L->cap = cap;
	}
	L->v[L->n++] = *d;
	if (d->depth > L->max_depth)
		L->max_depth = d->depth;
	return 0;
}

/* Lay out node id at depth, x samples from the left edge: its wide children
 * in name order, then one box for all of its narrow ones. */
static int lay_out(const struct flamegraph *fg, struct layout *L, uint32_t id,
		   uint32_t depth, uint64_t x)
{
	const struct fnode *nd = &fg->nodes[id];
	struct drawn merged = { .node = FLAME_NONE, .depth = depth + 1 };
	size_t start = L->tmp_len, n = 0, i;
	uint64_t cx = x;
	uint32_t c;
	int err;

	err = push_drawn(L, &(struct drawn){ .node = id, .depth = depth, .x = x,
					     .after = nd->after, .before = nd->before });
	if (err)
		return err;
	for (c = nd->child; c != FLAME_NONE; c = fg->nodes[c].sibling) {
		if (!fg->nodes[c].after)
			continue;	/* only in "before": not in the shape drawn */
		if (L->tmp_len == L->tmp_cap) {
			size_t cap = L->tmp_cap ? L->tmp_cap * 2 : 1024;
			uint32_t *v = realloc(L->tmp, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			L->tmp = v;
			L->tmp_cap = cap;
		}
		L->tmp[L->tmp_len++] = c;
		n++;
	}
	if (n > 1)
		qsort_r(L->tmp + start, n, sizeof(*L->tmp), cmp_rank, (void *)fg);
	for (i = 0; i < n; i++) {
		const struct fnode *ch = &fg->nodes[L->tmp[start + i]];

		if ((double)ch->after * L->scale >= L->min_width)
			continue;
		merged.merged++;
		merged.after += ch->after;
		merged.before += ch->before;
		L->elided += L->subtree[L->tmp[start + i]];
	}
	for (i = 0; i < n; i++) {
		uint32_t cid = L->tmp[start + i];

		if ((double)fg->nodes[cid].after * L->scale < L->min_width)
			continue;
		err = lay_out(fg, L, cid, depth + 1, cx);
		if (err)
			return err;
		cx += fg->nodes[cid].after;
	}
	L->tmp_len = start;
	if (merged.merged && (double)merged.after * L->scale >= L->min_width) {
		merged.x = cx;
		err = push_drawn(L, &merged);
	}
	return err;
}

int flame__layout(struct flamegraph *fg, const struct flame_opts *o, unsigned int span,
		  struct layout *L)
{
	uint32_t j;
	int err;

	err = rank_names(fg);
	if (err)
		return err;
	L->subtree = malloc(fg->n_nodes * sizeof(*L->subtree));
	if (!L->subtree)
		return -ENOMEM;
	/* children come after their parents in the array */
	for (j = 0; j < fg->n_nodes; j++)
		L->subtree[j] = 1;
	for (j = fg->n_nodes - 1; j > 0; j--)
		L->subtree[fg->nodes[j].parent] += L->subtree[j];
	L->min_width = o->min_width > 0 ? o->min_width : 0.1;
	L->scale = fg->nodes[0].after ? (double)span / (double)fg->nodes[0].after : 0;
	for (;;) {
		err = lay_out(fg, L, 0, 0, 0);
		if (err)
			return err;
		/* too many frames for a light file: merge wider ones, unless the
		 * caller chose the width */
		if (o->min_width > 0 || L->n <= (o->max_frames ? o->max_frames : 30000))
			return 0;
		L->min_width *= 1.25;
		L->n = 0;
		L->elided = 0;
		L->max_depth = 0;
	}
}

void flame__layout_free(struct layout *L)
{
	free(L->v);
	free(L->tmp);
	free(L->subtree);
	*L = (struct layout){ 0 };
}
