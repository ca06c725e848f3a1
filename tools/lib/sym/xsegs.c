// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An ELF object's executable segments (sym/xsegs.h). */
#include <errno.h>
#include <unistd.h>

#include "sym/xsegs.h"

int xsegs__read(Elf *elf, struct xsegs *x)
{
	size_t n, i;

	x->n = 0;
	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n && x->n < XSEGS_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		x->seg[x->n].off = ph.p_offset;
		x->seg[x->n].vaddr = ph.p_vaddr;
		x->seg[x->n].filesz = ph.p_filesz;
		x->n++;
	}
	return x->n ? 0 : -ENOEXEC;
}

int xsegs__vaddr(const struct xsegs *x, uint64_t off, uint64_t *vaddr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < x->n; i++) {
		if (off < (x->seg[i].off & ~(page - 1)) ||
		    off >= x->seg[i].off + (x->seg[i].filesz ? x->seg[i].filesz : 1))
			continue;
		/* modulo 2^64: a first page below 0 wraps */
		*vaddr = x->seg[i].vaddr - x->seg[i].off + off;
		return 1;
	}
	return 0;
}
