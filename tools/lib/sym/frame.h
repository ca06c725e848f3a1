/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kinds of stack frames and their source lines, shared by the symbolizer,
 * the profile model, the writers and the flame graph.
 *
 * In folded stacks the kind rides on a suffix, as FlameGraph does it:
 *   name_[k]  kernel          name_[j]  JIT (perf map)
 *   name_[r]  .NET ReadyToRun  name       native (ELF)
 *   [unknown], "module+0xOFF", "[not code: module]" without suffix: unknown,
 *   unsymbolized, or an address outside code (a broken frame-pointer walk)
 * In pprof the kind is carried by the Mapping's filename:
 *   "[kernel.kallsyms]" kernel; "[jit]" or a "perf-N.map" path JIT;
 *   a path ending ".dll" or ".exe" R2R; any other path native;
 *   no mapping: unknown.
 */
#ifndef SIDESCOPE_FRAME_H
#define SIDESCOPE_FRAME_H

#include <stdint.h>

enum frame_kind {
	FRAME_UNKNOWN = 0,
	FRAME_NATIVE,
	FRAME_KERNEL,
	FRAME_JIT,
	FRAME_R2R,
	FRAME_KIND_MAX,
};

/* One source position of a frame (from DWARF). A frame's lines go
 * innermost first, as pprof's Location.line does: the functions inlined at
 * its address, then the frame's own function, at the line of the call
 * into the next inner one. */
struct frame_line {
	const char *function;	/* demangled; NULL in the last line: the frame's own name */
	const char *file;	/* source file of the line, "" when unknown */
	uint32_t line;		/* 0: unknown */
	uint32_t start_line;	/* the function's declaration line, 0: unknown */
};

/* Where a frame's source lines can be looked up when an output needs them
 * (pprof; reading DWARF costs more than the rest of a capture): FN(SRC,
 * VADDR, &lines) gives how many lines (innermost first, at most
 * FRAME_MAX_LINES; 0: none) or a negative errno, the lines valid as long
 * as SRC. FN NULL: no lines. */
typedef int (*frame_lines_fn)(void *src, uint64_t vaddr, const struct frame_line **out);
struct frame_lines_ref {
	frame_lines_fn fn;
	void *src;
	uint64_t vaddr;
};

/* The most lines a frame carries (inlining deeper than this is cut at the
 * innermost end). */
#define FRAME_MAX_LINES 16

#endif
