/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sampling clock of the profiler and the timeline: a software
 * cpu-clock perf event on every online CPU, each running one BPF program
 * (hardware PMU events may be missing in a VM or a container). */
#ifndef SIDESCOPE_PERFEV_H
#define SIDESCOPE_PERFEV_H

struct bpf_program;
struct bpf_link;

/* The links of PROG on every CPU */
struct perfev {
	struct bpf_link **links;
	int n;
};

/* PROG attached to a cpu-clock event sampling at HZ on every online CPU
 * (offline ones skipped) into P. 0, or -1 once said (the refused call, the
 * CPU and the missing capability). perfev__close undoes what was done. */
int perfev__open(struct perfev *p, struct bpf_program *prog, unsigned int hz);

/* Every event closed (sampling stops) and P emptied; again, nothing. */
void perfev__close(struct perfev *p);

#endif
