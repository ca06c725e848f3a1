// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope stacks: one snapshot of every thread of a process, without
 * stopping it (bpf/stacks.h says what is read). The task iterator is
 * sleepable, so that it can read another process's stack memory
 * (bpf_copy_from_user_task); it is attached to one process (the iterator's
 * PID filter) at a time. A thread that runs on a CPU while the iterator
 * reads it has registers older than its stack: such threads are caught
 * again on their CPU by on_sample, from a cpu-clock event of each one's
 * own, which user space opens for them and closes once caught. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "pidns.h"
#include "stacks.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
/* user stack pages copied at most (<= STACKS_MAX_PAGES) */
const volatile __u32 max_pages = STACKS_MAX_PAGES;

__u32 iter_next = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACKS_ITER_SLOTS);
	__type(key, __u32);
	__type(value, struct stacks_rec);
} iter_recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACKS_ITER_SLOTS);
	__type(key, __u32);
	__type(value, struct stacks_ustack);
	__uint(map_flags, BPF_F_MMAPABLE);
} iter_stacks SEC(".maps");

/* the threads to catch on their CPU: TID (ours) -> slot + 1; 0 once caught */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STACKS_CATCH_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} want SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACKS_CATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct stacks_rec);
} caught_recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACKS_CATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct stacks_ustack);
	__uint(map_flags, BPF_F_MMAPABLE);
} caught_stacks SEC(".maps");

/* The CPU T is on or last ran on */
static __always_inline __u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(t, wake_cpu);
}

/* What every record says of T: names, state, CPU, how long off it. */
static __always_inline void fill_task(struct task_struct *t, struct stacks_rec *r)
{
	struct pid *leader;
	struct upid up;
	__u32 nr = 0;
	int lvl;

	r->tid = r->tgid = 0;
	lvl = pidns_level_of(BPF_CORE_READ(t, thread_pid), pidns_ino, &nr);
	if (lvl >= 0) {
		r->tid = nr;
		leader = BPF_CORE_READ(t, group_leader, thread_pid);
		if (leader && !pidns_upid(leader, lvl, &up))
			r->tgid = up.nr;
	}
	r->state = BPF_CORE_READ(t, __state);
	r->exit_state = (__u32)BPF_CORE_READ(t, exit_state);
	r->flags = 0;
	if (BPF_CORE_READ(t, flags) & 0x00200000 /* PF_KTHREAD */)
		r->flags |= STACKS_F_KTHREAD;
	if (BPF_CORE_READ(t, on_cpu))
		r->flags |= STACKS_F_ON_CPU;
	r->cpu = task_cpu_of(t);
	r->start = BPF_CORE_READ(t, start_boottime);
	r->since_ns = 0;
	/* how long since it left its CPU: its run queue's task clock now
	 * less the clock when it last ran (the queue through its CFS entity:
	 * runqueues itself is not in every kernel's symbols) */
	if (!(r->flags & STACKS_F_ON_CPU) && bpf_core_field_exists(t->se.cfs_rq)) {
		struct rq *rq = BPF_CORE_READ(t, se.cfs_rq, rq);
		__u64 last = BPF_CORE_READ(t, se.exec_start);

		if (rq) {
			__u64 now = BPF_CORE_READ(rq, clock_task);

			if (last && now >= last) {
				r->since_ns = now - last;
				r->flags |= STACKS_F_SINCE;
			}
		}
	}
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
}

/* The user registers of REGS (saved at a kernel entry) into R. */
static __always_inline void fill_regs(struct pt_regs *regs, struct stacks_rec *r)
{
	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
	r->nr = BPF_CORE_READ(regs, orig_ax);
	r->args[0] = BPF_CORE_READ(regs, di);
	r->args[1] = BPF_CORE_READ(regs, si);
	r->args[2] = BPF_CORE_READ(regs, dx);
	r->flags |= STACKS_F_ARGS;
	if ((BPF_CORE_READ(regs, cs) & 3) == 3)
		r->flags |= STACKS_F_USER;
}

SEC("iter.s/task")
int dump_task(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct stacks_ustack *us;
	struct stacks_rec *r;
	struct pt_regs *regs;
	__u32 slot, i;
	__u64 base;

	if (!t)
		return 0;
	/* one reader at a time (the iterator's seq_file lock) */
	slot = iter_next++ % STACKS_ITER_SLOTS;
	r = bpf_map_lookup_elem(&iter_recs, &slot);
	us = bpf_map_lookup_elem(&iter_stacks, &slot);
	if (!r || !us)
		return 0;
	r->magic = STACKS_MAGIC;
	r->slot = slot;
	fill_task(t, r);
	r->klen = bpf_get_task_stack(t, r->kstack, sizeof(r->kstack), 0);
	r->ulen = 0;
	r->uerr = 0;
	r->ip = r->sp = r->bp = 0;
	r->nr = (__u64)-1;
	if (!(r->flags & STACKS_F_KTHREAD)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (regs)
			fill_regs(regs, r);
	}
	/* a futex wait: what is at the futex (its owner, for a mutex) */
	if ((r->flags & STACKS_F_USER) && r->nr == 202 /* futex */ &&
	    !bpf_copy_from_user_task(r->futex, sizeof(r->futex), (void *)r->args[0], t, 0))
		r->flags |= STACKS_F_FUTEX;
	/* the user stack from sp's page up, a page at a time, until a copy
	 * fails (the end of the stack's mapping) or the limit */
	base = r->sp & ~(__u64)(STACKS_PAGE - 1);
	for (i = 0; i < STACKS_MAX_PAGES && (r->flags & STACKS_F_USER); i++) {
		long err;

		if (i >= max_pages)
			break;
		err = bpf_copy_from_user_task(&us->b[(i & (STACKS_MAX_PAGES - 1)) * STACKS_PAGE],
					      STACKS_PAGE, (void *)(base + (__u64)i * STACKS_PAGE),
					      t, 0);
		if (err) {
			r->uerr = (__s32)err;
			break;
		}
		r->ulen += STACKS_PAGE;
	}
	bpf_seq_write(seq, r, sizeof(*r));
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_pidns_info ns;
	struct task_struct *t;
	struct stacks_ustack *us;
	struct stacks_rec *r;
	struct pt_regs *regs;
	__u32 *want_slot, slot, i;
	__u64 base, cs;

	if (pidns_current(pidns_dev, pidns_ino, &ns))
		return 0;
	want_slot = bpf_map_lookup_elem(&want, &ns.pid);
	if (!want_slot || !*want_slot)
		return 0;
	slot = *want_slot - 1;
	r = bpf_map_lookup_elem(&caught_recs, &slot);
	us = bpf_map_lookup_elem(&caught_stacks, &slot);
	if (!r || !us)
		return 0;
	*want_slot = 0;
	t = bpf_get_current_task_btf();
	r->slot = slot;
	fill_task(t, r);
	r->flags |= STACKS_F_CAUGHT | STACKS_F_ON_CPU;
	r->ulen = 0;
	r->uerr = 0;
	r->ip = r->sp = r->bp = 0;
	r->nr = (__u64)-1;
	r->klen = 0;
	/* the context is read in 8-byte words only */
	cs = *(volatile __u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));
	if ((cs & 3) == 3) {
		/* in user mode: the sample's registers */
		r->ip = ctx->regs.ip;
		r->sp = ctx->regs.sp;
		r->bp = ctx->regs.bp;
		r->flags |= STACKS_F_USER;
	} else {
		r->flags |= STACKS_F_IN_KERNEL;
		r->klen = bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (regs)
			fill_regs(regs, r);
	}
	base = r->sp & ~(__u64)(STACKS_PAGE - 1);
	for (i = 0; i < STACKS_MAX_PAGES && (r->flags & STACKS_F_USER); i++) {
		long err;

		if (i >= max_pages)
			break;
		err = bpf_probe_read_user(&us->b[(i & (STACKS_MAX_PAGES - 1)) * STACKS_PAGE],
					  STACKS_PAGE, (void *)(base + (__u64)i * STACKS_PAGE));
		if (err) {
			r->uerr = (__s32)err;
			break;
		}
		r->ulen += STACKS_PAGE;
	}
	/* the record is whole: user space waits for its magic (x86 keeps
	 * stores in order; the compiler is kept from moving them) */
	asm volatile("" ::: "memory");
	r->magic = STACKS_MAGIC;
	return 0;
}
