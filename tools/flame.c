// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope flame: folded stacks or pprof profiles in, one interactive,
 * self-contained SVG flame graph out; or a differential graph of two. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/cli.h"
#include "core/escape.h"
#include "flame/flamegraph.h"
#include "prof/folded.h"
#include "core/log.h"
#include "core/outfile.h"
#include "prof/pprof_read.h"
#include "core/util.h"

#define HEAD_MAX 65536

enum {
	OPT_SUBTITLE = 256, OPT_WIDTH, OPT_MINW, OPT_INV, OPT_REV, OPT_COLORS, OPT_DIFF, OPT_NORM,
	OPT_UNIT,
};

/* The command line. */
struct env {
	struct flame_opts fo;	/* count_name set once the inputs are read */
	const char *output;	/* "-": stdout */
	const char *unit;	/* --unit, else a pprof profile's unit, else NULL */
	bool diff;
	char **inputs;		/* none: stdin */
	int n_inputs;
};

static const struct cli_opt opts[] = {
	{ 'o', "output", "FILE", "write the SVG to FILE (default: stdout)",
	  CLI_STORE_ARG(struct env, output) },
	{ 't', "title", "TEXT", "title (default: CPU profile)",
	  CLI_STORE_ARG(struct env, fo.title) },
	{ OPT_SUBTITLE, "subtitle", "TEXT", "a second line under the title",
	  CLI_STORE_ARG(struct env, fo.subtitle) },
	{ OPT_WIDTH, "width", "PX", "image width in pixels (default: 1200)" },
	{ OPT_MINW, "min-width", "PX", "merge frames narrower than PX pixels (default: 0.1,\n"
				       "raised as needed to draw at most 30,000 frames)" },
	{ OPT_INV, "inverted", NULL, "icicle graph: the root at the top",
	  CLI_STORE_TRUE(struct env, fo.inverted) },
	{ OPT_REV, "reverse", NULL, "merge stacks by their leaf: callers above callees",
	  CLI_STORE_TRUE(struct env, fo.reverse) },
	{ OPT_COLORS, "colors", "SCHEME", "kind (by frame kind, default), hash (stable colour\n"
					  "per name across graphs), mono, or blocked (blues\n"
					  "by kind, for off-CPU time)" },
	{ OPT_COLORS, "colours", "SCHEME", NULL },
	{ OPT_UNIT, "unit", "NAME", "what counts measure (default: samples)",
	  CLI_STORE_ARG(struct env, unit) },
	{ OPT_DIFF, "diff", NULL, "two INPUTs, BEFORE and AFTER: a differential graph",
	  CLI_STORE_TRUE(struct env, diff) },
	{ OPT_NORM, "normalize", NULL, "with --diff: scale BEFORE to AFTER's total first",
	  CLI_STORE_TRUE(struct env, fo.normalize) },
	{ 'w', NULL, "PX", NULL },	/* refused: -w is "wide" elsewhere */
	CLI_OPTS_END("say what was read")
};

static const struct cli cli = {
	.text =
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
"\n",
	.opts = opts,
	.tail =
"\n"
"EXAMPLES:\n"
"  sidescope flame cpu.folded -o cpu.svg     # folded stacks to a flame graph\n"
"  sidescope flame cpu.pb.gz -o cpu.svg      # from a pprof profile\n"
"  cat *.folded | sidescope flame > all.svg  # merge many captures\n"
"  sidescope flame --reverse cpu.folded      # who calls the hot leaves\n"
"  sidescope flame --diff old.pb.gz new.pb.gz --normalize -o diff.svg\n",
	.col = 24,
};

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

/* cli_opt_fn: the options with a value to check, and -w refused. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;
	struct flame_opts *fo = &env->fo;
	uint64_t v;

	switch (key) {
	case 'w':
		return usage_error("-w means wide in sidescope; the image width is "
				   "--width %s", arg);
	case OPT_WIDTH:
		if (parse_u64(arg, 200, 100000, &v))
			return usage_error("invalid width '%s' (200 to 100000 pixels)", arg);
		fo->width = v;
		break;
	case OPT_MINW:
		if (parse_width(arg, &fo->min_width))
			return usage_error("invalid minimum width '%s' (0 to 10000 pixels)", arg);
		if (fo->min_width == 0)
			fo->min_width = 1e-9;	/* 0 means the default in flame_opts */
		break;
	case OPT_COLORS:
		if (strcmp(arg, "kind") == 0)
			fo->colors = FLAME_COLORS_KIND;
		else if (strcmp(arg, "hash") == 0)
			fo->colors = FLAME_COLORS_HASH;
		else if (strcmp(arg, "mono") == 0)
			fo->colors = FLAME_COLORS_MONO;
		else if (strcmp(arg, "blocked") == 0)
			fo->colors = FLAME_COLORS_BLOCKED;
		else
			return usage_error("unknown colour scheme '%s' (kind, hash, mono or blocked)",
					   arg);
		break;
	}
	return 0;
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

/* What one input held, for the messages. */
struct input {
	const char *name;	/* "stdin" or the path */
	bool folded;		/* folded stacks, else a pprof profile */
	struct folded_stats fst;
	struct pprof_read_stats pst;
};

/* Parse the input whose first LEN bytes are in *BUF (of *CAP bytes; more
 * of it may be read there) into S, told apart by content: gzip'd or not,
 * folded text or pprof. Return 0 or a negative errno, 1 after saying why
 * the input cannot be read. */
static int parse_input(FILE *f, char **buf, size_t *len, size_t *cap, struct sink *s,
		       struct input *in)
{
	char *raw = NULL;
	size_t raw_len;
	int err;

	if (pprof__is_gzip(*buf, *len)) {
		err = read_rest(f, buf, len, cap);
		if (err)
			return err;
		err = pprof__gunzip(*buf, *len, &raw, &raw_len, 0);
		if (err) {
			p_err("cannot decompress %s: %s", in->name,
			      err == -EINVAL ? "corrupt gzip data" : strerror(-err));
			free(raw);
			return 1;
		}
		in->folded = looks_like_text((unsigned char *)raw,
					     raw_len < HEAD_MAX ? raw_len : HEAD_MAX);
		if (in->folded)
			err = folded__parse(raw, raw_len, 0, add_cb, s, &in->fst);
		else
			err = pprof__read(raw, raw_len, NULL, add_cb, s, &in->pst);
		free(raw);
	} else if ((in->folded = looks_like_text((unsigned char *)*buf, *len))) {
		err = folded__read(f, *buf, *len, 0, add_cb, s, &in->fst);
	} else {
		err = read_rest(f, buf, len, cap);
		if (!err)
			err = pprof__read(*buf, *len, NULL, add_cb, s, &in->pst);
	}
	if (err == -EINVAL && !in->folded) {
		p_err("cannot read %s: neither folded stacks nor a pprof profile", in->name);
		return 1;
	}
	return err;
}

/* Say what was read and what was skipped; a pprof profile's unit becomes
 * the graph's unless the command line or an earlier input named one. */
static void report_input(const struct input *in, const char **unit)
{
	const struct folded_stats *fst = &in->fst;
	const struct pprof_read_stats *pst = &in->pst;
	char vt[ESCAPE_MAX(sizeof(pst->value_type)) + 1];
	static char u[64];

	if (in->folded) {
		p_debug("%s: folded stacks, %" PRIu64 " lines, %" PRIu64 " stacks, %" PRIu64
			" samples", in->name, fst->lines, fst->stacks, fst->samples);
		if (fst->bad)
			p_warn("skipped %" PRIu64 " malformed line%s in %s (first: line %" PRIu64
			       "; want 'frame;frame;... COUNT')", fst->bad, fst->bad == 1 ? "" : "s",
			       in->name, fst->first_bad);
		return;
	}
	/* a profile's strings come from whoever wrote it */
	escape__str(vt, sizeof(vt), pst->value_type,
		    strnlen(pst->value_type, sizeof(pst->value_type)), 0, 0);
	p_debug("%s: pprof profile, %" PRIu64 " samples, value '%s', total %" PRIu64,
		in->name, pst->samples, vt, pst->total);
	if (pst->bad)
		p_warn("skipped %" PRIu64 " sample%s of %s with unknown locations or "
		       "negative values", pst->bad, pst->bad == 1 ? "" : "s", in->name);
	if (!*unit && strcmp(pst->value_type, "samples") != 0 && pst->value_unit[0]) {
		snprintf(u, sizeof(u), "%s", pst->value_unit);
		*unit = u;
	}
}

/* Read one input into S's graph; return 0 or 1 after saying what went wrong. */
static int read_input(const char *path, struct sink *s, const char **unit)
{
	struct input in = { .name = strcmp(path, "-") == 0 ? "stdin" : path };
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = HEAD_MAX + 1;
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
	err = parse_input(f, &buf, &len, &cap, s, &in);
	if (err == 1)
		goto cleanup;
	if (err)
		goto fail;
	report_input(&in, unit);
	ret = 0;
	goto cleanup;
fail:
	p_err("cannot read %s: %s", in.name, strerror(-err));
cleanup:
	free(buf);
	if (f != stdin)
		fclose(f);
	return ret;
}

/* The options and the INPUTs into ENV: -1 to go on, else
 * the exit status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){ .fo = { .colors = FLAME_COLORS_KIND }, .output = "-" };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	env->inputs = argv + optind;
	env->n_inputs = argc - optind;
	if (env->diff && env->n_inputs != 2)
		return usage_error("--diff needs two inputs, BEFORE and AFTER");
	if (env->fo.normalize && !env->diff)
		return usage_error("--normalize only applies to --diff");
	if (!env->n_inputs && isatty(STDIN_FILENO))
		return usage_error("no input: name a file, or pipe stacks into stdin");
	return -1;
}

/* Every input into FG (with --diff the first is BEFORE). Return 0, or 1
 * after saying what went wrong. */
static int read_inputs(struct env *env, struct flamegraph *fg)
{
	int i;

	if (!env->n_inputs && read_input("-", &(struct sink){ fg, false }, &env->unit))
		return 1;
	for (i = 0; i < env->n_inputs; i++) {
		struct sink s = { fg, env->diff && i == 0 };

		if (read_input(env->inputs[i], &s, &env->unit))
			return 1;
	}
	if (!flame__total(fg)) {
		p_err("no samples in the input%s", env->diff ? " AFTER" : "");
		return 1;
	}
	if (env->diff && !flame__total_before(fg))
		p_warn("no samples in BEFORE: every frame grew");
	return 0;
}

/* What write_graph writes: the graph and how to draw it. */
struct drawing {
	struct flamegraph *fg;
	const struct flame_opts *fo;
};

/* outfile_write_fn: the SVG. */
static int draw(void *ctx, FILE *f)
{
	const struct drawing *d = ctx;

	return flame__write_svg(d->fg, f, d->fo);
}

/* The SVG of FG to ENV's output, replaced atomically. Return 0, or 1 after
 * saying what went wrong. */
static int write_graph(const struct env *env, struct flamegraph *fg)
{
	struct drawing d = { .fg = fg, .fo = &env->fo };
	struct outfile *out;

	/* a device named on purpose (/dev/null, /dev/stdout) is written in
	 * place; links, FIFOs and sockets are refused (outfile.h) */
	out = outfile__open_or_say(env->output);
	if (!out || outfile__finish(out, draw, &d))
		return 1;
	p_debug("%zu frames drawn, %zu narrower than the minimum width merged",
		flame__frames_drawn(fg), flame__frames_elided(fg));
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	struct flamegraph *fg;
	struct env env;
	int ret;

	ret = parse_args(argc, argv, &env);
	if (ret >= 0)
		return ret;
	fg = flame__new();
	if (!fg) {
		p_err("out of memory");
		return 1;
	}
	ret = read_inputs(&env, fg);
	if (!ret) {
		env.fo.count_name = env.unit;
		ret = write_graph(&env, fg);
	}
	flame__free(fg);
	return ret;
}
