// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Streaming sampler of one process for sidescope timeline. On every
 * cpu-clock sample of one of the target's threads (matched as
 * bpf/profile.bpf.c matches a target: its PID at our PID namespace level,
 * its start time), store the user stack once by hash and send
 * {time, thread, stack hash} through a ring buffer: the order of samples
 * in time is the point here, so they are not counted in the kernel.
 * At 99 Hz that is 32 bytes a sample per busy thread. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "maps.bpf.h"
#include "pidns.h"
#include "timeline.h"
#include "stackstore.bpf.h"

const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
/* the target in our namespace, and its start in clock ticks (0: any) */
const volatile __u32 target_pid = 0;
const volatile __u64 target_start = 0;
/* nanoseconds per clock tick of /proc/PID/stat's start time (USER_HZ) */
const volatile __u64 ns_per_tick = 10000000;

/* The stack store (stackstore.bpf.h) rather than a STACK_TRACE map: no
 * bucket collisions. Preallocated (no allocation in the timer interrupt);
 * user space copies each new stack out once and deletes it, so it holds
 * the stacks not read yet. Sized from user space. */
struct stack_store_map stacks SEC(".maps");

/* struct timeline_sample records */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);	/* set from user space */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TLSTAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* one scratch stack per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_stack);
} scratch SEC(".maps");

/* The user stack of the current task into the store: its hash, or 0. */
static __noinline __u64 take_ustack(struct bpf_perf_event_data *ctx)
{
	struct profile_stack *s;
	__u32 zero = 0;
	long len;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s) {
		percpu_inc(&stats, TLSTAT_SCRATCH_ERR);
		return 0;
	}
	len = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	if (len < 0) {
		percpu_inc(&stats, TLSTAT_USTACK_ERR);
		return 0;
	}
	if (len == 0)
		return 0;
	/* bpf_get_stack zeroes the rest of the buffer: the stored stack ends
	 * in 0s */
	if (len >= (long)sizeof(s->ips))
		percpu_inc(&stats, TLSTAT_USTACK_TRUNC);
	return stack_put(&stacks, s, len / 8, &stats, TLSTAT_STACKS_LOST);
}

/* Whether the current task is a thread of the target: 0 with its numbers
 * in our namespace in *NS, else -1. */
static __always_inline int match_current(struct bpf_pidns_info *ns)
{
	struct task_struct *t;
	__u64 ticks;

	if (pidns_current(pidns_dev, pidns_ino, ns)) {
		if (bpf_get_current_pid_tgid() >> 32)
			percpu_inc(&stats, TLSTAT_NS_MISS);
		return -1;
	}
	if (ns->tgid != target_pid)
		return -1;
	if (target_start) {
		t = (void *)bpf_get_current_task();
		ticks = BPF_CORE_READ(t, group_leader, start_boottime) / ns_per_tick;
		/* one tick of slack: user space converts from /proc */
		if (ticks + 1 < target_start || ticks > target_start + 1) {
			percpu_inc(&stats, TLSTAT_PID_REUSED);
			return -1;
		}
	}
	return 0;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_pidns_info ns = {};
	struct timeline_sample *smp;
	__u64 ustack;

	if (match_current(&ns))
		return 0;
	percpu_inc(&stats, TLSTAT_SAMPLES);
	/* the stack before the reservation: no helper call with a record
	 * held open */
	ustack = take_ustack(ctx);

	smp = bpf_ringbuf_reserve(&samples, sizeof(*smp), 0);
	if (!smp) {
		percpu_inc(&stats, TLSTAT_RB_FULL);
		return 0;
	}
	smp->ts = bpf_ktime_get_ns();
	smp->ustack = ustack;
	smp->pid = ns.tgid;
	smp->tid = ns.pid;
	smp->cpu = bpf_get_smp_processor_id();
	/* kernel addresses are the upper half (x86-64, arm64) */
	smp->kernel = (long)PT_REGS_IP(&ctx->regs) < 0;
	bpf_ringbuf_submit(smp, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
