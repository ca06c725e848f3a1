// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flame graph builder and SVG writer.
 *
 * Stacks are merged into a prefix tree whose nodes live in one array and
 * are found through one open-addressing hash keyed by (parent, name), so a
 * million stacks cost a few allocations, not millions. Names are interned
 * once into an arena. Writing lays the tree out (children sorted by name,
 * frames narrower than min_width folded into one box per parent), then
 * prints one <g> per drawn frame in preorder; the inline script rebuilds
 * the tree from that order and the sample counts, so zooming needs no
 * other data. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame/flamegraph.h"
#include "prof/folded.h"
#include "flame/flamegraph_js.h"
#include "core/util.h"

#define NONE UINT32_MAX

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

/* One frame as drawn: a node, or a box standing for merged narrow frames. */
struct drawn {
	uint32_t node;		/* NONE: merged box */
	uint32_t depth;
	uint32_t merged;	/* merged box: how many sibling subtrees */
	uint64_t x;		/* offset in samples from the left edge */
	uint64_t after, before;
};

struct layout {
	struct drawn *v;
	size_t n, cap;
	uint32_t max_depth;
	double scale;		/* pixels per sample */
	double min_width;
	uint32_t *subtree;	/* nodes in each subtree */
	uint32_t *tmp;		/* children scratch, one slice per depth */
	size_t tmp_cap, tmp_len;
	size_t elided;
	int err;
};

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ (w * 0xbf58476d1ce4e5b9ull)) * 0x94d049bb133111ebull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ (w * 0xbf58476d1ce4e5b9ull)) * 0x94d049bb133111ebull;
	h ^= h >> 32;
	return h;
}

static inline uint64_t hash_pair(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

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
	fg->nodes[0] = (struct fnode){ .name = NONE, .parent = NONE, .child = NONE,
				       .sibling = NONE };
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

static uint64_t name_hash(const char *s, size_t len, uint8_t kind)
{
	return hash_bytes(s, len, kind);
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

/* Return the id of (s, len, kind), adding it if new; NONE when out of memory. */
static uint32_t name_intern(struct flamegraph *fg, const char *s, size_t len, uint8_t kind)
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
		return NONE;
	if (fg->arena_len + len + 1 > fg->arena_cap) {
		size_t cap = fg->arena_cap ? fg->arena_cap * 2 : 65536;
		char *a;

		while (cap < fg->arena_len + len + 1)
			cap *= 2;
		a = realloc(fg->arena, cap);
		if (!a)
			return NONE;
		fg->arena = a;
		fg->arena_cap = cap;
	}
	if (fg->n_names == fg->names_cap) {
		uint32_t cap = fg->names_cap ? fg->names_cap * 2 : 1024;
		struct fname *v = realloc(fg->names, cap * sizeof(*v));

		if (!v)
			return NONE;
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
		return NONE;
	return id;
}

/* Most nodes have a few children, found faster by walking the sibling
 * list than by probing a big hash table; only the children of nodes with
 * more than this many go into the (parent, name) hash. */
#define FANOUT_HASHED 8

static void node_ht_put(struct nslot *ht, uint32_t cap, const struct fnode *nd, uint32_t id)
{
	uint64_t h = hash_pair(nd->parent, nd->name);
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
	for (c = fg->nodes[parent].child; c != NONE; c = fg->nodes[c].sibling)
		node_ht_put(fg->node_ht, fg->node_ht_cap, &fg->nodes[c], c);
	return 0;
}

/* The child of parent named name, created if missing; NONE if out of memory. */
static uint32_t node_child(struct flamegraph *fg, uint32_t parent, uint32_t name)
{
	struct fnode *p = &fg->nodes[parent];
	uint32_t id, c;

	if (p->nchild <= FANOUT_HASHED) {
		for (c = p->child; c != NONE; c = fg->nodes[c].sibling)
			if (fg->nodes[c].name == name)
				return c;
	} else {
		uint64_t h = hash_pair(parent, name);
		uint32_t slot = h & (fg->node_ht_cap - 1), tag = h >> 32;

		while ((id = fg->node_ht[slot].id)) {
			if (fg->node_ht[slot].tag == tag && fg->nodes[id].parent == parent &&
			    fg->nodes[id].name == name)
				return id;
			slot = (slot + 1) & (fg->node_ht_cap - 1);
		}
	}
	if (fg->n_nodes == NONE - 1)
		return NONE;
	if (fg->n_nodes == fg->nodes_cap) {
		uint32_t cap = fg->nodes_cap * 2;
		struct fnode *v = realloc(fg->nodes, (size_t)cap * sizeof(*v));

		if (!v)
			return NONE;
		fg->nodes = v;
		fg->nodes_cap = cap;
	}
	id = fg->n_nodes++;
	p = &fg->nodes[parent];
	fg->nodes[id] = (struct fnode){ .name = name, .parent = parent, .child = NONE,
					.sibling = p->child };
	p->child = id;
	p->nchild++;
	if (p->nchild == FANOUT_HASHED + 1) {
		/* this parent just became wide: hash all of its children */
		if (node_hash(fg, parent, id, p->nchild))
			return NONE;
	} else if (p->nchild > FANOUT_HASHED && node_hash(fg, parent, id, 1)) {
		return NONE;
	}
	return id;
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
		if (before)
			fg->nodes[cur].before += count;
		else
			fg->nodes[cur].after += count;
	}
	for (i = shared; i < depth; i++) {
		const char *s = names[i] ? names[i] : "[unknown]";
		size_t len = strlen(s);
		uint8_t kind;
		uint32_t name;

		if (kinds)
			kind = kinds[i] < FRAME_KIND_MAX ? kinds[i] : FRAME_UNKNOWN;
		else
			kind = folded__kind(s, &len);
		if (same && i < fg->prev_len) {
			const struct fname *pn = &fg->names[fg->nodes[fg->prev[i]].name];

			if (pn->len == len && pn->kind == kind &&
			    memcmp(fg->arena + pn->off, s, len) == 0) {
				cur = fg->prev[i];
				goto count;
			}
		}
		same = false;
		/* a narrow parent's children are compared by name: no hashing */
		if (fg->nodes[cur].nchild <= FANOUT_HASHED) {
			uint32_t c;

			for (c = fg->nodes[cur].child; c != NONE; c = fg->nodes[c].sibling) {
				const struct fname *cn = &fg->names[fg->nodes[c].name];

				if (cn->len == len && cn->kind == kind &&
				    memcmp(fg->arena + cn->off, s, len) == 0)
					break;
			}
			if (c != NONE) {
				cur = c;
				fg->prev[i] = cur;
				goto count;
			}
		}
		name = name_intern(fg, s, len, kind);
		if (name == NONE)
			goto nomem;
		cur = node_child(fg, cur, name);
		if (cur == NONE)
			goto nomem;
		fg->prev[i] = cur;
count:
		if (before)
			fg->nodes[cur].before += count;
		else
			fg->nodes[cur].after += count;
	}
	fg->prev_len = depth;
	if (before)
		fg->nodes[0].before += count;
	else
		fg->nodes[0].after += count;
	return 0;
nomem:
	fg->prev_len = 0;
	return -ENOMEM;
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

		if (name_intern(rv, fg->arena + nm->off, nm->len, nm->kind) != i) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (i = 1; i < fg->n_nodes; i++) {
		const struct fnode *nd = &fg->nodes[i];
		uint64_t self_a = nd->after, self_b = nd->before;
		uint32_t c, cur = 0;

		for (c = nd->child; c != NONE; c = fg->nodes[c].sibling) {
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
			cur = node_child(rv, cur, path[j]);
			if (cur == NONE) {
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

/* ---- layout ---- */

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
	struct drawn merged = { .node = NONE, .depth = depth + 1 };
	size_t start = L->tmp_len, n = 0, i;
	uint64_t cx = x;
	uint32_t c;
	int err;

	err = push_drawn(L, &(struct drawn){ .node = id, .depth = depth, .x = x,
					     .after = nd->after, .before = nd->before });
	if (err)
		return err;
	for (c = nd->child; c != NONE; c = fg->nodes[c].sibling) {
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

/* ---- output ---- */

/* Write s as XML character data: markup characters escaped, bytes that are
 * not valid UTF-8 and characters XML forbids replaced by U+FFFD. With
 * max_chars, stop after that many characters. Return characters written. */
static size_t xml_text(FILE *f, const char *str, size_t len, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, chars = 0, l;

	while (i < len && chars < max_chars) {
		unsigned char c = s[i];

		chars++;
		if (c < 0x80) {
			i++;
			switch (c) {
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '&': fputs("&amp;", f); break;
			case '"': fputs("&quot;", f); break;
			case '\'': fputs("&apos;", f); break;
			default:
				if (c < 0x20 || c == 0x7f)
					fputs("\xef\xbf\xbd", f);
				else
					fputc(c, f);
			}
			continue;
		}
		l = utf8_seq_len(s + i, len - i);
		/* U+FFFE and U+FFFF are not XML characters */
		if (!l || (l == 3 && s[i] == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)) {
			fputs("\xef\xbf\xbd", f);
			i += l ? l : 1;
			continue;
		}
		fwrite(s + i, 1, l, f);
		i += l;
	}
	return chars;
}

/* Characters in s as xml_text counts them. */
static size_t text_chars(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, chars = 0, l;

	while (i < len) {
		l = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, len - i);
		i += l ? l : 1;
		chars++;
	}
	return chars;
}

static void hsl(double h, double s, double l, unsigned char rgb[3])
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360.0) / 60.0;
	double x = c * (1 - fabs(fmod(hp, 2.0) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;

	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	rgb[0] = (unsigned char)lround((r + m) * 255);
	rgb[1] = (unsigned char)lround((g + m) * 255);
	rgb[2] = (unsigned char)lround((b + m) * 255);
}

/* Base hue, saturation and lightness of each kind; names vary around it. */
static const struct {
	const char *label;
	double h, s, l;
} kind_style[FRAME_KIND_MAX] = {
	[FRAME_UNKNOWN] = { "unknown", 0, 0, 0.72 },
	[FRAME_NATIVE] = { "native", 48, 0.85, 0.60 },
	[FRAME_KERNEL] = { "kernel", 22, 0.85, 0.58 },
	[FRAME_JIT] = { "JIT", 110, 0.55, 0.55 },
	[FRAME_R2R] = { "R2R", 185, 0.55, 0.55 },
};

static void frame_color(const struct flamegraph *fg, const struct flame_opts *o,
			const struct drawn *d, bool diff, double max_delta, double before_scale,
			unsigned char rgb[3])
{
	const struct fname *nm = d->node != NONE && d->node ? &fg->names[fg->nodes[d->node].name] : NULL;
	uint64_t h = nm ? hash_bytes(fg->arena + nm->off, nm->len, 0x5eed) : 0;
	double jitter = (double)(h & 0xffff) / 65535.0;	/* 0..1, stable per name */

	if (diff) {
		double delta = (double)d->after - (double)d->before * before_scale, v;

		v = max_delta > 0 ? fabs(delta) / max_delta : 0;
		if (v > 1)
			v = 1;
		/* white when unchanged, saturating towards red (grew) or blue */
		if (delta > 0)
			rgb[0] = 255, rgb[1] = rgb[2] = (unsigned char)lround(250 - 190 * v);
		else if (delta < 0)
			rgb[2] = 255, rgb[0] = rgb[1] = (unsigned char)lround(250 - 190 * v);
		else
			rgb[0] = rgb[1] = rgb[2] = 250;
		return;
	}
	if (!nm) {
		/* the root and merged boxes */
		rgb[0] = rgb[1] = rgb[2] = d->node == 0 ? 200 : 180;
		return;
	}
	switch (o->colors) {
	case FLAME_COLORS_HASH:
		hsl((double)(h % 360), 0.65, 0.62 + 0.1 * jitter, rgb);
		break;
	case FLAME_COLORS_MONO:
		hsl(210, 0.35, 0.62 + 0.14 * jitter, rgb);
		break;
	default: {
		double hh = kind_style[nm->kind].h + (jitter - 0.5) * 16;

		hsl(hh < 0 ? hh + 360 : hh, kind_style[nm->kind].s,
		    kind_style[nm->kind].l + (jitter - 0.5) * 0.12, rgb);
	}
	}
}

#define FRAME_H 16
#define PAD 10
#define TOP 64		/* title, subtitle, buttons */
#define BOTTOM 52	/* details line, notes, legend */
#define CHAR_W 6.7	/* monospace 11px, a little generous */

static const char svg_style[] =
	"text{font-family:monospace;font-size:11px;fill:#000}\n"
	"#title{font-size:17px;text-anchor:middle}\n"
	"#subtitle{font-size:12px;text-anchor:middle;fill:#444}\n"
	"#frames g{cursor:pointer}\n"
	"#frames text{pointer-events:none}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:0.6}\n"
	"#frames .hide{display:none}\n"
	"#frames .anc{opacity:0.55}\n"
	".btn{cursor:pointer;fill:#224;text-decoration:underline}\n"
	".off{display:none}\n"
	"#details,#matched,#note{fill:#333}\n";

static void write_num(FILE *f, double v)
{
	/* short and locale-proof: at most 2 decimals, no trailing zeros */
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%.2f", v);

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	if (strcmp(buf, "-0") == 0)
		strcpy(buf, "0");
	fputs(buf, f);
}

static void write_frame(FILE *f, const struct flamegraph *fg, const struct flame_opts *o,
			const struct layout *L, const struct drawn *d, unsigned int height,
			bool diff, double max_delta, double before_scale)
{
	double x = PAD + (double)d->x * L->scale, w = (double)d->after * L->scale;
	double y = o->inverted ? TOP + (double)d->depth * FRAME_H
			       : (double)height - BOTTOM - (double)(d->depth + 1) * FRAME_H;
	unsigned char rgb[3];
	char mbuf[64];
	const char *name;
	size_t len, chars, fit;

	if (d->node == 0) {
		name = "all";
		len = 3;
	} else if (d->node == NONE) {
		len = (size_t)snprintf(mbuf, sizeof(mbuf), "[%u narrow frames]", d->merged);
		name = mbuf;
	} else {
		const struct fname *nm = &fg->names[fg->nodes[d->node].name];

		name = fg->arena + nm->off;
		len = nm->len;
	}
	frame_color(fg, o, d, diff, max_delta, before_scale, rgb);
	fprintf(f, "<g data-n=\"%" PRIu64 "\"", d->after);
	if (diff)
		fprintf(f, " data-b=\"%" PRIu64 "\"", d->before);
	if (d->node == NONE)
		fprintf(f, " data-m=\"%u\"", d->merged);
	fputs("><title>", f);
	xml_text(f, name, len, SIZE_MAX);
	fputs("</title><rect x=\"", f);
	write_num(f, x);
	fputs("\" y=\"", f);
	write_num(f, y);
	fputs("\" width=\"", f);
	write_num(f, w);
	fprintf(f, "\" height=\"%d\" fill=\"#%02x%02x%02x\"/>", FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	chars = text_chars(name, len);
	/* the whole name, or at least two characters and ".." */
	if (chars <= fit || fit >= 4) {
		fputs("<text x=\"", f);
		write_num(f, x + 3);
		fputs("\" y=\"", f);
		write_num(f, y + FRAME_H - 4.5);
		fputs("\">", f);
		if (chars <= fit) {
			xml_text(f, name, len, SIZE_MAX);
		} else {
			xml_text(f, name, len, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

static void write_legend(FILE *f, const struct flame_opts *o, unsigned int width,
			 unsigned int height, bool diff)
{
	double x = width - PAD;
	int i;

	fputs("<g id=\"legend\">", f);
	if (diff) {
		fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"10\" height=\"10\" fill=\"#ff3c3c\"/>"
			"<text x=\"%u\" y=\"%u\">grew</text>"
			"<rect x=\"%u\" y=\"%u\" width=\"10\" height=\"10\" fill=\"#3c3cff\"/>"
			"<text x=\"%u\" y=\"%u\">shrank</text>",
			width - 140, height - 20, width - 126, height - 11,
			width - 80, height - 20, width - 66, height - 11);
	} else if (o->colors == FLAME_COLORS_KIND) {
		for (i = FRAME_KIND_MAX - 1; i >= 0; i--) {
			unsigned char rgb[3];
			const char *label = kind_style[i].label;

			x -= 14 + CHAR_W * strlen(label) + 10;
			hsl(kind_style[i].h, kind_style[i].s, kind_style[i].l, rgb);
			fprintf(f, "<rect x=\"%.0f\" y=\"%u\" width=\"10\" height=\"10\" "
				"fill=\"#%02x%02x%02x\"/><text x=\"%.0f\" y=\"%u\">%s</text>",
				x, height - 20, rgb[0], rgb[1], rgb[2], x + 14, height - 11, label);
		}
	}
	fputs("</g>\n", f);
}

int flame__write_svg(struct flamegraph *fg_in, FILE *f, const struct flame_opts *opts)
{
	static const struct flame_opts defaults = { 0 };
	const struct flame_opts *o = opts ? opts : &defaults;
	struct flamegraph *rv = NULL, *fg = fg_in;
	struct layout L = { 0 };
	unsigned int width = o->width ? o->width : 1200, height;
	const char *count_name = o->count_name ? o->count_name : "samples";
	double before_scale = 1, max_delta = 0;
	bool diff;
	size_t i;
	int err = 0;
	uint32_t j;

	if (!fg || !f)
		return -EINVAL;
	if (width < 2 * PAD + 10)
		width = 2 * PAD + 10;
	if (o->reverse) {
		rv = flame__new();
		if (!rv)
			return -ENOMEM;
		err = reverse_into(fg, rv);
		if (err)
			goto cleanup;
		fg = rv;
	}
	diff = fg->has_before;
	err = rank_names(fg);
	if (err)
		goto cleanup;
	L.subtree = malloc(fg->n_nodes * sizeof(*L.subtree));
	if (!L.subtree) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* children come after their parents in the array */
	for (j = 0; j < fg->n_nodes; j++)
		L.subtree[j] = 1;
	for (j = fg->n_nodes - 1; j > 0; j--)
		L.subtree[fg->nodes[j].parent] += L.subtree[j];
	L.min_width = o->min_width > 0 ? o->min_width : 0.1;
	L.scale = fg->nodes[0].after ? (double)(width - 2 * PAD) / (double)fg->nodes[0].after : 0;
	for (;;) {
		err = lay_out(fg, &L, 0, 0, 0);
		if (err)
			goto cleanup;
		/* too many frames for a light file: merge wider ones, unless the
		 * caller chose the width */
		if (o->min_width > 0 || L.n <= (o->max_frames ? o->max_frames : 30000))
			break;
		L.min_width *= 1.25;
		L.n = 0;
		L.elided = 0;
		L.max_depth = 0;
	}
	fg_in->drawn = L.n;
	fg_in->elided = L.elided;

	if (diff) {
		if (o->normalize && fg->nodes[0].before)
			before_scale = (double)fg->nodes[0].after / (double)fg->nodes[0].before;
		for (i = 0; i < L.n; i++) {
			double dl = fabs((double)L.v[i].after - (double)L.v[i].before * before_scale);

			if (L.v[i].node != 0 && dl > max_delta)
				max_delta = dl;
		}
	}

	height = TOP + (L.max_depth + 1) * FRAME_H + BOTTOM;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-fh=\"%d\" data-top=\"%d\" "
		"data-bottom=\"%d\" data-pad=\"%d\" data-cw=\"%.1f\" data-inverted=\"%d\" "
		"data-diff=\"%d\" data-bscale=\"%.17g\" data-unit=\"",
		width, height, width, height, FRAME_H, TOP, BOTTOM, PAD, CHAR_W,
		o->inverted ? 1 : 0, diff ? 1 : 0, before_scale);
	xml_text(f, count_name, strlen(count_name), SIZE_MAX);
	fprintf(f, "\">\n<!-- sidescope flame graph: %zu frames drawn, %zu frames narrower than ",
		L.n, L.elided);
	write_num(f, L.min_width);
	fputs(" px merged -->\n", f);
	fprintf(f, "<style>\n%s</style>\n", svg_style);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n",
		diff ? "#f4f4f4" : "#fbf8f0");
	fprintf(f, "<text id=\"title\" x=\"%u\" y=\"24\">", width / 2);
	if (o->title)
		xml_text(f, o->title, strlen(o->title), SIZE_MAX);
	else
		fputs(diff ? "Differential flame graph" : "CPU profile", f);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%u\" y=\"42\">", width / 2);
		xml_text(f, o->subtitle, strlen(o->subtitle), SIZE_MAX);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"reset\" class=\"btn off\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"24\" text-anchor=\"end\">"
		"Search</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD, width - PAD, width - PAD, height - BOTTOM + 16, PAD, height - BOTTOM + 16);
	fprintf(f, "<text id=\"note\" x=\"%d\" y=\"%u\">", PAD, height - 11);
	fprintf(f, "%" PRIu64 " ", fg->nodes[0].after);
	xml_text(f, count_name, strlen(count_name), SIZE_MAX);
	if (diff)
		fprintf(f, " (before: %" PRIu64 "%s)", fg->nodes[0].before,
			o->normalize ? ", normalized" : "");
	if (L.elided) {
		fprintf(f, "; %zu frames narrower than ", L.elided);
		write_num(f, L.min_width);
		fputs(" px merged", f);
	}
	fputs("</text>\n", f);
	write_legend(f, o, width, height, diff);
	fputs("<g id=\"frames\">\n", f);
	for (i = 0; i < L.n; i++)
		write_frame(f, fg, o, &L, &L.v[i], height, diff, max_delta, before_scale);
	fputs("</g>\n<script><![CDATA[\n", f);
	fputs(flamegraph_js, f);
	fputs("]]></script>\n</svg>\n", f);
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
cleanup:
	free(L.v);
	free(L.tmp);
	free(L.subtree);
	flame__free(rv);
	return err;
}
