// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profile as a flame graph, through the shared flame graph writer. */
#include <errno.h>
#include <stdio.h>

#include "flame/flamegraph.h"
#include "prof/prof.h"

struct svg_ctx {
	struct flamegraph *fg;
	const struct prof *p;
};

static int add_cb(void *ctx, const char *const *names, const enum frame_kind *kinds,
		  size_t n, uint64_t count)
{
	struct svg_ctx *sc = ctx;

	/* off-CPU and wall: microseconds, as the folded stacks */
	count = prof__shown(sc->p, count);
	return count ? flame__add_stack(sc->fg, names, kinds, n, count) : 0;
}

int prof__write_svg(const struct prof *p, FILE *f, const char *title)
{
	const struct prof_meta *m = prof__meta(p);
	struct flame_opts opts = { 0 };
	struct flamegraph *fg;
	char sub[160];
	int err;

	struct svg_ctx sc;

	fg = flame__new();
	if (!fg)
		return -ENOMEM;
	sc = (struct svg_ctx){ fg, p };
	err = prof__foreach(p, add_cb, &sc);
	if (err)
		goto cleanup;
	if (m->mode == PROF_MODE_OFFCPU) {
		/* blocked time: its own palette, and says so */
		snprintf(sub, sizeof(sub), "off-CPU time: %.3f s %s over %.1f s; widths are time "
			 "off the CPU, not CPU use", prof__total(p) / 1e9,
			 prof__states_name(m->off_states), m->duration_ns / 1e9);
		opts.colors = FLAME_COLORS_BLOCKED;
		opts.count_name = "us";
	} else if (m->mode == PROF_MODE_WALL) {
		snprintf(sub, sizeof(sub), "wall-clock time: %.3f s over %.1f s, on-CPU samples "
			 "at %u Hz and time off the CPU ([off-CPU])", prof__total(p) / 1e9,
			 m->duration_ns / 1e9, m->hz);
		opts.count_name = "us";
	} else if (m->mode == PROF_MODE_HITS) {
		snprintf(sub, sizeof(sub), "%llu probe hits over %.1f s",
			 (unsigned long long)prof__total(p), m->duration_ns / 1e9);
		opts.count_name = "hits";
	} else {
		snprintf(sub, sizeof(sub), "%llu samples at %u Hz over %.1f s",
			 (unsigned long long)prof__total(p), m->hz, m->duration_ns / 1e9);
	}
	opts.title = title;
	opts.subtitle = sub;
	err = flame__write_svg(fg, f, &opts);
cleanup:
	flame__free(fg);
	return err;
}
