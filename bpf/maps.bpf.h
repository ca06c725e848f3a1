/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Map helpers shared by the BPF programs. Include after vmlinux.h and
 * bpf_helpers.h. */
#ifndef SIDESCOPE_MAPS_BPF_H
#define SIDESCOPE_MAPS_BPF_H

#include <asm-generic/errno.h>

/* The value at KEY, created from INIT (BPF_NOEXIST) when missing. Another
 * CPU creating it meanwhile is fine: its value is returned. NULL when the
 * map is full. */
static __always_inline void *map_lookup_or_try_init(void *map, const void *key,
						    const void *init)
{
	void *val;
	long err;

	val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return 0;
	return bpf_map_lookup_elem(map, key);
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

/* Add one to the __u64 at KEY of a hash map shared by every CPU, creating
 * it at 1. Return 0, or -1 when the map is full. */
static __always_inline int map_count(void *map, const void *key)
{
	static const __u64 zero;
	__u64 *v = map_lookup_or_try_init(map, key, &zero);

	if (!v)
		return -1;
	__sync_fetch_and_add(v, 1);
	return 0;
}

/* Add N to the __u64 at KEY of a hash map shared by every CPU, creating
 * it at N. Return 0, or -1 when the map is full. */
static __always_inline int map_add(void *map, const void *key, __u64 n)
{
	static const __u64 zero;
	__u64 *v = map_lookup_or_try_init(map, key, &zero);

	if (!v)
		return -1;
	__sync_fetch_and_add(v, n);
	return 0;
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
