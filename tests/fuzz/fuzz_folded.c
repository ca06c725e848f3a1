// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: folded stacks, which users pass from anywhere, through
 * the reader, the flame graph and the SVG writer (forward and reversed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame/flamegraph.h"
#include "prof/folded.h"

static int add(void *ctx, const char *const *names, const enum frame_kind *kinds,
	       size_t depth, uint64_t count, size_t same)
{
	return flame__add_stack_shared(ctx, names, kinds, depth, count, same, count & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flamegraph *fg = flame__new();
	char *buf = malloc(size + 1), *out = NULL;
	size_t out_len = 0;
	FILE *f;

	if (!fg || !buf)
		goto cleanup;
	memcpy(buf, data, size);
	buf[size] = '\0';
	folded__parse(buf, size, size & 1 ? FOLDED_FULL : 0, add, fg, NULL);
	f = open_memstream(&out, &out_len);
	if (f) {
		flame__write_svg(fg, f, &(struct flame_opts){ .reverse = size & 2,
				 .inverted = size & 4, .normalize = true, .width = 300 });
		fclose(f);
	}
cleanup:
	free(out);
	free(buf);
	flame__free(fg);
	return 0;
}
