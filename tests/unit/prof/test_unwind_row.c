// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* unwind__pack_row: a table's row as the BPF walker reads it, in 8 bytes;
 * what does not fit is marked so that the walk stops or forgets RBP there,
 * never follows a wrong offset. */
#include <linux/types.h>
#include <string.h>

#include "prof/unwind.h"
#include "profile.h"
#include "sym/cfitab.h"
#include "tap.h"

static struct cfi_row row(uint32_t pc, uint8_t cfa, int32_t cfa_off, uint8_t fp, int16_t fp_off)
{
	struct cfi_row c;

	memset(&c, 0, sizeof(c));
	c.pc = pc;
	c.cfa = cfa;
	c.cfa_off = cfa_off;
	c.fp = fp;
	c.fp_off = fp_off;
	return c;
}

/* C packed: its rules and offsets as the walker reads them, and the result */
static int pack(struct cfi_row c, unsigned *cfa, unsigned *fp, uint64_t *cfa_off, int *fp_off)
{
	struct unwind_row r;
	int unfit;

	memset(&r, 0xa5, sizeof(r));
	unfit = unwind__pack_row(&r, &c);
	*cfa = UNWIND_ROW_CFA(&r);
	*fp = UNWIND_ROW_FP(&r);
	*cfa_off = UNWIND_ROW_CFA_OFF(&r);
	*fp_off = r.fp_off;
	ok(r.pc == c.pc, "pc %#x kept", c.pc);
	return unfit;
}

int main(void)
{
	unsigned cfa, fp;
	uint64_t off;
	int fpo, unfit;

	ok(sizeof(struct unwind_row) == 8, "a row is 8 bytes (%zu)", sizeof(struct unwind_row));
	ok(UNWIND_INDEX_PER_ROW == 2, "two index entries a row slot");

	unfit = pack(row(0x1000, CFI_CFA_SP, 8, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_SP && fp == CFI_FP_SAME && off == 8,
	   "function entry: CFA = RSP + 8 (%u %u %llu)", cfa, fp, (unsigned long long)off);

	unfit = pack(row(0x1004, CFI_CFA_FP, 16, CFI_FP_AT, -16), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_FP && fp == CFI_FP_AT && off == 16 && fpo == -16,
	   "frame set up: CFA = RBP + 16, RBP at CFA - 16 (%u %u %llu %d)", cfa, fp,
	   (unsigned long long)off, fpo);

	unfit = pack(row(0x2000, CFI_CFA_SP, 8 * 65535, CFI_FP_AT, -56), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_SP && off == 8u * 65535 && fp == CFI_FP_AT && fpo == -56,
	   "the largest frame a row holds, RBP saved after six pushes");

	/* redis-server has a function with a 1 MB buffer on its stack */
	unfit = pack(row(0x3000, CFI_CFA_SP, 1048720, CFI_FP_AT, -16), &cfa, &fp, &off, &fpo);
	ok(unfit == 1 && cfa == CFI_CFA_UNSUPPORTED, "a 1 MB frame: unsupported, said (%d, %u)",
	   unfit, cfa);
	unfit = pack(row(0x3000, CFI_CFA_SP, 8 * 65536, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(unfit == 1 && cfa == CFI_CFA_UNSUPPORTED, "one eight past the reach: unsupported");
	unfit = pack(row(0x3000, CFI_CFA_SP, 12, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(unfit == 1 && cfa == CFI_CFA_UNSUPPORTED, "an offset not a multiple of 8: unsupported");
	unfit = pack(row(0x3000, CFI_CFA_FP, -8, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(unfit == 1 && cfa == CFI_CFA_UNSUPPORTED, "a negative offset: unsupported");

	unfit = pack(row(0x4000, CFI_CFA_SP, 64, CFI_FP_AT, -200), &cfa, &fp, &off, &fpo);
	ok(unfit == 1 && cfa == CFI_CFA_SP && off == 64 && fp == CFI_FP_UNKNOWN,
	   "RBP saved out of reach: the CFA kept, RBP unknown (%u %u)", cfa, fp);
	unfit = pack(row(0x4000, CFI_CFA_SP, 64, CFI_FP_UNKNOWN, -200), &cfa, &fp, &off, &fpo);
	ok(!unfit && fp == CFI_FP_UNKNOWN && fpo == 0, "an unused offset out of reach: nothing lost");

	unfit = pack(row(0x5000, CFI_CFA_PLT, 8, CFI_FP_SAME, 11), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_PLT && off == 8 && fpo == 11, "a PLT stub: its push at 11");

	unfit = pack(row(0x6000, CFI_CFA_SP_RA_DI, 0, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_SP_RA_DI && off == 0, "vfork's rule kept");

	unfit = pack(row(0x7000, CFI_CFA_END, 12345, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_END && off == 0, "the outermost frame: no offset needed");
	unfit = pack(row(0x7000, CFI_CFA_UNSUPPORTED, -3, CFI_FP_UNKNOWN, 0), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_UNSUPPORTED, "unsupported stays so, not counted again");
	unfit = pack(row(0x7000, CFI_CFA_NONE, 0, CFI_FP_SAME, 0), &cfa, &fp, &off, &fpo);
	ok(!unfit && cfa == CFI_CFA_NONE, "no CFI: frame pointers");
	return done_testing();
}
