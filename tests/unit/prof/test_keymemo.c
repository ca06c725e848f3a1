// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keymemo: a key's stack id at its generation, forgotten after a drain
 * without use, replaced by a newer generation; and the model's stack ids
 * (prof__add_id, prof__add_count). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof/keymemo.h"
#include "prof/prof.h"
#include "tap.h"

static struct profile_key key(__u32 pid, __u64 ustack)
{
	struct profile_key k;

	memset(&k, 0, sizeof(k));
	k.pid = pid;
	k.tid = pid + 1;
	k.ustack = ustack;
	strcpy(k.comm, "app");
	return k;
}

static void test_memo(void)
{
	struct keymemo *m = keymemo__new();
	struct profile_key a = key(10, 0x1111), b = key(10, 0x2222), c = a;
	size_t i, held;
	int bad = 0;

	ok(m != NULL, "a memo");
	is_int(keymemo__get(m, &a, 1), -1, "an empty memo knows nothing");
	is_int(keymemo__put(m, &a, 0, 3), -EINVAL, "generation 0 is not kept");
	is_int(keymemo__put(m, &a, 1, 3), 0, "put");
	is_int(keymemo__get(m, &a, 1), 3, "got at its generation");
	is_int(keymemo__get(m, &a, 2), -1, "not at another generation");
	is_int(keymemo__get(m, &b, 1), -1, "another stack is another key");
	strcpy(c.comm, "worker");
	is_int(keymemo__get(m, &c, 1), -1, "another thread name is another key");
	is_int(keymemo__put(m, &a, 2, 4), 0, "a newer generation replaces");
	is_int(keymemo__get(m, &a, 2), 4, "got at the newer generation");
	is_int(keymemo__get(m, &a, 1), -1, "the older one is gone");

	/* used in the next drain: kept; unused for a whole drain: forgotten */
	keymemo__put(m, &b, 1, 5);
	keymemo__age(m);
	is_int(keymemo__get(m, &a, 2), 4, "kept one drain");
	keymemo__age(m);
	is_int(keymemo__get(m, &a, 2), 4, "kept while used");
	is_int(keymemo__get(m, &b, 1), -1, "forgotten when unused for a drain");
	keymemo__age(m);
	keymemo__age(m);
	is_int(keymemo__get(m, &a, 2), -1, "forgotten at last");
	is_int(keymemo__count(m), 0, "nothing held");

	/* many keys: the tables grow, every one found */
	for (i = 0; i < 5000; i++) {
		struct profile_key k = key((__u32)(i % 97), 0x9000 + i);

		if (keymemo__put(m, &k, 7, i))
			bad++;
	}
	for (i = 0; i < 5000; i++) {
		struct profile_key k = key((__u32)(i % 97), 0x9000 + i);

		if (keymemo__get(m, &k, 7) != (long)i)
			bad++;
	}
	is_int(bad, 0, "5000 keys put and got");
	held = keymemo__count(m);
	is_int(held, 5000, "5000 held");
	keymemo__age(m);
	keymemo__age(m);
	is_int(keymemo__count(m), 0, "memory given back when unused");
	keymemo__free(m);
	keymemo__free(NULL);
}

static void test_prof_ids(void)
{
	struct prof *p = prof__new();
	struct prof_frame f1[] = { { "main", FRAME_NATIVE, "/bin/app", "" },
				   { "leaf", FRAME_NATIVE, "/bin/app", "" } };
	struct prof_frame f2[] = { { "main", FRAME_NATIVE, "/bin/app", "" } };
	struct prof_sample s = { .pid = 1, .tid = 1, .comm = "app", .thread = "app" };
	size_t a = 99, b = 99, c = 99;

	is_int(prof__add_id(p, &s, f1, 2, 5, &a), 0, "add_id");
	is_int(prof__add_id(p, &s, f2, 1, 1, &b), 0, "add_id, another stack");
	is_int(prof__add_id(p, &s, f1, 2, 2, &c), 0, "add_id, the first again");
	ok(a != b && a == c, "ids: %zu %zu %zu", a, b, c);
	is_int(prof__add_count(p, a, 10), 0, "add_count");
	is_int(prof__add_count(p, 7, 1), -EINVAL, "an unknown id");
	is_int(prof__total(p), 18, "total counted");
	is_int(prof__nstacks(p), 2, "no stack added by add_count");
	prof__free(p);
}

int main(void)
{
	test_memo();
	test_prof_ids();
	return done_testing();
}
