// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Why a stack or a sample was lost in the kernel, told by cause: the BPF
 * side's classification of a map update's error (bpf/maps.bpf.h
 * map_fail_of, compiled here as plain C) and what user space says of each
 * cause (prof__fail_name, prof__add_fails, prof__fail_advice). Only a full
 * map is a matter of --max-stacks: a Go program's first samples lost an
 * element to the BPF allocator's empty per-CPU cache (-ENOMEM) and were
 * told to raise --max-stacks. */
#include <errno.h>
#include <linux/types.h>
#include <stdint.h>
#include <string.h>

#include <sys/cdefs.h>	/* __always_inline */
#define BPF_NOEXIST 1
/* the helpers map_fail_of's neighbours call; never called here */
static void *bpf_map_lookup_elem(void *map, const void *key) { (void)map; (void)key; return NULL; }
static long bpf_map_update_elem(void *map, const void *key, const void *v, __u64 f)
{
	(void)map; (void)key; (void)v; (void)f;
	return -E2BIG;
}
#include "maps.bpf.h"

#include "prof/prof.h"
#include "tap.h"

int main(void)
{
	static const struct {
		long err;
		unsigned int cause;
	} cases[] = {
		{ -E2BIG, MAP_FAIL_FULL },
		{ -ENOMEM, MAP_FAIL_NOMEM },
		{ -EBUSY, MAP_FAIL_BUSY },
		{ -EDEADLK, MAP_FAIL_BUSY },
		{ -ETIMEDOUT, MAP_FAIL_BUSY },
		{ -EINVAL, MAP_FAIL_OTHER },
		{ -EFAULT, MAP_FAIL_OTHER },
	};
	uint64_t lost[MAP_FAIL_N] = { 0 };
	char buf[512], adv[512];
	size_t i;
	long err;
	int k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(map_fail_of(cases[i].err), cases[i].cause, "error %ld -> %s", cases[i].err,
		       prof__fail_name(cases[i].cause));
	/* map_add passes the update's error on */
	err = map_add(&k, &k, 1);
	is_int(err, -E2BIG, "map_add returns the update's error");

	buf[0] = '\0';
	prof__add_fails(buf, sizeof(buf), "stack store", lost);
	is_str(buf, "", "nothing lost: nothing said");
	lost[MAP_FAIL_NOMEM] = 1;
	lost[MAP_FAIL_BUSY] = 2;
	prof__add_fails(buf, sizeof(buf), "stack store", lost);
	is_str(buf, "stack store out of kernel memory 1, stack store busy 2",
	       "each cause with its count, no zeros");

	prof__fail_advice(MAP_FAIL_FULL, "the stack store", "--max-stacks", 64, adv, sizeof(adv));
	ok(strstr(adv, "the stack store was full: raise --max-stacks (now 64)") != NULL, "full: raise the option (%s)",
	   adv);
	for (k = MAP_FAIL_NOMEM; k < MAP_FAIL_N; k++) {
		prof__fail_advice((unsigned int)k, "the stack store", "--max-stacks", 64, adv, sizeof(adv));
		ok(!strstr(adv, "raise"), "%s: not told to raise anything (%s)",
		   prof__fail_name((unsigned int)k), adv);
	}
	prof__fail_advice(MAP_FAIL_NOMEM, "the stack store", "--max-stacks", 64, adv, sizeof(adv));
	ok(strstr(adv, "not a matter of --max-stacks") != NULL, "out of memory says so");
	return done_testing();
}
