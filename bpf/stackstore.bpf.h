/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The stack store of bpf/profile.h, shared by the programs that count
 * stacks (profile.bpf.c, uprobe.bpf.c): a stack is kept once, in a hash
 * map keyed by a 64-bit hash of its addresses, and user space
 * (tools/lib/prof/capture.c) empties the map at every drain. Include after
 * vmlinux.h, bpf_helpers.h and profile.h. */
#ifndef SIDESCOPE_STACKSTORE_BPF_H
#define SIDESCOPE_STACKSTORE_BPF_H

#include <asm-generic/errno.h>

/* The map types of a program that counts stacks as bpf/profile.h says:
 * two count maps (struct profile_key -> __u64) and the store (hash ->
 * struct profile_stack), sized from user space before load. Declare e.g.
 * "struct stack_counts_map counts0 SEC(".maps");". */
struct stack_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct profile_key);
	__type(value, __u64);
};

struct stack_store_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct profile_stack);
};

/* The hash of the first N addresses of S; never 0 (0 means no stack). */
static __always_inline __u64 stack_hash(const struct profile_stack *s, int n)
{
	__u64 h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= n)
			break;
		h ^= s->ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* Keep the stack S of N addresses in STORE: its hash, or 0 when the store
 * is full. */
static __always_inline __u64 stack_put(void *store, const struct profile_stack *s, int n)
{
	__u64 h = stack_hash(s, n);
	long err;

	/* most stacks were stored before: a lookup takes no bucket lock */
	if (bpf_map_lookup_elem(store, &h))
		return h;
	err = bpf_map_update_elem(store, &h, s, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return 0;
	return h;
}

#endif
