/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Map helpers shared by the BPF programs. Include after vmlinux.h and
 * bpf_helpers.h. */
#ifndef SIDESCOPE_MAPS_BPF_H
#define SIDESCOPE_MAPS_BPF_H

#include <asm-generic/errno.h>

#include "mapfail.h"

/* Why an update of a hash map failed (enum map_fail) from its error: a
 * full map, an element the kernel could not allocate, a bucket lock that
 * was held, and anything else told apart, each with its own remedy. */
static __always_inline __u32 map_fail_of(long err)
{
	if (err == -E2BIG)
		return MAP_FAIL_FULL;
	if (err == -ENOMEM)
		return MAP_FAIL_NOMEM;
	/* older kernels: -EBUSY when a program on this CPU holds the
	 * bucket's lock; resilient locks (6.15): -EDEADLK, -ETIMEDOUT */
	if (err == -EBUSY || err == -EDEADLK || err == -ETIMEDOUT)
		return MAP_FAIL_BUSY;
	return MAP_FAIL_OTHER;
}

/* The value at KEY, created from INIT (BPF_NOEXIST) when missing. Another
 * CPU creating it meanwhile is fine: its value is returned. NULL when it
 * could not be created, with the error in *ERR. */
static __always_inline void *map_lookup_or_try_init_err(void *map, const void *key,
							const void *init, long *err)
{
	void *val;

	*err = 0;
	val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	*err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (*err && *err != -EEXIST)
		return 0;
	*err = 0;
	val = bpf_map_lookup_elem(map, key);
	if (!val)
		*err = -ENOENT;	/* deleted meanwhile (a drain) */
	return val;
}

/* The same, without the error. */
static __always_inline void *map_lookup_or_try_init(void *map, const void *key,
						    const void *init)
{
	long err;

	return map_lookup_or_try_init_err(map, key, init, &err);
}

/* Add one to the __u64 at KEY of a per-CPU array (no other writer: no
 * atomic needed). A key out of range is ignored. */
static __always_inline void percpu_inc(void *map, __u32 key)
{
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		*v += 1;
}

/* Add N to the __u64 at KEY of a per-CPU array. */
static __always_inline void percpu_add(void *map, __u32 key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		*v += n;
}

/* Add N to the __u64 at KEY of a hash map shared by every CPU, creating
 * it at N. Return 0, or the update's negative error (map_fail_of). */
static __always_inline long map_add(void *map, const void *key, __u64 n)
{
	static const __u64 zero;
	long err;
	__u64 *v = map_lookup_or_try_init_err(map, key, &zero, &err);

	if (!v)
		return err ? err : -ENOENT;
	__sync_fetch_and_add(v, n);
	return 0;
}

/* Add one: map_add(MAP, KEY, 1). */
static __always_inline long map_count(void *map, const void *key)
{
	return map_add(map, key, 1);
}

/* floor(log2(V)), 0 for V = 0: the slot of a log2 histogram. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

#endif
