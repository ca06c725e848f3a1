// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel address -> symbol, without reading /proc/kallsyms.
 *
 * User space puts an address in "addr" and runs this program (BPF_PROG_RUN;
 * a syscall program is attached to nothing). It formats the address with
 * the kernel's own "%pS": the kernel's symbol lookup answers in
 * microseconds, where reading /proc/kallsyms costs tens of milliseconds of
 * system time (the kernel formats each of its ~120,000 symbols) for the few
 * hundred addresses a profile names. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym.h"

__u64 addr;
char text[KSYM_TEXT_LEN];
long text_len;

SEC("syscall")
int ksym_name(void *ctx)
{
	text_len = bpf_snprintf(text, sizeof(text), "%pS", &addr, sizeof(addr));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
