/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by bpf/ksym.bpf.c and tools/lib/sym/kallsyms.c. */
#ifndef SIDESCOPE_KSYM_H
#define SIDESCOPE_KSYM_H

/* "name+0xoff/0xsize [module]": the kernel's names are at most 512 bytes
 * (KSYM_NAME_LEN since 6.1), module names 56 */
#define KSYM_TEXT_LEN 640

#endif
