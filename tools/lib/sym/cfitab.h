/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unwind tables: the call frame information (.eh_frame, and .debug_frame
 * where present) of one x86-64 ELF object compiled into a sorted array of
 * rows a BPF program can binary-search. The FDEs' address ranges are
 * listed, and each FDE's CFI program (after its CIE's initial
 * instructions) is run once, from start to end, by the interpreter here:
 * every advance of the location closes a row. For each range of PCs the
 * row keeps how to find the caller's frame:
 *
 *   CFA = SP + cfa_off or FP + cfa_off (or the PLT rule below);
 *   the return address at CFA - 8 (always, on x86-64);
 *   the caller's frame pointer unchanged, or at CFA + fp_off.
 *
 * Anything else (a CFA expression other than the PLT's, a register saved
 * in another register, a signal frame) is marked unsupported, so that the
 * walker stops there or falls back to frame pointers. The rules are
 * libdw's (elfutils 0.188: dwarf_cfi_addrframe, dwarf_frame_cfa,
 * dwarf_frame_register), which test_cfitab_libdw checks row for row on real
 * objects. The file is the app's: every count and offset is checked
 * against the section holding it, the table's size is bounded, and a build
 * gives up at a deadline or when asked to stop (struct cfitab_limits). */
#ifndef SIDESCOPE_CFITAB_H
#define SIDESCOPE_CFITAB_H

#include <gelf.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

enum cfi_cfa_rule {
	CFI_CFA_NONE = 0,	/* no CFI here: frame pointers, if anything */
	CFI_CFA_SP,		/* CFA = RSP + cfa_off */
	CFI_CFA_FP,		/* CFA = RBP + cfa_off */
	/* a PLT stub: CFA = RSP + cfa_off, plus 8 when (RIP & 15) >= fp_off
	 * (the stub has pushed its relocation index) */
	CFI_CFA_PLT,
	CFI_CFA_END,		/* the outermost frame: no return address */
	CFI_CFA_UNSUPPORTED,	/* a rule the walker does not follow */
	/* CFA = RSP + cfa_off, the return address in RDI: glibc's vfork between
	 * its pop of the return address and its push (the child runs on the
	 * same stack). Followed in a walk's first frame only, the one whose
	 * registers are known. */
	CFI_CFA_SP_RA_DI,
};

enum cfi_fp_rule {
	CFI_FP_SAME = 0,	/* the caller's RBP is this frame's */
	CFI_FP_AT,		/* saved at CFA + fp_off */
	CFI_FP_UNKNOWN,		/* clobbered, or a rule not followed */
};

/* One row: from pc (the object's address, less the table's base) up to
 * the next row's pc. 12 bytes, the layout of the cache; the BPF maps hold
 * it packed into 8 (bpf/profile.h's struct unwind_row). */
struct cfi_row {
	uint32_t pc;
	int32_t cfa_off;
	int16_t fp_off;
	uint8_t cfa;	/* enum cfi_cfa_rule */
	uint8_t fp;	/* enum cfi_fp_rule */
} __attribute__((packed));

struct cfi_stats {
	size_t fdes;		/* FDEs read (both sections) */
	size_t bad_fdes;	/* FDEs skipped: undecodable, or overlapping */
	size_t unsupported;	/* rows marked CFI_CFA_UNSUPPORTED */
	size_t fp_unknown;	/* rows whose caller's RBP is not known */
	int debug_frame;	/* whether .debug_frame was read too */
};

struct cfi_table {
	uint64_t base;		/* rows' pc + base = the object's address */
	struct cfi_row *rows;	/* sorted by pc, no two alike in a row */
	size_t n;
	struct cfi_stats st;
	/* rows inside a read-only mapping of a cache entry (map_len bytes at
	 * map), not malloc'd: cfitab__free unmaps it */
	void *map;
	size_t map_len;
};

/* At most this many rows an object (12 bytes each); more is -EFBIG. */
#define CFITAB_MAX_ROWS (4u << 20)
/* A CFI section of more bytes than this (uncompressed) is -EFBIG: ten
 * times the largest seen (libLLVM, 1.4 million rows from 27 MB) */
#define CFITAB_MAX_SECTION (256u << 20)
/* remember_state nested deeper than this is corrupt CFI (compilers nest
 * one or two) */
#define CFITAB_MAX_STATES 32

/* What one build may spend (the file is the app's): NULL, or zeroes, for
 * no limit but CFITAB_MAX_ROWS. */
struct cfitab_limits {
	size_t max_rows;	/* rows at most (0: CFITAB_MAX_ROWS); more: -ENOSPC */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; past it: -ETIMEDOUT (0: none) */
	const volatile sig_atomic_t *stop;	/* set: -EINTR (NULL: none) */
	/* the rows asked of libdw instead, one dwarf_cfi_addrframe a row
	 * (each replays the FDE from its start: quadratic in its length):
	 * the reference test_cfitab_libdw compares the interpreter with, and
	 * nothing else */
	int libdw;
};

/* Build T from ELF (an x86-64 object of FSIZE bytes, from elfsym__begin)
 * within LIM (NULL: no limits). 0, or -ENOENT (no CFI at all), -ENOTSUP
 * (not x86-64 little-endian), -EFBIG (too many rows or CIEs, too large a
 * section, or code spread over more than 4 GB), -ENOSPC (more rows than
 * LIM's max_rows), -ETIMEDOUT (past the deadline), -EINTR (asked to
 * stop), -ENOMEM, -ENOEXEC (corrupt). T is empty on error. */
int cfitab__build_elf_within(Elf *elf, uint64_t fsize, const struct cfitab_limits *lim,
			     struct cfi_table *t);
/* The same over the ELF file open at FD (read with pread, never mapped). */
int cfitab__build_fd_within(int fd, const struct cfitab_limits *lim, struct cfi_table *t);
/* The two without limits (trusted files, tests). */
int cfitab__build_elf(Elf *elf, uint64_t fsize, struct cfi_table *t);
int cfitab__build_fd(int fd, struct cfi_table *t);
void cfitab__free(struct cfi_table *t);

/* The row covering the object address ADDR, or NULL (before the first). */
const struct cfi_row *cfitab__find(const struct cfi_table *t, uint64_t addr);

/* An index of T's rows by blocks of 1 << CFITAB_BLOCK_SHIFT bytes, so
 * that a row search (the BPF walker's, cold at every sample) starts from
 * the rows of its pc's block, a page or two, instead of the whole table.
 * Entry k (of nblocks + 1) is how many rows have a pc at or below
 * (block0 + k) << CFITAB_BLOCK_SHIFT. */
#define CFITAB_BLOCK_SHIFT 12

/* How many blocks T's index covers, from its first row's block (*BLOCK0),
 * or 0 for no index: under 8 rows (as short to search), or rows spread so
 * thinly that the index would take more than half their room (a hostile
 * file's two rows 4 GB apart). */
uint32_t cfitab__index_blocks(const struct cfi_table *t, uint32_t *block0);
/* T's index of NBLOCKS blocks from BLOCK0 into E (nblocks + 1 entries). */
void cfitab__index(const struct cfi_table *t, uint32_t nblocks, uint32_t block0, uint32_t *e);
/* cfitab__find through the index E (NBLOCKS from BLOCK0; none: 0), as the
 * BPF walker searches. */
const struct cfi_row *cfitab__find_indexed(const struct cfi_table *t, const uint32_t *e,
					   uint32_t nblocks, uint32_t block0, uint64_t addr);

/* The registers an unwind step needs. */
struct cfi_regs {
	uint64_t ip, sp, bp, di;
	int bp_known;	/* 0 once a frame's rule lost the caller's RBP */
	int di_known;	/* RDI is this frame's (the first): cleared by a step */
};

/* Read 8 bytes of the target's memory at ADDR into *OUT: 0, or -1. */
typedef int (*cfi_read_fn)(uint64_t addr, uint64_t *out, void *ctx);

/* One step from the frame REGS is in to its caller's, by row R (the row of
 * REGS->ip, found for ip - 1 in a frame above the first: a return address
 * is past its call), or by frame pointer when R is NULL or says
 * CFI_CFA_NONE (code without CFI: JIT code keeps frame pointers). The same
 * arithmetic as the BPF walker. 0 with REGS the caller's, 1 at the
 * outermost frame, -1 when the walk cannot go on (an unsupported rule, an
 * unreadable address, a stack that does not grow up). */
int cfitab__step(const struct cfi_row *r, struct cfi_regs *regs, cfi_read_fn rd, void *ctx);

/* "sp+16", "fp+16", "plt", "end", "none", "sp+0,ra=rdi", "unsupported": the CFA rule of
 * R, for dumps and tests, into BUF. */
const char *cfitab__cfa_str(const struct cfi_row *r, char *buf, size_t len);

#endif
