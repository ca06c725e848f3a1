/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What sidescope uprobe aggregates in the kernel instead of sending each
 * hit: log2 histograms (--latency, --hist), hits per distinct value of an
 * expression (--by, the "by" map of bpf/uprobe.bpf.c) and hits per user
 * stack (--stacks: the maps of bpf/profile.h, drained into a profile by
 * the profiler's capture engine and symbolized by its symbolizer). The
 * session (session.c) reads them at the end. */
#ifndef SIDESCOPE_UPAGG_H
#define SIDESCOPE_UPAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "prof/capture.h"
#include "uprobe/probespec.h"
#include "uprobe/upfmt.h"

/* One log2 histogram H (UP_HIST_SLOTS counts) of TOTAL values onto F.
 * Text: HEADING on a line of its own, then the buckets, the column named
 * UNIT. JSON: one object, {"type":TYPE,"probe":PROBE[,"expr":EXPR],
 * COUNT_KEY:TOTAL[,"unit":UNIT],"buckets":[{min,max,count}...]}. */
struct uphist {
	const char *heading;
	const char *type;
	const char *probe;
	const char *expr;	/* or NULL */
	const char *count_key;
	const char *unit;
	uint64_t negative;	/* values left out: below 0 */
};
void upagg__print_hist(FILE *f, bool json, const struct uphist *d, const uint64_t *h,
		       uint64_t total);

/* --by: the maps of values (FD: strings, IFD: integers) per probe, the TOP
 * most frequent of each (count, then value) onto OUT, decoded by FMT, and
 * the rest in one row. Return 0 or a negative errno. */
int upagg__report_by(int fd, int ifd, struct probe_spec *const *specs, int nspecs,
		     struct upfmt *fmt, bool json, size_t top, FILE *out);

/* --stacks: a capture over the maps M (news -1) into a new profile of
 * probe hits, PID (0: any) watched from now on; PE images named through
 * PE (may be NULL; must outlive U); MAX_STACKS the maps' size, for the
 * hint when they fill. */
struct pe_resolver;
struct upstacks;
struct upstacks *upstacks__new(const struct capture_maps *m, pid_t pid, uint64_t start,
			       const struct pe_resolver *pe, unsigned long long max_stacks);
/* Move the counts so far into the profile (called about once a second, so
 * that the maps stay small). 0 or a negative errno. */
int upstacks__drain(struct upstacks *u);
/* The last drain, the losses said on stderr and into the profile's
 * metadata (DURATION_NS, the wall-clock START_NS); the profile, owned by
 * U, or NULL on an error (said). */
struct prof *upstacks__finish(struct upstacks *u, uint64_t start_ns, uint64_t duration_ns);
void upstacks__free(struct upstacks *u);

#endif
