/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CPU, off-CPU and wall-clock profiler: targets, the BPF sampler
 * (bpf/profile.bpf.c) loaded and attached, the capture loop (prof/capture:
 * drains, new processes, unwind tables), the report of what was missed,
 * and the profile model it fills. tools/profile.c parses the command line
 * and writes the outputs; this is everything between. The calls go in
 * order: new, find_targets, load, attach, run, report, then the profile is
 * read; free at any point. Every function that fails says why (p_err)
 * and returns -1. */
#ifndef SIDESCOPE_PROFILER_H
#define SIDESCOPE_PROFILER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "prof/prof.h"

enum profiler_unwind {
	PROFILER_UNWIND_AUTO,	/* tables where the kernel has bpf_loop */
	PROFILER_UNWIND_FP,	/* frame pointers */
	PROFILER_UNWIND_TABLES,	/* the objects' unwind tables, in BPF */
};

/* What to profile and how */
struct profiler_opts {
	pid_t *pids;		/* -p (taken: the profiler frees them) */
	int npids;
	const char *name;	/* -n: the processes it names now */
	const char *cgroup;	/* --cgroup PATH */
	bool all;		/* -a */
	bool user_only, kernel_only;
	enum prof_mode mode;
	unsigned int states;	/* off-CPU: PROF_STATE_* counted */
	bool states_given;	/* (for the report) */
	bool wakers;
	uint64_t hz, secs, max_stacks, min_block_us, max_threads, switch_rate;
	unsigned int split;	/* PROF_SPLIT_* */
	enum profiler_unwind unwind;
	const char *table_cache;	/* NULL for none */
	bool hands_off;		/* no runtime asked for a perf map (rt/rtnames) */
};

struct profiler;

/* A profiler for O, which it copies (and whose pids it takes). NULL: no
 * memory (said). */
struct profiler *profiler__new(const struct profiler_opts *o);
/* -p checked, -n resolved, --cgroup found, the targets' start times, the
 * title, our PID namespace. 0, or -1 once said. */
int profiler__find_targets(struct profiler *pr);
/* The symbolizer and the model, the BPF object opened, sized for the
 * targets and loaded. 0, or -1 once said. */
int profiler__load(struct profiler *pr);
/* The capture set up and the programs attached: sampling begins. 0, or -1
 * once said. */
int profiler__attach(struct profiler *pr);
/* Sample until the duration is over, SIGINT/SIGTERM or every target has
 * exited; then stop and take what the maps still hold. 0, or -1 once
 * said. */
int profiler__run(struct profiler *pr);
/* What the capture missed, said; its metadata into the profile. */
void profiler__report(struct profiler *pr);

/* The profile (the profiler's), its title and drains */
struct prof *profiler__prof(const struct profiler *pr);
const char *profiler__title(const struct profiler *pr);
uint64_t profiler__drains(const struct profiler *pr);

void profiler__free(struct profiler *pr);

#endif
