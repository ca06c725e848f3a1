/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The timeline's capture: one process's CPU samples (bpf/timeline.bpf.c),
 * uprobe hits (uprobe/session) and LTTng events (timeline/tllttng) on one
 * clock, into the model of timeline/timeline. tools/timeline.c parses the
 * command line and writes the file; this is everything between. The calls
 * go in order: new, parse_probes, find_target, start, run, write, report;
 * free at any point. A function that fails says why (p_err) and returns
 * -1 unless it says otherwise. */
#ifndef SIDESCOPE_TLCAP_H
#define SIDESCOPE_TLCAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct tlcap_opts {
	pid_t pid;
	uint64_t secs, hz, max_stacks, buf_kb, register_ms;
	char *const *probes;	/* uprobe specs, as 'sidescope uprobe' takes them */
	int nprobes;
	char *const *events;	/* --lttng-event patterns */
	int nevents;
	bool lttng;
	bool hands_off;		/* no runtime asked for a perf map (rt/rtnames) */
};

struct tlcap;

/* A capture for O (copied: its strings must outlive the capture). NULL:
 * no memory (said). */
struct tlcap *tlcap__new(const struct tlcap_opts *o);
/* Every probe parsed and finished: 0, 2 (a bad probe: a usage error,
 * said) or 1 (said). */
int tlcap__parse_probes(struct tlcap *r);
/* The target checked, its start time, our PID namespace. */
int tlcap__find_target(struct tlcap *r);
/* LTTng's session (a signal while the app registers: a warning, the
 * capture without LTTng), the model, the target's threads, the probes
 * attached, the sampler loaded and attached: recording begins. */
int tlcap__start(struct tlcap *r);
/* Until the duration, a stop or the target's exit; then everything
 * detached and the LTTng trace read. */
int tlcap__run(struct tlcap *r);
/* The Chrome trace event document to F: 0 or a negative errno. */
int tlcap__write(struct tlcap *r, FILE *f);
/* What was recorded and lost, said; OUTPUT names the file. */
void tlcap__report(struct tlcap *r, const char *output);

void tlcap__free(struct tlcap *r);

#endif
