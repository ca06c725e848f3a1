// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope ps: the processes this PID namespace shows, and for each what a
 * profiler or tracer needs to know (namespace PID, runtime, perf map,
 * lttng-ust). The first command a user runs in the sidecar. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/json.h"
#include "core/util.h"

struct ps_row {
	struct proc_status st;
	char cmdline[4096];
	char cgroup[1024];
	char container[64];
	char perfmap[PATH_MAX];
	const char *runtime;	/* NULL: maps unreadable */
	bool lttng;
	bool same_container;	/* in the same cgroup as sidescope itself */
};

static void help(void)
{
	printf(
"sidescope ps: list the processes in the pod and what can be traced in each\n"
"\n"
"USAGE: sidescope ps [-n NAME] [-p PID[,PID...]] [--others] [-q] [-w] [--json]\n"
"\n"
"Shows every process of this PID namespace (with shareProcessNamespace, the\n"
"whole pod): its PID here, its PID in its own namespace (NSPID, the number in\n"
"its perf map's file name), its container (from the cgroup path), its\n"
"runtime (dotnet, node, jvm or native), whether a perf map exists for it and\n"
"whether it has lttng-ust loaded (UST).\n"
"\n"
"OPTIONS:\n"
"  -n, --name NAME   only processes whose comm, executable or first argument\n"
"                    is NAME ('.dll' optional)\n"
"  -p, --pid PIDS    only these PIDs (comma-separated)\n"
"      --others      only processes outside sidescope's own container\n"
"  -q, --quiet       print the PIDs only, one a line\n"
"  -w, --wide        do not cut the command line at 80 columns\n"
"      --json        print a JSON array, one object per process\n"
"  -v, --verbose     debug messages\n"
"  -h, --help        print this help\n"
"\n"
"EXAMPLES:\n"
"  sidescope ps                    # everything in the pod\n"
"  sidescope ps -n dotnet          # the .NET processes\n"
"  sidescope ps --others -q        # PIDs of the other containers' processes\n"
"  sidescope ps --json | jq .      # for scripts\n");
}

static int fill_row(pid_t pid, struct ps_row *r)
{
	struct proc_maps *maps;
	char exe[PATH_MAX] = "";
	int err;

	err = proc__read_status(pid, &r->st);
	if (err)
		return err;
	if (proc__cmdline(pid, r->cmdline, sizeof(r->cmdline)))
		snprintf(r->cmdline, sizeof(r->cmdline), "[%s]", r->st.name);
	if (proc__cgroup(pid, r->cgroup, sizeof(r->cgroup)))
		r->cgroup[0] = '\0';
	proc__container_hint(r->cgroup, r->container, sizeof(r->container));
	proc__exe(pid, exe, sizeof(exe));
	maps = proc_maps__load(pid);
	r->runtime = maps || exe[0] ? proc__runtime_name(proc__detect_runtime(maps, exe)) : NULL;
	r->lttng = maps && proc_maps__has_lib(maps, "liblttng-ust.so");
	proc_maps__free(maps);
	if (proc__perfmap_path(pid, r->st.nstgid, r->perfmap, sizeof(r->perfmap)))
		r->perfmap[0] = '\0';
	return 0;
}

static void print_json_row(FILE *f, const struct ps_row *r)
{
	fprintf(f, "{\"pid\":%d,\"nspid\":%d,\"nstgid\":%d,\"ns_depth\":%d,\"ppid\":%d,\"uid\":%u,",
		(int)r->st.pid, (int)r->st.nspid, (int)r->st.nstgid, r->st.ns_depth,
		(int)r->st.ppid, (unsigned)r->st.uid);
	fputs("\"comm\":", f);
	json_write_string(f, r->st.name);
	fputs(",\"cmdline\":", f);
	json_write_string(f, r->cmdline);
	fputs(",\"cgroup\":", f);
	json_write_string(f, r->cgroup);
	fputs(",\"container\":", f);
	json_write_string(f, r->container);
	fputs(",\"runtime\":", f);
	if (r->runtime)
		json_write_string(f, r->runtime);
	else
		fputs("null", f);
	fputs(",\"perf_map\":", f);
	if (r->perfmap[0])
		json_write_string(f, r->perfmap);
	else
		fputs("null", f);
	fprintf(f, ",\"lttng_ust\":%s,\"same_container\":%s}",
		r->lttng ? "true" : "false", r->same_container ? "true" : "false");
}

static void print_text_row(FILE *f, const struct ps_row *r, bool wide)
{
	char cont[ESCAPE_MAX(12) + 1], cmd[ESCAPE_MAX(sizeof(r->cmdline)) + 1];
	size_t cols;
	int n;

	/* the command line and the cgroup path are the application's: no
	 * control character of theirs (C0, DEL, C1) may reach the terminal */
	cols = escape__str(cont, sizeof(cont), r->container, strlen(r->container), 12, 0);
	n = fprintf(f, "%7d %7d %s%*s %-7s %-7s %-3s ", (int)r->st.pid, (int)r->st.nspid, cont,
		    (int)(12 - cols), "", r->runtime ? r->runtime : "?", r->perfmap[0] ? "yes" : "-",
		    r->lttng ? "yes" : "-");
	/* columns so far: bytes, less what UTF-8 in the container name took */
	n -= (int)(strlen(cont) - cols);
	escape__str(cmd, sizeof(cmd), r->cmdline, strlen(r->cmdline),
		    wide ? 0 : n < 76 ? (size_t)(79 - n) : 3, 0);
	fprintf(f, "%s\n", cmd);
}

int cmd_ps(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_OTHERS };
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "others", no_argument, NULL, OPT_OTHERS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "wide", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *name = NULL;
	bool json = false, quiet = false, wide = false, others = false, first = true;
	pid_t *pids = NULL, *only = NULL, self = getpid();
	char self_cgroup[1024] = "";
	int n, n_only = 0, i, c, err = 1, shown = 0;
	struct ps_row *row = NULL;

	while ((c = getopt_long(argc, argv, "n:p:qwvh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			name = optarg;
			break;
		case 'p':
			free(only);
			n_only = parse_pid_list(optarg, &only);
			if (n_only < 0)
				return usage_error("invalid PID list '%s'", optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'w':
			wide = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_OTHERS:
			others = true;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'h':
			help();
			return 0;
		default:
			free(only);
			return usage_hint();
		}
	}
	if (optind < argc) {
		free(only);
		return usage_error("unexpected argument '%s'", argv[optind]);
	}

	n = proc__list(&pids);
	if (n < 0) {
		p_err("cannot list processes in %s: %s", proc__root(), strerror(-n));
		goto cleanup;
	}
	row = malloc(sizeof(*row));
	if (!row) {
		p_err("out of memory");
		goto cleanup;
	}
	proc__cgroup(self, self_cgroup, sizeof(self_cgroup));

	if (json)
		fputc('[', stdout);
	else if (!quiet)
		printf("%7s %7s %-12s %-7s %-7s %-3s %s\n", "PID", "NSPID", "CONTAINER",
		       "RUNTIME", "PERFMAP", "UST", "COMMAND");
	for (i = 0; i < n; i++) {
		bool wanted = n_only == 0;

		for (int k = 0; k < n_only && !wanted; k++)
			wanted = only[k] == pids[i];
		if (!wanted || (name && (pids[i] == self)))
			continue;
		memset(row, 0, sizeof(*row));
		/* a process may exit while we look at it: just skip it */
		if (fill_row(pids[i], row))
			continue;
		/* kernel threads are not what anyone debugs from a sidecar */
		if (proc__is_kernel_thread(pids[i]))
			continue;
		if (name && !proc__matches_name(pids[i], row->st.name, name))
			continue;
		row->same_container = self_cgroup[0] && strcmp(row->cgroup, self_cgroup) == 0;
		if (others && row->same_container)
			continue;
		shown++;
		if (quiet) {
			printf("%d\n", (int)row->st.pid);
		} else if (json) {
			if (!first)
				fputc(',', stdout);
			fputc('\n', stdout);
			print_json_row(stdout, row);
			first = false;
		} else {
			print_text_row(stdout, row, wide);
		}
	}
	if (json)
		fputs(first ? "]\n" : "\n]\n", stdout);
	/* a PID asked for and not shown: say what it is instead (gone, a
	 * thread, a kernel thread); an error when nothing was shown */
	for (i = 0; i < n_only; i++) {
		char msg[512];

		if (proc__check_target(only[i], msg, sizeof(msg)) == 0)
			continue;
		if (shown)
			p_warn("%s", msg);
		else
			p_err("%s", msg);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		p_err("cannot write output: %s", strerror(errno));
		goto cleanup;
	}
	if (name && shown == 0) {
		p_err("no process matches '%s' (see 'sidescope ps' for the list)", name);
		goto cleanup;
	}
	if (n_only && shown == 0)
		goto cleanup;
	err = 0;
cleanup:
	free(row);
	free(pids);
	free(only);
	return err;
}
