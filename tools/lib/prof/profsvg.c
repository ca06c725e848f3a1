// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profile as a flame graph, through the shared flame graph writer. */
#include <errno.h>
#include <stdio.h>

#include "flame/flamegraph.h"
#include "prof/prof.h"

static int add_cb(void *ctx, const char *const *names, const enum frame_kind *kinds,
		  size_t n, uint64_t count)
{
	return flame__add_stack(ctx, names, kinds, n, count);
}

int prof__write_svg(const struct prof *p, FILE *f, const char *title)
{
	const struct prof_meta *m = prof__meta(p);
	struct flame_opts opts = { 0 };
	struct flamegraph *fg;
	char sub[160];
	int err;

	fg = flame__new();
	if (!fg)
		return -ENOMEM;
	err = prof__foreach(p, add_cb, fg);
	if (err)
		goto cleanup;
	snprintf(sub, sizeof(sub), "%llu samples at %u Hz over %.1f s",
		 (unsigned long long)prof__total(p), m->hz, m->duration_ns / 1e9);
	opts.title = title;
	opts.subtitle = sub;
	err = flame__write_svg(fg, f, &opts);
cleanup:
	flame__free(fg);
	return err;
}
