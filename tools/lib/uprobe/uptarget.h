/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Where a uprobe goes: BINARY of a probe spec -> a path this process can
 * open (through /proc/PID/root with -p), SYMBOL -> a file offset (ELF
 * symbols through elfsym; PE images through a pluggable resolver for .NET
 * ReadyToRun method names). Messages for the user go into a struct err
 * (core/err.h), which may be NULL. */
#ifndef SIDESCOPE_UPTARGET_H
#define SIDESCOPE_UPTARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

/* Resolver for PE images (.dll/.exe): map METHOD (e.g.
 * "SampleApp.EchoProvider.Echo") in the file at PATH (host-visible) to the
 * file offset of its native code. Return 0, -ENOENT (no such method),
 * -EEXIST (several match: list them in E), -ENOEXEC (no native code,
 * e.g. not ReadyToRun) or another negative errno, with a message in E
 * (which may be NULL). */
typedef int (*uptarget_pe_resolver_fn)(const char *path, const char *method,
				       uint64_t *file_offset, struct err *e);

/* Install the PE resolver (NULL: none; method names in PE files then fail
 * with a hint to give a file offset). */
void uptarget__set_pe_resolver(uptarget_pe_resolver_fn fn);

/* Resolve BINARY (absolute path or library short name such as "c", "ssl")
 * into HOST, its path as this process names it, and open it into *FD (with
 * appfile__open: with PID > 0 the path is resolved inside the target's root,
 * so no link the app planted leads out of it; regular files only). Short
 * names are looked up among the files PID has mapped, or without a PID in
 * the standard library directories. Everything after uses *FD (or
 * "/proc/self/fd/N"), never HOST again. Return 0, or -ENOENT, -EINVAL,
 * -ENAMETOOLONG (ERR not set) or another negative errno with ERR saying
 * why; the caller closes *FD. */
int uptarget__binary(pid_t pid, const char *binary, char *host, size_t size, int *fd,
		     struct err *err);

/* Resolve SYMBOL in the file open at FD (named HOST in messages and for the
 * debug-file lookups beside it) to a file offset. DEBUG_ROOT is "" or
 * "/proc/PID/root" (for separate debug files). Return 0, -ENOENT (file),
 * -ESRCH (no such symbol), -EEXIST (ambiguous), -ENOEXEC (not ELF, or PE
 * without resolver) or another negative errno, with ERR saying why (for a
 * PE image, what the resolver wrote). */
int uptarget__symbol(int fd, const char *host, const char *debug_root, const char *symbol,
		     uint64_t *file_offset, struct err *err);

/* Where the return half of a probe at file offset OFF of FD goes. Not Go:
 * 0 with *N = 0 (a uretprobe is fine). Go code, which a uretprobe kills
 * (its runtime checks return addresses): 0 with the file offsets of the
 * RET instructions of the function holding OFF (bounds from its ELF
 * symbol) in *OFFS (malloc'd, caller frees) and *N > 0; or, when none can
 * be found, a negative errno with ERR saying why in one line (no symbol
 * table, no RET, code that does not disassemble). *JUMPS_OUT (may be NULL)
 * gets the number of tail jumps, through which returns are not seen. */
int uptarget__ret_sites(int fd, const char *host, const char *debug_root, uint64_t off,
			uint64_t **offs, size_t *n, size_t *jumps_out, struct err *err);

/* Whether file offset OFF of FD, inside a function of its ELF symbol table,
 * starts an instruction there: a uprobe in the middle of one corrupts the
 * code (the kernel does not always refuse it). Return 0 (it does, or there
 * is nothing to check against: not ELF, not x86-64, no symbol there),
 * -EINVAL with ERR naming the instructions around OFF, or another negative
 * errno with ERR saying why. */
int uptarget__check_offset(int fd, const char *host, const char *debug_root, uint64_t off,
			   struct err *err);

/* Whether the file at FD starts like a PE image ("MZ"). */
int uptarget__is_pe(int fd);

#endif
