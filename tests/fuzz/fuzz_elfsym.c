// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: ELF symbol tables from truncated or corrupt files (the
 * profiler and uprobe read binaries from the application's container), and
 * the same bytes as a packed table (what the table cache holds). */
#include <stdint.h>
#include <unistd.h>

#include "sym/elfsym.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct elf_sym_info *hits[4];
	struct elf_syms *s;
	char path[64];
	uint64_t a, o;
	int fd;

	s = elfsym__unpack(data, size);
	if (s) {
		elfsym__lookup_addr(s, 0x1000, &o);
		elfsym__lookup_name(s, "main", hits, 4);
		elfsym__free(s);
	}
	fd = fuzz_memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	s = elfsym__load(path, "/nonexistent");
	if (s) {
		for (uint64_t addr = 0; addr < 0x3000; addr += 0x101)
			elfsym__lookup_addr(s, addr, &o);
		elfsym__lookup_name(s, "main", hits, 4);
		elfsym__offset_to_addr(s, 0x1000, &a);
		elfsym__addr_to_offset(s, 0x1000, &o);
		elfsym__build_id(s);
		elfsym__free(s);
	}
	close(fd);
	return 0;
}
