// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope ps: the processes this PID namespace shows, and for each what a
 * profiler or tracer needs to know (namespace PID, runtime, perf map,
 * lttng-ust). The first command a user runs in the sidecar. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/appfile.h"
#include "core/cli.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/json.h"
#include "core/util.h"
#include "rt/rtnames.h"
#include "sym/gobin.h"

struct ps_row {
	struct proc_status st;
	char cmdline[4096];
	char cgroup[1024];
	char container[64];
	char perfmap[PATH_MAX];
	enum rtnames_state jit;	/* names of its JIT code: now, askable, at a restart */
	char jit_hint[256];	/* what to set at its next start, or "" */
	const char *runtime;	/* NULL: maps unreadable */
	bool lttng;
	bool same_container;	/* in the same cgroup as sidescope itself */
};

enum { OPT_JSON = 256, OPT_OTHERS };

/* The command line. */
struct env {
	const char *name;	/* -n, or NULL */
	pid_t *only;		/* -p (malloc'd), n_only of them; none: all */
	int n_only;
	bool json, quiet, wide, others;
};

static const struct cli_opt opts[] = {
	{ 'n', "name", "NAME", "only processes whose comm, executable or first argument\n"
			       "is NAME ('.dll' optional)", CLI_STORE_ARG(struct env, name) },
	{ 'p', "pid", "PIDS", "only these PIDs (comma-separated)" },
	{ OPT_OTHERS, "others", NULL, "only processes outside sidescope's own container",
	  CLI_STORE_TRUE(struct env, others) },
	{ 'q', "quiet", NULL, "print the PIDs only, one a line",
	  CLI_STORE_TRUE(struct env, quiet) },
	{ 'w', "wide", NULL, "do not cut the command line at 80 columns",
	  CLI_STORE_TRUE(struct env, wide) },
	{ OPT_JSON, "json", NULL, "print a JSON array, one object per process",
	  CLI_STORE_TRUE(struct env, json) },
	CLI_OPTS_END("debug messages")
};

static const struct cli cli = {
	.text =
"sidescope ps: list the processes in the pod and what can be traced in each\n"
"\n"
"USAGE: sidescope ps [-n NAME] [-p PID[,PID...]] [--others] [-q] [-w] [--json]\n"
"\n"
"Shows every process of this PID namespace (with shareProcessNamespace, the\n"
"whole pod): its PID here, its PID in its own namespace (NSPID, the number in\n"
"its perf map's file name), its container (from the cgroup path), its\n"
"runtime (dotnet, node, jvm, go, python, ruby, php, perl, beam or native),\n"
"the names of its JIT code (PERFMAP: yes, a perf map is there; ask, none\n"
"but 'profile' asks its runtime for one: .NET 8+, HotSpot 17+; restart, only\n"
"a flag at its next start gives one: which, on stderr and in --json) and\n"
"whether it has lttng-ust loaded (UST).\n"
"\n",
	.opts = opts,
	.tail =
"\n"
"EXAMPLES:\n"
"  sidescope ps                    # everything in the pod\n"
"  sidescope ps -n dotnet          # the .NET processes\n"
"  sidescope ps --others -q        # PIDs of the other containers' processes\n"
"  sidescope ps --json | jq .      # for scripts\n",
	.col = 20,
};

/* cli_opt_fn: -p, the one option the table does not store. */
static int parse_opt(void *ctx, int key, const char *arg)
{
	struct env *env = ctx;

	free(env->only);
	env->only = NULL;
	env->n_only = parse_pid_list(arg, &env->only);
	if (env->n_only < 0)
		return usage_error("invalid PID list '%s'", arg);
	return 0;
}

/* Whether PID runs a Go executable: its ELF file read through /proc/PID/exe
 * (the kernel's link to the very file, whatever the app's mounts), as a
 * regular file, with the checks of sym/gobin. */
static bool exe_is_go(pid_t pid)
{
	char path[64];
	int fd, go;

	snprintf(path, sizeof(path), "%s/%d/exe", proc__root(), (int)pid);
	fd = appfile__open(path, 0, NULL);
	if (fd < 0)
		return false;
	go = gobin__is_go(fd);
	close(fd);
	return go == 1;
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
	if (maps || exe[0]) {
		enum proc_runtime rt = proc__detect_runtime(maps, exe);

		if (rt == RUNTIME_NATIVE && exe_is_go(pid))
			rt = RUNTIME_GO;
		r->runtime = proc__runtime_name(rt);
	} else {
		r->runtime = NULL;
	}
	r->lttng = maps && proc_maps__has_lib(maps, "liblttng-ust.so");
	proc_maps__free(maps);
	if (proc__perfmap_path(pid, r->st.nstgid, r->perfmap, sizeof(r->perfmap)))
		r->perfmap[0] = '\0';
	r->jit_hint[0] = '\0';
	r->jit = r->perfmap[0] ? RTNAMES_NOW : RTNAMES_NONE;
	if (!r->perfmap[0] && r->runtime && (!strcmp(r->runtime, "dotnet") ||
	    !strcmp(r->runtime, "jvm") || !strcmp(r->runtime, "node")))
		r->jit = rtnames__state(pid, r->jit_hint, sizeof(r->jit_hint));
	return 0;
}

/* One process as a JSON object. */
static void print_json_row(FILE *f, const struct ps_row *r)
{
	struct json j;

	json__init(&j, f);
	json__obj(&j);
	json__key(&j, "pid");
	json__i64(&j, r->st.pid);
	json__key(&j, "nspid");
	json__i64(&j, r->st.nspid);
	json__key(&j, "nstgid");
	json__i64(&j, r->st.nstgid);
	json__key(&j, "ns_depth");
	json__i64(&j, r->st.ns_depth);
	json__key(&j, "ppid");
	json__i64(&j, r->st.ppid);
	json__key(&j, "uid");
	json__u64(&j, r->st.uid);
	json__key(&j, "comm");
	json__str(&j, r->st.name);
	json__key(&j, "cmdline");
	json__str(&j, r->cmdline);
	json__key(&j, "cgroup");
	json__str(&j, r->cgroup);
	json__key(&j, "container");
	json__str(&j, r->container);
	json__key(&j, "runtime");
	if (r->runtime)
		json__str(&j, r->runtime);
	else
		json__null(&j);
	json__key(&j, "perf_map");
	if (r->perfmap[0])
		json__str(&j, r->perfmap);
	else
		json__null(&j);
	/* the names of its JIT code: "yes" (a perf map), "ask" (its runtime
	 * asked by profile), "restart" (only a flag at its next start),
	 * "-" (no JIT code known) */
	json__key(&j, "jit_names");
	json__str(&j, r->jit == RTNAMES_NONE ? "none" : rtnames__state_name(r->jit));
	json__key(&j, "jit_names_hint");
	json__str(&j, r->jit_hint);
	json__key(&j, "lttng_ust");
	json__bool(&j, r->lttng);
	json__key(&j, "same_container");
	json__bool(&j, r->same_container);
	json__end(&j);
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
		    (int)(12 - cols), "", r->runtime ? r->runtime : "?", rtnames__state_name(r->jit),
		    r->lttng ? "yes" : "-");
	/* columns so far: bytes, less what UTF-8 in the container name took */
	n -= (int)(strlen(cont) - cols);
	escape__str(cmd, sizeof(cmd), r->cmdline, strlen(r->cmdline),
		    wide ? 0 : n < 76 ? (size_t)(79 - n) : 3, 0);
	fprintf(f, "%s\n", cmd);
}

/* The options into ENV (zeroed; ps takes no operand): -1 to go on, else the
 * exit status. ENV->only is the caller's to free either way. */
static int parse_args(int argc, char **argv, struct env *env)
{
	int r;

	*env = (struct env){ 0 };
	r = cli__parse(&cli, argc, argv, parse_opt, env);
	if (r >= 0)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return -1;
}

static bool pid_asked(const struct env *env, pid_t pid)
{
	int k;

	if (!env->n_only)
		return true;
	for (k = 0; k < env->n_only; k++)
		if (env->only[k] == pid)
			return true;
	return false;
}

/* Fill ROW for PID; whether it is shown. */
static bool wanted_row(const struct env *env, pid_t pid, pid_t self, const char *self_cgroup,
		       struct ps_row *row)
{
	if (!pid_asked(env, pid) || (env->name && pid == self))
		return false;
	memset(row, 0, sizeof(*row));
	/* a process may exit while we look at it: just skip it */
	if (fill_row(pid, row))
		return false;
	/* kernel threads are not what anyone debugs from a sidecar */
	if (proc__is_kernel_thread(pid))
		return false;
	if (env->name && !proc__matches_name(pid, row->st.name, env->name))
		return false;
	row->same_container = self_cgroup[0] && strcmp(row->cgroup, self_cgroup) == 0;
	return !(env->others && row->same_container);
}

/* Print the rows of the N processes in PIDS that ENV asks for; return how
 * many. With --json, one array with an object a line: the lines are laid
 * out here, each object is written by the JSON writer. */
static int print_rows(const struct env *env, const pid_t *pids, int n, struct ps_row *row)
{
	char self_cgroup[1024] = "";
	pid_t self = getpid();
	bool first = true;	/* no JSON object yet (-q prints none) */
	int i, shown = 0;

	proc__cgroup(self, self_cgroup, sizeof(self_cgroup));
	if (env->json)
		fputc('[', stdout);
	else if (!env->quiet)
		printf("%7s %7s %-12s %-7s %-7s %-3s %s\n", "PID", "NSPID", "CONTAINER",
		       "RUNTIME", "PERFMAP", "UST", "COMMAND");
	for (i = 0; i < n; i++) {
		if (!wanted_row(env, pids[i], self, self_cgroup, row))
			continue;
		if (env->quiet) {
			printf("%d\n", (int)row->st.pid);
		} else if (env->json) {
			fputs(first ? "\n" : ",\n", stdout);
			print_json_row(stdout, row);
			first = false;
		} else {
			print_text_row(stdout, row, env->wide);
			if (row->jit == RTNAMES_RESTART && row->jit_hint[0])
				p_info("PID %d (%s): no names for its JIT code until it restarts: %s",
				       (int)row->st.pid, row->runtime, row->jit_hint);
		}
		shown++;
	}
	if (env->json)
		fputs(first ? "]\n" : "\n]\n", stdout);
	return shown;
}

/* A PID asked for and not shown: say what it is instead (gone, a thread,
 * a kernel thread); an error when nothing was shown. */
static void explain_missing(const struct env *env, int shown)
{
	struct err perr;
	int i;

	for (i = 0; i < env->n_only; i++) {
		if (proc__check_target(env->only[i], &perr) == 0)
			continue;
		if (shown)
			p_warn("%s", perr.msg);
		else
			p_err("%s", perr.msg);
	}
}

int cmd_ps(int argc, char **argv)
{
	struct ps_row *row = NULL;
	pid_t *pids = NULL;
	struct env env;
	int n, shown, err = 1;

	err = parse_args(argc, argv, &env);
	if (err >= 0)
		goto cleanup;
	err = 1;
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
	shown = print_rows(&env, pids, n, row);
	explain_missing(&env, shown);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		p_err("cannot write output: %s", strerror(errno));
		goto cleanup;
	}
	if (env.name && shown == 0) {
		p_err("no process matches '%s' (see 'sidescope ps' for the list)", env.name);
		goto cleanup;
	}
	if (env.n_only && shown == 0)
		goto cleanup;
	err = 0;
cleanup:
	free(row);
	free(pids);
	free(env.only);
	return err;
}
