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
 * the one whose namespace is ours (same nsfs inode). Our own level cannot
 * be told from user space: NSpid in the /proc of our namespace starts at
 * our level, whatever its depth. Include after vmlinux.h and
 * bpf_core_read.h. */
#ifndef SIDESCOPE_PIDNS_H
#define SIDESCOPE_PIDNS_H

/* a kernel nests at most 32 PID namespaces (MAX_PID_NS_LEVEL) */
#define PIDNS_MAX_LEVELS 32

/* NR of struct pid P in the namespace INO, one of P's own or an ancestor.
 * Return 0, or -1 when P is not visible there. */
static __always_inline int pidns_nr(struct pid *p, __u64 ino, __u32 *nr)
{
	struct upid up;
	int top, i;

	if (!p)
		return -1;
	top = (int)BPF_CORE_READ(p, level);
	for (i = 0; i < PIDNS_MAX_LEVELS; i++) {
		int lvl = top - i;

		if (lvl < 0)
			break;
		if (bpf_core_read(&up, sizeof(up), &p->numbers[lvl & (PIDNS_MAX_LEVELS - 1)]))
			return -1;
		if (up.ns && BPF_CORE_READ(up.ns, ns.inum) == ino) {
			*nr = up.nr;
			return 0;
		}
	}
	return -1;
}

/* The current task's thread id (NS->pid) and process id (NS->tgid) in the
 * namespace DEV/INO. Return 0, or -1 when the task is not visible there. */
static __always_inline int pidns_current(__u64 dev, __u64 ino, struct bpf_pidns_info *ns)
{
	struct task_struct *t;

	if (bpf_get_ns_current_pid_tgid(dev, ino, ns, sizeof(*ns)) == 0)
		return 0;
	t = (struct task_struct *)bpf_get_current_task();
	if (pidns_nr(BPF_CORE_READ(t, thread_pid), ino, &ns->pid) ||
	    pidns_nr(BPF_CORE_READ(t, group_leader, thread_pid), ino, &ns->tgid))
		return -1;
	return 0;
}

#endif
