// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* x86-64 decoding for probe placement: RET instructions of a function (Go
 * return probes), instruction starts, tail jumps, bytes that are no code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uprobe/insn.h"
#include "tap.h"

/* work(n int, s string) int of tests/progs/go_target.go as go 1.19 builds
 * it: two ways out, RETs at +0x33 and +0x38. */
static const unsigned char go_work[] = {
	0x48, 0x89, 0x5c, 0x24, 0x10,				/* mov %rbx,0x10(%rsp) */
	0x48, 0xba, 0xb7, 0x6d, 0xdb, 0xb6, 0x6d, 0xdb, 0xb6, 0x6d, /* movabs $..,%rdx */
	0x48, 0x0f, 0xaf, 0xd0,					/* imul %rax,%rdx */
	0x48, 0xbb, 0x49, 0x92, 0x24, 0x49, 0x92, 0x24, 0x49, 0x12, /* movabs $..,%rbx */
	0x48, 0x01, 0xda,					/* add %rbx,%rdx */
	0x48, 0xbb, 0x92, 0x24, 0x49, 0x92, 0x24, 0x49, 0x92, 0x24, /* movabs $..,%rbx */
	0x48, 0x39, 0xd3,					/* cmp %rdx,%rbx */
	0x72, 0x05,						/* jb +0x34 */
	0x48, 0x8d, 0x04, 0x41,					/* lea (%rcx,%rax,2),%rax */
	0xc3,							/* ret */
	0x48, 0x8d, 0x04, 0x41,					/* lea (%rcx,%rax,2),%rax */
	0xc3,							/* ret */
};

/* push %rbp; ret $8; jmp far away (a tail call); ret */
static const unsigned char tail[] = {
	0x55, 0xc2, 0x08, 0x00, 0xe9, 0x00, 0x10, 0x00, 0x00, 0xc3,
};

int main(void)
{
	struct insn_scan sc;
	uint64_t prev = 0, next = 0;
	unsigned char *big;

	is_int(insn__scan(go_work, sizeof(go_work), 0x82760, &sc), 0, "Go function decodes");
	is_int(sc.nrets, 2, "two RETs");
	if (sc.nrets == 2) {
		is_int(sc.rets[0], 0x82760 + 0x33, "first RET as a file offset");
		is_int(sc.rets[1], 0x82760 + 0x38, "second RET");
	}
	is_int(sc.njumps_out, 0, "no jump leaves it");
	free(sc.rets);

	is_int(insn__scan(tail, sizeof(tail), 0x1000, &sc), 0, "tail-calling code decodes");
	is_int(sc.nrets, 2, "ret and ret imm16 are both returns");
	if (sc.nrets == 2) {
		is_int(sc.rets[0], 0x1001, "ret $8");
		is_int(sc.rets[1], 0x1009, "ret");
	}
	is_int(sc.njumps_out, 1, "the jump out is counted");
	free(sc.rets);

	is_int(insn__scan(go_work, 0x33, 0, &sc), 0, "cut before the RETs");
	is_int(sc.nrets, 0, "no RET there");
	ok(sc.rets == NULL, "nothing to free");

	/* an instruction cut short at the end: no instruction */
	is_int(insn__scan(go_work, 8, 0x400, &sc), -ENOEXEC, "cut instruction refused");
	is_int(sc.bad_at, 0x405, "where decoding stopped");
	ok(sc.rets == NULL, "no list on failure");
	{
		static const unsigned char bad[] = { 0x90, 0x06, 0xc3 };	/* push %es: not in 64-bit */

		is_int(insn__scan(bad, sizeof(bad), 0, &sc), -ENOEXEC, "invalid opcode refused");
		is_int(sc.bad_at, 1, "at the invalid opcode");
	}
	big = calloc(1, INSN_MAX_CODE + 1);
	if (big) {
		is_int(insn__scan(big, INSN_MAX_CODE + 1, 0, &sc), -E2BIG, "too much code refused");
		is_int(insn__is_boundary(big, INSN_MAX_CODE + 1, 4, NULL, NULL), -E2BIG,
		       "too much code refused (boundary)");
		free(big);
	}

	is_int(insn__is_boundary(go_work, sizeof(go_work), 0, NULL, NULL), 1, "the start is one");
	is_int(insn__is_boundary(go_work, sizeof(go_work), 5, NULL, NULL), 1, "+5 starts movabs");
	is_int(insn__is_boundary(go_work, sizeof(go_work), 0x33, NULL, NULL), 1, "+0x33 the RET");
	is_int(insn__is_boundary(go_work, sizeof(go_work), 2, &prev, &next), 0,
	       "+2 is inside the first mov");
	is_int(prev, 0, "previous start");
	is_int(next, 5, "next start");
	is_int(insn__is_boundary(go_work, sizeof(go_work), 0x10, &prev, &next), 0,
	       "+0x10 is inside imul");
	ok(prev == 0xf && next == 0x13, "imul at +0xf, next at +0x13");
	is_int(insn__is_boundary(go_work, 8, 6, NULL, NULL), -ENOEXEC,
	       "undecodable before the offset");
	return done_testing();
}
