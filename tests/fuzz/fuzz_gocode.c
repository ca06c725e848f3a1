// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the app's code and ELF files as uprobe reads them for
 * Go: x86-64 bytes decoded for RET instructions and instruction starts
 * (insn.h), the same bytes as an ELF file asked whether it is Go
 * (gobin.h). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "sym/gobin.h"
#include "uprobe/insn.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct insn_scan sc;
	uint64_t prev, next;
	char path[64];
	int fd;

	if (insn__scan(data, size, 0x1000, &sc) == 0)
		free(sc.rets);
	if (size)
		insn__is_boundary(data, size, size / 2, &prev, &next);
	fd = fuzz_memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	gobin__is_go(fd);
	close(fd);
	return 0;
}
