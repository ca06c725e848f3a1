// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope dotnet-methods: the methods of a .NET ReadyToRun image with
 * their RVA, file offset (what a uprobe attaches to) and code size, read
 * from the file itself. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/cli.h"
#include "core/err.h"
#include "core/escape.h"
#include "core/json.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/proc.h"
#include "core/util.h"
#include "dotnet/r2r.h"

enum { OPT_JSON = 256 };

struct env {
	const char *file;	/* the image, as given */
	const char *pattern;	/* NULL: every method */
	const char *out_path;	/* "-": stdout */
	long pid;		/* 0: FILE is a path here */
	bool json, wide;
};

static const struct cli_opt opts[] = {
	{ 'p', "pid", "PID", "FILE is a path in the container of process PID\n"
			     "(read through /proc/PID/root)" },
	{ 'w', "wide", NULL, "do not cut names at 80 columns", CLI_STORE_TRUE(struct env, wide) },
	{ OPT_JSON, "json", NULL, "print a JSON array, one object per method",
	  CLI_STORE_TRUE(struct env, json) },
	{ 'o', "output", "FILE", "write to FILE (atomically) instead of stdout",
	  CLI_STORE_ARG(struct env, out_path) },
	CLI_OPTS_END("debug messages")
};

static const struct cli cli = {
	.text =
"sidescope dotnet-methods: list the precompiled methods of a .NET assembly\n"
"\n"
"USAGE: sidescope dotnet-methods [-p PID] [-w] [--json] [-o FILE] FILE [PATTERN]\n"
"\n"
"Reads a ReadyToRun image (an assembly published with PublishReadyToRun, or\n"
"the framework's own, e.g. System.Private.CoreLib.dll) and prints every\n"
"method that has native code in the file: RVA, file offset (the offset a\n"
"uprobe attaches to), code size, S for static methods (first argument in\n"
"arg1) or I for instance methods ('this' in arg1), and the name as\n"
"Namespace.Type.Method(parameters); nested types are joined by '+', generic\n"
"instantiations follow in brackets.\n"
"\n"
"PATTERN is a method name as 'sidescope uprobe' takes it (full name, or its\n"
"end such as Type.Method; a parameter list picks one overload), or a shell\n"
"glob over full names when it holds '*', '?' or '['.\n"
"\n",
	.opts = opts,
	.tail =
"\n"
"EXAMPLES:\n"
"  sidescope dotnet-methods /app/SampleApp.dll                 # all methods\n"
"  sidescope dotnet-methods -p 42 /app/SampleApp.dll EchoProvider.Echo\n"
"  sidescope dotnet-methods App.dll 'SampleApp.*'              # a namespace\n"
"  sidescope dotnet-methods --json App.dll > methods.json      # for scripts\n",
	.col = 20,
	.gap = 1,
};

/* cli_opt_fn: -p, the one option the table does not store. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;

	if (parse_long(arg, 1, INT_MAX, &env->pid))
		return usage_error("invalid PID '%s'", arg);
	return 0;
}

/* The rows written so far, and where. */
struct listing {
	FILE *f;
	const struct env *env;
	size_t shown;
};

/* The options, FILE and PATTERN into ENV: -1 to go on, else the exit
 * status. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){ .out_path = "-" };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind >= argc)
		return usage_error("missing FILE (a .NET ReadyToRun .dll)");
	env->file = argv[optind++];
	if (optind < argc)
		env->pattern = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return -1;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* One method as an object on a line of the JSON array. */
static void print_json(FILE *f, const struct r2r_method_info *m, bool first)
{
	struct json j;

	fputs(first ? "\n" : ",\n", f);
	json__init(&j, f);
	json__obj(&j);
	json__key(&j, "name");
	json__str(&j, m->name);
	json__key(&j, "signature");
	json__str(&j, m->signature);
	json__key(&j, "rva");
	json__u64(&j, m->rva);
	json__key(&j, "file_offset");
	json__u64(&j, m->file_offset);
	json__key(&j, "size");
	json__u64(&j, m->size);
	json__key(&j, "code_ranges");
	json__u64(&j, m->nbodies);
	json__key(&j, "static");
	json__bool(&j, m->is_static);
	json__key(&j, "instantiation");
	json__bool(&j, m->instantiation);
	json__key(&j, "token");
	json__u64(&j, m->token);
	json__end(&j);
}

/* One method as a row of the table. */
static void print_text(FILE *f, const struct r2r_method_info *m, bool wide)
{
	char joined[512], text[ESCAPE_MAX(80) + 1];
	int n;

	n = fprintf(f, "%8x %8llx %6u %c ", m->rva, (unsigned long long)m->file_offset,
		    m->size, m->is_static ? 'S' : 'I');
	/* names and signatures come from the image, which the application
	 * controls: escaped, and cut (with "...") at 80 columns */
	if (wide) {
		escape__fwrite(f, m->name, strlen(m->name), 0);
		escape__fwrite(f, m->signature, strlen(m->signature), 0);
	} else {
		/* cut at 511 bytes, it is past 80 columns anyway */
		snprintf(joined, sizeof(joined), "%s%s", m->name, m->signature);
		escape__str(text, sizeof(text), joined, strlen(joined),
			    n < 76 ? (size_t)(79 - n) : 3, 0);
		fputs(text, f);
	}
	fputc('\n', f);
}

static void print_row(struct listing *l, const struct r2r_method_info *m)
{
	if (l->env->json)
		print_json(l->f, m, l->shown == 0);
	else
		print_text(l->f, m, l->env->wide);
	l->shown++;
}

/* The methods PATTERN names (as r2r__find_method finds them). 0 or
 * -ENOMEM. */
static int list_named(struct listing *l, const struct r2r_image *img, const char *pattern)
{
	struct r2r_method_info *hits;
	size_t n;

	n = r2r__find_method(img, pattern, NULL, 0);
	hits = calloc(n ? n : 1, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	n = r2r__find_method(img, pattern, hits, n);
	for (size_t i = 0; i < n; i++)
		print_row(l, &hits[i]);
	free(hits);
	return 0;
}

/* Every method, or those whose full name matches the glob PATTERN. */
static void list_all(struct listing *l, const struct r2r_image *img, const char *pattern)
{
	struct r2r_method_info m;

	for (size_t i = 0; i < r2r__method_count(img); i++) {
		if (r2r__method_at(img, i, &m))
			continue;
		if (pattern && fnmatch(pattern, m.name, 0) != 0)
			continue;
		print_row(l, &m);
	}
}

/* The listing into ENV's output, committed atomically. 0, or 1 with the
 * error said; *shown gets the number of methods written. */
static int write_listing(const struct env *env, const struct r2r_image *img, size_t *shown)
{
	struct listing l = { .env = env };
	struct outfile *out;

	out = outfile__open_or_say(env->out_path);
	if (!out)
		return 1;
	l.f = outfile__fp(out);
	if (env->json)
		fputc('[', l.f);
	else
		fprintf(l.f, "%8s %8s %6s %c %s\n", "RVA", "OFFSET", "SIZE", 'K', "METHOD");
	if (env->pattern && !is_glob(env->pattern)) {
		if (list_named(&l, img, env->pattern)) {
			p_err("out of memory");
			outfile__abort(out);
			return 1;
		}
	} else {
		list_all(&l, img, env->pattern);
	}
	if (env->json)
		fputs(l.shown == 0 ? "]\n" : "\n]\n", l.f);
	*shown = l.shown;
	return outfile__commit_or_say(out) ? 1 : 0;
}

/* A PATTERN that matched nothing: why, said. */
static void say_no_match(const struct env *env, const struct r2r_image *img)
{
	const char *pattern = env->pattern, *file = env->file;

	if (!is_glob(pattern) && r2r__in_metadata(img, pattern))
		p_err("'%s' is in %s but has no precompiled code (left to the JIT: "
		      "AggressiveOptimization, or a generic without that instantiation)",
		      pattern, file);
	else
		p_err("no method with code matches '%s' in %s (list them all with "
		      "'sidescope dotnet-methods %s')", pattern, file, file);
}

int cmd_dotnet_methods(int argc, char **argv)
{
	struct r2r_image *img;
	char path[PATH_MAX];
	struct env env;
	struct err why;
	size_t shown = 0;
	int ret;

	ret = parse_args(argc, argv, &env);
	if (ret >= 0)
		return ret;
	if (env.pid)
		snprintf(path, sizeof(path), "%s/%ld/root%s%s", proc__root(), env.pid,
			 env.file[0] == '/' ? "" : "/", env.file);
	else
		snprintf(path, sizeof(path), "%s", env.file);
	img = r2r__open(path, &why);
	if (!img) {
		p_err("cannot read %s: %s", path, why.msg);
		return 1;
	}
	ret = write_listing(&env, img, &shown);
	if (ret == 0 && env.pattern && shown == 0) {
		say_no_match(&env, img);
		ret = 1;
	}
	r2r__free(img);
	return ret;
}
