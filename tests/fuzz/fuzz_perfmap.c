// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the perf-map and kallsyms parsers. A perf map is written
 * by the application, so its content is as hostile as the app may be. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/kallsyms.h"
#include "sym/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm;
	struct kallsyms *ks;
	const char *mod;
	uint64_t start, delta;
	char *buf;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	pm = perfmap__parse(buf, size);	/* takes buf */
	if (pm) {
		perfmap__lookup(pm, 0, &start);
		perfmap__lookup(pm, 0x1000, &start);
		perfmap__lookup(pm, UINT64_MAX, &start);
		perfmap__lookup(pm, 0x7f0000001000, &start);
		perfmap__free(pm);
	}

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	ks = kallsyms__parse(buf, size);
	if (ks) {
		kallsyms__lookup(ks, 0xffffffff81000000ull, &mod, &delta);
		kallsyms__lookup(ks, UINT64_MAX, &mod, &delta);
		kallsyms__free(ks);
	}
	return 0;
}
