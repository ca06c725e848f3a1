// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profiler engine (prof/profiler.h): targets, the BPF sampler opened,
 * sized, loaded and attached, the capture loop, the report.
 *
 * Counts are aggregated in the kernel in one of two maps; every few seconds
 * user space flips the "active" index, waits for in-flight programs (they
 * run for microseconds in the timer interrupt) and drains the idle map, so
 * memory stays bounded and no increment races with the drain
 * (prof/capture.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/escape.h"
#include "core/log.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "dotnet/r2r.h"
#include "prof/capture.h"
#include "prof/caploop.h"
#include "prof/kbtf.h"
#include "prof/perfev.h"
#include "prof/profiler.h"
#include "prof/target.h"
#include "prof/unwind.h"
#include "rt/rtnames.h"
#include "profile.h"
#include "profile.skel.h"
#include "sym/cficache.h"
#include "sym/debuginfod.h"
#include "sym/elfsym.h"
#include "sym/stackcache.h"
#include "sym/symbolize.h"

#define DRAIN_NS (2ull * 1000000000ull)
/* --unwind tables: the targets' maps read again this often (dlopen), as
 * well as when a walk meets a pc in none of their mappings with tables */
#define UNWIND_LOOK_NS (2ull * 1000000000ull)
/* --unwind tables: rows (8 bytes each; row maps made as the tables need
 * them, up to this many in all) and processes held in the kernel */
#define UNWIND_ROWS (1u << 21)
#define UNWIND_PROCS 256u

struct profiler {
	struct profiler_opts o;
	uint64_t *starts;	/* the targets' start times (clock ticks) */
	struct target_clock clock;
	uint64_t cgid;		/* --cgroup: the cgroup's id */
	char cgroup_procs[PATH_MAX + 16];
	char title[128];	/* the flame graph's */
	uint64_t rate_t, rate_periods;	/* --switch-rate: the last look */
	struct capture c;
	struct profile_bpf *skel;
	struct perfev sampling;		/* the sampling events */
	struct bpf_link *exec_link, *switch_link, *wakeup_link;
	bool tables;		/* --unwind: user stacks by unwind tables */
	struct unwinder *uw;
	struct cficache *cache;	/* --table-cache */
	struct debuginfod *dbg;	/* debug files fetched into it */
	bool cache_tried;
	struct rtnames *rt;	/* JIT names asked of the targets' runtimes */
};

struct profiler *profiler__new(const struct profiler_opts *o)
{
	struct profiler *pr = calloc(1, sizeof(*pr));

	if (!pr) {
		p_err("out of memory");
		return NULL;
	}
	pr->o = *o;
	pr->clock.ns_per_tick = 10000000;
	return pr;
}

struct prof *profiler__prof(const struct profiler *pr)
{
	return pr->c.prof;
}

const char *profiler__title(const struct profiler *pr)
{
	return pr->title;
}

uint64_t profiler__drains(const struct profiler *pr)
{
	return pr->c.drains;
}


/* "-n NAME: PIDs 7, 12 (dotnet)": what a name chose, before sampling */
static void say_chosen(const char *name, const pid_t *pids, int n)
{
	char list[256], ename[256];
	size_t len = 0;
	int i;

	list[0] = '\0';
	for (i = 0; i < n && len < sizeof(list) - 16; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? ", " : "",
					(int)pids[i]);
	if (i < n)
		snprintf(list + len, sizeof(list) - len, ", ... (%d in all)", n);
	escape__str(ename, sizeof(ename), name, strlen(name), 64, 0);
	p_info("-n %s: PID%s %s", ename, n == 1 ? "" : "s", list);
}

/* --cgroup PATH: its id and its cgroup.procs. 0, or -1 once said. */
static int find_cgroup(struct profiler *pr, const char *cgroup)
{
	char path[PATH_MAX];
	struct stat sb;

	proc__cgroup_dir(cgroup, path, sizeof(path));
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
		p_err("no cgroup directory %s", path);
		return -1;
	}
	pr->cgid = sb.st_ino;	/* a v2 cgroup's id is its directory's inode */
	snprintf(pr->cgroup_procs, sizeof(pr->cgroup_procs), "%s/cgroup.procs", path);
	return 0;
}

/* -p checked, -n resolved, --cgroup found. 0, or -1 once said. */
static int resolve_targets(struct profiler *pr)
{
	struct profiler_opts *o = &pr->o;
	struct err perr;
	int i;

	if (o->npids) {
		for (i = 0; i < o->npids; i++)
			if (proc__check_target(o->pids[i], &perr)) {
				p_err("%s", perr.msg);
				return -1;
			}
	} else if (o->name) {
		o->npids = proc__find_by_name(o->name, &o->pids);
		if (o->npids < 0) {
			p_err("cannot list processes: %s", strerror(-o->npids));
			return -1;
		}
		if (o->npids == 0) {
			p_err("no process matches '%s' (see 'sidescope ps')", o->name);
			return -1;
		}
		say_chosen(o->name, o->pids, o->npids);
	} else if (o->cgroup) {
		return find_cgroup(pr, o->cgroup);
	}
	return 0;
}

/* The targets as the processes their PIDs name now (PIDs get reused) */
int profiler__find_targets(struct profiler *pr)
{
	struct profiler_opts *o = &pr->o;
	int i;

	if (resolve_targets(pr))
		return -1;
	pr->starts = calloc(o->npids > 0 ? o->npids : 1, sizeof(*pr->starts));
	if (!pr->starts) {
		p_err("out of memory");
		return -1;
	}
	for (i = 0; i < o->npids; i++)
		if (proc__start_time(o->pids[i], &pr->starts[i]))
			pr->starts[i] = 0;
	if (o->npids == 1) {
		struct proc_status st;

		if (proc__read_status(o->pids[0], &st) == 0)
			snprintf(pr->title, sizeof(pr->title), "%s profile: %s (PID %d)",
				 prof__mode_name(o->mode), st.name, (int)o->pids[0]);
	} else if (o->npids) {
		snprintf(pr->title, sizeof(pr->title), "%s profile: %d processes",
			 prof__mode_name(o->mode), o->npids);
	} else {
		snprintf(pr->title, sizeof(pr->title), "%s profile: %s",
			 prof__mode_name(o->mode), o->cgroup ? o->cgroup : "all");
	}
	return target__clock(&pr->clock);
}

/* Capture the maps of a cgroup's processes now, so that those that exit
 * before the first drain are still symbolized. */
static void watch_cgroup(struct symbolizer *sz, const char *procs)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	long pid;

	if (read_file(procs, &buf, &len, 0))
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (parse_long(line, 1, INT_MAX, &pid) == 0)
			symbolizer__watch(sz, (pid_t)pid);
	free(buf);
}

/* --table-cache: tables of earlier captures. A directory that cannot be
 * used is no error; one that is not the sidecar's own (a link, another
 * user's, open to others) is said, the default's other failures (a
 * read-only root, no /run) only with -v. */
static void open_cache(struct profiler *pr)
{
	char why[PATH_MAX + 128];
	int err;

	if (pr->cache_tried)
		return;
	pr->cache_tried = true;
	if (pr->o.table_cache) {
		pr->cache = cficache__open(pr->o.table_cache, CFICACHE_MAX_BYTES, why,
					   sizeof(why));
		err = errno;
		if (pr->cache)
			;
		else if (err == EPERM || err == ELOOP || err == ENOTDIR ||
			 strcmp(pr->o.table_cache, CFICACHE_DIR))
			p_warn("table cache not used: %s", why);
		else
			p_debug("table cache not used: %s", why);
	}
	/* debug files fetched by build id are kept there too */
	pr->dbg = debuginfod__open(pr->cache ? pr->o.table_cache : NULL);
	elfsym__set_debuginfod(pr->dbg);
}

/* The symbolizer (symbol tables kept in the table cache), the profile and
 * the stack cache, the targets watched from now on. 0, or -1 once said. */
static int open_model(struct profiler *pr)
{
	struct profiler_opts *o = &pr->o;
	struct capture *c = &pr->c;
	int i;

	open_cache(pr);
	c->sz = symbolizer__new();
	if (c->sz && pr->cache)
		symbolizer__set_cache(c->sz, pr->cache);
	/* ReadyToRun code in mapped .dll images is named from the image itself;
	 * SIDESCOPE_NO_R2R=1 leaves it to perf maps (for comparisons) */
	if (c->sz && !getenv("SIDESCOPE_NO_R2R"))
		symbolizer__set_pe_resolver(c->sz, &r2r__pe_resolver);
	c->prof = prof__new();
	c->stacks = stackcache__new();
	if (!c->sz || !c->prof || !c->stacks) {
		p_err("out of memory");
		return -1;
	}
	prof__set_split(c->prof, o->split);
	for (i = 0; i < o->npids; i++)
		if (pr->starts[i])
			symbolizer__watch_start(c->sz, o->pids[i], pr->starts[i]);
	if (pr->cgroup_procs[0])
		watch_cgroup(c->sz, pr->cgroup_procs);
	if (o->all) {
		/* the pod's processes as they are now: a short-lived one is
		 * still symbolized after it exits */
		pid_t *list = NULL;
		int n = proc__list(&list);

		for (i = 0; i < n; i++)
			if (list[i] != getpid() && !proc__is_kernel_thread(list[i]))
				symbolizer__watch(c->sz, list[i]);
		free(list);
	}
	return 0;
}

/* Processes whose tables are held: the targets alone when they are given
 * (only they are sampled), else UNWIND_PROCS. Each takes UNWIND_MAX_MAPS
 * mappings of unwind_maps, made (and zeroed) whole at load. */
static uint32_t unwind_procs(const struct profiler_opts *o)
{
	return o->npids > 0 && (uint32_t)o->npids < UNWIND_PROCS ? (uint32_t)o->npids :
								      UNWIND_PROCS;
}

/* rtnames_misses_fn: the symbolizer's count */
static uint64_t jit_misses(void *sz, pid_t pid)
{
	return symbolizer__jit_misses(sz, pid);
}

/* Capture hook: whether PID's runtime writes a perf map for us */
static bool names_coming(void *arg, pid_t pid)
{
	struct profiler *pr = arg;

	return rtnames__writing(pr->rt, pid);
}

/* Capture hook: a process sampled for the first time gets its tables,
 * and its runtime is asked for the names of its JIT code. */
static void seen_new(void *arg, pid_t pid)
{
	struct profiler *pr = arg;

	if (pr->uw)
		unwinder__add(pr->uw, pid);
	rtnames__see(pr->rt, pid);
}

/* Capture hook: a walk reached an object whose table waits, or a pc in
 * none of the mappings with tables (its maps are read again: dlopen). */
static void unwind_want(void *arg, pid_t pid, uint32_t idx)
{
	struct profiler *pr = arg;

	if (!pr->uw)
		return;
	if (idx == UNWIND_WANT_MAPS - 1)
		unwinder__add(pr->uw, pid);
	else
		unwinder__want(pr->uw, pid, idx);
}

/* -v: how many instructions the verifier went through for each program
 * loaded, most of a capture's start-up (a change to the walk once doubled
 * them unseen) */
static void say_verified(struct bpf_object *obj)
{
	struct bpf_program *p;

	if (!log_verbose)
		return;
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(p) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			continue;
		p_debug("program %s: %u instructions verified", bpf_program__name(p),
			info.verified_insns);
	}
}

/* Open the BPF object, its CO-RE relocations against the kernel types in
 * TYPES (a BTF file) or else the kernel's BTF, size its maps and filter
 * for the targets, load it. 0; or -1, once said, or with *LOAD_ERR the
 * load's error, not said. */
static int load_bpf(struct profiler *pr, const char *types, int *load_err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = types);
	struct profiler_opts *o = &pr->o;
	struct profile_bpf *skel;
	__u32 max = (__u32)o->max_stacks;
	int err;

	*load_err = 0;
	skel = pr->skel = profile_bpf__open_opts(&oo);
	if (!skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), privhint__msg(PRIVHINT_BPF, err));
		return -1;
	}
	skel->rodata->pidns_dev = pr->clock.pidns_dev;
	skel->rodata->pidns_ino = pr->clock.pidns_ino;
	skel->rodata->filter_mode = o->npids ? PROFILE_FILTER_PIDS :
				    o->cgroup ? PROFILE_FILTER_CGROUP : PROFILE_FILTER_ALL;
	skel->rodata->filter_cgroup = pr->cgid;
	skel->rodata->want_user = !o->kernel_only;
	skel->rodata->want_kernel = !o->user_only;
	skel->rodata->ns_per_tick = pr->clock.ns_per_tick;
	skel->rodata->mode = (__u32)o->mode;
	/* wall-clock: a sample stands for its period of time on the CPU */
	skel->rodata->sample_weight = o->mode == PROF_MODE_WALL ? 1000000000ull / o->hz : 1;
	skel->rodata->off_states = o->states;
	skel->rodata->min_block_ns = o->min_block_us * 1000;
	/* the sched_switch program only where it is used: nothing to verify,
	 * nothing to need, for CPU profiles */
	/* --off-cpu samples nothing: its sampling program is not checked */
	bpf_program__set_autoload(skel->progs.do_sample, o->mode != PROF_MODE_OFFCPU);
	bpf_program__set_autoload(skel->progs.on_switch, o->mode != PROF_MODE_CPU);
	bpf_program__set_autoload(skel->progs.on_waking, o->mode != PROF_MODE_CPU);
	skel->rodata->want_wakers = o->wakers;
	/* --unwind tables needs bpf_loop (5.17); auto: tables where they apply
	 * and the kernel has it, else frame pointers */
	if (o->unwind != PROFILER_UNWIND_FP && !o->kernel_only) {
		bool has_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop,
							NULL) == 1;

		if (o->unwind == PROFILER_UNWIND_TABLES && !has_loop) {
			p_err("--unwind tables needs the bpf_loop helper (Linux 5.17 or newer); "
			      "use --unwind fp");
			return -1;
		}
		pr->tables = has_loop;
		if (!has_loop)
			p_debug("no bpf_loop in this kernel: user stacks by frame pointers");
	}
	skel->rodata->want_tables = pr->tables;
	bpf_map__set_max_entries(skel->maps.unwind_rows, pr->tables ? UNWIND_MAX_SHARDS : 1);
	bpf_map__set_max_entries(skel->maps.unwind_procs, pr->tables ? unwind_procs(o) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_pids, pr->tables ? unwind_procs(o) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_asked, pr->tables ? unwind_procs(o) : 1);
	bpf_map__set_max_entries(skel->maps.unwind_maps,
				 pr->tables ? unwind_procs(o) * UNWIND_MAX_MAPS : 1);
	bpf_map__set_max_entries(skel->maps.wakers, o->wakers ? (__u32)o->max_threads : 1);
	bpf_map__set_max_entries(skel->maps.offstart, o->mode != PROF_MODE_CPU ?
				 (__u32)o->max_threads : 1);
	bpf_map__set_max_entries(skel->maps.pids, o->npids > 0 ? o->npids : 1);
	/* about 1.2 KB of kernel memory a stack and its counts; allocated as
	 * stacks come where perf_event programs may use such maps (6.1, the
	 * BPF memory allocator), not all at load: at the default 8192, 11 MB
	 * less held by the capture, and a tenth of its start-up */
	bpf_map__set_max_entries(skel->maps.stacks, max);
	bpf_map__set_max_entries(skel->maps.counts0, max);
	bpf_map__set_max_entries(skel->maps.counts1, max);
	if (kernel_at_least(6, 1)) {
		struct bpf_map *grow[] = { skel->maps.stacks, skel->maps.counts0,
					   skel->maps.counts1 };
		size_t g;

		for (g = 0; g < sizeof(grow) / sizeof(grow[0]); g++)
			bpf_map__set_map_flags(grow[g], bpf_map__map_flags(grow[g]) |
							BPF_F_NO_PREALLOC);
	}
	/* processes reported once: the targets, or as many as a pod runs */
	bpf_map__set_max_entries(skel->maps.seen, o->npids ? (__u32)o->npids * 2 + 64 : 16384);
	err = profile_bpf__load(skel);
	if (err) {
		*load_err = err;
		return -1;
	}
	say_verified(skel->obj);
	return 0;
}

/* The kernel types the BPF object needs, kept by an earlier capture under
 * KEY: a memory file holding them, or -1 */
static int kept_kernel_types(struct profiler *pr, uint64_t key)
{
	void *buf;
	size_t len;
	int fd;

	if (cficache__get_blob(pr->cache, key, KBTF_MAX_BYTES, &buf, &len))
		return -1;
	fd = kbtf__memfd(buf, len);
	cficache__blob_free(buf, len);
	if (fd < 0) {
		p_debug("kept kernel types unusable: %s", strerror(errno));
		cficache__drop_blob(pr->cache, key);
	}
	return fd;
}

/* Keep the kernel types the loaded object needs, for the next capture */
static void keep_kernel_types(struct profiler *pr, uint64_t key)
{
	void *buf;
	size_t len;
	int err = kbtf__make(bpf_object__btf(pr->skel->obj), &buf, &len);

	if (!err)
		err = cficache__put_blob(pr->cache, key, buf, len);
	free(buf);
	if (err)
		p_debug("kernel types not kept: %s", strerror(-err));
	else
		p_debug("kernel types kept for the next capture (%zu bytes)", len);
}

/* load_bpf, with the kernel types an earlier capture kept where there are
 * some (no read of the kernel's whole BTF), else the kernel's. 0, or -1
 * once said. */
static int open_load_bpf(struct profiler *pr)
{
	char types[32];
	size_t elf_len;
	const void *elf = profile_bpf__elf_bytes(&elf_len);
	uint64_t key = 0;
	int kfd = -1, err, ret;

	open_cache(pr);
	if (pr->cache && (key = kbtf__key(elf, elf_len)))
		kfd = kept_kernel_types(pr, key);
	snprintf(types, sizeof(types), "/proc/self/fd/%d", kfd);
	ret = load_bpf(pr, kfd >= 0 ? types : NULL, &err);
	if (ret && err && kfd >= 0) {
		p_debug("the kept kernel types would not do (%s): the kernel's own", strerror(-err));
		cficache__drop_blob(pr->cache, key);
		profile_bpf__destroy(pr->skel);
		pr->skel = NULL;
		ret = load_bpf(pr, NULL, &err);
	} else if (!ret && kfd >= 0) {
		p_debug("kernel types from the cache");
	}
	if (kfd >= 0)
		close(kfd);
	if (ret && err)
		p_err("failed to load BPF program: %s%s", strerror(-err), privhint__msg(PRIVHINT_BPF, -err));
	else if (!ret && key && kfd < 0)
		keep_kernel_types(pr, key);
	return ret;
}

/* The capture on the loaded maps, the targets in the filter, then the
 * programs attached: sampling begins. 0, or -1 once said. */
static int attach_bpf(struct profiler *pr)
{
	struct profile_bpf *skel = pr->skel;
	struct profiler_opts *o = &pr->o;
	struct capture *c = &pr->c;
	struct timespec wall;
	int i, err;

	c->pids = o->pids;
	c->starts = pr->starts;
	c->npids = o->npids;
	c->maps = (struct capture_maps){
		.counts = { bpf_map__fd(skel->maps.counts0), bpf_map__fd(skel->maps.counts1) },
		.stacks = bpf_map__fd(skel->maps.stacks),
		.stats = bpf_map__fd(skel->maps.stats),
		.news = bpf_map__fd(skel->maps.news),
		.offstart = o->mode != PROF_MODE_CPU ? bpf_map__fd(skel->maps.offstart) : -1,
		.active = &skel->bss->active,
	};
	if (pr->tables) {
		pr->uw = unwinder__new(bpf_map__fd(skel->maps.unwind_rows), UNWIND_ROWS,
				       bpf_map__fd(skel->maps.unwind_procs), unwind_procs(o),
				       bpf_map__fd(skel->maps.unwind_maps),
				       bpf_map__fd(skel->maps.unwind_pids));
		if (!pr->uw) {
			p_err("cannot map the unwind table map: %s", strerror(errno));
			return -1;
		}
		if (pr->cache)
			unwinder__set_cache(pr->uw, pr->cache);
		/* no table built past the capture's end (set again at its start) */
		if (o->secs)
			unwinder__set_deadline(pr->uw, now_ns() + o->secs * 1000000000ull);
		for (i = 0; i < o->npids; i++)
			unwinder__watch(pr->uw, o->pids[i]);
		c->on_want = unwind_want;
	}
	/* the targets' JIT names asked for before sampling begins; other
	 * processes' when first sampled */
	pr->rt = rtnames__new(&(struct rtnames_opts){ .hands_off = o->hands_off });
	if (!pr->rt)
		return -1;
	for (i = 0; i < o->npids; i++)
		rtnames__see(pr->rt, o->pids[i]);
	c->on_new = seen_new;
	c->names_coming = names_coming;
	c->on_new_arg = pr;
	err = capture__start(c);
	if (err) {
		p_err("cannot read the BPF ring buffer: %s", strerror(-err));
		return -1;
	}
	/* an exec makes the next sample report the process again (its maps
	 * changed); without it, the next drain still finds the new maps */
	pr->exec_link = bpf_program__attach(skel->progs.on_exec);
	if (!pr->exec_link)
		p_debug("no exec tracepoint (%s): new program images are read at drains",
			strerror(errno));
	for (i = 0; i < o->npids; i++) {
		__u32 k = (__u32)o->pids[i];
		__u64 v = target__bpf_start(&pr->clock, pr->starts[i]);

		bpf_map_update_elem(bpf_map__fd(skel->maps.pids), &k, &v, BPF_ANY);
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	c->meta.time_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	c->meta.mode = o->mode;
	if (o->mode != PROF_MODE_CPU) {
		c->meta.off_states = o->states;
		c->meta.min_block_ns = o->min_block_us * 1000;
		pr->switch_link = bpf_program__attach(skel->progs.on_switch);
		if (!pr->switch_link) {
			err = errno;
			p_err("cannot attach to the sched_switch tracepoint: %s%s", strerror(err),
			      privhint__msg(PRIVHINT_BPF, err));
			return -1;
		}
		pr->wakeup_link = bpf_program__attach(skel->progs.on_waking);
		if (!pr->wakeup_link) {
			err = errno;
			p_err("cannot attach to the sched_waking tracepoint: %s%s", strerror(err),
			      privhint__msg(PRIVHINT_BPF, err));
			return -1;
		}
	}
	if (o->mode == PROF_MODE_OFFCPU)
		return 0;	/* no sampling */
	c->meta.hz = (unsigned int)o->hz;
	c->meta.period_ns = 1000000000ull / o->hz;
	return perfev__open(&pr->sampling, skel->progs.do_sample, (unsigned int)o->hz);
}

/* The progress line on a terminal, at T ns after the start. */
static void show_progress(struct profiler *pr, uint64_t t)
{
	uint64_t secs = pr->o.secs;

	const struct prof_meta *m = &pr->c.meta;
	char what[96];

	capture__read_stats(&pr->c);
	if (pr->o.mode == PROF_MODE_OFFCPU)
		snprintf(what, sizeof(what), "%llu off-CPU periods",
			 (unsigned long long)m->off_periods);
	else if (pr->o.mode == PROF_MODE_WALL)
		snprintf(what, sizeof(what), "%llu samples, %llu off-CPU periods",
			 (unsigned long long)m->samples, (unsigned long long)m->off_periods);
	else
		snprintf(what, sizeof(what), "%llu samples", (unsigned long long)m->samples);
	if (secs)
		fprintf(stderr, "\r%s: %llu/%llu s, %s ", log__prog(),
			(unsigned long long)(t / 1000000000ull), (unsigned long long)secs, what);
	else
		fprintf(stderr, "\r%s: %llu s, %s (Ctrl-C to stop) ", log__prog(),
			(unsigned long long)(t / 1000000000ull), what);
}

/* A drain while sampling: 1 when every target has exited, 0 to go on, -1
 * once an error is said. */
static int drain_now(struct profiler *pr)
{
	struct profiler_opts *o = &pr->o;
	int err;

	err = capture__drain(&pr->c);
	if (err) {
		p_err("cannot read the counts: %s", strerror(-err));
		return -1;
	}
	/* forget exited processes, or -a over hours grows */
	symbolizer__sweep(pr->c.sz);
	if (pr->uw) {
		unwinder__sweep(pr->uw);
		/* -a, -n, --cgroup: the processes sampled so far, their new
		 * mappings (dlopen); -p targets are looked at more often */
		if (!o->npids)
			unwinder__refresh(pr->uw);
	}
	if (o->npids && !capture__any_alive(&pr->c)) {
		if (o->npids == 1)
			p_info("target PID %d exited; stopping", (int)o->pids[0]);
		else
			p_info("every target process has exited; stopping");
		return 1;
	}
	return 0;
}

/* --switch-rate: from the switches counted since the last look, how many
 * of them the program notes from now on (1 in K). */
static void adjust_sampling(struct profiler *pr, uint64_t now)
{
	struct capture *c = &pr->c;
	uint64_t dt = now - pr->rate_t, periods, rate, every;
	volatile __u32 *cur = &pr->skel->data->off_every;

	capture__read_stats(c);
	periods = c->meta.off_periods - pr->rate_periods;
	pr->rate_t = now;
	pr->rate_periods = c->meta.off_periods;
	if (!dt)
		return;
	rate = periods * 1000000000ull / dt;
	every = (rate + pr->o.switch_rate - 1) / pr->o.switch_rate;
	if (every > 4096)
		every = 4096;
	if (every < 1)
		every = 1;
	/* up at once, down once well below: no flapping at the edge */
	if (every > *cur || every * 2 <= *cur) {
		if (every != *cur)
			p_debug("%llu switches a second: noting 1 in %llu", (unsigned long long)rate,
				(unsigned long long)every);
		*cur = (__u32)every;
	}
	if (*cur > c->meta.off_every_max)
		c->meta.off_every_max = *cur;
}

/* Sample until the duration is over, a signal or every target gone,
 * draining every DRAIN_NS. 0, or -1 once said. */
static int sample_loop(struct profiler *pr, uint64_t t0)
{
	bool adapt = pr->o.mode != PROF_MODE_CPU && pr->o.switch_rate;
	bool tty = isatty(STDERR_FILENO);
	uint64_t now, last_tty = 0;
	struct caploop l;
	unsigned int due;
	int err = 0, i;

	if (pr->o.mode == PROF_MODE_OFFCPU)
		p_debug("tracing context switches");
	else if (pr->o.mode == PROF_MODE_WALL)
		p_debug("tracing context switches, sampling at %llu Hz on %d CPUs",
			(unsigned long long)pr->o.hz, pr->sampling.n);
	else
		p_debug("sampling at %llu Hz on %d CPUs", (unsigned long long)pr->o.hz,
			pr->sampling.n);
	caploop__init(&l, t0, pr->o.secs, DRAIN_NS, pr->uw ? UNWIND_LOOK_NS : 0, adapt || tty);
	while (!run__stop) {
		now = now_ns();
		due = caploop__due(&l, now);
		if (due & CAPLOOP_END)
			break;
		if (due & CAPLOOP_DRAIN) {
			/* the JVMs' maps for code compiled since, before the
			 * drain names their frames */
			rtnames__refresh(pr->rt, now, RTNAMES_REFRESH_BUDGET_NS, jit_misses, pr->c.sz);
			err = drain_now(pr);
			if (err)
				break;
		}
		if (adapt && now - pr->rate_t >= 100000000ull)
			adjust_sampling(pr, now);
		/* the targets' new mappings (dlopen) get their tables; a
		 * walk that meets one asks sooner (unwind_want) */
		if (due & CAPLOOP_LOOK)
			for (i = 0; i < pr->o.npids; i++)
				unwinder__watch(pr->uw, pr->o.pids[i]);
		if (tty && now - last_tty >= 100000000ull) {
			last_tty = now;
			show_progress(pr, now - t0);
		}
		/* processes first sampled: watched within milliseconds, while
		 * they live (a signal ends the wait early); else asleep until
		 * the next of the above is due. A signal that came during the
		 * work above would not end the wait: the loop ends now */
		if (run__stop)
			break;
		err = capture__poll(&pr->c, caploop__wait_ms(&l, now));
		if (err < 0 && err != -EINTR) {
			p_err("cannot read the BPF ring buffer: %s", strerror(-err));
			return -1;
		}
		err = 0;
	}
	if (err < 0)
		return -1;
	if (tty)
		fputc('\n', stderr);
	return 0;
}

/* The context switches the sched_switch program missed: the kernel skips
 * a program that would run inside another on the same CPU. */
static void missed_switches(struct profiler *pr)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (pr->o.mode == PROF_MODE_CPU)
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(pr->skel->progs.on_switch), &info, &len) == 0)
		pr->c.meta.missed_switches = info.recursion_misses;
}

/* Stop sampling, then take what both maps still hold. 0, or -1 once
 * said. */
static int stop_capture(struct profiler *pr, uint64_t t0)
{
	uint64_t end;
	int err;

	perfev__close(&pr->sampling);
	/* the capture's end for the threads still off the CPU, read before
	 * the switch program goes: one that runs again after it is not seen,
	 * and counting it up to the flush below would count the drains' time,
	 * K times for a period noted 1 in K */
	end = proc__bpf_clock_ns();
	bpf_link__destroy(pr->switch_link);
	pr->switch_link = NULL;
	bpf_link__destroy(pr->wakeup_link);
	pr->wakeup_link = NULL;
	bpf_link__destroy(pr->exec_link);
	pr->exec_link = NULL;
	pr->c.meta.duration_ns = now_ns() - t0;
	missed_switches(pr);
	/* the processes first sampled at the end watched (a poll's time at
	 * most: what still waits after it goes unnamed); the JVMs' maps for
	 * code compiled since the last */
	capture__poll(&pr->c, 0);
	rtnames__last_refresh(pr->rt);
	pr->c.last = true;	/* nothing held back for later */
	err = capture__drain(&pr->c);
	if (!err)
		err = capture__drain(&pr->c);
	/* the app as it was found */
	rtnames__restore(pr->rt);
	/* threads still off the CPU: their time up to the end */
	if (!err && pr->o.mode != PROF_MODE_CPU)
		err = capture__flush_offstart(&pr->c, end);
	if (err) {
		p_err("cannot read the counts: %s", strerror(-err));
		return -1;
	}
	capture__read_stats(&pr->c);
	return 0;
}

/* Append ", NAME N" to BUF when N is not 0. */
static void add_count(char *buf, size_t size, const char *name, uint64_t n)
{
	size_t len = strlen(buf);

	if (n)
		snprintf(buf + len, size - len, "%s%s %llu", len ? ", " : "", name,
			 (unsigned long long)n);
}

/* One line of what was lost or cut short, naming only what was; nothing
 * when nothing was. */
static void report_losses(const struct prof_meta *m)
{
	char lost[256] = "", cut[128] = "";

	add_count(lost, sizeof(lost), "user stack unreadable", m->lost_ustack);
	add_count(lost, sizeof(lost), "kernel stack unreadable", m->lost_kstack);
	prof__add_fails(lost, sizeof(lost), "stack store", m->lost_stacks);
	prof__add_fails(lost, sizeof(lost), "count map", m->lost_counts);
	add_count(lost, sizeof(lost), "missing from the store", m->missing_stacks);
	add_count(lost, sizeof(lost), "off-CPU periods (too many threads off the CPU at once)",
		  m->lost_off_full);
	add_count(lost, sizeof(lost), "context switches missed", m->missed_switches);
	add_count(lost, sizeof(lost), "wakers (too many at once)", m->lost_wakers);
	add_count(cut, sizeof(cut), "user", m->trunc_ustack);
	add_count(cut, sizeof(cut), "kernel", m->trunc_kstack);
	if (lost[0] && cut[0])
		p_warn("stacks lost: %s; truncated at %d frames: %s", lost, PROFILE_MAX_DEPTH, cut);
	else if (lost[0])
		p_warn("stacks lost: %s", lost);
	else if (cut[0])
		p_warn("no stack lost; truncated at %d frames: %s", PROFILE_MAX_DEPTH, cut);
}

/* The profile's nanoseconds off the CPU: all of an off-CPU profile; in a
 * wall-clock one, what is not samples. */
static uint64_t off_total(const struct prof *p)
{
	const struct prof_meta *m = prof__meta(p);
	uint64_t on = m->mode == PROF_MODE_WALL ? m->samples * m->period_ns : 0;

	return prof__total(p) > on ? prof__total(p) - on : 0;
}

/* Objects without a table named by default; -v names them all */
#define MISSING_SAID 8

static void say_missing(const char *path, const char *why, void *arg)
{
	size_t *n = arg;
	char safe[256];

	if ((*n)++ >= MISSING_SAID && !log_verbose)
		return;
	escape__str(safe, sizeof(safe), path, strlen(path), 120, 0);
	p_info("no unwind table for %s (%s): its frames by frame pointer", safe, why);
}

/* --unwind tables: what was loaded, what had no table, what was cut. */
static void report_unwind(struct profiler *pr)
{
	const struct prof_meta *m = &pr->c.meta;
	struct unwinder_stats st;

	unwinder__stats(pr->uw, &st);
	char wait[96] = "";

	if (m->unwind_wait)
		snprintf(wait, sizeof(wait), " (%llu at an object whose table was being loaded)",
			 (unsigned long long)m->unwind_wait);
	p_info("unwind tables: %zu objects, %llu rows in %zu row map%s (%llu KB of at most "
	       "%llu), built in %.0f ms (%zu from the cache), %zu of them when a walk first "
	       "reached them, %zu more mapped but never reached; %llu user stacks walked by "
	       "them, %llu of them cut short%s",
	       st.files, (unsigned long long)st.rows, st.shards, st.shards == 1 ? "" : "s",
	       (unsigned long long)(st.alloc_rows * sizeof(struct unwind_row) / 1024),
	       (unsigned long long)(st.max_rows * sizeof(struct unwind_row) / 1024), st.build_ms,
	       st.cached, st.files_wanted, st.files_wait,
	       (unsigned long long)m->unwind_tables, (unsigned long long)m->unwind_cut, wait);
	size_t said = 0;

	unwinder__foreach_missing(pr->uw, say_missing, &said);
	if (said > MISSING_SAID && !log_verbose)
		p_info("and %zu more objects without an unwind table (-v names them)",
		       said - MISSING_SAID);
	if (st.files_pe)
		p_info("%zu .NET assemblies (PE images): their code by frame pointer, which it keeps",
		       st.files_pe);
	if (st.files_full || st.procs_full)
		p_warn("unwind tables left out: %zu objects (no room in the row maps), %zu "
		       "processes (more than %u)", st.files_full, st.procs_full,
		       unwind_procs(&pr->o));
	if (st.files_share || st.files_slow)
		p_warn("unwind tables left out: %zu objects over their process's share of the "
		       "rows (%llu a process, twice that for its executable and C library; "
		       "beyond it only while %llu stay free for the others), %zu over their "
		       "process's %u ms for building tables (-v names them)", st.files_share,
		       (unsigned long long)st.share_rows, (unsigned long long)st.reserve_rows,
		       st.files_slow, UNWIND_BUILD_MS);
	if (st.files_cut)
		p_debug("unwind tables left out: %zu objects whose tables were still to be built "
			"when the capture ended", st.files_cut);
	if (st.maps_deferred)
		p_debug("%zu looks at a process's mappings put off: reading its maps took long "
			"(read again after %d times that)", st.maps_deferred, UW_MAPS_COST_FACTOR);
}

/* What the capture missed, said once it is over; its metadata into the
 * profile. */
static void report_capture(struct profiler *pr)
{
	struct capture *c = &pr->c;
	struct symbolizer_stats ss;

	if (c->pid_reused)
		p_info("left out %llu samples of another process that got a target's PID",
		       (unsigned long long)c->pid_reused);
	symbolizer__stats(c->sz, &ss);
	c->meta.perfmap_bad_lines = ss.perfmap_bad_lines;
	c->meta.off_pending = c->off_pending;
	if (ss.kallsyms_err && !pr->o.user_only)
		p_warn("kernel symbols unavailable: %s (needs CAP_SYSLOG)",
		       strerror(-ss.kallsyms_err));
	p_debug("symbols: %zu files of the targets, %zu of them mapped but not read (no frame "
		"fell in them)", ss.files, ss.files_waiting);
	if (ss.files_denied)
		p_warn("%zu binar%s of the targets unreadable: permission denied (other "
		       "users' processes need CAP_SYS_PTRACE; run 'doctor')",
		       ss.files_denied, ss.files_denied == 1 ? "y" : "ies");
	prof__set_meta(c->prof, &c->meta);
	report_losses(&c->meta);
	if (pr->uw)
		report_unwind(pr);
	if (c->news_lost)
		p_info("%llu reports of processes sampled for the first time were lost (ring "
		       "buffer full); their maps were read at the next drain",
		       (unsigned long long)c->news_lost);
	capture__say_fail_hints(c, "--max-stacks", pr->o.max_stacks);
	if (c->meta.lost_off_full)
		p_warn("the off-CPU start map was full: raise --max-threads (now %llu)",
		       (unsigned long long)pr->o.max_threads);
	if (pr->o.mode != PROF_MODE_CPU)
		p_info("%llu off-CPU periods, %.3f s off the CPU in all%s",
		       (unsigned long long)(c->meta.off_periods + c->off_pending),
		       off_total(c->prof) / 1e9, c->off_pending ? " (threads still off the CPU "
		       "at the end counted up to it)" : "");
	if (c->meta.off_every_max > 1)
		p_info("in a storm of context switches 1 in %llu at the most was noted, its time "
		       "counted as many times (--switch-rate %llu; 0 notes every one)",
		       (unsigned long long)c->meta.off_every_max,
		       (unsigned long long)pr->o.switch_rate);
	if (prof__total(c->prof))
		return;
	if (pr->o.mode == PROF_MODE_OFFCPU && pr->o.states_given)
		p_warn("no off-CPU time in %s: the targets did not leave the CPU in that state "
		       "while tracing", prof__states_name(pr->o.states));
	else if (pr->o.mode == PROF_MODE_OFFCPU)
		p_warn("no off-CPU time: the targets did not leave the CPU while tracing");
	else
		p_warn("no samples: the targets did not run on a CPU while sampling");
}

int profiler__load(struct profiler *pr)
{
	return open_model(pr) || open_load_bpf(pr) ? -1 : 0;
}

int profiler__attach(struct profiler *pr)
{
	return attach_bpf(pr);
}

int profiler__run(struct profiler *pr)
{
	uint64_t t0 = now_ns();

	pr->rate_t = t0;
	/* no table built past the capture's end */
	if (pr->uw && pr->o.secs)
		unwinder__set_deadline(pr->uw, t0 + pr->o.secs * 1000000000ull);
	return sample_loop(pr, t0) || stop_capture(pr, t0) ? -1 : 0;
}

void profiler__report(struct profiler *pr)
{
	report_capture(pr);
}

void profiler__free(struct profiler *pr)
{
	if (!pr)
		return;
	perfev__close(&pr->sampling);
	bpf_link__destroy(pr->exec_link);
	bpf_link__destroy(pr->switch_link);
	bpf_link__destroy(pr->wakeup_link);
	capture__free(&pr->c);
	unwinder__free(pr->uw);
	rtnames__free(pr->rt);
	elfsym__set_debuginfod(NULL);
	debuginfod__close(pr->dbg);
	cficache__close(pr->cache);
	profile_bpf__destroy(pr->skel);
	stackcache__free(pr->c.stacks);
	symbolizer__free(pr->c.sz);
	prof__free(pr->c.prof);
	free(pr->o.pids);
	free(pr->starts);
	free(pr);
}
