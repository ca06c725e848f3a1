// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The flame graph as one self-contained SVG: a header with the geometry
 * the inline script reads (data-*), the title, buttons and notes, the
 * legend, then one <g> per drawn frame in the layout's preorder (its count
 * in data-n, its "before" count in data-b, a merged box's count of
 * subtrees in data-m), then the script (flamegraph_js.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "flame/flame_int.h"
#include "flame/flamegraph_js.h"

#define FRAME_H 16
#define PAD 10
#define TOP 64		/* title, subtitle, buttons */
#define BOTTOM 52	/* details line, notes, legend */
#define CHAR_W 6.7	/* monospace 11px, a little generous */

/* What every part of the SVG reads. */
struct svg {
	FILE *f;
	const struct flamegraph *fg;	/* the tree drawn (reversed for --reverse) */
	const struct flame_opts *o;
	const struct layout *L;
	struct flame_diff diff;
	unsigned int width, height;
	const char *count_name;
};

/* The colour hash of a name. FLAME_COLORS_HASH promises a name the same
 * colour in every graph, and every scheme varies names around their base
 * colour with it: this function is part of the output, unlike the hash of
 * the tables (core/hash.h), and must not change. */
static uint64_t color_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x5eed ^ (n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ (w * 0xbf58476d1ce4e5b9ull)) * 0x94d049bb133111ebull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ (w * 0xbf58476d1ce4e5b9ull)) * 0x94d049bb133111ebull;
	h ^= h >> 32;
	return h;
}

/* Write s as XML character data: markup characters escaped, bytes that are
 * not valid UTF-8 and characters XML forbids replaced by U+FFFD. With
 * max_chars, stop after that many characters. Return characters written. */
static size_t xml_text(FILE *f, const char *str, size_t len, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, chars = 0, l;

	while (i < len && chars < max_chars) {
		unsigned char c = s[i];

		chars++;
		if (c < 0x80) {
			i++;
			switch (c) {
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '&': fputs("&amp;", f); break;
			case '"': fputs("&quot;", f); break;
			case '\'': fputs("&apos;", f); break;
			default:
				if (c < 0x20 || c == 0x7f)
					fputs("\xef\xbf\xbd", f);
				else
					fputc(c, f);
			}
			continue;
		}
		l = utf8_seq_len(s + i, len - i);
		/* U+FFFE and U+FFFF are not XML characters */
		if (!l || (l == 3 && s[i] == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)) {
			fputs("\xef\xbf\xbd", f);
			i += l ? l : 1;
			continue;
		}
		fwrite(s + i, 1, l, f);
		i += l;
	}
	return chars;
}

/* Characters in s as xml_text counts them. */
static size_t text_chars(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, chars = 0, l;

	while (i < len) {
		l = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, len - i);
		i += l ? l : 1;
		chars++;
	}
	return chars;
}

static void hsl(double h, double s, double l, unsigned char rgb[3])
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360.0) / 60.0;
	double x = c * (1 - fabs(fmod(hp, 2.0) - 1)), m = l - c / 2, r = 0, g = 0, b = 0;

	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	rgb[0] = (unsigned char)lround((r + m) * 255);
	rgb[1] = (unsigned char)lround((g + m) * 255);
	rgb[2] = (unsigned char)lround((b + m) * 255);
}

/* Base hue, saturation and lightness of each kind; names vary around it. */
static const struct {
	const char *label;
	double h, s, l;
} kind_style[FRAME_KIND_MAX] = {
	[FRAME_UNKNOWN] = { "unknown", 0, 0, 0.72 },
	[FRAME_NATIVE] = { "native", 48, 0.85, 0.60 },
	[FRAME_KERNEL] = { "kernel", 22, 0.85, 0.58 },
	[FRAME_JIT] = { "JIT", 110, 0.55, 0.55 },
	[FRAME_R2R] = { "R2R", 185, 0.55, 0.55 },
};

/* The blocked-time palette: blues, a hue per frame kind. */
static void blocked_color(enum frame_kind kind, double jitter, unsigned char rgb[3])
{
	static const double hue[FRAME_KIND_MAX] = { 220, 205, 235, 190, 250 };

	hsl(hue[kind < FRAME_KIND_MAX ? kind : 0] + (jitter - 0.5) * 10, 0.55,
	    0.62 + (jitter - 0.5) * 0.12, rgb);
}

static void frame_color(const struct svg *w, const struct drawn *d, unsigned char rgb[3])
{
	const struct flamegraph *fg = w->fg;
	const struct fname *nm = d->node != FLAME_NONE && d->node ? &fg->names[fg->nodes[d->node].name]
								  : NULL;
	uint64_t h = nm ? color_hash(fg->arena + nm->off, nm->len) : 0;
	double jitter = (double)(h & 0xffff) / 65535.0;	/* 0..1, stable per name */

	if (w->diff.on) {
		flame__diff_color(&w->diff, d, rgb);
		return;
	}
	if (!nm) {
		/* the root and merged boxes */
		rgb[0] = rgb[1] = rgb[2] = d->node == 0 ? 200 : 180;
		return;
	}
	switch (w->o->colors) {
	case FLAME_COLORS_HASH:
		hsl((double)(h % 360), 0.65, 0.62 + 0.1 * jitter, rgb);
		break;
	case FLAME_COLORS_MONO:
		hsl(210, 0.35, 0.62 + 0.14 * jitter, rgb);
		break;
	case FLAME_COLORS_BLOCKED:
		blocked_color(nm->kind, jitter, rgb);
		break;
	default: {
		double hh = kind_style[nm->kind].h + (jitter - 0.5) * 16;

		hsl(hh < 0 ? hh + 360 : hh, kind_style[nm->kind].s,
		    kind_style[nm->kind].l + (jitter - 0.5) * 0.12, rgb);
	}
	}
}

static const char svg_style[] =
	"text{font-family:monospace;font-size:11px;fill:#000}\n"
	"#title{font-size:17px;text-anchor:middle}\n"
	"#subtitle{font-size:12px;text-anchor:middle;fill:#444}\n"
	"#frames g{cursor:pointer}\n"
	"#frames text{pointer-events:none}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:0.6}\n"
	"#frames .hide{display:none}\n"
	"#frames .anc{opacity:0.55}\n"
	".btn{cursor:pointer;fill:#224;text-decoration:underline}\n"
	".off{display:none}\n"
	"#details,#matched,#note{fill:#333}\n";

static void write_num(FILE *f, double v)
{
	/* short and locale-proof: at most 2 decimals, no trailing zeros */
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%.2f", v);

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	if (strcmp(buf, "-0") == 0)
		strcpy(buf, "0");
	fputs(buf, f);
}

/* The name drawn for D: "all" for the root, a count for a merged box. */
static const char *frame_name(const struct svg *w, const struct drawn *d, char *buf,
			      size_t size, size_t *len)
{
	const struct fname *nm;

	if (d->node == 0) {
		*len = 3;
		return "all";
	}
	if (d->node == FLAME_NONE) {
		*len = (size_t)snprintf(buf, size, "[%u narrow frames]", d->merged);
		return buf;
	}
	nm = &w->fg->names[w->fg->nodes[d->node].name];
	*len = nm->len;
	return w->fg->arena + nm->off;
}

static void write_frame(const struct svg *w, const struct drawn *d)
{
	FILE *f = w->f;
	double x = PAD + (double)d->x * w->L->scale, wd = (double)d->after * w->L->scale;
	double y = w->o->inverted ? TOP + (double)d->depth * FRAME_H
				  : (double)w->height - BOTTOM - (double)(d->depth + 1) * FRAME_H;
	unsigned char rgb[3];
	char mbuf[64];
	const char *name;
	size_t len, chars, fit;

	name = frame_name(w, d, mbuf, sizeof(mbuf), &len);
	frame_color(w, d, rgb);
	fprintf(f, "<g data-n=\"%" PRIu64 "\"", d->after);
	if (w->diff.on)
		fprintf(f, " data-b=\"%" PRIu64 "\"", d->before);
	if (d->node == FLAME_NONE)
		fprintf(f, " data-m=\"%u\"", d->merged);
	fputs("><title>", f);
	xml_text(f, name, len, SIZE_MAX);
	fputs("</title><rect x=\"", f);
	write_num(f, x);
	fputs("\" y=\"", f);
	write_num(f, y);
	fputs("\" width=\"", f);
	write_num(f, wd);
	fprintf(f, "\" height=\"%d\" fill=\"#%02x%02x%02x\"/>", FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fit = wd > 6 ? (size_t)((wd - 6) / CHAR_W) : 0;
	chars = text_chars(name, len);
	/* the whole name, or at least two characters and ".." */
	if (chars <= fit || fit >= 4) {
		fputs("<text x=\"", f);
		write_num(f, x + 3);
		fputs("\" y=\"", f);
		write_num(f, y + FRAME_H - 4.5);
		fputs("\">", f);
		if (chars <= fit) {
			xml_text(f, name, len, SIZE_MAX);
		} else {
			xml_text(f, name, len, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

static void write_legend(const struct svg *w)
{
	FILE *f = w->f;
	unsigned int width = w->width, height = w->height;
	double x = width - PAD;
	int i;

	fputs("<g id=\"legend\">", f);
	if (w->diff.on) {
		fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"10\" height=\"10\" fill=\"#ff3c3c\"/>"
			"<text x=\"%u\" y=\"%u\">grew</text>"
			"<rect x=\"%u\" y=\"%u\" width=\"10\" height=\"10\" fill=\"#3c3cff\"/>"
			"<text x=\"%u\" y=\"%u\">shrank</text>",
			width - 140, height - 20, width - 126, height - 11,
			width - 80, height - 20, width - 66, height - 11);
	} else if (w->o->colors == FLAME_COLORS_KIND || w->o->colors == FLAME_COLORS_BLOCKED) {
		for (i = FRAME_KIND_MAX - 1; i >= 0; i--) {
			unsigned char rgb[3];
			const char *label = kind_style[i].label;

			x -= 14 + CHAR_W * strlen(label) + 10;
			if (w->o->colors == FLAME_COLORS_BLOCKED)
				blocked_color((enum frame_kind)i, 0.5, rgb);
			else
				hsl(kind_style[i].h, kind_style[i].s, kind_style[i].l, rgb);
			fprintf(f, "<rect x=\"%.0f\" y=\"%u\" width=\"10\" height=\"10\" "
				"fill=\"#%02x%02x%02x\"/><text x=\"%.0f\" y=\"%u\">%s</text>",
				x, height - 20, rgb[0], rgb[1], rgb[2], x + 14, height - 11, label);
		}
	}
	fputs("</g>\n", f);
}

/* The <svg> element with the geometry for the script, and the comment
 * that says what was merged. */
static void write_prologue(const struct svg *w)
{
	FILE *f = w->f;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-fh=\"%d\" data-top=\"%d\" "
		"data-bottom=\"%d\" data-pad=\"%d\" data-cw=\"%.1f\" data-inverted=\"%d\" "
		"data-diff=\"%d\" data-bscale=\"%.17g\" data-unit=\"",
		w->width, w->height, w->width, w->height, FRAME_H, TOP, BOTTOM, PAD, CHAR_W,
		w->o->inverted ? 1 : 0, w->diff.on ? 1 : 0, w->diff.before_scale);
	xml_text(f, w->count_name, strlen(w->count_name), SIZE_MAX);
	fprintf(f, "\">\n<!-- sidescope flame graph: %zu frames drawn, %zu frames narrower than ",
		w->L->n, w->L->elided);
	write_num(f, w->L->min_width);
	fputs(" px merged -->\n", f);
	fprintf(f, "<style>\n%s</style>\n", svg_style);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n",
		w->diff.on ? "#f4f4f4" : "#fbf8f0");
}

/* Title, subtitle, the buttons, the details line and the note of totals. */
static void write_texts(const struct svg *w)
{
	FILE *f = w->f;
	const struct flame_opts *o = w->o;
	unsigned int width = w->width, height = w->height;

	fprintf(f, "<text id=\"title\" x=\"%u\" y=\"24\">", width / 2);
	if (o->title)
		xml_text(f, o->title, strlen(o->title), SIZE_MAX);
	else
		fputs(w->diff.on ? "Differential flame graph" : "CPU profile", f);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%u\" y=\"42\">", width / 2);
		xml_text(f, o->subtitle, strlen(o->subtitle), SIZE_MAX);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"reset\" class=\"btn off\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"24\" text-anchor=\"end\">"
		"Search</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD, width - PAD, width - PAD, height - BOTTOM + 16, PAD, height - BOTTOM + 16);
	fprintf(f, "<text id=\"note\" x=\"%d\" y=\"%u\">", PAD, height - 11);
	fprintf(f, "%" PRIu64 " ", w->fg->nodes[0].after);
	xml_text(f, w->count_name, strlen(w->count_name), SIZE_MAX);
	if (w->diff.on)
		fprintf(f, " (before: %" PRIu64 "%s)", w->fg->nodes[0].before,
			o->normalize ? ", normalized" : "");
	if (w->L->elided) {
		fprintf(f, "; %zu frames narrower than ", w->L->elided);
		write_num(f, w->L->min_width);
		fputs(" px merged", f);
	}
	fputs("</text>\n", f);
}

int flame__write_svg(struct flamegraph *fg_in, FILE *f, const struct flame_opts *opts)
{
	static const struct flame_opts defaults = { 0 };
	struct svg w = { .f = f, .o = opts ? opts : &defaults };
	struct flamegraph *rv = NULL, *fg = fg_in;
	struct layout L = { 0 };
	size_t i;
	int err;

	if (!fg || !f)
		return -EINVAL;
	w.width = w.o->width ? w.o->width : 1200;
	if (w.width < 2 * PAD + 10)
		w.width = 2 * PAD + 10;
	w.count_name = w.o->count_name ? w.o->count_name : "samples";
	if (w.o->reverse) {
		rv = flame__reversed(fg);
		if (!rv)
			return -ENOMEM;
		fg = rv;
	}
	err = flame__layout(fg, w.o, w.width - 2 * PAD, &L);
	if (err)
		goto cleanup;
	fg_in->drawn = L.n;
	fg_in->elided = L.elided;
	w.fg = fg;
	w.L = &L;
	flame__diff_prepare(fg, &L, w.o->normalize, &w.diff);
	w.height = TOP + (L.max_depth + 1) * FRAME_H + BOTTOM;

	write_prologue(&w);
	write_texts(&w);
	write_legend(&w);
	fputs("<g id=\"frames\">\n", f);
	for (i = 0; i < L.n; i++)
		write_frame(&w, &L.v[i]);
	fputs("</g>\n<script><![CDATA[\n", f);
	fputs(flamegraph_js, f);
	fputs("]]></script>\n</svg>\n", f);
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
cleanup:
	flame__layout_free(&L);
	flame__free(rv);
	return err;
}
