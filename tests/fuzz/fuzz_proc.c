// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the /proc parsers (maps, status, stat, cgroup), which
 * read text that processes in the pod can influence. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *m = NULL;
	struct proc_status st;
	char *buf, out[256];
	uint64_t start;
	unsigned long flags;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';

	if (proc_maps__parse(buf, size, &m) == 0) {
		for (size_t i = 0; i < m->n; i++)
			proc_maps__find(m, m->maps[i].start);
		proc_maps__find(m, 0x400000);
		proc_maps__free(m);
	}
	proc__parse_status(buf, &st);
	proc__parse_stat_starttime(buf, &start);
	proc__parse_stat_flags(buf, &flags);
	if (proc__parse_cgroup(buf, out, sizeof(out)) == 0)
		proc__container_hint(out, out + 128, 128);
	free(buf);
	return 0;
}
