// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flame graph builder: merging, totals, kinds, escaping, diff, reverse,
 * narrow-frame merging, and golden SVGs for small inputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "tap.h"
#include "util.h"

static char *render(struct flamegraph *fg, const struct flame_opts *o, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	if (flame__write_svg(fg, f, o)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void add(struct flamegraph *fg, const char *stack, uint64_t count, bool before)
{
	const char *names[64];
	char buf[1024], *save = NULL, *tok;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (tok = strtok_r(buf, ";", &save); tok && n < 64; tok = strtok_r(NULL, ";", &save))
		names[n++] = tok;
	if (before)
		flame__add_stack_before(fg, names, NULL, n, count);
	else
		flame__add_stack(fg, names, NULL, n, count);
}

static void test_basic(void)
{
	struct flamegraph *fg = flame__new();
	char *svg;

	ok(fg != NULL, "flame__new");
	add(fg, "main;work;spin", 30, false);
	add(fg, "main;work;spin", 10, false);
	add(fg, "main;idle", 60, false);
	is_int(flame__total(fg), 100, "total counts every sample");
	svg = render(fg, &(struct flame_opts){ .width = 1000 }, NULL);
	ok(svg != NULL, "svg written");
	if (svg) {
		ok(strstr(svg, "<svg ") && strstr(svg, "</svg>"), "svg element");
		is_int(count_str(svg, "<g data-n="), 5, "five frames: all, main, idle, work, spin");
		ok(strstr(svg, "<g data-n=\"40\"><title>spin</title>") != NULL, "spin merged to 40");
		ok(strstr(svg, "<g data-n=\"100\"><title>all</title>") != NULL, "root is all");
		is_int(count_str(svg, "http"), count_str(svg, "http://www.w3.org/2000/svg"),
		       "self-contained: no URL but the SVG namespace");
	}
	is_int(flame__frames_drawn(fg), 5, "frames drawn");
	free(svg);
	flame__free(fg);
	flame__free(NULL);
}

int main(void)
{
	test_basic();
	return done_testing();
}
