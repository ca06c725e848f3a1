// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flame graph builder: merging, totals, kinds, escaping, diff, reverse,
 * narrow-frame merging, and golden SVGs for small inputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame/flamegraph.h"
#include "tap.h"
#include "core/util.h"

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

/* The fill of the first frame called name, or "" */
static const char *fill_of(const char *svg, const char *name)
{
	static char out[8];
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s</title>", name);
	p = strstr(svg, key);
	out[0] = '\0';
	if (p && (p = strstr(p, "fill=\"")))
		snprintf(out, sizeof(out), "%.7s", p + 6);
	return out;
}

/* Compare with tests/data/flame/NAME, script left out (it has tests of its
 * own in the browser); SIDESCOPE_UPDATE_GOLDEN=1 rewrites the file. */
static void golden_cmp(const char *name, char *svg);

static void golden(const char *name, char *svg)
{
	golden_cmp(name, svg);
	free(svg);
}

static void golden_cmp(const char *name, char *svg)
{
	char path[4096], *want = NULL, *a, *b;
	size_t len;

	if (!svg) {
		ok(0, "golden %s: no output", name);
		return;
	}
	a = strstr(svg, "<script><![CDATA[");
	b = a ? strstr(a, "]]></script>") : NULL;
	if (a && b)
		memmove(a + 17, b, strlen(b) + 1);
	snprintf(path, sizeof(path), "%s", fixture("flame/"));
	strncat(path, name, sizeof(path) - strlen(path) - 1);
	if (getenv("SIDESCOPE_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		ok(f && fputs(svg, f) >= 0 && fclose(f) == 0, "golden %s rewritten", name);
		return;
	}
	if (read_file(path, &want, &len, 0)) {
		ok(0, "golden %s: cannot read %s", name, path);
		return;
	}
	if (!ok(strcmp(svg, want) == 0, "golden %s", name)) {
		size_t i = 0;

		while (svg[i] && svg[i] == want[i])
			i++;
		diag("first difference at byte %zu: got '%.60s' want '%.60s'", i, svg + i, want + i);
	}
	free(want);
}

static void test_goldens(void)
{
	struct flamegraph *fg = flame__new();

	/* widths and ordering: children sorted by name whatever the input order */
	add(fg, "main;zeta;leaf", 30, false);
	add(fg, "main;alpha", 10, false);
	add(fg, "main;beta_[j];x_[k]", 15, false);
	add(fg, "main;alpha;deep;deeper", 5, false);
	add(fg, "other_[r]", 40, false);
	golden("order.svg", render(fg, &(struct flame_opts){ .width = 800, .title = "Order" }, NULL));
	golden("inverted.svg", render(fg, &(struct flame_opts){ .width = 800, .inverted = true,
			.colors = FLAME_COLORS_MONO }, NULL));
	golden("reverse.svg", render(fg, &(struct flame_opts){ .width = 800, .reverse = true,
			.colors = FLAME_COLORS_HASH }, NULL));
	flame__free(fg);

	/* escaping: markup, quotes, invalid UTF-8, control and non-characters */
	fg = flame__new();
	add(fg, "a<b>&c;\"quoted\" 'single';bad\xff\xfe byte;cut \xe2\x82;"
	    "overlong \xc0\xaf;ctl\x01\x7f;nonchar \xef\xbf\xbf;h\xc3\xa9llo \xe2\x82\xac "
	    "\xf0\x9f\x94\xa5", 1, false);
	golden("escape.svg", render(fg, &(struct flame_opts){ .width = 1200,
			.title = "<&\"'>\xff", .subtitle = "sub & title" }, NULL));
	flame__free(fg);
}

static void test_diff(void)
{
	struct flamegraph *fg = flame__new();
	char *svg;
	int i;
	const char *stacks[] = { "main;a", "main;b;c", "main;d" };
	uint64_t before[] = { 50, 30, 20 }, after[] = { 80, 30, 10 };

	/* a profile against itself: every frame neutral */
	for (i = 0; i < 3; i++) {
		add(fg, stacks[i], before[i], true);
		add(fg, stacks[i], before[i], false);
	}
	svg = render(fg, NULL, NULL);
	ok(svg && strstr(svg, "data-diff=\"1\""), "diff graph");
	ok(svg && count_str(svg, "fill=\"#fafafa\"") == 6, "self diff: all six frames neutral");
	ok(svg && strstr(svg, "<g data-n=\"30\" data-b=\"30\"><title>c</title>"),
	   "before and after counts in the frame");
	free(svg);
	flame__free(fg);

	fg = flame__new();
	for (i = 0; i < 3; i++) {
		add(fg, stacks[i], before[i], true);
		add(fg, stacks[i], after[i], false);
	}
	add(fg, "gone", 7, true);	/* only before: not in the shape */
	svg = render(fg, &(struct flame_opts){ .title = "Diff" }, NULL);
	ok(svg && strstr(fill_of(svg, "a"), "#ff") == fill_of(svg, "a"), "a grew: red");
	is_str(fill_of(svg, "a"), "#ff3c3c", "biggest change: full red");
	ok(svg && strncmp(fill_of(svg, "d"), "#", 1) == 0 && strcmp(fill_of(svg, "d") + 5, "ff") == 0,
	   "d shrank: blue");
	is_str(fill_of(svg, "c"), "#fafafa", "c unchanged: neutral");
	ok(svg && !strstr(svg, "<title>gone</title>"), "frames only in before are not drawn");
	golden("diff.svg", svg);
	flame__free(fg);

	/* normalize: 2x the samples everywhere is no change */
	fg = flame__new();
	for (i = 0; i < 3; i++) {
		add(fg, stacks[i], before[i], true);
		add(fg, stacks[i], before[i] * 2, false);
	}
	svg = render(fg, &(struct flame_opts){ .normalize = true }, NULL);
	ok(svg && count_str(svg, "fill=\"#fafafa\"") == 6, "normalized: doubled profile neutral");
	free(svg);
	svg = render(fg, NULL, NULL);
	is_str(fill_of(svg, "main"), "#ff3c3c", "not normalized: doubled profile grew");
	free(svg);
	flame__free(fg);
}

static void test_reverse_and_colors(void)
{
	struct flamegraph *fg = flame__new(), *fg2 = flame__new();
	char *svg, *svg2, c1[8];

	add(fg, "main;f;hot", 6, false);
	add(fg, "main;g;hot", 4, false);
	add(fg, "main;g", 1, false);
	svg = render(fg, &(struct flame_opts){ .reverse = true }, NULL);
	ok(svg && strstr(svg, "<g data-n=\"10\"><title>hot</title>"), "reverse: leaf merged at the bottom");
	ok(svg && strstr(svg, "<g data-n=\"1\"><title>g</title>"), "reverse: g's own sample");
	free(svg);

	/* hash colours do not depend on the rest of the graph */
	add(fg2, "other;hot", 100, false);
	svg = render(fg, &(struct flame_opts){ .colors = FLAME_COLORS_HASH }, NULL);
	svg2 = render(fg2, &(struct flame_opts){ .colors = FLAME_COLORS_HASH }, NULL);
	snprintf(c1, sizeof(c1), "%s", fill_of(svg, "hot"));
	is_str(fill_of(svg2, "hot"), c1, "hash colour of a name stable across graphs");
	ok(strcmp(fill_of(svg, "main"), c1) != 0, "other names, other colours");
	ok(!strstr(svg, "<g id=\"legend\"><rect"), "no kind legend with hash colours");
	free(svg);
	free(svg2);
	svg = render(fg, NULL, NULL);
	ok(strstr(svg, ">kernel</text>") && strstr(svg, ">JIT</text>") && strstr(svg, ">R2R</text>"),
	   "kind legend");
	free(svg);
	flame__free(fg);
	flame__free(fg2);
}

static void test_narrow(void)
{
	struct flamegraph *fg = flame__new();
	char *svg, name[64];
	size_t len;
	int i;

	add(fg, "main;big", 100000, false);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "main;small%03d;child", i);
		add(fg, name, 1, false);
	}
	svg = render(fg, &(struct flame_opts){ .width = 1200, .min_width = 0.5 }, &len);
	is_int(flame__frames_elided(fg), 600, "300 narrow frames and their children elided");
	ok(svg && strstr(svg, "<title>[300 narrow frames]</title>"), "merged into one box");
	ok(svg && strstr(svg, "600 frames narrower than 0.5 px merged"), "the file says how many");
	is_int(flame__frames_drawn(fg), 4, "all, main, big, the merged box");
	free(svg);

	/* a frame budget raises the minimum width when none was given */
	svg = render(fg, &(struct flame_opts){ .max_frames = 3 }, NULL);
	ok(flame__frames_drawn(fg) <= 3, "frame budget kept");
	free(svg);
	svg = render(fg, &(struct flame_opts){ .min_width = 0.001, .max_frames = 3 }, NULL);
	is_int(flame__frames_drawn(fg), 603, "an explicit minimum width wins over the budget");
	free(svg);
	flame__free(fg);
}

/* Wide parents move their children into the hash: counts stay exact
 * across that switch and across the hash's growth. */
static void test_wide(void)
{
	struct flamegraph *fg = flame__new();
	char name[64], *svg;
	int i, round;

	for (round = 0; round < 2; round++)
		for (i = 0; i < 5000; i++) {
			snprintf(name, sizeof(name), "main;w%d;leaf", (i * 7919) % 5000);
			add(fg, name, 1 + (i % 3), false);
			add(fg, "other", 1, false);	/* break shared prefixes */
		}
	/* per round: 5000 + (1667 * 0 + 1667 * 1 + 1666 * 2) + 5000 others */
	is_int(flame__total(fg), 2 * (5000 + 4999 + 5000), "every sample counted");
	svg = render(fg, &(struct flame_opts){ .min_width = 0.000001 }, NULL);
	is_int(flame__frames_drawn(fg), 3 + 2 * 5000, "one frame per distinct path");
	ok(svg && strstr(svg, "<g data-n=\"10000\"><title>other</title>"), "other merged");
	/* i = 0 gives w0 (count 1); i = 4999 gives w(4999 * 7919 % 5000) = w2081 (count 2) */
	ok(svg && strstr(svg, "<g data-n=\"2\"><title>w0</title>") &&
	   strstr(svg, "<g data-n=\"4\"><title>w2081</title>"), "wide children counted exactly");
	free(svg);
	flame__free(fg);
}

static void test_errors(void)
{
	struct flamegraph *fg = flame__new();
	const char *one[] = { "x" };
	FILE *full = fopen("/dev/full", "w");
	char *svg;

	svg = render(fg, NULL, NULL);
	ok(svg && strstr(svg, "</svg>") && count_str(svg, "<g data-n=") == 1,
	   "an empty graph is a valid SVG with its root only");
	free(svg);
	is_int(flame__add_stack(NULL, one, NULL, 1, 1), -EINVAL, "NULL graph");
	is_int(flame__add_stack(fg, NULL, NULL, 1, 1), -EINVAL, "NULL names");
	is_int(flame__add_stack_shared(fg, one, NULL, 1, 1, 1, false), -EINVAL,
	       "shared frames without a previous stack");
	is_int(flame__add_stack(fg, one, NULL, 1, 0), 0, "zero count accepted");
	is_int(flame__total(fg), 0, "and ignored");
	flame__add_stack(fg, one, (const enum frame_kind[]){ FRAME_JIT }, 1, 2);
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		ok(flame__write_svg(fg, full, NULL) < 0, "write error reported");
		fclose(full);
	}
	flame__free(fg);
}

int main(void)
{
	test_basic();
	test_goldens();
	test_diff();
	test_reverse_and_colors();
	test_narrow();
	test_wide();
	test_errors();
	return done_testing();
}
