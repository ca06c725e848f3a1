// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the app's ELF files as the unwind table builder reads
 * them (cfitab.h): .eh_frame and .debug_frame entries, their pointer
 * encodings and CFI programs; every row found is looked up again, also
 * through the row index the BPF walker searches by. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "sym/cfitab.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table t;
	char path[64];
	size_t i;
	int fd = fuzz_memfile(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (cfitab__build_fd(fd, &t) == 0) {
		uint32_t block0, nblocks = cfitab__index_blocks(&t, &block0);
		uint32_t *e = nblocks ? calloc(nblocks + 1, sizeof(*e)) : NULL;

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
		free(e);
		cfitab__free(&t);
	}
	close(fd);
	return 0;
}
