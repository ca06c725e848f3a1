/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* x86-64 machine code through Capstone, for placing uprobes: where a
 * function's RET instructions are (return probes on Go code, where a real
 * uretprobe breaks the program) and whether an offset starts an
 * instruction (a probe inside one corrupts the code). The code is the
 * app's, so hostile input: buffers in, bounded, nothing executed. */
#ifndef SIDESCOPE_INSN_H
#define SIDESCOPE_INSN_H

#include <stddef.h>
#include <stdint.h>

#define INSN_MAX_CODE	(1u << 20)	/* bytes of one function at most */

struct insn_scan {
	uint64_t *rets;		/* BASE + offset of each RET (malloc'd), in order */
	size_t nrets;
	size_t njumps_out;	/* direct jumps whose target is outside the code
				 * (tail calls: returns not seen there) */
	uint64_t bad_at;	/* -ENOEXEC: BASE + offset of the undecodable byte */
};

/* Decode CODE (LEN bytes, at most INSN_MAX_CODE, of x86-64 code placed at
 * BASE) linearly from its first byte to its end. Return 0 with SC filled
 * (caller frees SC->rets, also NULL when none), -ENOEXEC when some bytes
 * decode to no instruction (SC->bad_at says where), -E2BIG (LEN too big),
 * -ENOMEM, or -ENOSYS (the disassembler cannot start: insn__why). */
int insn__scan(const uint8_t *code, size_t len, uint64_t base, struct insn_scan *sc);

/* Whether offset OFF of CODE (LEN bytes) starts an instruction, decoding
 * from CODE's first byte. Return 1 or 0, with *PREV and *NEXT (may be NULL)
 * the starts of the instructions around OFF when it does not; -ENOEXEC when
 * decoding fails before OFF; or -E2BIG, -ENOMEM, -ENOSYS as insn__scan. */
int insn__is_boundary(const uint8_t *code, size_t len, uint64_t off, uint64_t *prev,
		      uint64_t *next);

/* Why the last -ENOSYS: Capstone's library could not be loaded (it is
 * loaded on first use), or Capstone refused to start. */
const char *insn__why(void);

#endif
