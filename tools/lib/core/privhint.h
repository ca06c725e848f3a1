/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Why the kernel refused: the hint that ends an error message when bpf(2)
 * or perf_event_open(2) fails with EPERM/EACCES (or ENOSYS from seccomp).
 * It names the capability this process lacks, or says that a seccomp
 * filter denies bpf(), and points to 'doctor'. */
#ifndef SIDESCOPE_PRIVHINT_H
#define SIDESCOPE_PRIVHINT_H

#include <stddef.h>

enum privhint_need {
	PRIVHINT_BPF,		/* bpf(2): CAP_BPF and CAP_PERFMON */
	PRIVHINT_PERF,		/* perf_event_open(2): CAP_PERFMON */
};

/* Write " (needs CAP_X; run 'doctor')", " (bpf() denied by seccomp ...)"
 * or similar into BUF for ERR (a positive errno) and return BUF; "" when
 * ERR is not a refusal. */
const char *privhint(enum privhint_need need, int err, char *buf, size_t size);
/* The same in a buffer of its own, good until the next call: the argument
 * of one message. */
const char *privhint__msg(enum privhint_need need, int err);

#endif
