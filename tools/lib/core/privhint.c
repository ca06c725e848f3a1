// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/privhint.h"
#include "core/util.h"

#define CAP_SYS_ADMIN_BIT	21
#define CAP_PERFMON_BIT		38
#define CAP_BPF_BIT		39

/* CapEff and the seccomp mode of this process. */
static void read_self(uint64_t *caps, long *seccomp)
{
	char *buf = NULL, *p;

	*caps = 0;
	*seccomp = 0;
	if (read_file("/proc/self/status", &buf, NULL, 0))
		return;
	p = strstr(buf, "\nCapEff:");
	if (p)
		*caps = strtoull(p + 8, NULL, 16);
	p = strstr(buf, "\nSeccomp:");
	if (p)
		*seccomp = strtol(p + 9, NULL, 10);
	free(buf);
}

static bool has(uint64_t caps, int bit)
{
	return caps & (1ull << bit);
}

/* Whether bpf(2) itself is refused before the kernel looks at the command:
 * an invalid command gives EINVAL from the kernel, EPERM/ENOSYS from a
 * seccomp filter. */
static bool bpf_syscall_denied(void)
{
	return syscall(__NR_bpf, -1, NULL, 0) < 0 && (errno == EPERM || errno == ENOSYS);
}

const char *privhint(enum privhint_need need, int err, char *buf, size_t size)
{
	uint64_t caps;
	long seccomp;
	bool admin, bpf, perfmon;

	buf[0] = '\0';
	if (err != EPERM && err != EACCES && !(need == PRIVHINT_BPF && err == ENOSYS))
		return buf;
	read_self(&caps, &seccomp);
	admin = has(caps, CAP_SYS_ADMIN_BIT);
	bpf = admin || has(caps, CAP_BPF_BIT);
	perfmon = admin || has(caps, CAP_PERFMON_BIT);
	switch (need) {
	case PRIVHINT_BPF:
		if (!bpf || !perfmon) {
			snprintf(buf, size, " (needs %s%s%s; run 'doctor')", bpf ? "" : "CAP_BPF",
				 !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
		} else if (seccomp && bpf_syscall_denied()) {
			snprintf(buf, size, " (bpf() denied by seccomp: the container needs a "
				 "seccomp profile that allows it; run 'doctor')");
		} else {
			snprintf(buf, size, " (refused with CAP_BPF and CAP_PERFMON held: a "
				 "security module or lockdown?; run 'doctor')");
		}
		break;
	case PRIVHINT_PERF:
		snprintf(buf, size, perfmon ? " (refused with CAP_PERFMON held: see "
			 "kernel.perf_event_paranoid; run 'doctor')" :
			 " (needs CAP_PERFMON; run 'doctor')");
		break;
	}
	return buf;
}

const char *privhint__msg(enum privhint_need need, int err)
{
	static char buf[192];

	return privhint(need, err, buf, sizeof(buf));
}
