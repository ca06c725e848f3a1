/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The in-memory CPU profile: samples (pid, comm, symbolized stack) with
 * counts, plus capture metadata; and its writers: folded stacks, pprof
 * (gzip'd protobuf, protobuf-c), JSON and a top table. */
#ifndef SIDESCOPE_PROF_H
#define SIDESCOPE_PROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "frame.h"

struct prof_frame {
	const char *name;	/* copied by the model */
	enum frame_kind kind;
	const char *module;	/* "" when none */
	const char *build_id;	/* "" when none */
};

/* What the capture saw and lost; written into every output. */
struct prof_meta {
	unsigned int hz;
	uint64_t period_ns;
	uint64_t time_ns;	/* wall-clock start (ns since the epoch) */
	uint64_t duration_ns;
	uint64_t samples;	/* counted by BPF */
	uint64_t lost_ustack;	/* stack walk failed */
	uint64_t lost_kstack;
	uint64_t trunc_ustack;	/* deeper than the walk limit */
	uint64_t trunc_kstack;
	uint64_t lost_stacks_full;
	uint64_t lost_counts_full;
	uint64_t missing_stacks;	/* stack hash not found at drain */
	uint64_t perfmap_bad_lines;
};

struct prof;

struct prof *prof__new(void);
void prof__free(struct prof *p);
/* Add COUNT samples of one stack, outermost frame first. */
int prof__add(struct prof *p, uint32_t pid, const char *comm,
	      const struct prof_frame *frames, size_t n, uint64_t count);
void prof__set_meta(struct prof *p, const struct prof_meta *m);
const struct prof_meta *prof__meta(const struct prof *p);
uint64_t prof__total(const struct prof *p);
size_t prof__nstacks(const struct prof *p);

/* Walk the stacks (sorted by comm then frames): names/kinds outermost first
 * with the comm as names[0] (kind FRAME_UNKNOWN). Stops at a non-zero
 * return of CB and returns it. */
typedef int (*prof_stack_cb)(void *ctx, const char *const *names,
			     const enum frame_kind *kinds, size_t n, uint64_t count);
int prof__foreach(const struct prof *p, prof_stack_cb cb, void *ctx);

/* Writers: return 0 or a negative errno (write errors included). */
int prof__write_folded(const struct prof *p, FILE *f);
int prof__write_pprof(const struct prof *p, FILE *f);
int prof__write_json(const struct prof *p, FILE *f);
/* Flame graph (tools/lib/flamegraph): TITLE may be NULL. */
int prof__write_svg(const struct prof *p, FILE *f, const char *title);
/* Functions by self and total samples, at most LIMIT rows, 80 columns. */
int prof__write_top(const struct prof *p, FILE *f, size_t limit);

/* The folded-stack suffix of a kind: "_[k]", "_[j]", "_[r]" or "". */
const char *frame_kind_suffix(enum frame_kind k);

#endif
