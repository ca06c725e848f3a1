/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Attaching a uprobe program to one offset of a file, with the least
 * privilege the kernel allows.
 *
 * Kernels with the fix for CVE-2025-38466 open uprobe perf events only with
 * CAP_SYS_ADMIN. Since 6.6 the kernel also has uprobe_multi BPF links, which
 * need no more than the CAP_BPF and CAP_PERFMON that loading the program
 * takes. uplink uses those links when the kernel has them and perf events
 * otherwise. The choice is made once, before the program is loaded, since
 * a program is loaded for one kind of link or the other. */
#ifndef SIDESCOPE_UPLINK_H
#define SIDESCOPE_UPLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct uplink;

/* Does this kernel create uprobe_multi links? Probed once, cached. */
bool uplink__multi_supported(void);

/* Before the object is loaded: prepare PROG for the kind of link this
 * kernel has. Returns 0 or a negative errno. */
int uplink__prepare(struct bpf_program *prog);

/* Attach PROG (loaded after uplink__prepare) to PATH at file offset OFF,
 * entry or return, for process PID (0: every process), with COOKIE.
 * NULL with errno set on failure. */
struct uplink *uplink__attach(struct bpf_program *prog, pid_t pid, const char *path,
			      uint64_t off, bool retprobe, uint64_t cookie);

/* The same at each of the N file offsets OFFS (at most UPLINK_MAX_OFFSETS),
 * all with COOKIE, as one link: one uprobe_multi link, or one perf event
 * each. The RET instructions of a Go function, for one. */
#define UPLINK_MAX_OFFSETS	256
struct uplink *uplink__attach_many(struct bpf_program *prog, pid_t pid, const char *path,
				   const uint64_t *offs, size_t n, bool retprobe, uint64_t cookie);

/* For a failed attach with errno ERR: " (the privilege it needs; run
 * 'doctor')" when ERR is a refusal, else "". */
const char *uplink__hint(int err);
/* What the kernel's refusal ERR (positive) of an attach means, in words:
 * the kernel-internal codes strerror() cannot name (524, ENOTSUPP: not an
 * instruction a uprobe can be placed on) and the usual ones. */
const char *uplink__strerror(int err);

void uplink__destroy(struct uplink *l);

#endif
