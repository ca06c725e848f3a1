// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perfmap_load: time loading a perf map and looking up every Nth entry.
 * USAGE: perfmap_load FILE */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "sym/perfmap.h"
#include "core/util.h"

int main(int argc, char **argv)
{
	struct perfmap *pm;
	struct rusage ru;
	uint64_t t0, t1;

	if (argc != 2) {
		fprintf(stderr, "usage: perfmap_load FILE\n");
		return 2;
	}
	t0 = now_ns();
	pm = perfmap__load(argv[1]);
	t1 = now_ns();
	if (!pm) {
		fprintf(stderr, "perfmap_load: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("entries %zu bad %zu load_s %.3f maxrss_kb %ld\n", perfmap__count(pm),
	       perfmap__bad_lines(pm), (t1 - t0) / 1e9, ru.ru_maxrss);
	perfmap__free(pm);
	return 0;
}
