// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the app's ELF files as the unwind table builder reads
 * them (cfitab.h): .eh_frame and .debug_frame entries, their pointer
 * encodings and CFI programs; every row found is looked up again. */
#include <stdint.h>
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
		for (i = 0; i < t.n; i++)
			if (cfitab__find(&t, t.base + t.rows[i].pc) != &t.rows[i])
				__builtin_trap();
		cfitab__free(&t);
	}
	close(fd);
	return 0;
}
