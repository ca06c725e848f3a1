// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the app's ELF files as the unwind table builder reads
 * them (cfitab.h): .eh_frame and .debug_frame entries, their pointer
 * encodings and CFI programs; every row found is looked up again, also
 * through the row index the BPF walker searches by. A build is linear in
 * its input: one that takes more than FUZZ_CFITAB_MS (measured here, and
 * the build's own deadline) is a failure, as is a row limit not kept. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sym/cfitab.h"
#include "memfile.h"

/* ~50 times what the largest input of a fuzzing run takes under ASan */
#define FUZZ_CFITAB_MS 1000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfitab_limits lim = { 0 };
	struct cfi_table t;
	char path[64];
	size_t i;
	uint64_t t0;
	int fd = fuzz_memfile(data, size, path, sizeof(path)), err;

	if (fd < 0)
		return 0;
	t0 = mono_ns();
	lim.deadline_ns = t0 + FUZZ_CFITAB_MS * 1000000ull;
	err = cfitab__build_fd_within(fd, &lim, &t);
	if (err == -ETIMEDOUT || mono_ns() - t0 > FUZZ_CFITAB_MS * 1000000ull) {
		fprintf(stderr, "fuzz_cfitab: a build of %zu bytes took %llu ms (%d), over %d ms\n",
			size, (unsigned long long)((mono_ns() - t0) / 1000000), err, FUZZ_CFITAB_MS);
		abort();
	}
	if (err == 0) {
		uint32_t block0, nblocks = cfitab__index_blocks(&t, &block0);
		uint32_t *e = nblocks ? calloc(nblocks + 1, sizeof(*e)) : NULL;
		struct cfi_table cut;

		if (e)
			cfitab__index(&t, nblocks, block0, e);
		for (i = 0; i < t.n; i++) {
			uint64_t a = t.base + t.rows[i].pc;

			if (cfitab__find(&t, a) != &t.rows[i] ||
			    cfitab__find_indexed(&t, e, e ? nblocks : 0, block0, a) != &t.rows[i] ||
			    cfitab__find_indexed(&t, e, e ? nblocks : 0, block0, a - 1) !=
				    cfitab__find(&t, a - 1))
				__builtin_trap();
		}
		/* one row fewer than it has: refused */
		lim.max_rows = t.n - 1;
		lim.deadline_ns = 0;
		if (t.n > 1 && cfitab__build_fd_within(fd, &lim, &cut) != -ENOSPC)
			__builtin_trap();
		free(e);
		cfitab__free(&t);
	}
	close(fd);
	return 0;
}
