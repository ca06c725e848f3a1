/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For BPF programs: the current task's PID and TGID as the sidecar's PID
 * namespace numbers them.
 *
 * bpf_get_ns_current_pid_tgid answers only for tasks whose own (innermost)
 * namespace is exactly the one given. A task in a namespace nested below
 * ours (unshare --pid, a container inside the pod, every container when the
 * sidecar runs with hostPID) also has a number at our level: struct pid
 * keeps one struct upid per level, numbers[0] the host's. We read
 * numbers[LEVEL] with CO-RE and accept it only if that upid belongs to our
 * namespace (same nsfs inode). Include after vmlinux.h and bpf_core_read.h. */
#ifndef SIDESCOPE_PIDNS_H
#define SIDESCOPE_PIDNS_H

/* NR of struct pid P at LEVEL, when that level is the namespace INO.
 * Return 0, or -1 when P is not visible there. */
static __always_inline int pidns_nr(struct pid *p, __u32 level, __u64 ino, __u32 *nr)
{
	struct upid up;

	if (!p || BPF_CORE_READ(p, level) < level)
		return -1;
	/* numbers[] is a flexible array; the mask keeps the verifier's
	 * bound (a kernel nests at most 32 PID namespaces) */
	if (bpf_core_read(&up, sizeof(up), &p->numbers[level & 31]))
		return -1;
	if (!up.ns || BPF_CORE_READ(up.ns, ns.inum) != ino)
		return -1;
	*nr = up.nr;
	return 0;
}

/* The current task's thread id (NS->pid) and process id (NS->tgid) in the
 * namespace DEV/INO at depth LEVEL (0: the initial namespace). Return 0, or
 * -1 when the task is not visible in that namespace. */
static __always_inline int pidns_current(__u64 dev, __u64 ino, __u32 level,
					 struct bpf_pidns_info *ns)
{
	struct task_struct *t;

	if (bpf_get_ns_current_pid_tgid(dev, ino, ns, sizeof(*ns)) == 0)
		return 0;
	t = (struct task_struct *)bpf_get_current_task();
	if (pidns_nr(BPF_CORE_READ(t, thread_pid), level, ino, &ns->pid) ||
	    pidns_nr(BPF_CORE_READ(t, group_leader, thread_pid), level, ino, &ns->tgid))
		return -1;
	return 0;
}

#endif
