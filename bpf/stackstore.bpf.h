/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The stack store of bpf/profile.h, shared by the programs that count
 * stacks (profile.bpf.c, uprobe.bpf.c) and the timeline's sampler
 * (timeline.bpf.c): a stack is kept once, in a hash map keyed by a 64-bit
 * hash of its addresses; user space (tools/lib/prof/capture.c, the
 * timeline) copies each out and deletes it. Include after
 * vmlinux.h, bpf_helpers.h, maps.bpf.h and profile.h. */
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

#define STACK_HASH_SEED 0xcbf29ce484222325ull

/* One address more into the running hash H of a stack. */
static __always_inline __u64 stack_hash_step(__u64 h, __u64 ip)
{
	h ^= ip;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

struct stack_hash_ctx {
	const struct profile_stack *s;
	__u64 h;
};

static long stack_hash_cb(__u32 i, void *ctx)
{
	struct stack_hash_ctx *c = ctx;

	if (i >= PROFILE_MAX_DEPTH)
		return 1;
	c->h = stack_hash_step(c->h, c->s->ips[i]);
	return 0;
}

/* The hash of the first N addresses of S (0 stands for 1 in the store).
 * By bpf_loop where the kernel has it (5.17): a bounded loop is verified
 * one step at a time, PROFILE_MAX_DEPTH of them in every program that
 * stores a stack; the callback once. */
static __always_inline __u64 stack_hash(const struct profile_stack *s, int n)
{
	struct stack_hash_ctx c = { .s = s, .h = STACK_HASH_SEED };
	int i;

	if (n > PROFILE_MAX_DEPTH)
		n = PROFILE_MAX_DEPTH;
	if (n <= 0)
		return c.h;
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
		bpf_loop(n, stack_hash_cb, &c, 0);
		return c.h;
	}
	for (i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= n)
			break;
		c.h = stack_hash_step(c.h, s->ips[i]);
	}
	return c.h;
}

/* Keep the stack S, whose hash is H (from stack_hash, or the same steps
 * taken while it was walked), in STORE: its key, or 0 when it could not
 * be stored, counted in the per-CPU array STATS at LOST plus the cause
 * (maps.bpf.h: map_fail_of; MAP_FAIL_N counters from LOST). */
static __always_inline __u64 stack_put_hashed(void *store, const struct profile_stack *s, __u64 h,
					      void *stats, __u32 lost)
{
	long err;

	h = h ? h : 1;	/* never 0: 0 means no stack */
	/* most stacks were stored before: a lookup takes no bucket lock */
	if (bpf_map_lookup_elem(store, &h))
		return h;
	err = bpf_map_update_elem(store, &h, s, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		percpu_inc(stats, lost + map_fail_of(err));
		return 0;
	}
	return h;
}

/* Keep the stack S of N addresses in STORE: stack_put_hashed. */
static __always_inline __u64 stack_put(void *store, const struct profile_stack *s, int n,
				       void *stats, __u32 lost)
{
	return stack_put_hashed(store, s, stack_hash(s, n), stats, lost);
}

#endif
