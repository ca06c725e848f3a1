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
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/proc.h"
#include "dotnet/r2r.h"
#include "core/json.h"
#include "core/util.h"

static void help(void)
{
	printf(
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
"\n"
"OPTIONS:\n"
"  -p, --pid PID     FILE is a path in the container of process PID\n"
"                    (read through /proc/PID/root)\n"
"  -w, --wide        do not cut names at 80 columns\n"
"      --json        print a JSON array, one object per method\n"
"  -o, --output FILE write to FILE (atomically) instead of stdout\n"
"  -v, --verbose     debug messages\n"
"  -h, --help        print this help\n"
"\n"
"EXAMPLES:\n"
"  sidescope dotnet-methods /app/SampleApp.dll                 # all methods\n"
"  sidescope dotnet-methods -p 42 /app/SampleApp.dll EchoProvider.Echo\n"
"  sidescope dotnet-methods App.dll 'SampleApp.*'              # a namespace\n"
"  sidescope dotnet-methods --json App.dll > methods.json      # for scripts\n");
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static void print_row(FILE *f, const struct r2r_method_info *m, bool json, bool wide,
		      bool *first)
{
	if (json) {
		fputs(*first ? "\n" : ",\n", f);
		fputs("{\"name\":", f);
		json_write_string(f, m->name);
		fputs(",\"signature\":", f);
		json_write_string(f, m->signature);
		fprintf(f, ",\"rva\":%u,\"file_offset\":%llu,\"size\":%u,\"code_ranges\":%u,"
			"\"static\":%s,\"instantiation\":%s,\"token\":%u}",
			m->rva, (unsigned long long)m->file_offset, m->size, m->nbodies,
			m->is_static ? "true" : "false", m->instantiation ? "true" : "false",
			m->token);
	} else {
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
	*first = false;
}

int cmd_dotnet_methods(int argc, char **argv)
{
	enum { OPT_JSON = 256 };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "wide", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *file, *pattern = NULL, *out_path = "-";
	struct r2r_method_info *hits = NULL, m;
	struct r2r_image *img = NULL;
	struct outfile *out = NULL;
	bool json = false, wide = false, first = true;
	char path[PATH_MAX];
	size_t n = 0, shown = 0;
	long pid = 0;
	int c, err, ret = 1;

	while ((c = getopt_long(argc, argv, "p:wo:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_long(optarg, 1, INT_MAX, &pid))
				return usage_error("invalid PID '%s'", optarg);
			break;
		case 'w':
			wide = true;
			break;
		case 'o':
			out_path = optarg;
			break;
		case OPT_JSON:
			json = true;
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
	if (optind >= argc)
		return usage_error("missing FILE (a .NET ReadyToRun .dll)");
	file = argv[optind++];
	if (optind < argc)
		pattern = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	if (pid)
		snprintf(path, sizeof(path), "%s/%ld/root%s%s", proc__root(), pid,
			 file[0] == '/' ? "" : "/", file);
	else
		snprintf(path, sizeof(path), "%s", file);
	img = r2r__open(path);
	if (!img) {
		p_err("cannot read %s: %s", path, r2r__error());
		goto cleanup;
	}
	out = outfile__open(out_path);
	if (!out) {
		p_err("cannot write %s: %s", out_path, outfile__strerror(errno));
		goto cleanup;
	}
	if (json)
		fputc('[', outfile__fp(out));
	else
		fprintf(outfile__fp(out), "%8s %8s %6s %c %s\n", "RVA", "OFFSET", "SIZE", 'K',
			"METHOD");
	if (pattern && !is_glob(pattern)) {
		n = r2r__find_method(img, pattern, NULL, 0);
		hits = calloc(n ? n : 1, sizeof(*hits));
		if (!hits) {
			p_err("out of memory");
			goto cleanup;
		}
		n = r2r__find_method(img, pattern, hits, n);
		for (size_t i = 0; i < n; i++)
			print_row(outfile__fp(out), &hits[i], json, wide, &first);
		shown = n;
	} else {
		for (size_t i = 0; i < r2r__method_count(img); i++) {
			if (r2r__method_at(img, i, &m))
				continue;
			if (pattern && fnmatch(pattern, m.name, 0) != 0)
				continue;
			print_row(outfile__fp(out), &m, json, wide, &first);
			shown++;
		}
	}
	if (json)
		fputs(first ? "]\n" : "\n]\n", outfile__fp(out));
	err = outfile__commit(out);
	out = NULL;
	if (err) {
		p_err("cannot write %s: %s", out_path, outfile__strerror(err));
		goto cleanup;
	}
	if (pattern && shown == 0 && !is_glob(pattern) && r2r__in_metadata(img, pattern)) {
		p_err("'%s' is in %s but has no precompiled code (left to the JIT: "
		      "AggressiveOptimization, or a generic without that instantiation)",
		      pattern, file);
		goto cleanup;
	}
	if (pattern && shown == 0) {
		p_err("no method with code matches '%s' in %s (list them all with "
		      "'sidescope dotnet-methods %s')", pattern, file, file);
		goto cleanup;
	}
	ret = 0;
cleanup:
	outfile__abort(out);
	free(hits);
	r2r__free(img);
	return ret;
}
