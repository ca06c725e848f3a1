// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: ReadyToRun images from truncated or corrupt files (the
 * profiler and uprobe read .dll files from the application's container). */
#include <stdint.h>
#include <unistd.h>

#include "dotnet/r2r.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct r2r_method_info hits[4], m;
	struct r2r_image *img;
	const char *name;
	char path[64];
	uint32_t b, e, rva;
	uint64_t off;
	int fd;

	fd = fuzz_memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	img = r2r__open(path, NULL);
	if (img) {
		for (size_t i = 0; i < r2r__method_count(img); i++) {
			r2r__method_at(img, i, &m);
			r2r__find_method(img, m.name, hits, 4);
			r2r__lookup_rva(img, m.rva, &name, &b, &e);
		}
		for (size_t i = 0; i < r2r__code_range_count(img); i++) {
			r2r__code_range_at(img, i, &b, &e);
			r2r__lookup_rva(img, e - 1, &name, NULL, NULL);
		}
		r2r__find_method(img, "SampleApp.EchoProvider.Echo", hits, 4);
		r2r__find_method(img, "Echo(System.String)", hits, 4);
		r2r__rva_from_file_offset(img, 0x400, &rva);
		r2r__file_offset_from_rva(img, 0x2000, &off);
		r2r__free(img);
	}
	close(fd);
	return 0;
}
