// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack cache: put/get, growth, and sweeps that free what was not used
 * lately while every kept entry stays reachable, with hashes chosen to
 * collide so that sweeps cut through long probe chains. */
#include <stdlib.h>
#include <string.h>

#include "sym/stackcache.h"
#include "tap.h"

/* the entry holds DEPTH addresses HASH+1, HASH+2, ... */
static int holds(struct stackcache *sc, uint64_t hash, size_t depth, uint64_t epoch)
{
	const uint64_t *ips = stackcache__get(sc, hash, epoch);
	size_t i;

	if (!ips || ips[0] != depth)
		return 0;
	for (i = 0; i < depth; i++)
		if (ips[i + 1] != hash + i + 1)
			return 0;
	return 1;
}

static const uint64_t *put(struct stackcache *sc, uint64_t hash, size_t depth, uint64_t epoch)
{
	uint64_t ips[8];
	size_t i;

	for (i = 0; i < depth; i++)
		ips[i] = hash + i + 1;
	return stackcache__put(sc, hash, ips, depth, epoch);
}

static void test_basics(void)
{
	struct stackcache *sc = stackcache__new();
	uint64_t ips[3] = { 0x401000, 0x402000, 0x403000 };
	const uint64_t *got;

	ok(sc != NULL, "new");
	ok(stackcache__get(sc, 42, 0) == NULL, "empty cache: nothing");
	got = stackcache__put(sc, 42, ips, 3, 0);
	ok(got && got[0] == 3 && got[1] == 0x401000 && got[3] == 0x403000, "put copies");
	ips[0] = 0;
	got = stackcache__get(sc, 42, 0);
	ok(got && got[1] == 0x401000, "the copy is the cache's own");
	ok(put(sc, 7, 0, 0) != NULL && holds(sc, 7, 0, 0), "a stack of depth 0");
	is_int((int)stackcache__count(sc), 2, "count");
	is_int((int)stackcache__sweep(sc, 1, 2), 0, "a sweep within KEEP frees nothing");
	stackcache__free(sc);
	stackcache__free(NULL);
}

static void test_growth(void)
{
	struct stackcache *sc = stackcache__new();
	int i, bad = 0;

	for (i = 1; i <= 20000; i++)
		if (!put(sc, (uint64_t)i * 0x9e3779b97f4a7c15ull | 1, (size_t)(i % 8), 0))
			bad++;
	is_int(bad, 0, "20000 puts");
	for (i = 1; i <= 20000; i++)
		bad += !holds(sc, (uint64_t)i * 0x9e3779b97f4a7c15ull | 1, (size_t)(i % 8), 0);
	is_int(bad, 0, "every entry found after the table grew");
	stackcache__free(sc);
}

/* Hashes sharing their low 20 bits all start probing at the same slot. */
#define COLLIDE(i) (((uint64_t)(i) << 20) | 0x5a5a5)

static void test_sweep(void)
{
	struct stackcache *sc = stackcache__new();
	int i, bad = 0, n = 3000;
	size_t freed;

	/* odd entries last used in epoch 1, even ones in epoch 9 */
	for (i = 1; i <= n; i++)
		put(sc, COLLIDE(i), 2, i % 2 ? 1 : 9);
	freed = stackcache__sweep(sc, 10, 2);
	is_int((int)freed, n / 2, "entries unused for more than KEEP epochs freed");
	is_int((int)stackcache__count(sc), n / 2, "the rest kept");
	for (i = 1; i <= n; i++) {
		const uint64_t *ips = stackcache__get(sc, COLLIDE(i), 10);

		if (i % 2 ? ips != NULL : !holds(sc, COLLIDE(i), 2, 10))
			bad++;
	}
	is_int(bad, 0, "kept entries reachable through a swept collision chain");

	/* a get counts as a use: only what was read since survives */
	for (i = 2; i <= n; i += 4)
		stackcache__get(sc, COLLIDE(i), 20);
	freed = stackcache__sweep(sc, 21, 2);
	is_int((int)freed, n / 4, "a sweep keeps what was read lately");
	for (i = 2; i <= n; i += 2)
		bad += (i % 4 == 2) != holds(sc, COLLIDE(i), 2, 21);
	is_int(bad, 0, "exactly the entries read since are left, all reachable");

	/* almost everything goes: the table shrinks, the rest stays reachable */
	for (i = 1; i <= 6000; i++)
		put(sc, COLLIDE(i + n), 1, 30);
	stackcache__get(sc, COLLIDE(n + 5), 40);
	freed = stackcache__sweep(sc, 41, 2);
	is_int((int)stackcache__count(sc), 1, "one entry left after a large sweep");
	ok(holds(sc, COLLIDE(n + 5), 1, 41), "and it is found");
	ok(put(sc, COLLIDE(1), 3, 41) && holds(sc, COLLIDE(1), 3, 41), "puts work after a shrink");
	diag("freed %zu", freed);
	stackcache__free(sc);
}

int main(void)
{
	test_basics();
	test_growth();
	test_sweep();
	return done_testing();
}
