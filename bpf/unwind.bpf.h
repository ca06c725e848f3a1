/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --unwind tables: user stacks walked from the sample's registers by the
 * unwind tables user space loaded (tools/lib/prof/unwind.c, rows from
 * sym/cfitab), frame pointers where an address has no table (JIT code),
 * with bpf_loop (5.17+): one call of unwind_step a frame. The same
 * arithmetic as cfitab__step, which the unit tests check in user space.
 * Nothing of the stack is copied out: only the return addresses. */
#ifndef SIDESCOPE_UNWIND_BPF_H
#define SIDESCOPE_UNWIND_BPF_H

/* the rule values of sym/cfitab.h */
#define CFI_CFA_NONE 0
#define CFI_CFA_SP 1
#define CFI_CFA_FP 2
#define CFI_CFA_PLT 3
#define CFI_CFA_END 4
#define CFI_CFA_SP_RA_DI 6	/* after CFI_CFA_UNSUPPORTED (5) */
#define CFI_FP_SAME 0
#define CFI_FP_AT 1
#define CFI_FP_UNKNOWN 2

const volatile bool want_tables = false;

/* The rows, in shards: row maps user space makes as the tables need them
 * (tools/lib/prof/unwind.c), each as large as it chose (BPF_F_INNER_MAP),
 * so that memory follows the objects profiled and a large one fits. */
struct unwind_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row));	/* a type here would be a
							 * forward one in BTF */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UNWIND_MAX_SHARDS);
	__type(key, __u32);
	__array(values, struct unwind_shard);
} unwind_rows SEC(".maps");

/* slot -> how many mappings it has; its mappings are unwind_maps[slot *
 * UNWIND_MAX_MAPS + i], sorted by start. Looked up by key, not indexed as
 * an array in a value: the verifier then does not track each search step's
 * index precisely, and prunes the walk's states (it loads in milliseconds). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);	/* set from user space */
	__type(key, __u32);
	__type(value, __u32);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);	/* set from user space: slots * UNWIND_MAX_MAPS */
	__type(key, __u32);
	__type(value, struct unwind_map);
} unwind_maps SEC(".maps");

/* slot -> when its walks last asked user space to read its maps again
 * (bpf_ktime_get_ns) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);	/* set from user space: as unwind_procs */
	__type(key, __u32);
	__type(value, __u64);
} unwind_asked SEC(".maps");

/* tgid (as in profile_key) -> its slot in unwind_procs */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);	/* set from user space */
	__type(key, __u32);
	__type(value, __u32);
} unwind_pids SEC(".maps");

struct unwind_walk {
	__u64 ip, sp, bp;
	__u64 di;	/* the first frame's RDI: a return address there (vfork) */
	__u64 hash;	/* of scratch[0, n), as stack_hash: no second loop */
	__u32 slot;	/* in unwind_procs */
	__u32 n;	/* frames in scratch[0] */
	__u32 bp_known;
	__u32 done;	/* 1: the outermost frame, 2: cut */
	__u32 tgid;	/* whose stack: for a table's request */
	__u32 wait;	/* 1: cut at an object whose table is to come */
};

/* The searches are global functions: the verifier checks each once, on its
 * own, and the caller only sees an unknown number come back. Inlined, each
 * outcome of the first search was a state of its own through the rest of
 * the walk (a quarter of a second to load). */

/* The mapping search's state, for bpf_loop (as a bounded loop, each of
 * its 7 steps was verified on its own) */
struct unwind_map_search {
	__u64 look;
	__u32 base, lo, hi;
	__u32 err;
};

/* One step of the mapping search: bpf_loop's callback */
static long unwind_map_step(__u32 i, void *ctx)
{
	struct unwind_map_search *s = ctx;
	struct unwind_map *m;
	__u32 mid, idx;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	idx = s->base + mid;
	m = bpf_map_lookup_elem(&unwind_maps, &idx);
	if (!m) {
		s->err = 1;
		return 1;
	}
	if (m->start <= s->look)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* Of SLOT's N mappings, sorted by start: 1 + the index of the last one
 * starting at or below LOOK, or 0. When none holds LOOK, counted
 * (PSTAT_UNWIND_UNMAPPED: here, checked once, not at each step of the
 * walk, where it made the verifier's work a third larger). */
__noinline __u32 unwind_find_map(__u32 slot, __u32 n, __u64 look)
{
	struct unwind_map_search s = { .look = look, .base = slot * UNWIND_MAX_MAPS, .hi = n };
	struct unwind_map *m;
	__u32 idx;

	/* N is at most UNWIND_MAX_MAPS (user space keeps it so) */
	bpf_loop(7, unwind_map_step, &s, 0);	/* 2^7 > UNWIND_MAX_MAPS */
	if (s.err)
		return 0;
	idx = s.base + s.lo - 1;
	if (!s.lo || !(m = bpf_map_lookup_elem(&unwind_maps, &idx)) || look >= m->end)
		stat_inc(PSTAT_UNWIND_UNMAPPED);
	return s.lo;
}

/* Entry K of the rows' index from slot IDX of row map ROWS (struct
 * unwind_map), or -1 */
static __always_inline __s64 unwind_index_at(void *rows, __u32 idx, __u32 k)
{
	__u32 slot = idx + k / UNWIND_INDEX_PER_ROW, *e;

	e = bpf_map_lookup_elem(rows, &slot);
	if (!e)
		return -1;
	return e[k & (UNWIND_INDEX_PER_ROW - 1)];
}

/* Of the rows [0, COUNT) of an object in row map SHARD: the range [lo, hi)
 * (lo | hi << 32) the row search starts from for a pc in block K of its
 * index (NBLOCKS entries and one, from slot IDX; counted from the index's
 * first block): that block's rows, or all of them (no index, K outside). */
__noinline __u64 unwind_block(__u32 shard, __u32 count, __u32 idx, __u32 nblocks, __u32 k)
{
	__s64 lo, hi;
	void *rows;

	if (k >= nblocks)
		return (__u64)count << 32;
	rows = bpf_map_lookup_elem(&unwind_rows, &shard);
	if (!rows)
		return (__u64)count << 32;
	lo = unwind_index_at(rows, idx, k);
	hi = unwind_index_at(rows, idx, k + 1);
	if (lo < 0 || hi < lo)
		return (__u64)count << 32;
	return (__u64)lo | (__u64)hi << 32;
}

/* One step of the row search: bpf_loop's callback (verified once; as a
 * bounded loop the verifier walked each of its 24 steps on its own, a
 * third of the program's verification). */
struct unwind_row_search {
	void *rows;	/* the row map */
	__u32 first, lo, hi, rel;
	__u32 err;
};

static long unwind_row_step(__u32 i, void *ctx)
{
	struct unwind_row_search *s = ctx;
	struct unwind_row *r;
	__u32 mid, idx;

	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	idx = s->first + mid;
	r = bpf_map_lookup_elem(s->rows, &idx);
	if (!r) {
		s->err = 1;
		return 1;
	}
	if (r->pc <= s->rel)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* Of the rows [FIRST, FIRST + HI) of row map SHARD, knowing that the
 * first LO have a pc at or below REL: 1 + the index of the last one whose
 * pc is at or below REL, or 0. */
__noinline __u32 unwind_find_row(__u32 shard, __u32 first, __u32 lo, __u32 hi, __u32 rel)
{
	struct unwind_row_search s = { .first = first, .lo = lo, .hi = hi, .rel = rel };

	s.rows = bpf_map_lookup_elem(&unwind_rows, &shard);
	if (!s.rows)
		return 0;
	bpf_loop(24, unwind_row_step, &s, 0);	/* 2^24 rows an object at most */
	return s.err || !s.lo ? 0 : first + s.lo;
}

/* Mapping IDX of unwind_maps (M) has its table still to come: ask user
 * space for it, once (the first walk to get there). */
static __always_inline void unwind_want(struct unwind_walk *w, struct unwind_map *m, __u32 idx)
{
	struct profile_new ev = { .pid = w->tgid, .want = idx + 1 };

	w->wait = 1;
	if (m->want)
		return;
	m->want = 1;
	if (bpf_ringbuf_output(&news, &ev, sizeof(ev), 0)) {
		m->want = 0;	/* asked again by the next walk */
		stat_inc(PSTAT_NEW_LOST);
	}
}

/* The row of LOOK in the tables of the process in W's slot (N mappings),
 * or NULL (no table there; W->wait: one is to come). */
static __always_inline struct unwind_row *unwind_find(struct unwind_walk *w, __u32 n, __u64 look)
{
	struct unwind_map *m;
	__u32 i, idx, shard, slot = w->slot;
	void *rows;
	__u64 rel, range;

	i = unwind_find_map(slot, n, look);
	if (!i || i > UNWIND_MAX_MAPS)
		return NULL;
	idx = slot * UNWIND_MAX_MAPS + i - 1;
	m = bpf_map_lookup_elem(&unwind_maps, &idx);
	if (!m || look >= m->end)
		return NULL;
	if (m->shard == UNWIND_SHARD_WAIT) {
		unwind_want(w, m, idx);
		return NULL;
	}
	if (look < m->adj)
		return NULL;
	rel = look - m->adj;
	if (rel > 0xffffffffull)
		return NULL;
	shard = m->shard;
	/* a pc below the index's first block wraps around: all the rows */
	range = unwind_block(shard, m->count, m->idx_first, m->nblocks,
			     ((__u32)rel >> UNWIND_BLOCK_SHIFT) - m->block0);
	idx = unwind_find_row(shard, m->first, (__u32)range, (__u32)(range >> 32), (__u32)rel);
	if (!idx)
		return NULL;
	idx -= 1;
	rows = bpf_map_lookup_elem(&unwind_rows, &shard);
	if (!rows)
		return NULL;
	return bpf_map_lookup_elem(rows, &idx);
}

static long unwind_step(__u32 i, void *ctx)
{
	struct unwind_walk *w = ctx;
	struct profile_stack *s;
	__u32 *nmaps;
	struct unwind_row *r = NULL;
	__u32 zero = 0, n = w->n;
	__u64 cfa, ra = 0, bp = w->bp, look;
	__u32 bp_known = w->bp_known;
	__s16 fp_off = 0;
	__u64 cfa_off = 0;
	__u8 rule = CFI_CFA_NONE, fp = CFI_FP_SAME;

	s = bpf_map_lookup_elem(&scratch, &zero);
	nmaps = bpf_map_lookup_elem(&unwind_procs, &w->slot);
	if (!s || !nmaps || n >= PROFILE_MAX_DEPTH)
		return 1;
	s->ips[n] = w->ip;
	w->n = n + 1;
	w->hash = stack_hash_step(w->hash, w->ip);
	look = n ? w->ip - 1 : w->ip;	/* a return address is past its call */
	r = unwind_find(w, *nmaps, look);
	if (r) {
		rule = UNWIND_ROW_CFA(r);
		fp = UNWIND_ROW_FP(r);
		fp_off = r->fp_off;
		cfa_off = UNWIND_ROW_CFA_OFF(r);
	} else if (w->wait) {
		/* most likely code without frame pointers: cut here, not
		 * followed by a guess */
		goto cut;
	}
	switch (rule) {
	case CFI_CFA_NONE:	/* frame pointers: [RBP] and [RBP + 8] */
		if (!bp_known || !w->bp || w->bp < w->sp)
			goto cut;
		cfa = w->bp + 16;
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)w->bp))
			goto cut;
		bp_known = 1;
		fp = CFI_FP_SAME;
		break;
	case CFI_CFA_SP:
		cfa = w->sp + cfa_off;
		break;
	case CFI_CFA_FP:
		if (!bp_known)
			goto cut;
		cfa = w->bp + cfa_off;
		break;
	case CFI_CFA_PLT:
		cfa = w->sp + cfa_off + ((w->ip & 15) >= (__u64)fp_off ? 8 : 0);
		fp = CFI_FP_SAME;
		break;
	case CFI_CFA_END:
		w->done = 1;
		return 1;
	case CFI_CFA_SP_RA_DI:	/* only the first frame's registers are known */
		if (n)
			goto cut;
		cfa = w->sp + cfa_off;
		ra = w->di;
		/* a copy is linked to w->di in the verifier (one id): stored
		 * as the next ip, the link made every walk's state a new one,
		 * and the loop took seven rounds to check instead of two.
		 * An ALU operation unlinks it. */
		asm volatile("%[r] |= 0" : [r] "+r"(ra));
		break;
	default:
		goto cut;
	}
	if (fp == CFI_FP_AT) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + (__u64)(__s64)fp_off)))
			goto cut;
		bp_known = 1;
	} else if (fp == CFI_FP_UNKNOWN) {
		bp_known = 0;
	}
	if (rule == CFI_CFA_SP_RA_DI) {
		if (cfa < w->sp)
			goto cut;
	} else if (cfa <= w->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		goto cut;
	}
	if (!ra) {
		w->done = 1;
		return 1;
	}
	w->ip = ra;
	w->sp = cfa;
	w->bp = bp;
	w->bp_known = bp_known;
	return 0;
cut:
	w->done = 2;
	return 1;
}

/* The registers the current task entered the kernel with, into W: 0, or
 * -1 (a kernel thread, or no bpf_task_pt_regs). */
static __always_inline int unwind_task_regs(struct unwind_walk *w)
{
	struct pt_regs *regs;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return -1;
	w->ip = BPF_CORE_READ(regs, ip);
	w->sp = BPF_CORE_READ(regs, sp);
	w->bp = BPF_CORE_READ(regs, bp);
	w->di = BPF_CORE_READ(regs, di);
	return w->ip ? 0 : -1;
}

/* The slot of TGID's tables into W, when tables are on and it has them:
 * 0, else -1. */
static __always_inline int unwind_begin(struct unwind_walk *w, __u32 tgid)
{
	__u32 *slot;

	if (!want_tables || !bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop))
		return -1;
	slot = bpf_map_lookup_elem(&unwind_pids, &tgid);
	if (!slot)
		return -1;
	w->slot = *slot;
	return 0;
}

/* This CPU's count of frames in no mapping with a table */
static __always_inline __u64 unwind_unmapped(void)
{
	__u32 idx = PSTAT_UNWIND_UNMAPPED;
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	return v ? *v : 0;
}

/* A walk of TGID (in SLOT) met a pc in none of its mappings with tables:
 * code that has none (JIT code, an object without CFI), or a mapping user
 * space has not seen (a library loaded since it read the maps). Ask it to
 * read them again, at most once every UNWIND_ASK_NS a process: it does
 * not read them on a short timer. */
__noinline int unwind_ask_maps(__u32 tgid, __u32 slot)
{
	struct profile_new ev = { .pid = tgid, .want = UNWIND_WANT_MAPS };
	__u64 *last, now;

	last = bpf_map_lookup_elem(&unwind_asked, &slot);
	if (!last)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - *last < UNWIND_ASK_NS)
		return 0;
	*last = now;
	if (bpf_ringbuf_output(&news, &ev, sizeof(ev), 0))
		stat_inc(PSTAT_NEW_LOST);
	return 0;
}

/* Walk W from its registers into the store: the stack's hash, or 0. */
static __always_inline __u64 unwind_walk_store(struct unwind_walk *w)
{
	__u64 unmapped = unwind_unmapped();
	struct profile_stack *s;
	__u32 zero = 0;

	w->bp_known = 1;
	w->hash = STACK_HASH_SEED;
	bpf_loop(PROFILE_MAX_DEPTH, unwind_step, w, 0);
	if (unwind_unmapped() != unmapped)
		unwind_ask_maps(w->tgid, w->slot);
	if (!w->n)
		return 0;
	stat_inc(PSTAT_UNWIND_TABLES);
	if (w->done != 1) {
		if (w->n >= PROFILE_MAX_DEPTH)
			stat_inc(PSTAT_USTACK_TRUNC);
		else
			stat_inc(PSTAT_UNWIND_CUT);
		if (w->wait)
			stat_inc(PSTAT_UNWIND_WAIT);
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	/* readers stop at the first 0, as after bpf_get_stack */
	if (w->n < PROFILE_MAX_DEPTH)
		s->ips[w->n] = 0;
	return stack_put_hashed(&stacks, s, w->hash, &stats, PSTAT_STACKS_LOST);
}

/* The user stack of the current task by its tables, into the store: its
 * hash, or 0 when the process has none loaded (or the kernel lacks
 * bpf_loop), for the caller to take the frame-pointer stack instead. From
 * the registers the task last entered the kernel with: at a sample taken
 * in user space, the sample's own (the interrupt saved them there); in the
 * kernel (a sample there, a context switch, a wakeup), where it left user
 * space. One source of registers for every caller: with a second one (the
 * sample's context) the verifier walked the loop once for each. */
static __always_inline __u64 unwind_user_stack(__u32 tgid)
{
	struct unwind_walk w = {};

	if (unwind_begin(&w, tgid) || unwind_task_regs(&w))
		return 0;
	w.tgid = tgid;
	return unwind_walk_store(&w);
}

#endif
