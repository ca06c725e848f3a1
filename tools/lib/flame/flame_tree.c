// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The flame graph's model: stacks merged into a prefix tree (flame_int.h),
 * names interned, and the same tree merged by leaf for --reverse. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "flame/flame_int.h"
#include "prof/folded.h"

struct flamegraph *flame__new(void)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (!fg)
		return NULL;
	fg->name_ht_cap = 1024;
	fg->name_ht = calloc(fg->name_ht_cap, sizeof(*fg->name_ht));
	fg->node_ht_cap = 1024;
	fg->node_ht = calloc(fg->node_ht_cap, sizeof(*fg->node_ht));
	fg->nodes_cap = 256;
	fg->nodes = malloc(fg->nodes_cap * sizeof(*fg->nodes));
	if (!fg->name_ht || !fg->node_ht || !fg->nodes) {
		flame__free(fg);
		errno = ENOMEM;
		return NULL;
	}
	fg->nodes[0] = (struct fnode){ .name = FLAME_NONE, .parent = FLAME_NONE, .child = FLAME_NONE,
				       .sibling = FLAME_NONE };
	fg->n_nodes = 1;
	return fg;
}

void flame__free(struct flamegraph *fg)
{
	if (!fg)
		return;
	free(fg->arena);
	free(fg->names);
	free(fg->name_ht);
	free(fg->nodes);
	free(fg->node_ht);
	free(fg->prev);
	free(fg);
}

uint64_t flame__total(const struct flamegraph *fg)
{
	return fg ? fg->nodes[0].after : 0;
}

uint64_t flame__total_before(const struct flamegraph *fg)
{
	return fg ? fg->nodes[0].before : 0;
}

size_t flame__frames_drawn(const struct flamegraph *fg)
{
	return fg ? fg->drawn : 0;
}

size_t flame__frames_elided(const struct flamegraph *fg)
{
	return fg ? fg->elided : 0;
}

/* Where name (s, len, kind) goes in the name table: ids are given in the
 * order names are first seen, so nothing drawn depends on this hash. */
static uint64_t name_hash(const char *s, size_t len, uint8_t kind)
{
	return hash__pair(hash__bytes(s, len), kind);
}

static int name_ht_grow(struct flamegraph *fg)
{
	uint32_t cap = fg->name_ht_cap * 2, i, *ht;

	ht = calloc(cap, sizeof(*ht));
	if (!ht)
		return -ENOMEM;
	for (i = 0; i < fg->n_names; i++) {
		const struct fname *n = &fg->names[i];
		uint64_t h = name_hash(fg->arena + n->off, n->len, n->kind);
		uint32_t slot = h & (cap - 1);

		while (ht[slot])
			slot = (slot + 1) & (cap - 1);
		ht[slot] = i + 1;
	}
	free(fg->name_ht);
	fg->name_ht = ht;
	fg->name_ht_cap = cap;
	return 0;
}

uint32_t flame__intern(struct flamegraph *fg, const char *s, size_t len, uint8_t kind)
{
	uint64_t h = name_hash(s, len, kind);
	uint32_t slot = h & (fg->name_ht_cap - 1), id;

	while ((id = fg->name_ht[slot])) {
		const struct fname *n = &fg->names[id - 1];

		if (n->len == len && n->kind == kind && memcmp(fg->arena + n->off, s, len) == 0)
			return id - 1;
		slot = (slot + 1) & (fg->name_ht_cap - 1);
	}
	if (len > UINT32_MAX / 2 || fg->arena_len + len + 1 > UINT32_MAX)
		return FLAME_NONE;
	if (fg->arena_len + len + 1 > fg->arena_cap) {
		size_t cap = fg->arena_cap ? fg->arena_cap * 2 : 65536;
		char *a;

		while (cap < fg->arena_len + len + 1)
			cap *= 2;
		a = realloc(fg->arena, cap);
		if (!a)
			return FLAME_NONE;
		fg->arena = a;
		fg->arena_cap = cap;
	}
	if (fg->n_names == fg->names_cap) {
		uint32_t cap = fg->names_cap ? fg->names_cap * 2 : 1024;
		struct fname *v = realloc(fg->names, cap * sizeof(*v));

		if (!v)
			return FLAME_NONE;
		fg->names = v;
		fg->names_cap = cap;
	}
	memcpy(fg->arena + fg->arena_len, s, len);
	fg->arena[fg->arena_len + len] = '\0';
	id = fg->n_names++;
	fg->names[id] = (struct fname){ .off = fg->arena_len, .len = len, .kind = kind };
	fg->arena_len += len + 1;
	fg->name_ht[slot] = id + 1;
	if (fg->n_names * 2 > fg->name_ht_cap && name_ht_grow(fg))
		return FLAME_NONE;
	return id;
}

/* The children of wide parents (more than FANOUT_HASHED) are hashed by
 * (parent, name); slots are found by probing, so nothing drawn depends on
 * this hash either. */
static void node_ht_put(struct nslot *ht, uint32_t cap, const struct fnode *nd, uint32_t id)
{
	uint64_t h = hash__pair(nd->parent, nd->name);
	uint32_t slot = h & (cap - 1);

	while (ht[slot].id)
		slot = (slot + 1) & (cap - 1);
	ht[slot] = (struct nslot){ id, h >> 32 };
}

static int node_ht_grow(struct flamegraph *fg)
{
	uint32_t cap = fg->node_ht_cap * 2, i;
	struct nslot *ht;

	ht = calloc(cap, sizeof(*ht));
	if (!ht)
		return -ENOMEM;
	for (i = 1; i < fg->n_nodes; i++)
		if (fg->nodes[fg->nodes[i].parent].nchild > FANOUT_HASHED)
			node_ht_put(ht, cap, &fg->nodes[i], i);
	free(fg->node_ht);
	fg->node_ht = ht;
	fg->node_ht_cap = cap;
	return 0;
}

/* Hash the n children of a parent that has just become wide (n > 1), or
 * the one new child id of a wide parent (n == 1). */
static int node_hash(struct flamegraph *fg, uint32_t parent, uint32_t id, uint32_t n)
{
	uint32_t c;

	fg->n_hashed += n;
	if ((uint64_t)fg->n_hashed * 2 > fg->node_ht_cap)
		return node_ht_grow(fg);	/* rehashes these too */
	if (n == 1) {
		node_ht_put(fg->node_ht, fg->node_ht_cap, &fg->nodes[id], id);
		return 0;
	}
	for (c = fg->nodes[parent].child; c != FLAME_NONE; c = fg->nodes[c].sibling)
		node_ht_put(fg->node_ht, fg->node_ht_cap, &fg->nodes[c], c);
	return 0;
}

uint32_t flame__child(struct flamegraph *fg, uint32_t parent, uint32_t name)
{
	struct fnode *p = &fg->nodes[parent];
	uint32_t id, c;

	if (p->nchild <= FANOUT_HASHED) {
		for (c = p->child; c != FLAME_NONE; c = fg->nodes[c].sibling)
			if (fg->nodes[c].name == name)
				return c;
	} else {
		uint64_t h = hash__pair(parent, name);
		uint32_t slot = h & (fg->node_ht_cap - 1), tag = h >> 32;

		while ((id = fg->node_ht[slot].id)) {
			if (fg->node_ht[slot].tag == tag && fg->nodes[id].parent == parent &&
			    fg->nodes[id].name == name)
				return id;
			slot = (slot + 1) & (fg->node_ht_cap - 1);
		}
	}
	if (fg->n_nodes == FLAME_NONE - 1)
		return FLAME_NONE;
	if (fg->n_nodes == fg->nodes_cap) {
		uint32_t cap = fg->nodes_cap * 2;
		struct fnode *v = realloc(fg->nodes, (size_t)cap * sizeof(*v));

		if (!v)
			return FLAME_NONE;
		fg->nodes = v;
		fg->nodes_cap = cap;
	}
	id = fg->n_nodes++;
	p = &fg->nodes[parent];
	fg->nodes[id] = (struct fnode){ .name = name, .parent = parent, .child = FLAME_NONE,
					.sibling = p->child };
	p->child = id;
	p->nchild++;
	if (p->nchild == FANOUT_HASHED + 1) {
		/* this parent just became wide: hash all of its children */
		if (node_hash(fg, parent, id, p->nchild))
			return FLAME_NONE;
	} else if (p->nchild > FANOUT_HASHED && node_hash(fg, parent, id, 1)) {
		return FLAME_NONE;
	}
	return id;
}

/* Whether name ID is (s, len, kind). */
static bool name_is(const struct flamegraph *fg, uint32_t id, const char *s, size_t len,
		    uint8_t kind)
{
	const struct fname *n = &fg->names[id];

	return n->len == len && n->kind == kind && memcmp(fg->arena + n->off, s, len) == 0;
}

/* The child of CUR named (s, len, kind), created if missing; FLAME_NONE
 * when out of memory. */
static uint32_t child_named(struct flamegraph *fg, uint32_t cur, const char *s, size_t len,
			    uint8_t kind)
{
	uint32_t c, name;

	/* a narrow parent's children are compared by name: no hashing */
	if (fg->nodes[cur].nchild <= FANOUT_HASHED)
		for (c = fg->nodes[cur].child; c != FLAME_NONE; c = fg->nodes[c].sibling)
			if (name_is(fg, fg->nodes[c].name, s, len, kind))
				return c;
	name = flame__intern(fg, s, len, kind);
	if (name == FLAME_NONE)
		return FLAME_NONE;
	return flame__child(fg, cur, name);
}

static void count_in(struct fnode *nd, uint64_t count, bool before)
{
	if (before)
		nd->before += count;
	else
		nd->after += count;
}

static int add(struct flamegraph *fg, const char *const *names, const enum frame_kind *kinds,
	       size_t depth, uint64_t count, size_t shared, bool before)
{
	uint32_t cur = 0;
	size_t i;
	bool same = true;

	if (!fg || (depth && !names) || shared > depth || shared > fg->prev_len)
		return -EINVAL;
	if (before)
		fg->has_before = true;
	if (!count)
		return 0;
	if (depth > fg->prev_cap) {
		size_t cap = depth * 2;
		uint32_t *v = realloc(fg->prev, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fg->prev = v;
		fg->prev_cap = cap;
	}
	for (i = 0; i < shared; i++) {
		cur = fg->prev[i];
		count_in(&fg->nodes[cur], count, before);
	}
	for (i = shared; i < depth; i++) {
		const char *s = names[i] ? names[i] : "[unknown]";
		size_t len = strlen(s);
		uint8_t kind;

		if (kinds)
			kind = kinds[i] < FRAME_KIND_MAX ? kinds[i] : FRAME_UNKNOWN;
		else
			kind = folded__kind(s, &len);
		if (same && i < fg->prev_len && name_is(fg, fg->nodes[fg->prev[i]].name, s, len, kind)) {
			cur = fg->prev[i];
		} else {
			same = false;
			cur = child_named(fg, cur, s, len, kind);
			if (cur == FLAME_NONE) {
				fg->prev_len = 0;
				return -ENOMEM;
			}
			fg->prev[i] = cur;
		}
		count_in(&fg->nodes[cur], count, before);
	}
	fg->prev_len = depth;
	count_in(&fg->nodes[0], count, before);
	return 0;
}

int flame__add_stack(struct flamegraph *fg, const char *const *names,
		     const enum frame_kind *kinds, size_t depth, uint64_t count)
{
	return add(fg, names, kinds, depth, count, 0, false);
}

int flame__add_stack_before(struct flamegraph *fg, const char *const *names,
			    const enum frame_kind *kinds, size_t depth, uint64_t count)
{
	return add(fg, names, kinds, depth, count, 0, true);
}

int flame__add_stack_shared(struct flamegraph *fg, const char *const *names,
			    const enum frame_kind *kinds, size_t depth, uint64_t count,
			    size_t shared, bool before)
{
	return add(fg, names, kinds, depth, count, shared, before);
}

/* ---- reverse: a new tree merged by leaf ---- */

static int reverse_into(const struct flamegraph *fg, struct flamegraph *rv)
{
	uint32_t *path = NULL, i, j, n, cap = 64;
	int err = 0;

	path = malloc(cap * sizeof(*path));
	if (!path)
		return -ENOMEM;
	/* the same names, the same ids */
	for (i = 0; i < fg->n_names; i++) {
		const struct fname *nm = &fg->names[i];

		if (flame__intern(rv, fg->arena + nm->off, nm->len, nm->kind) != i) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (i = 1; i < fg->n_nodes; i++) {
		const struct fnode *nd = &fg->nodes[i];
		uint64_t self_a = nd->after, self_b = nd->before;
		uint32_t c, cur = 0;

		for (c = nd->child; c != FLAME_NONE; c = fg->nodes[c].sibling) {
			self_a -= fg->nodes[c].after;
			self_b -= fg->nodes[c].before;
		}
		if (!self_a && !self_b)
			continue;
		/* walking up the parents gives the stack leaf first */
		n = 0;
		for (j = i; j != 0; j = fg->nodes[j].parent) {
			if (n == cap) {
				uint32_t *v = realloc(path, cap * 2 * sizeof(*v));

				if (!v) {
					err = -ENOMEM;
					goto cleanup;
				}
				path = v;
				cap *= 2;
			}
			path[n++] = fg->nodes[j].name;
		}
		for (j = 0; j < n; j++) {
			cur = flame__child(rv, cur, path[j]);
			if (cur == FLAME_NONE) {
				err = -ENOMEM;
				goto cleanup;
			}
			rv->nodes[cur].after += self_a;
			rv->nodes[cur].before += self_b;
		}
	}
	rv->nodes[0].after = fg->nodes[0].after;
	rv->nodes[0].before = fg->nodes[0].before;
	rv->has_before = fg->has_before;
cleanup:
	free(path);
	return err;
}

struct flamegraph *flame__reversed(const struct flamegraph *fg)
{
	struct flamegraph *rv = flame__new();
	int err;

	if (!rv)
		return NULL;
	err = reverse_into(fg, rv);
	if (err) {
		flame__free(rv);
		errno = -err;
		return NULL;
	}
	return rv;
}
