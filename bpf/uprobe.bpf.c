// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One generic uprobe/uretprobe program for every probe of a session. The
 * attach cookie names the probe; its fetch recipe (registers, dereference
 * chains, bounded string copies) comes from a map, so no compiler is needed
 * at run time. Strings are copied raw; user space decodes them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "maps.bpf.h"
#include "pidns.h"
#include "profile.h"
#include "stackstore.bpf.h"
#include "uprobe.h"

const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 target_tgid = 0;	/* in the sidecar's namespace; 0: any */
const volatile __u64 wake_bytes = 0;	/* wake the reader once this much is queued */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UP_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct up_recipe);
} recipes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UP_MAX_PROBES * UP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UP_MAX_PROBES * UP_HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

/* entry time per (thread, probe) for --latency */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct up_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* set from user space before load */
} events SEC(".maps");

/* --hist: log2 histogram of a value, per probe */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UP_MAX_PROBES * UP_HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} vhist SEC(".maps");

/* --by: hits per distinct (probe, value) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);	/* set from user space (--max-keys) */
	__type(key, struct up_bykey);
	__type(value, __u64);
} by SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);	/* set from user space (--max-keys) */
	__type(key, struct up_byint);
	__type(value, __u64);
} by_int SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct up_bykey);
} by_scratch SEC(".maps");

/* --stacks: the maps of bpf/profile.h, drained by the profiler's capture
 * engine (tools/lib/prof/capture.c): counts of (process, thread, user
 * stack) in the map "active" names, the stacks stored once by hash. */
volatile __u32 active = 0;

struct stack_counts_map counts0 SEC(".maps");
struct stack_counts_map counts1 SEC(".maps");
struct stack_store_map stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PSTAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} pstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_stack);
} stack_scratch SEC(".maps");

static __always_inline void stat_add(__u32 probe, __u32 which)
{
	percpu_inc(&stats, probe * UP_NSTATS + which);
}

/* Registers an expression can start from, indexed by enum up_base. Read
 * once into an array: a switch over ctx fields lets clang compute a ctx
 * offset, which the verifier refuses. The array is too big for the BPF
 * stack, so it lives in a per-CPU map. */
struct regs {
	__u64 r[UP_MAX_BASES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct regs);
} regbuf SEC(".maps");

static __always_inline void read_regs(struct pt_regs *ctx, struct regs *rg)
{
	rg->r[0] = 0;
	rg->r[1] = PT_REGS_PARM1(ctx);
	rg->r[2] = PT_REGS_PARM2(ctx);
	rg->r[3] = PT_REGS_PARM3(ctx);
	rg->r[4] = PT_REGS_PARM4(ctx);
	rg->r[5] = PT_REGS_PARM5(ctx);
#ifdef PT_REGS_PARM6
	rg->r[6] = PT_REGS_PARM6(ctx);
#else
	/* libbpf 1.1 has no PT_REGS_PARM6; x86-64 passes it in r9 */
	rg->r[6] = ctx->r9;
#endif
	rg->r[7] = PT_REGS_RC(ctx);
#if defined(__TARGET_ARCH_x86)
	rg->r[UP_BASE_AX] = ctx->ax;
	rg->r[UP_BASE_BX] = ctx->bx;
	rg->r[UP_BASE_CX] = ctx->cx;
	rg->r[UP_BASE_DX] = ctx->dx;
	rg->r[UP_BASE_SI] = ctx->si;
	rg->r[UP_BASE_DI] = ctx->di;
	rg->r[UP_BASE_BP] = ctx->bp;
	rg->r[UP_BASE_SP] = ctx->sp;
	rg->r[UP_BASE_R8] = ctx->r8;
	rg->r[UP_BASE_R9] = ctx->r9;
	rg->r[UP_BASE_R10] = ctx->r10;
	rg->r[UP_BASE_R11] = ctx->r11;
	rg->r[UP_BASE_R12] = ctx->r12;
	rg->r[UP_BASE_R13] = ctx->r13;
	rg->r[UP_BASE_R14] = ctx->r14;
	rg->r[UP_BASE_R15] = ctx->r15;
	rg->r[UP_BASE_IP] = ctx->ip;
#endif
}

/* Evaluate an expression; return 0 or -1 when a dereference faulted. */
static __noinline int eval_expr(const struct regs *rg, const struct up_expr *e, __u64 *out)
{
	__u64 v = rg->r[e->base & (UP_MAX_BASES - 1)];
	int i;

	for (i = 0; i < UP_MAX_STEPS; i++) {
		const struct up_step *s = &e->steps[i];
		__u64 raw = 0;
		long err;

		if (i >= e->nsteps)
			break;
		v += s->add;
		switch (s->size) {
		case 1:
			err = bpf_probe_read_user(&raw, 1, (void *)v);
			if (s->sign)
				raw = (__u64)(__s64)(__s8)raw;
			break;
		case 2:
			err = bpf_probe_read_user(&raw, 2, (void *)v);
			if (s->sign)
				raw = (__u64)(__s64)(__s16)raw;
			break;
		case 4:
			err = bpf_probe_read_user(&raw, 4, (void *)v);
			if (s->sign)
				raw = (__u64)(__s64)(__s32)raw;
			break;
		default:
			err = bpf_probe_read_user(&raw, 8, (void *)v);
			break;
		}
		if (err)
			return -1;
		v = raw;
	}
	*out = v + e->final_add;
	return 0;
}

/* Copy n bytes (n <= UP_STR_MAX) from user address src; when the whole range
 * is not readable, copy up to the end of the first page. Return the bytes
 * copied (flags get UP_VF_PARTIAL) or -1 on a fault at the start. */
static __always_inline long copy_bytes(__u8 *dst, __u64 src, __u32 n, __u32 *flags)
{
	__u32 first;

	if (n == 0)
		return 0;
	if (n > UP_STR_MAX)
		n = UP_STR_MAX;
	/* clang may check a copy and pass the original: make the bound a mask
	 * on the value the helper gets (the buffer has room for the slack) */
	barrier_var(n);
	n &= 2 * UP_STR_MAX - 1;
	if (bpf_probe_read_user(dst, n, (void *)src) == 0)
		return n;
	first = 4096 - (src & 4095);
	if (first >= n)
		return -1;
	barrier_var(first);
	first &= 2 * UP_STR_MAX - 1;
	if (bpf_probe_read_user(dst, first, (void *)src) != 0)
		return -1;
	*flags |= UP_VF_PARTIAL;
	return first;
}

/* Fetch one string slot into data at *off. */
static __noinline int fetch_string(const struct regs *rg, const struct up_slot *sl,
				   struct up_val *v, __u8 *data, __u32 off)
{
	__u32 units = sl->max_units, n;
	__u64 addr = v->value;
	long got;
	__s32 len32 = 0;

	if (units > UP_MAX_UNITS)
		units = UP_MAX_UNITS;
	off &= UP_DATA_MAX - 1;
	/* a Go string of length 0 may have no pointer: it is "", not NULL */
	if (addr == 0 && sl->kind != UP_KIND_GOSTR) {
		v->flags |= UP_VF_NULL;
		return 0;
	}
	switch (sl->kind) {
	case UP_KIND_STR:
		/* +2: a return of units+2 means longer than units bytes */
		n = units + 2;
		barrier_var(n);
		n &= 2 * UP_STR_MAX - 1;
		got = bpf_probe_read_user_str(data + off, n, (void *)addr);
		if (got < 0) {
			v->flags |= UP_VF_FAULT;
			return 0;
		}
		if (got >= units + 2) {
			v->flags |= UP_VF_CUT;
			got = units + 1;
		}
		v->len = got > 0 ? got - 1 : 0;
		return 0;
	case UP_KIND_STR16Z:
		/* one unit more than the limit tells whether the string is longer */
		n = (units + 1) * 2;
		break;
	case UP_KIND_STR16N:
		if (eval_expr(rg, &sl->len, (__u64 *)&v->count)) {
			v->flags |= UP_VF_FAULT;
			return 0;
		}
		/* an int length arrives zero-extended: 2^31 and above is negative
		 * or absurd either way */
		if ((__u64)v->count >> 31) {
			v->flags |= UP_VF_BADLEN;
			return 0;
		}
		if (v->count > units)
			v->flags |= UP_VF_CUT;
		n = (v->count > units ? units : v->count) * 2;
		break;
	case UP_KIND_GOSTR:
		/* a byte count: a Go int, 64 bits; 2^31 and more is absurd here */
		if (eval_expr(rg, &sl->len, (__u64 *)&v->count)) {
			v->flags |= UP_VF_FAULT;
			return 0;
		}
		if ((__u64)v->count >> 31) {
			v->flags |= UP_VF_BADLEN;
			return 0;
		}
		if (v->count == 0)
			return 0;
		if (addr == 0) {
			v->flags |= UP_VF_NULL;
			return 0;
		}
		if (v->count > units)
			v->flags |= UP_VF_CUT;
		n = v->count > units ? units : v->count;
		break;
	case UP_KIND_DOTNET:
		if (bpf_probe_read_user(&len32, 4, (void *)(addr + 8))) {
			v->flags |= UP_VF_FAULT;
			return 0;
		}
		v->count = len32;
		if (len32 < 0) {
			v->flags |= UP_VF_BADLEN;
			return 0;
		}
		if (len32 > units)
			v->flags |= UP_VF_CUT;
		n = ((__u32)len32 > units ? units : (__u32)len32) * 2;
		addr += 12;
		break;
	default:
		return 0;
	}
	got = copy_bytes(data + off, addr, n, &v->flags);
	if (got < 0) {
		v->flags |= UP_VF_FAULT;
		return 0;
	}
	v->len = got;
	return 0;
}

/* Filter evaluation, one operation per bpf_loop step: the callback is
 * verified once, where an unrolled loop over a value stack would make the
 * verifier explore every combination. */
struct fctx {
	__s64 st[UP_FSTACK];
	__u32 sp;
	__u32 probe;
	__u32 bad;
};

static long filter_step(__u32 i, void *data)
{
	struct fctx *c = data;
	const struct up_recipe *r;
	const struct up_fop *op;
	struct up_event *ev;
	__u32 zero = 0, sp = c->sp;
	__s64 a, b;

	r = bpf_map_lookup_elem(&recipes, &c->probe);
	ev = bpf_map_lookup_elem(&scratch, &zero);
	if (!r || !ev || i >= UP_MAX_FOPS || i >= r->nfops)
		return 1;
	barrier_var(i);
	op = &r->fops[i & (UP_MAX_FOPS - 1)];
	if (op->op == UP_FOP_END)
		return 1;
	if (op->op == UP_FOP_SLOT || op->op == UP_FOP_IMM) {
		if (sp >= UP_FSTACK) {
			c->bad = 1;
			return 1;
		}
		c->st[sp & (UP_FSTACK - 1)] = op->op == UP_FOP_IMM ? op->imm :
			(__s64)ev->hdr.vals[op->slot & (UP_MAX_SLOTS - 1)].value;
		c->sp = sp + 1;
		return 0;
	}
	if (op->op == UP_FOP_NOT) {
		if (sp < 1) {
			c->bad = 1;
			return 1;
		}
		c->st[(sp - 1) & (UP_FSTACK - 1)] = !c->st[(sp - 1) & (UP_FSTACK - 1)];
		return 0;
	}
	if (sp < 2) {
		c->bad = 1;
		return 1;
	}
	b = c->st[(sp - 1) & (UP_FSTACK - 1)];
	a = c->st[(sp - 2) & (UP_FSTACK - 1)];
	switch (op->op) {
	case UP_FOP_EQ: a = a == b; break;
	case UP_FOP_NE: a = a != b; break;
	case UP_FOP_LT: a = a < b; break;
	case UP_FOP_LE: a = a <= b; break;
	case UP_FOP_GT: a = a > b; break;
	case UP_FOP_GE: a = a >= b; break;
	case UP_FOP_AND: a = a && b; break;
	case UP_FOP_OR: a = a || b; break;
	default: a = 0; break;
	}
	c->st[(sp - 2) & (UP_FSTACK - 1)] = a;
	c->sp = sp - 1;
	return 0;
}

/* 1: the event passes. A malformed program (user space never builds one)
 * lets events through rather than hiding them. */
static __always_inline int run_filter(__u32 probe)
{
	struct fctx c = { .probe = probe };

	bpf_loop(UP_MAX_FOPS, filter_step, &c, 0);
	if (c.bad || c.sp == 0)
		return 1;
	return c.st[(c.sp - 1) & (UP_FSTACK - 1)] != 0;
}

static __always_inline void latency_start(__u32 probe)
{
	__u64 key = (bpf_get_current_pid_tgid() << 8) | probe;
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&starts, &key, &ts, BPF_ANY);
}

static __always_inline void latency_end(__u32 probe)
{
	__u64 key = (bpf_get_current_pid_tgid() << 8) | probe;
	__u64 *ts = bpf_map_lookup_elem(&starts, &key);
	__u64 d;

	if (!ts)
		return;
	d = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&starts, &key);
	percpu_inc(&hist, probe * UP_HIST_SLOTS + log2_u64(d));
}

/* --hist: the value of slot V into the probe's log2 histogram. */
static __always_inline void hist_value(__u32 probe, const struct up_val *v)
{
	if (v->flags & UP_VF_FAULT) {
		stat_add(probe, UP_STAT_UNREAD);
		return;
	}
	if ((__s64)v->value < 0) {
		stat_add(probe, UP_STAT_NEGATIVE);
		return;
	}
	percpu_inc(&vhist, probe * UP_HIST_SLOTS + log2_u64(v->value));
}

/* --by: one more hit for the value of slot SL (fetched into V; a string's
 * bytes go through DATA) in the map of values: integers in "by_int", whose
 * small key hashes fast, strings in "by". */
static __noinline int count_by(const struct regs *rg, const struct up_slot *sl,
			       struct up_val *v, __u8 *data, __u32 probe)
{
	struct up_bykey *k;
	__u32 zero = 0, n;

	if (sl->kind == UP_KIND_INT || (v->flags & UP_VF_FAULT)) {
		struct up_byint ki = { .probe = probe, .flags = v->flags & UP_VF_FAULT };

		ki.value = ki.flags ? 0 : v->value;
		if (map_count(&by_int, &ki))
			stat_add(probe, UP_STAT_BY_FULL);
		return 0;
	}
	k = bpf_map_lookup_elem(&by_scratch, &zero);
	if (!k)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	k->probe = probe;
	fetch_string(rg, sl, v, data, 0);
	n = v->len;
	if (n > UP_BY_BYTES) {
		n = UP_BY_BYTES;
		v->flags |= UP_VF_CUT;
	}
	barrier_var(n);
	if (n > UP_BY_BYTES)
		n = UP_BY_BYTES;
	if (bpf_probe_read_kernel(k->data, n, data))
		v->flags |= UP_VF_FAULT;
	k->len = n;
	k->count = v->count;
	k->flags = v->flags;
	if (map_count(&by, k))
		stat_add(probe, UP_STAT_BY_FULL);
	return 0;
}

/* --stacks: one more hit for the current thread's user stack. */
static __always_inline void count_stack(struct pt_regs *ctx, const struct bpf_pidns_info *ns)
{
	struct profile_key key = {};
	struct profile_stack *st;
	__u32 zero = 0;
	long len, err;

	percpu_inc(&pstats, PSTAT_SAMPLES);
	st = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!st)
		return;
	key.pid = ns->tgid;
	key.tid = ns->pid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (len < 0) {
		percpu_inc(&pstats, PSTAT_USTACK_ERR);
	} else if (len > 0) {
		if (len >= (long)sizeof(st->ips))
			percpu_inc(&pstats, PSTAT_USTACK_TRUNC);
		key.ustack = stack_put(&stacks, st, len / 8, &pstats, PSTAT_STACKS_LOST);
	}
	err = map_count(active ? (void *)&counts1 : (void *)&counts0, &key);
	if (err)
		percpu_inc(&pstats, PSTAT_COUNTS_LOST + map_fail_of(err));
}

static __always_inline int current_ns_ids(struct bpf_pidns_info *ns)
{
	return pidns_current(pidns_dev, pidns_ino, ns);
}

SEC("uprobe")
int uprobe_hit(struct pt_regs *ctx)
{
	struct bpf_pidns_info ns = {};
	struct regs *rg;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 probe = cookie & 0xffff, zero = 0, off = 0, i;
	const struct up_recipe *r;
	struct up_event *ev;
	__u32 size;

	if (probe >= UP_MAX_PROBES)
		return 0;
	if (current_ns_ids(&ns)) {
		stat_add(probe, UP_STAT_OUTSIDE);
		return 0;
	}
	if (target_tgid && ns.tgid != target_tgid)
		return 0;
	if (cookie & UP_COOKIE_LAT_ENTRY) {
		latency_start(probe);
		return 0;
	}
	if (cookie & UP_COOKIE_LAT_RET) {
		latency_end(probe);
		return 0;
	}
	r = bpf_map_lookup_elem(&recipes, &probe);
	if (!r)
		return 0;
	stat_add(probe, UP_STAT_HITS);
	if (r->latency) {
		if (r->is_ret)
			latency_end(probe);
		else
			latency_start(probe);
	}
	ev = bpf_map_lookup_elem(&scratch, &zero);
	rg = bpf_map_lookup_elem(&regbuf, &zero);
	if (!ev || !rg)
		return 0;
	read_regs(ctx, rg);

	/* values first, so that the filter runs before any string copy */
	for (i = 0; i < UP_MAX_SLOTS; i++) {
		struct up_val *v = &ev->hdr.vals[i];

		if (i >= r->nslots)
			break;
		v->value = 0;
		v->off = 0;
		v->len = 0;
		v->count = 0;
		v->flags = 0;
		if (eval_expr(rg, &r->slots[i].val, &v->value))
			v->flags = UP_VF_FAULT;
	}
	if (r->nfops && !run_filter(probe)) {
		stat_add(probe, UP_STAT_FILTERED);
		return 0;
	}
	if (r->hist_slot < UP_MAX_SLOTS)
		hist_value(probe, &ev->hdr.vals[r->hist_slot & (UP_MAX_SLOTS - 1)]);
	if (r->by_slot < UP_MAX_SLOTS)
		count_by(rg, &r->slots[r->by_slot & (UP_MAX_SLOTS - 1)],
			 &ev->hdr.vals[r->by_slot & (UP_MAX_SLOTS - 1)], ev->data, probe);
	if (r->stacks)
		count_stack(ctx, &ns);
	if (r->no_events)
		return 0;
	for (i = 0; i < UP_MAX_SLOTS; i++) {
		const struct up_slot *sl = &r->slots[i];
		struct up_val *v = &ev->hdr.vals[i];

		if (i >= r->nslots)
			break;
		if (sl->kind == UP_KIND_INT || (v->flags & UP_VF_FAULT))
			continue;
		v->off = off;
		fetch_string(rg, sl, v, ev->data, off);
		off += v->len;
		if (off > UP_DATA_MAX)
			off = UP_DATA_MAX;
	}

	ev->hdr.ts = bpf_ktime_get_ns();
	ev->hdr.pid = ns.tgid;
	ev->hdr.tid = ns.pid;
	ev->hdr.probe = probe;
	ev->hdr.nslots = r->nslots;
	ev->hdr.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(ev->hdr.comm, sizeof(ev->hdr.comm));
	/* off <= UP_DATA_MAX already; the mask is what the verifier can see */
	size = sizeof(ev->hdr) + (off & (2 * UP_DATA_MAX - 1));
	ev->hdr.size = size;
	/* waking the reader for every event costs more than the probe itself
	 * under load: wake it when enough is queued; it also polls on a timer */
	if (bpf_ringbuf_output(&events, ev, size,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		stat_add(probe, UP_STAT_LOST);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
