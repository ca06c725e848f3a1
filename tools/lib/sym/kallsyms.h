/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms: address -> function name. */
#ifndef SIDESCOPE_KALLSYMS_H
#define SIDESCOPE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Parse the text of /proc/kallsyms; takes ownership of BUF (malloc'd, NUL
 * at BUF[LEN]). Only text symbols (t/T/w/W) are kept. NULL + errno. */
struct kallsyms *kallsyms__parse(char *buf, size_t len);
/* Load PATH whole. NULL: the running kernel, asked one address at a time
 * (through a BPF program, when this process may load one and the kernel
 * shows it addresses), else /proc/kallsyms read whole. NULL with errno set
 * on failure. */
struct kallsyms *kallsyms__load(const char *path);
void kallsyms__free(struct kallsyms *ks);

/* Function containing ADDR (the closest symbol at or below it), owned by
 * ks; NULL when below the first symbol or the addresses are hidden. Not
 * thread-safe: a running kernel's answers are cached in KS.
 * *module gets "" or the module name ("[ext4]" in kallsyms -> "ext4"). */
const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr,
			     const char **module, uint64_t *delta);
/* Symbols held: read from the file, or the running kernel's asked so far. */
size_t kallsyms__count(const struct kallsyms *ks);
/* True when every address read as 0 (kptr_restrict, no CAP_SYSLOG). */
bool kallsyms__hidden(const struct kallsyms *ks);

#endif
