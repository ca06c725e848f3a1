// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope flame: folded stacks or pprof profiles in, one interactive,
 * self-contained SVG flame graph out; or a differential graph of two. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/escape.h"
#include "flame/flamegraph.h"
#include "prof/folded.h"
#include "core/log.h"
#include "core/outfile.h"
#include "prof/pprof_read.h"
#include "core/util.h"

#define HEAD_MAX 65536

static void help(void)
{
	printf(
"sidescope flame: draw stacks as an interactive SVG flame graph\n"
"\n"
"USAGE: sidescope flame [INPUT...] [-o OUT.svg] [OPTIONS]\n"
"       sidescope flame --diff BEFORE AFTER [-o OUT.svg] [--normalize]\n"
"\n"
"Reads folded stacks ('a;b;c COUNT' lines) or pprof profiles (gzip'd or\n"
"not), told apart by their content; '-' or no INPUT reads stdin, several\n"
"INPUTs are merged. The SVG is one file with its script inside: hover for\n"
"details, click to zoom, Search or Ctrl-F for a regular expression; zoom\n"
"and search are kept in the URL. Frames narrower than --min-width are\n"
"merged into one box per parent to keep huge profiles light.\n"
"With --diff, the graph has AFTER's shape and each frame is red if it grew\n"
"since BEFORE, blue if it shrank, stronger for bigger changes.\n"
"\n"
"OPTIONS:\n"
"  -o, --output FILE     write the SVG to FILE (default: stdout)\n"
"  -t, --title TEXT      title (default: CPU profile)\n"
"      --subtitle TEXT   a second line under the title\n"
"      --width PX        image width in pixels (default: 1200)\n"
"      --min-width PX    merge frames narrower than PX pixels (default: 0.1,\n"
"                        raised as needed to draw at most 30,000 frames)\n"
"      --inverted        icicle graph: the root at the top\n"
"      --reverse         merge stacks by their leaf: callers above callees\n"
"      --colors SCHEME   kind (by frame kind, default), hash (stable colour\n"
"                        per name across graphs) or mono\n"
"      --unit NAME       what counts measure (default: samples)\n"
"      --diff            two INPUTs, BEFORE and AFTER: a differential graph\n"
"      --normalize       with --diff: scale BEFORE to AFTER's total first\n"
"  -v, --verbose         say what was read\n"
"  -h, --help            print this help\n"
"\n"
"EXAMPLES:\n"
"  sidescope flame cpu.folded -o cpu.svg     # folded stacks to a flame graph\n"
"  sidescope flame cpu.pb.gz -o cpu.svg      # from a pprof profile\n"
"  cat *.folded | sidescope flame > all.svg  # merge many captures\n"
"  sidescope flame --reverse cpu.folded      # who calls the hot leaves\n"
"  sidescope flame --diff old.pb.gz new.pb.gz --normalize -o diff.svg\n");
}

struct sink {
	struct flamegraph *fg;
	bool before;
};

static int add_cb(void *ctx, const char *const *names, const enum frame_kind *kinds,
		  size_t depth, uint64_t count, size_t same)
{
	struct sink *s = ctx;

	return flame__add_stack_shared(s->fg, names, kinds, depth, count, same, s->before);
}

/* Text unless it has bytes no folded file has; any protobuf has some. */
static bool looks_like_text(const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] < 0x20 && b[i] != '\n' && b[i] != '\r' && b[i] != '\t')
			return false;
	return true;
}

static int read_rest(FILE *f, char **buf, size_t *len, size_t *cap)
{
	size_t got;

	for (;;) {
		if (*len + 1 >= *cap) {
			char *b = realloc(*buf, *cap * 2);

			if (!b)
				return -ENOMEM;
			*buf = b;
			*cap *= 2;
		}
		got = fread(*buf + *len, 1, *cap - 1 - *len, f);
		*len += got;
		if (!got)
			return ferror(f) ? -EIO : 0;
	}
}

/* Read one input into fg; return 0 or 1 after saying what went wrong. */
static int read_input(const char *path, struct sink *s, const char **unit)
{
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL, *raw = NULL;
	size_t len = 0, cap = HEAD_MAX + 1, raw_len;
	struct folded_stats fst = { 0 };
	struct pprof_read_stats pst = { 0 };
	bool folded;
	int err = 0, ret = 1;

	if (!f) {
		p_err("cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto fail;
	}
	while (len < HEAD_MAX) {
		size_t got = fread(buf + len, 1, HEAD_MAX - len, f);

		if (!got)
			break;
		len += got;
	}
	if (ferror(f)) {
		err = -EIO;
		goto fail;
	}
	if (pprof__is_gzip(buf, len)) {
		err = read_rest(f, &buf, &len, &cap);
		if (err)
			goto fail;
		err = pprof__gunzip(buf, len, &raw, &raw_len, 0);
		if (err) {
			p_err("cannot decompress %s: %s", name,
			      err == -EINVAL ? "corrupt gzip data" : strerror(-err));
			goto cleanup;
		}
		folded = looks_like_text((unsigned char *)raw,
					 raw_len < HEAD_MAX ? raw_len : HEAD_MAX);
		if (folded)
			err = folded__parse(raw, raw_len, 0, add_cb, s, &fst);
		else
			err = pprof__read(raw, raw_len, NULL, add_cb, s, &pst);
	} else if ((folded = looks_like_text((unsigned char *)buf, len))) {
		err = folded__read(f, buf, len, 0, add_cb, s, &fst);
	} else {
		err = read_rest(f, &buf, &len, &cap);
		if (!err)
			err = pprof__read(buf, len, NULL, add_cb, s, &pst);
	}
	if (err == -EINVAL && !folded) {
		p_err("cannot read %s: neither folded stacks nor a pprof profile", name);
		goto cleanup;
	}
	if (err)
		goto fail;
	if (folded) {
		p_debug("%s: folded stacks, %" PRIu64 " lines, %" PRIu64 " stacks, %" PRIu64
			" samples", name, fst.lines, fst.stacks, fst.samples);
		if (fst.bad)
			p_warn("skipped %" PRIu64 " malformed line%s in %s (first: line %" PRIu64
			       "; want 'frame;frame;... COUNT')", fst.bad, fst.bad == 1 ? "" : "s",
			       name, fst.first_bad);
	} else {
		char vt[ESCAPE_MAX(sizeof(pst.value_type)) + 1];

		/* a profile's strings come from whoever wrote it */
		escape__str(vt, sizeof(vt), pst.value_type,
			    strnlen(pst.value_type, sizeof(pst.value_type)), 0, 0);
		p_debug("%s: pprof profile, %" PRIu64 " samples, value '%s', total %" PRIu64,
			name, pst.samples, vt, pst.total);
		if (pst.bad)
			p_warn("skipped %" PRIu64 " sample%s of %s with unknown locations or "
			       "negative values", pst.bad, pst.bad == 1 ? "" : "s", name);
		if (!*unit && strcmp(pst.value_type, "samples") != 0 && pst.value_unit[0]) {
			static char u[64];

			snprintf(u, sizeof(u), "%s", pst.value_unit);
			*unit = u;
		}
	}
	ret = 0;
	goto cleanup;
fail:
	p_err("cannot read %s: %s", name, strerror(-err));
cleanup:
	free(buf);
	free(raw);
	if (f != stdin)
		fclose(f);
	return ret;
}

static int parse_width(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 10000)
		return -EINVAL;
	*out = v;
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	enum { OPT_SUBTITLE = 256, OPT_WIDTH, OPT_MINW, OPT_INV, OPT_REV, OPT_COLORS, OPT_DIFF,
	       OPT_NORM, OPT_UNIT };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "min-width", required_argument, NULL, OPT_MINW },
		{ "inverted", no_argument, NULL, OPT_INV },
		{ "reverse", no_argument, NULL, OPT_REV },
		{ "colors", required_argument, NULL, OPT_COLORS },
		{ "colours", required_argument, NULL, OPT_COLORS },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "normalize", no_argument, NULL, OPT_NORM },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct flame_opts fo = { .colors = FLAME_COLORS_KIND };
	const char *output = "-", *unit = NULL;
	struct flamegraph *fg = NULL;
	struct outfile *out = NULL;
	bool diff = false;
	uint64_t v;
	int c, i, err, ret = 1;

	while ((c = getopt_long(argc, argv, "o:t:w:vh", opts, NULL)) != -1) {
		if (c == 'w')
			return usage_error("-w means wide in sidescope; the image width is "
					   "--width %s", optarg);
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 't':
			fo.title = optarg;
			break;
		case OPT_SUBTITLE:
			fo.subtitle = optarg;
			break;
		case OPT_WIDTH:
			if (parse_u64(optarg, 200, 100000, &v))
				return usage_error("invalid width '%s' (200 to 100000 pixels)", optarg);
			fo.width = v;
			break;
		case OPT_MINW:
			if (parse_width(optarg, &fo.min_width))
				return usage_error("invalid minimum width '%s' (0 to 10000 pixels)",
						   optarg);
			if (fo.min_width == 0)
				fo.min_width = 1e-9;	/* 0 means the default in flame_opts */
			break;
		case OPT_INV:
			fo.inverted = true;
			break;
		case OPT_REV:
			fo.reverse = true;
			break;
		case OPT_COLORS:
			if (strcmp(optarg, "kind") == 0)
				fo.colors = FLAME_COLORS_KIND;
			else if (strcmp(optarg, "hash") == 0)
				fo.colors = FLAME_COLORS_HASH;
			else if (strcmp(optarg, "mono") == 0)
				fo.colors = FLAME_COLORS_MONO;
			else
				return usage_error("unknown colour scheme '%s' (kind, hash or mono)",
						   optarg);
			break;
		case OPT_UNIT:
			unit = optarg;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		case OPT_NORM:
			fo.normalize = true;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'h':
			help();
			return 0;
		default:
			return usage_hint();
		}
	}
	if (diff && argc - optind != 2)
		return usage_error("--diff needs two inputs, BEFORE and AFTER");
	if (fo.normalize && !diff)
		return usage_error("--normalize only applies to --diff");
	if (optind == argc && isatty(STDIN_FILENO))
		return usage_error("no input: name a file, or pipe stacks into stdin");

	fg = flame__new();
	if (!fg) {
		p_err("out of memory");
		goto cleanup;
	}
	if (optind == argc) {
		if (read_input("-", &(struct sink){ fg, false }, &unit))
			goto cleanup;
	}
	for (i = optind; i < argc; i++) {
		struct sink s = { fg, diff && i == optind };

		if (read_input(argv[i], &s, &unit))
			goto cleanup;
	}
	if (!flame__total(fg)) {
		p_err("no samples in the input%s", diff ? " AFTER" : "");
		goto cleanup;
	}
	if (diff && !flame__total_before(fg))
		p_warn("no samples in BEFORE: every frame grew");
	fo.count_name = unit;

	/* a device named on purpose (/dev/null, /dev/stdout) is written in
	 * place; links, FIFOs and sockets are refused (outfile.h) */
	out = outfile__open(output);
	if (!out) {
		p_err("cannot write %s: %s", output, outfile__strerror(errno));
		goto cleanup;
	}
	err = flame__write_svg(fg, outfile__fp(out), &fo);
	if (err) {
		p_err("cannot write %s: %s", output, strerror(-err));
		goto cleanup;
	}
	err = outfile__commit(out);
	out = NULL;
	if (err) {
		p_err("cannot write %s: %s", output, outfile__strerror(err));
		goto cleanup;
	}
	p_debug("%zu frames drawn, %zu narrower than the minimum width merged",
		flame__frames_drawn(fg), flame__frames_elided(fg));
	ret = 0;
cleanup:
	outfile__abort(out);
	flame__free(fg);
	return ret;
}
