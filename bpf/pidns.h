/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For BPF programs: the current task's PID and TGID as the sidecar's PID
 * namespace numbers them.
 *
 * bpf_get_ns_current_pid_tgid answers only for tasks whose own (innermost)
 * namespace is exactly the one given. A task in a namespace nested below
 * ours (unshare --pid, a container inside the pod, every container when the
 * sidecar runs with hostPID) also has a number at our level: struct pid
 * keeps one struct upid per level, numbers[0] the host's, numbers[level]
 * the task's own. We walk them from the task's level up (CO-RE reads) to
 * the one whose namespace is ours (same nsfs inode), then read the process
 * leader's number at that level. Our own level cannot
 * be told from user space: NSpid in the /proc of our namespace starts at
 * our level, whatever its depth. Include after vmlinux.h and
 * bpf_core_read.h. */
#ifndef SIDESCOPE_PIDNS_H
#define SIDESCOPE_PIDNS_H

/* The walk goes at most this many levels up from a task's own namespace
 * (a kernel nests at most 32): a target more than 7 namespaces below ours
 * is not seen. Each level costs the verifier a pass over the loop body. */
#define PIDNS_MAX_WALK 8

/* The upid of struct pid P at level LVL. Return 0, or -1. */
static __always_inline int pidns_upid(struct pid *p, int lvl, struct upid *up)
{
	/* numbers[] is a flexible array; the mask keeps the verifier's bound */
	return bpf_core_read(up, sizeof(*up), &p->numbers[lvl & 31]) ? -1 : 0;
}

/* The level of struct pid P whose namespace is INO: P's own or one of the
 * PIDNS_MAX_WALK - 1 above it. Return it, or -1 when P is not visible in
 * INO. *NR gets P's number there. */
static __always_inline int pidns_level_of(struct pid *p, __u64 ino, __u32 *nr)
{
	struct upid up;
	int top, i;

	if (!p)
		return -1;
	top = (int)BPF_CORE_READ(p, level);
	for (i = 0; i < PIDNS_MAX_WALK; i++) {
		int lvl = top - i;

		if (lvl < 0 || pidns_upid(p, lvl, &up))
			return -1;
		if (up.ns && BPF_CORE_READ(up.ns, ns.inum) == ino) {
			*nr = up.nr;
			return lvl;
		}
	}
	return -1;
}

/* The current task's thread id (NS->pid) and process id (NS->tgid) in the
 * namespace DEV/INO. Return 0, or -1 when the task is not visible there. */
static __always_inline int pidns_current(__u64 dev, __u64 ino, struct bpf_pidns_info *ns)
{
	struct task_struct *t;
	struct upid up;
	struct pid *leader;
	int lvl;

	if (bpf_get_ns_current_pid_tgid(dev, ino, ns, sizeof(*ns)) == 0)
		return 0;
	t = (struct task_struct *)bpf_get_current_task();
	lvl = pidns_level_of(BPF_CORE_READ(t, thread_pid), ino, &ns->pid);
	if (lvl < 0)
		return -1;
	/* the threads of a process share its PID namespace: same level */
	leader = BPF_CORE_READ(t, group_leader, thread_pid);
	if (!leader || pidns_upid(leader, lvl, &up) || !up.ns ||
	    BPF_CORE_READ(up.ns, ns.inum) != ino)
		return -1;
	ns->tgid = up.nr;
	return 0;
}

#endif
