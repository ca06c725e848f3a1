// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack cache: open addressing by hash (0 marks an empty slot), rebuilt
 * when it grows or is swept (a sweep runs once a drain, every few
 * seconds, so rebuilding beats tombstones). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sym/stackcache.h"

struct slot {
	uint64_t hash;	/* 0: empty */
	uint64_t used;	/* epoch of the last get or put */
	uint64_t *ips;	/* [0] = depth, then the addresses */
};

struct stackcache {
	struct slot *slots;
	size_t cap, n;	/* cap: 0 or a power of two */
};

struct stackcache *stackcache__new(void)
{
	return calloc(1, sizeof(struct stackcache));
}

void stackcache__free(struct stackcache *sc)
{
	size_t i;

	if (!sc)
		return;
	for (i = 0; i < sc->cap; i++)
		free(sc->slots[i].ips);
	free(sc->slots);
	free(sc);
}

static struct slot *find(const struct stackcache *sc, uint64_t hash)
{
	size_t i;

	if (!sc->cap)
		return NULL;
	for (i = hash & (sc->cap - 1); sc->slots[i].hash; i = (i + 1) & (sc->cap - 1))
		if (sc->slots[i].hash == hash)
			return &sc->slots[i];
	return NULL;
}

static void insert(struct slot *slots, size_t cap, const struct slot *s)
{
	size_t i;

	for (i = s->hash & (cap - 1); slots[i].hash; i = (i + 1) & (cap - 1))
		;
	slots[i] = *s;
}

/* Move the entries into a table of CAP slots; the rest stay in place. */
static int rebuild(struct stackcache *sc, size_t cap)
{
	struct slot *ns = calloc(cap, sizeof(*ns));
	size_t i;

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < sc->cap; i++)
		if (sc->slots[i].hash)
			insert(ns, cap, &sc->slots[i]);
	free(sc->slots);
	sc->slots = ns;
	sc->cap = cap;
	return 0;
}

const uint64_t *stackcache__get(struct stackcache *sc, uint64_t hash, uint64_t epoch)
{
	struct slot *s = find(sc, hash);

	if (!s)
		return NULL;
	s->used = epoch;
	return s->ips;
}

const uint64_t *stackcache__put(struct stackcache *sc, uint64_t hash, const uint64_t *ips,
				size_t depth, uint64_t epoch)
{
	struct slot s = { hash, epoch, NULL };

	if ((sc->n + 1) * 2 > sc->cap && rebuild(sc, sc->cap ? sc->cap * 2 : 1024)) {
		errno = ENOMEM;
		return NULL;
	}
	s.ips = malloc((depth + 1) * sizeof(*s.ips));
	if (!s.ips) {
		errno = ENOMEM;
		return NULL;
	}
	s.ips[0] = depth;
	if (depth)
		memcpy(s.ips + 1, ips, depth * sizeof(*ips));
	insert(sc->slots, sc->cap, &s);
	sc->n++;
	return s.ips;
}

/* Re-insert every entry, in circular order from an empty slot (there is
 * one: the table is at most half full). An entry only moves back towards
 * its home slot, so the chains of those already placed stay whole. */
static void rehash_in_place(struct stackcache *sc)
{
	size_t start = 0, k, i;
	struct slot s;

	while (sc->slots[start].hash)
		start++;
	for (k = 1; k < sc->cap; k++) {
		i = (start + k) & (sc->cap - 1);
		if (!sc->slots[i].hash)
			continue;
		s = sc->slots[i];
		sc->slots[i] = (struct slot){ 0 };
		insert(sc->slots, sc->cap, &s);
	}
}

size_t stackcache__sweep(struct stackcache *sc, uint64_t epoch, uint64_t keep)
{
	size_t i, freed = 0, cap;

	for (i = 0; i < sc->cap; i++) {
		struct slot *s = &sc->slots[i];

		if (!s->hash || s->used + keep >= epoch)
			continue;
		free(s->ips);
		*s = (struct slot){ 0 };
		freed++;
	}
	if (!freed)
		return 0;
	sc->n -= freed;
	/* the holes broke the probe chains: rebuild, smaller when mostly
	 * empty, else (or without memory for it) re-insert in place */
	for (cap = sc->cap; cap > 1024 && sc->n * 8 < cap; cap /= 2)
		;
	if (cap == sc->cap || rebuild(sc, cap))
		rehash_in_place(sc);
	return freed;
}

size_t stackcache__count(const struct stackcache *sc)
{
	return sc->n;
}
