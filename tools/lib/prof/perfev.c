// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-CPU cpu-clock perf events running a BPF program (prof/perfev.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "core/log.h"
#include "core/privhint.h"
#include "prof/perfev.h"

int perfev__open(struct perfev *p, struct bpf_program *prog, unsigned int hz)
{
	struct perf_event_attr attr;
	int ncpus = libbpf_num_possible_cpus(), cpu, fd, err;

	p->links = calloc(ncpus > 0 ? ncpus : 1, sizeof(*p->links));
	p->n = 0;
	if (!p->links) {
		p_err("out of memory");
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = sizeof(attr);
	attr.freq = 1;
	attr.sample_freq = hz;
	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;	/* offline CPU */
			err = errno;
			p_err("failed to open perf event on cpu %d: %s%s", cpu, strerror(err),
			      privhint__msg(PRIVHINT_PERF, err));
			return -1;
		}
		/* the link owns the event: closed with it */
		p->links[p->n] = bpf_program__attach_perf_event(prog, fd);
		if (!p->links[p->n]) {
			err = errno;
			close(fd);
			p_err("failed to attach BPF program on cpu %d: %s%s", cpu, strerror(err),
			      privhint__msg(PRIVHINT_BPF, err));
			return -1;
		}
		p->n++;
	}
	return 0;
}

void perfev__close(struct perfev *p)
{
	int i;

	for (i = 0; i < p->n; i++)
		bpf_link__destroy(p->links[i]);
	free(p->links);
	p->links = NULL;
	p->n = 0;
}
