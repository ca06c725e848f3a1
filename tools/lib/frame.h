/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kinds of stack frames, shared by the symbolizer, the writers and the
 * flame graph.
 *
 * In folded stacks the kind rides on a suffix, as FlameGraph does it:
 *   name_[k]  kernel          name_[j]  JIT (perf map)
 *   name_[r]  .NET ReadyToRun  name       native (ELF)
 *   [unknown] or "module+0xOFF" without suffix: unknown / unsymbolized
 * In pprof the kind is carried by the Mapping's filename:
 *   "[kernel.kallsyms]" kernel; "[jit]" or a "perf-N.map" path JIT;
 *   a path ending ".dll" or ".exe" R2R; any other path native;
 *   no mapping: unknown.
 */
#ifndef SIDESCOPE_FRAME_H
#define SIDESCOPE_FRAME_H

enum frame_kind {
	FRAME_UNKNOWN = 0,
	FRAME_NATIVE,
	FRAME_KERNEL,
	FRAME_JIT,
	FRAME_R2R,
	FRAME_KIND_MAX,
};

#endif
