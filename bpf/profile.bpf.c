// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack profiler. On every cpu-clock sample of a matching task (do_sample),
 * store its user and kernel stacks by hash and count (pid, tid, ustack,
 * kstack). In off-CPU mode (on_switch, the sched_switch tracepoint), a
 * matching thread that leaves the CPU has its stacks stored and the time
 * noted; when it runs again the time it was off is added to the same kind
 * of key, in nanoseconds. Wall mode runs both, a sample weighing its
 * period, so that a thread's total is its wall-clock time.
 *
 * Stacks go to our own hashed store (bpf_get_stack + a 64-bit hash, a hash
 * map) rather than a STACK_TRACE map: no bucket collisions, and user space
 * empties it at every drain.
 * Counts go to one of two maps chosen by "active"; user space flips it,
 * lets in-flight programs finish, then drains the other map.
 * A process sampled for the first time (or first since its exec) is
 * reported once through a ring buffer, so that user space reads its maps
 * while it lives; samples themselves never leave the kernel one by one. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "maps.bpf.h"
#include "pidns.h"
#include "profile.h"
#include "stackstore.bpf.h"

const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 filter_mode = PROFILE_FILTER_ALL;
const volatile __u64 filter_cgroup = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;
/* nanoseconds per clock tick of /proc/PID/stat's start time (USER_HZ) */
const volatile __u64 ns_per_tick = 10000000;
/* enum profile_mode; what a sample adds (1, or its period in wall mode) */
const volatile __u32 mode = PROFILE_MODE_CPU;
const volatile __u64 sample_weight = 1;
/* off-CPU: the states that count (PROFILE_STATE_*), the shortest period */
const volatile __u32 off_states = PROFILE_STATE_ALL;
const volatile __u64 min_block_ns = 1000;
/* off-CPU: also the stacks of the task that woke each thread */
const volatile bool want_wakers = false;

/* which count map the programs fill; flipped by user space */
volatile __u32 active = 0;
/* off-CPU: note 1 in off_every switch-outs, at random, each standing for
 * off_every; user space raises it in a storm of switches (--switch-rate) */
volatile __u32 off_every = 1;

/* tgid -> its start time in clock ticks since boot (0: any process): a
 * process that later gets the same PID is not the target */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* set from user space */
	__type(key, __u32);
	__type(value, __u64);
} pids SEC(".maps");

/* Allocated as stacks come on 6.1 and newer (user space sets
 * BPF_F_NO_PREALLOC): the BPF memory allocator's per-CPU caches, refilled
 * right after each interrupt, serve one stack and one count a sample.
 * Older kernels allocate in the timer interrupt from the slab, which may
 * fail: there it is preallocated. User space deletes every stack it has
 * copied, so this holds one drain period's distinct stacks. */
struct stack_store_map stacks SEC(".maps");

/* tgid -> its start time (ns since boot) when last reported to user space.
 * LRU: an evicted process is only reported again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);	/* set from user space */
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

/* struct profile_new records: one per process first sampled */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} news SEC(".maps");

/* kernel TID -> where and when it left the CPU (off-CPU and wall modes).
 * A thread is in it only while it is off the CPU: bounded by the targets'
 * threads. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);	/* set from user space */
	__type(key, __u32);
	__type(value, struct profile_offstart);
} offstart SEC(".maps");

/* kernel TID -> who woke it (--wakers), from its wakeup until it runs */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);	/* set from user space */
	__type(key, __u32);
	__type(value, struct profile_waker);
} wakers SEC(".maps");

struct stack_counts_map counts0 SEC(".maps");
struct stack_counts_map counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PSTAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* two scratch stacks per CPU: user, kernel */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct profile_stack);
} scratch SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	percpu_inc(&stats, idx);
}

/* Take one stack of the current task into the store; return its hash or
 * 0. CTX is the program's context. */
static __always_inline __u64 store_stack(void *ctx, __u32 slot, __u64 flags, __u32 err_stat,
					 __u32 trunc_stat)
{
	struct profile_stack *s;
	long len;

	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s) {
		stat_inc(PSTAT_SCRATCH_ERR);
		return 0;
	}
	len = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
	if (len < 0) {
		stat_inc(err_stat);
		return 0;
	}
	if (len == 0)
		return 0;
	if (len >= (long)sizeof(s->ips))
		stat_inc(trunc_stat);	/* the stack may go deeper */
	return stack_put(&stacks, s, len / 8, &stats, PSTAT_STACKS_LOST);
}

#include "unwind.bpf.h"

/* A global function: the verifier checks it once, not once per call. */
__noinline __u64 take_stack(struct bpf_perf_event_data *ctx, __u32 slot, __u64 flags,
			    __u32 err_stat, __u32 trunc_stat)
{
	return store_stack(ctx, slot, flags, err_stat, trunc_stat);
}

/* --unwind tables (unwind.bpf.h), at a sample, a switch or a wakeup; 0:
 * take the frame-pointer stack */
__noinline __u64 take_table_stack(__u32 tgid)
{
	return unwind_user_stack(tgid);
}

/* The same for the sched_switch program (another context type): checked
 * in its caller's context. */
static __noinline __u64 take_stack_tp(void *ctx, __u32 slot, __u64 flags)
{
	return store_stack(ctx, slot, flags, slot ? PSTAT_KSTACK_ERR : PSTAT_USTACK_ERR,
			   slot ? PSTAT_KSTACK_TRUNC : PSTAT_USTACK_TRUNC);
}

/* Report TGID (started at START) unless it was reported since it started
 * or last exec'd. */
static __always_inline void report_new(__u32 tgid, __u64 start)
{
	struct profile_new ev = { .pid = tgid };
	__u64 *was = bpf_map_lookup_elem(&seen, &tgid);

	if (was && *was == start)
		return;
	if (bpf_ringbuf_output(&news, &ev, sizeof(ev), 0)) {
		stat_inc(PSTAT_NEW_LOST);	/* tried again at its next sample */
		return;
	}
	bpf_map_update_elem(&seen, &tgid, &start, BPF_ANY);
}

/* Whether the current task is one of the targets: 0 with its numbers in
 * our namespace in *NS and its process's start time in *START, else -1
 * (counted when it is a target's PID held by another process). */
static __always_inline int match_current(struct bpf_pidns_info *ns, __u64 *start)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	__u64 *want;

	if (pidns_current(pidns_dev, pidns_ino, ns)) {
		/* idle and tasks outside our namespace */
		if (filter_mode != PROFILE_FILTER_ALL || bpf_get_current_pid_tgid() >> 32)
			stat_inc(PSTAT_NS_MISS);
		return -1;
	}
	if (ns->tgid == 0)
		return -1;
	*start = BPF_CORE_READ(t, group_leader, start_boottime);
	if (filter_mode == PROFILE_FILTER_PIDS) {
		want = bpf_map_lookup_elem(&pids, &ns->tgid);
		if (!want)
			return -1;
		if (*want) {
			__u64 ticks = *start / ns_per_tick;

			/* one tick of slack: user space converts from /proc */
			if (ticks + 1 < *want || ticks > *want + 1) {
				stat_inc(PSTAT_PID_REUSED);
				return -1;
			}
		}
	} else if (filter_mode == PROFILE_FILTER_CGROUP) {
		if (bpf_get_current_cgroup_id() != filter_cgroup)
			return -1;
	}
	return 0;
}

static __always_inline void *active_counts(void)
{
	return active ? (void *)&counts1 : (void *)&counts0;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_pidns_info ns = {};
	struct profile_key key = {};
	__u64 start;
	long err;

	if (match_current(&ns, &start))
		return 0;
	stat_inc(PSTAT_SAMPLES);
	report_new(ns.tgid, start);
	key.pid = ns.tgid;
	key.tid = ns.pid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (want_user && want_tables)
		key.ustack = take_table_stack(ns.tgid);
	if (want_user && !key.ustack)
		key.ustack = take_stack(ctx, 0, BPF_F_USER_STACK, PSTAT_USTACK_ERR,
					PSTAT_USTACK_TRUNC);
	if (want_kernel)
		key.kstack = take_stack(ctx, 1, 0, PSTAT_KSTACK_ERR, PSTAT_KSTACK_TRUNC);
	err = map_add(active_counts(), &key, sample_weight);
	if (err)
		stat_inc(PSTAT_COUNTS_LOST + map_fail_of(err));
	return 0;
}

/* Before 5.14 the state was a long named "state". */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* The state PREV leaves the CPU in (a preempted task is runnable, whatever
 * state it was about to enter). */
static __always_inline unsigned int prev_state_of(struct task_struct *prev, bool preempt)
{
	if (preempt)
		return 0;
	if (bpf_core_field_exists(prev->__state))
		return prev->__state;
	return (unsigned int)((struct task_struct___old *)prev)->state;
}

/* The state a task left the CPU in, as PROFILE_STATE_*, or 0 for one that
 * does not count (stopped, traced, exiting). */
static __always_inline __u32 switch_state(unsigned int prev_state)
{
	/* TASK_RUNNING 0, TASK_INTERRUPTIBLE 1, TASK_UNINTERRUPTIBLE 2 (also
	 * in TASK_KILLABLE and TASK_IDLE); the rest stop or end the task */
	if (prev_state & 0x2)
		return prev_state & 0x400 /* TASK_NOLOAD: TASK_IDLE */ ? PROFILE_STATE_SLEEP :
									PROFILE_STATE_DISK;
	if (prev_state & 0x1)
		return PROFILE_STATE_SLEEP;
	if ((prev_state & 0xff) == 0)
		return PROFILE_STATE_RUNNABLE;
	return 0;
}

/* The current task (PREV) leaves the CPU in PREV_STATE: note where and
 * when, when it is a target and its state counts. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt)
{
	struct profile_offstart st = {};
	struct bpf_pidns_info ns = {};
	__u32 every = off_every, tid;
	__u64 start, ustack = 0, kstack = 0;
	struct profile_offstart *p;

	/* first, so that a switch left out costs next to nothing */
	if (every > 1 && bpf_get_prandom_u32() % every)
		return;
	tid = prev->pid;
	st.weight = every > 1 ? every : 1;
	st.state = switch_state(prev_state_of(prev, preempt));
	if (!tid || !(st.state & off_states) || match_current(&ns, &start))
		return;
	report_new(ns.tgid, start);
	st.pid = ns.tgid;
	st.tid = ns.pid;
	bpf_get_current_comm(st.comm, sizeof(st.comm));
	/* in the map before the stack walks, so that a wakeup during them
	 * (on_waking) is seen */
	st.ts0 = bpf_ktime_get_ns();
	st.cpu = bpf_get_smp_processor_id();
	if (bpf_map_update_elem(&offstart, &tid, &st, BPF_ANY)) {
		stat_inc(PSTAT_OFF_FULL);
		return;
	}
	if (want_user && want_tables)
		ustack = take_table_stack(ns.tgid);
	if (want_user && !ustack)
		ustack = take_stack_tp(ctx, 0, BPF_F_USER_STACK);
	if (want_kernel)
		kstack = take_stack_tp(ctx, 1, 0);
	p = bpf_map_lookup_elem(&offstart, &tid);
	if (!p)
		return;
	p->ustack = ustack;
	p->kstack = kstack;
	p->ts = bpf_ktime_get_ns();
}

/* The length of the period ST that ends at NOW, as if its stacks had not
 * been taken. The walks delay the CPU the thread left, not the others: a
 * thread woken from another CPU was off from ts0 until its wakeup, plus its
 * wait for a CPU after it (not during the walks, when it could not run); a
 * thread woken on the CPU it left (a timer there, or a task that ran after
 * it, later by the walks' time) from ts. Taking either for all periods is
 * wrong by the walks' time for the other kind, which in a storm of short
 * periods is as long as the period itself. */
static __always_inline __u64 off_period(const struct profile_offstart *st, __u64 now)
{
	__u64 w = st->waking, ts = st->ts ? st->ts : now;

	if (!w || st->wcpu == st->cpu || w < st->ts0 || w > now)
		return now > ts ? now - ts : 0;
	return (w - st->ts0) + (now - (w > ts ? w : ts));
}

/* NEXT runs again: the time since it left counts when long enough. */
static __always_inline void switch_in(struct task_struct *next)
{
	/* a BTF pointer: read directly, no helper call (every switch) */
	__u32 tid = next->pid;
	struct profile_offstart *st;
	struct profile_key key = {};
	__u32 weight;
	__u64 delta;
	long err;

	st = bpf_map_lookup_elem(&offstart, &tid);
	if (!st)
		return;
	delta = off_period(st, bpf_ktime_get_ns());
	weight = st->weight;
	key.pid = st->pid;
	key.tid = st->tid;
	key.ustack = st->ustack;
	key.kstack = st->kstack;
	key.flags = PROFILE_KEY_OFFCPU | st->state;
	__builtin_memcpy(key.comm, st->comm, sizeof(key.comm));
	bpf_map_delete_elem(&offstart, &tid);
	if (want_wakers) {
		struct profile_waker *w = bpf_map_lookup_elem(&wakers, &tid);

		if (w) {
			key.waker_pid = w->pid;
			key.waker_ustack = w->ustack;
			key.waker_kstack = w->kstack;
			__builtin_memcpy(key.waker_comm, w->comm, sizeof(key.waker_comm));
			bpf_map_delete_elem(&wakers, &tid);
		}
	}
	if (delta < min_block_ns)
		return;
	percpu_add(&stats, PSTAT_OFF_COUNTED, weight);
	err = map_add(active_counts(), &key, delta * weight);
	if (err)
		stat_inc(PSTAT_COUNTS_LOST + map_fail_of(err));
}

/* The current task wakes P. When P is a target thread off the CPU, note
 * when and on which CPU (off_period), and with --wakers the current task's
 * stacks (an interrupt's wakeup shows the interrupted task, or the idle
 * task: its kernel stack). sched_waking, not sched_wakeup: it runs in the
 * waker's context before the wakeup waits for P to leave its CPU, whereas
 * sched_wakeup may run later, on P's CPU. */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct profile_waker w = {};
	struct bpf_pidns_info ns = {};
	struct profile_offstart *st;

	st = bpf_map_lookup_elem(&offstart, &tid);
	if (!st)
		return 0;
	if (!st->waking) {
		st->waking = bpf_ktime_get_ns();
		st->wcpu = bpf_get_smp_processor_id();
	}
	if (!want_wakers)
		return 0;
	if (pidns_current(pidns_dev, pidns_ino, &ns) == 0)
		w.pid = ns.tgid;
	bpf_get_current_comm(w.comm, sizeof(w.comm));
	if (want_user && w.pid && want_tables)
		w.ustack = take_table_stack(w.pid);
	if (want_user && w.pid && !w.ustack)
		w.ustack = take_stack_tp(ctx, 0, BPF_F_USER_STACK);
	if (want_kernel)
		w.kstack = take_stack_tp(ctx, 1, 0);
	if (bpf_map_update_elem(&wakers, &tid, &w, BPF_ANY))
		stat_inc(PSTAT_WAKER_FULL);
	return 0;
}

/* Off-CPU and wall modes; loaded only for them. The current task is PREV. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	switch_in(next);
	switch_out(ctx, prev, preempt);
	return 0;
}

/* A new program image: the maps read so far no longer apply, so the
 * process is reported again at its next sample (by then the dynamic
 * loader has usually mapped its libraries). A raw tracepoint: no tracefs,
 * and no kernel BTF to attach it (a CPU profile's load can do without). */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct bpf_pidns_info ns = {};

	if (pidns_current(pidns_dev, pidns_ino, &ns) || !ns.tgid)
		return 0;
	bpf_map_delete_elem(&seen, &ns.tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
