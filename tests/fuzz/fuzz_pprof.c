// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: pprof profiles (gzip'd or plain) through the reader,
 * the flame graph and the SVG writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "flame/flamegraph.h"
#include "prof/pprof_read.h"

static int add(void *ctx, const char *const *names, const enum frame_kind *kinds,
	       size_t depth, uint64_t count, size_t same)
{
	return flame__add_stack_shared(ctx, names, kinds, depth, count, same, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flamegraph *fg = flame__new();
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;

	if (!fg)
		return 0;
	if (pprof__read(data, size, NULL, add, fg, NULL) == 0) {
		f = open_memstream(&out, &out_len);
		if (f) {
			flame__write_svg(fg, f, NULL);
			fclose(f);
		}
	}
	free(out);
	flame__free(fg);
	return 0;
}
