/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* An ELF object's executable PT_LOAD segments, and how a file offset of a
 * mapping of it becomes the object's (link-time) address: through the
 * segment's own program header, never an assumption about the first one.
 * The kernel maps a segment from its offset rounded down to a page, so a
 * mapping may begin up to a page before the segment's first byte: LLD
 * places an executable segment at, say, offset 0x7a0 and address 0x17a0,
 * mapped from offset 0 at base + 0x1000. Used by the profiler's unwind
 * tables (prof/unwind) and the thread dump's walk (stacks/walk). */
#ifndef SIDESCOPE_XSEGS_H
#define SIDESCOPE_XSEGS_H

#include <gelf.h>
#include <stdint.h>

#define XSEGS_MAX 8

struct xsegs {
	struct {
		uint64_t off, vaddr, filesz;
	} seg[XSEGS_MAX];
	int n;
};

/* The executable PT_LOAD segments of ELF (the first XSEGS_MAX) into X. 0,
 * or -ENOEXEC when there is none. */
int xsegs__read(Elf *elf, struct xsegs *x);
/* The address of file offset OFF (a mapping's offset, or a byte's) through
 * the segment that maps it, into *VADDR: 1, or 0 when none does. */
int xsegs__vaddr(const struct xsegs *x, uint64_t off, uint64_t *vaddr);

#endif
