// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Two open-addressing tables: this drain's and the last one's. A key got
 * from the last one moves into this one; keymemo__age drops the last one
 * and starts a new one. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/keymemo.h"

struct memo_entry {
	struct profile_key key;
	uint64_t gen;	/* 0: a free slot */
	size_t id;
};

struct memo_table {
	struct memo_entry *e;
	size_t cap, n;	/* cap: 0 or a power of two, n <= cap / 2 */
};

struct keymemo {
	struct memo_table cur, old;
};

static uint64_t key_hash(const struct profile_key *k)
{
	uint64_t w[sizeof(*k) / 8], h = 0x9e3779b97f4a7c15ull;
	size_t i;

	_Static_assert(sizeof(*k) % 8 == 0, "the key in whole words");
	memcpy(w, k, sizeof(w));
	for (i = 0; i < sizeof(w) / 8; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* The slot of K in T: its entry, or the free slot where it would go. T has
 * room (cap > 0). */
static struct memo_entry *slot_of(const struct memo_table *t, const struct profile_key *k)
{
	size_t i = (size_t)key_hash(k) & (t->cap - 1);

	while (t->e[i].gen && memcmp(&t->e[i].key, k, sizeof(*k)))
		i = (i + 1) & (t->cap - 1);
	return &t->e[i];
}

static int table_grow(struct memo_table *t)
{
	struct memo_table n = { .cap = t->cap ? t->cap * 2 : 256 };
	size_t i;

	n.e = calloc(n.cap, sizeof(*n.e));
	if (!n.e)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->e[i].gen) {
			*slot_of(&n, &t->e[i].key) = t->e[i];
			n.n++;
		}
	free(t->e);
	*t = n;
	return 0;
}

static int table_put(struct memo_table *t, const struct profile_key *k, uint64_t gen, size_t id)
{
	struct memo_entry *e;

	if ((t->n + 1) * 2 > t->cap && table_grow(t))
		return -ENOMEM;
	e = slot_of(t, k);
	if (!e->gen) {
		e->key = *k;
		t->n++;
	}
	e->gen = gen;
	e->id = id;
	return 0;
}

static const struct memo_entry *table_get(const struct memo_table *t, const struct profile_key *k)
{
	const struct memo_entry *e;

	if (!t->n)
		return NULL;
	e = slot_of(t, k);
	return e->gen ? e : NULL;
}

struct keymemo *keymemo__new(void)
{
	return calloc(1, sizeof(struct keymemo));
}

void keymemo__free(struct keymemo *m)
{
	if (!m)
		return;
	free(m->cur.e);
	free(m->old.e);
	free(m);
}

long keymemo__get(struct keymemo *m, const struct profile_key *k, uint64_t gen)
{
	const struct memo_entry *e = table_get(&m->cur, k);

	if (e)
		return e->gen == gen ? (long)e->id : -1;
	e = table_get(&m->old, k);
	if (!e || e->gen != gen)
		return -1;
	/* used again: kept another drain (without memory, named again) */
	return table_put(&m->cur, k, gen, e->id) ? -1 : (long)e->id;
}

int keymemo__put(struct keymemo *m, const struct profile_key *k, uint64_t gen, size_t id)
{
	if (!gen || id > (size_t)LONG_MAX)
		return -EINVAL;
	return table_put(&m->cur, k, gen, id);
}

void keymemo__age(struct keymemo *m)
{
	free(m->old.e);
	m->old = m->cur;
	m->cur = (struct memo_table){ 0 };
}

size_t keymemo__count(const struct keymemo *m)
{
	return m->cur.n + m->old.n;
}
