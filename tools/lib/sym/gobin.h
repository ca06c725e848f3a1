/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Whether an ELF file is a Go program. Go code runs on stacks the runtime
 * moves and checks (a uretprobe's rewritten return address kills it), and
 * passes arguments in its own registers, so ps names it and uprobe places
 * return probes differently. The file is the app's: read with pread
 * through elfsym__begin (headers checked against the size), notes capped. */
#ifndef SIDESCOPE_GOBIN_H
#define SIDESCOPE_GOBIN_H

/* Whether the ELF file open at FD is Go: a .go.buildinfo or .gopclntab
 * section, or a note named "Go" (the Go build id). Return 1 or 0, or
 * -ENOEXEC when FD is no ELF file (or a corrupt one). FD's offset is not
 * used. */
int gobin__is_go(int fd);

#endif
