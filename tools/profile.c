// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope profile: sample CPU stacks of processes in the pod with BPF,
 * symbolize them (ELF, perf maps, kallsyms) and write folded stacks, pprof,
 * JSON or a top table.
 *
 * Counts are aggregated in the kernel in one of two maps; every few seconds
 * user space flips the "active" index, waits for in-flight programs (they
 * run for microseconds in the timer interrupt) and drains the idle map, so
 * memory stays bounded and no increment races with the drain. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "commands.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "sym/perfmap.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "prof/prof.h"
#include "dotnet/r2r.h"
#include "profile.h"
#include "profile.skel.h"
#include "sym/stackcache.h"
#include "sym/symbolize.h"
#include "core/util.h"

#define MAX_OUTPUTS 8
#define DRAIN_NS (2ull * 1000000000ull)
/* Entries a batch read of the count maps / the stack store asks for. The
 * kernel hands out whole hash buckets and refuses (ENOSPC) a batch smaller
 * than the first bucket; buckets rarely hold more than a few entries. */
#define COUNT_BATCH 1024
#define STACK_BATCH 64

enum out_format { FMT_NONE, FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_TOP, FMT_JSON };

struct output {
	const char *path;
	enum out_format fmt;
	struct outfile *of;	/* opened before sampling, written at the end */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void help(void)
{
	printf(
"sidescope profile: sample the CPU stacks of processes in the pod\n"
"\n"
"USAGE: sidescope profile [-p PID[,PID...]] [-n NAME] [--cgroup PATH] [-a]\n"
"                         [-F HZ] [-d SECONDS] [-o FILE]... [--format FMT]\n"
"                         [--user-only|--kernel-only] [-v]\n"
"\n"
"Samples on-CPU stacks with BPF (software cpu-clock, every CPU), counts them\n"
"in the kernel and symbolizes them with ELF symbols, perf maps of JIT\n"
"runtimes (/tmp/perf-PID.map, also in the app container's own /tmp) and\n"
"kernel symbols. PIDs are those of this PID namespace (the pod's).\n"
"\n"
"OPTIONS:\n"
"  -p, --pid PIDS      profile these processes (comma-separated); a PID means\n"
"                      the process it names at the start: once that exits,\n"
"                      another process given the same PID is not sampled\n"
"  -n, --name NAME     profile the processes named NAME (comm, executable or\n"
"                      first argument; '.dll' optional)\n"
"      --cgroup PATH   profile one cgroup (v2), e.g. a container\n"
"  -a, --all           profile everything this PID namespace shows\n"
"  -F, --frequency HZ  samples per second per CPU (default 99)\n"
"  -d, --duration S    seconds to sample (default 30; 0: until SIGINT/SIGTERM)\n"
"  -o, --output FILE   write FILE; the format follows the extension: .folded\n"
"                      or .txt (folded stacks), .pb.gz or .pprof (pprof),\n"
"                      .json, .svg (flame graph); may be repeated\n"
"      --format FMT    folded, pprof, svg, top or json (overrides extension)\n"
"      --json          without -o: the profile as JSON on stdout (as -o -\n"
"                      --format json); messages as JSON lines on stderr\n"
"      --user-only     user-space stacks only\n"
"      --kernel-only   kernel stacks only\n"
"      --max-stacks N  distinct stacks held in the kernel between two drains\n"
"                      (default 8192, about 1 KB of kernel memory each)\n"
"      --max-perf-map SIZE  read at most SIZE of each perf map, its newest\n"
"                      lines (default 256M; k, M, G suffixes)\n"
"      --split pid|tid  folded stacks and flame graphs: one line per process\n"
"                      (NAME-PID) or thread (NAME-PID/TID) instead of one\n"
"                      per stack\n"
"  -v, --verbose       debug messages, libbpf's included\n"
"  -h, --help          print this help\n"
"\n"
"Without -o, prints the functions with the most samples (self and total).\n"
"Every output is opened before sampling starts: a missing or read-only\n"
"directory, a directory given as FILE or an unknown extension fails at\n"
"once. pprof is never written to a terminal.\n"
"With -p or -n the capture stops once every target has exited (\"target PID\n"
"N exited\"). SIGINT and SIGTERM end it early, at any moment: the outputs\n"
"hold what was collected (nothing, before sampling began) and the exit\n"
"status is 0; only a signal in the first milliseconds, before sidescope has\n"
"set up, ends it with 128+N and no output.\n"
"\n"
"EXAMPLES:\n"
"  sidescope profile -n dotnet -d 30                 # top functions\n"
"  sidescope profile -p 7 -o cpu.pb.gz -o cpu.folded # pprof and folded\n"
"  sidescope profile -a -F 999 -d 10 -o all.json     # whole pod, 999 Hz\n"
"  sidescope profile -p 7 -d 0 -o cpu.pb.gz          # until Ctrl-C/SIGTERM\n");
}

static enum out_format format_of(const char *s)
{
	if (!strcmp(s, "folded") || !strcmp(s, "txt"))
		return FMT_FOLDED;
	if (!strcmp(s, "pprof"))
		return FMT_PPROF;
	if (!strcmp(s, "svg"))
		return FMT_SVG;
	if (!strcmp(s, "top"))
		return FMT_TOP;
	if (!strcmp(s, "json"))
		return FMT_JSON;
	return FMT_NONE;
}

static enum out_format format_of_path(const char *p)
{
	if (str_has_suffix(p, ".folded") || str_has_suffix(p, ".txt"))
		return FMT_FOLDED;
	if (str_has_suffix(p, ".pb.gz") || str_has_suffix(p, ".pprof") ||
	    str_has_suffix(p, ".pb"))
		return FMT_PPROF;
	if (str_has_suffix(p, ".svg"))
		return FMT_SVG;
	if (str_has_suffix(p, ".json"))
		return FMT_JSON;
	return FMT_NONE;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!log_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct capture {
	const pid_t *pids;	/* -p/-n targets and their start times */
	const uint64_t *starts;
	int npids;
	uint64_t pid_reused;	/* samples of another process with a target's PID */
	uint64_t news_lost;	/* reports of first-sampled processes lost */
	struct stackcache *stacks;	/* stacks copied out of the BPF store */
	struct profile_bpf *skel;
	struct symbolizer *sz;
	struct prof *prof;
	struct prof_meta meta;
	int stacks_fd;
	uint64_t drains;
	char title[128];
	struct ring_buffer *news;	/* processes sampled for the first time */
	struct profile_key *keys;	/* a drain's counts, read in batches */
	__u64 *vals;
	size_t keys_cap;
	__u64 *stack_keys;		/* one batch of the stack store */
	struct profile_stack *stack_vals;
};

/* The stack of HASH: from the cache (take_stacks copied the store into it
 * at this drain), else looked up in the store (and deleted there). NULL
 * when lost. */
static const uint64_t *get_stack(struct capture *c, __u64 hash)
{
	struct profile_stack st;
	const uint64_t *ips;
	int depth;

	ips = stackcache__get(c->stacks, hash, c->drains);
	if (ips)
		return ips;
	if (bpf_map_lookup_elem(c->stacks_fd, &hash, &st))
		return NULL;
	for (depth = 0; depth < PROFILE_MAX_DEPTH && st.ips[depth]; depth++)
		;
	ips = stackcache__put(c->stacks, hash, (const uint64_t *)st.ips, (size_t)depth, c->drains);
	if (!ips)
		return NULL;	/* out of memory: keep it in the store */
	bpf_map_delete_elem(c->stacks_fd, &hash);
	return ips;
}

static int add_stack_frames(struct capture *c, __u64 hash, bool kernel, pid_t pid,
			    struct prof_frame *frames, size_t *n)
{
	struct sym_frame sf;
	const uint64_t *ips;
	int i, err;

	if (!hash)
		return 0;
	ips = get_stack(c, hash);
	if (!ips) {
		c->meta.missing_stacks++;
		frames[(*n)++] = (struct prof_frame){ kernel ? "[lost kernel stack]" :
						      "[lost user stack]", FRAME_UNKNOWN, "", "" };
		return 0;
	}
	/* BPF gives the leaf first; the model wants the outermost first */
	for (i = (int)ips[0]; i >= 1; i--) {
		/* a caller's address is its return address, the instruction
		 * after the call: one byte back is inside the call, which names
		 * the right function and line when the call ends a function
		 * (noreturn) and is the address pprof and its symbolizers expect */
		uint64_t ip = i > 1 ? ips[i] - 1 : ips[i];

		err = kernel ? symbolizer__kernel(c->sz, ip, &sf) :
			       symbolizer__user_at(c->sz, pid, ip, i > 1 ? SYM_CALLER : 0, &sf);
		if (err)
			return err;
		frames[(*n)++] = (struct prof_frame){
			.name = sf.name, .kind = sf.kind, .module = sf.module,
			.build_id = sf.build_id, .addr = sf.addr, .map_start = sf.map_start,
			.map_limit = sf.map_limit, .map_offset = sf.map_offset,
			.lines_ref = sf.lines, .unresolved = sf.unresolved,
		};
	}
	return 0;
}

/* Read and delete every entry of hash map FD into c->keys/c->vals, in
 * batches (a few bpf() calls however many entries). Return how many, or a
 * negative errno. */
static ssize_t take_counts(struct capture *c, int fd)
{
	__u32 in = 0, out = 0, cnt, chunk = COUNT_BATCH;
	size_t n = 0;
	bool first = true;
	int err;

	for (;;) {
		if (c->keys_cap - n < chunk) {
			size_t ncap = c->keys_cap + (c->keys_cap > chunk ? c->keys_cap : chunk);
			struct profile_key *nk = realloc(c->keys, ncap * sizeof(*nk));
			__u64 *nv;

			if (!nk)
				return -ENOMEM;
			c->keys = nk;
			nv = realloc(c->vals, ncap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			c->vals = nv;
			c->keys_cap = ncap;
		}
		/* what the kernel does not fill stays defined (valgrind does
		 * not know this command writes the buffers) */
		memset(c->keys + n, 0, chunk * sizeof(*c->keys));
		memset(c->vals + n, 0, chunk * sizeof(*c->vals));
		cnt = chunk;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, c->keys + n,
						      c->vals + n, &cnt, NULL);
		err = err ? -errno : 0;
		n += cnt;
		if (err == -ENOENT || (!err && !cnt))
			return (ssize_t)n;	/* every bucket done */
		if (err == -ENOSPC && !cnt && chunk < (1u << 20)) {
			chunk *= 2;	/* a bucket larger than the batch */
			continue;
		}
		if (err)
			return err;
		in = out;
		first = false;
	}
}

/* Copy the whole stack store into the stack cache and empty it, in batches.
 * The drained counts' stacks are all there or cached: a sample stores its
 * stacks before it counts, and no sample counts into the map being drained
 * any more. Stacks of samples still counting into the other map are copied
 * too and wait in the cache for the next drain. */
static int take_stacks(struct capture *c)
{
	__u32 in = 0, out = 0, cnt, i;
	bool first = true;
	int err, depth;

	if (!c->stack_keys) {
		c->stack_keys = calloc(STACK_BATCH, sizeof(*c->stack_keys));
		c->stack_vals = calloc(STACK_BATCH, sizeof(*c->stack_vals));
		if (!c->stack_keys || !c->stack_vals)
			return -ENOMEM;
	}
	for (;;) {
		/* ENOSPC would need a bucket of over STACK_BATCH stacks: with as
		 * many buckets as entries, not seen */
		memset(c->stack_keys, 0, STACK_BATCH * sizeof(*c->stack_keys));
		memset(c->stack_vals, 0, STACK_BATCH * sizeof(*c->stack_vals));
		cnt = STACK_BATCH;
		err = bpf_map_lookup_and_delete_batch(c->stacks_fd, first ? NULL : &in, &out,
						      c->stack_keys, c->stack_vals, &cnt, NULL);
		err = err ? -errno : 0;
		for (i = 0; i < cnt; i++) {
			const __u64 *ips = c->stack_vals[i].ips;

			if (stackcache__get(c->stacks, c->stack_keys[i], c->drains))
				continue;	/* copied at an earlier drain */
			for (depth = 0; depth < PROFILE_MAX_DEPTH && ips[depth]; depth++)
				;
			/* without memory for it the stack is lost: counted
			 * as missing when a count names it */
			stackcache__put(c->stacks, c->stack_keys[i], (const uint64_t *)ips,
					(size_t)depth, c->drains);
		}
		if (err == -ENOENT || (!err && !cnt))
			return 0;	/* every bucket done */
		if (err)
			return err;
		in = out;
		first = false;
	}
}

/* The start time a -p/-n target had (0: not a target, or unknown). */
static uint64_t target_start(const struct capture *c, pid_t pid)
{
	int j;

	for (j = 0; j < c->npids; j++)
		if (c->pids[j] == pid)
			return c->starts[j];
	return 0;
}

/* Capture what symbolizes PID, now, while it lives. */
static void watch_pid(struct capture *c, pid_t pid)
{
	uint64_t start = target_start(c, pid);

	/* a target: only while the PID still names it */
	if (start)
		symbolizer__watch_start(c->sz, pid, start);
	else
		symbolizer__watch(c->sz, pid);
}

/* Ring buffer callback: a process was sampled for the first time. */
static int on_new_process(void *ctx, void *data, size_t size)
{
	const struct profile_new *ev = data;

	if (size >= sizeof(*ev) && ev->pid)
		watch_pid(ctx, (pid_t)ev->pid);
	return 0;
}

/* Before symbolizing K: PID watched, its maps holding the user stack. */
static void revisit(struct capture *c, const struct profile_key *k)
{
	const uint64_t *ips = k->ustack ? stackcache__get(c->stacks, k->ustack, c->drains) : NULL;

	symbolizer__revisit(c->sz, (pid_t)k->pid, target_start(c, (pid_t)k->pid),
			    ips ? ips + 1 : NULL, ips ? (size_t)ips[0] : 0);
}

/* Move every count of map FD into the profile. */
static int drain_map(struct capture *c, int fd)
{
	struct prof_frame frames[2 * PROFILE_MAX_DEPTH + 2];
	struct profile_key *keys;
	size_t nkeys, i, n;
	ssize_t got;
	__u64 count;
	int err = 0;

	got = take_counts(c, fd);
	if (got < 0)
		return (int)got;
	nkeys = (size_t)got;
	keys = c->keys;
	err = take_stacks(c);
	if (err)
		return err;
	for (i = 0; i < nkeys; i++) {
		struct profile_key *k = &keys[i];
		char comm[PROFILE_COMM_LEN + 1];
		struct prof_sample smp;

		count = c->vals[i];
		revisit(c, k);
		n = 0;
		err = add_stack_frames(c, k->ustack, false, (pid_t)k->pid, frames, &n);
		if (!err)
			err = add_stack_frames(c, k->kstack, true, (pid_t)k->pid, frames, &n);
		if (err)
			goto cleanup;
		memcpy(comm, k->comm, PROFILE_COMM_LEN);
		comm[PROFILE_COMM_LEN] = '\0';
		/* the key names the thread; the process's name is the one its
		 * maps were read with */
		smp = (struct prof_sample){ .pid = k->pid, .tid = k->tid, .thread = comm,
					    .comm = symbolizer__comm(c->sz, (pid_t)k->pid) };
		err = prof__add(c->prof, &smp, frames, n, count);
		if (err)
			goto cleanup;
	}
cleanup:
	return err;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop_signal)
		;
}

/* Flip the active count map and drain the other one. */
static int drain(struct capture *c)
{
	__u32 old = c->skel->bss->active;
	int fd, err;

	c->skel->bss->active = !old;
	__sync_synchronize();
	/* a program that read the old index finishes within microseconds */
	sleep_ns(2000000);
	/* processes first sampled meanwhile: their maps before their stacks */
	if (c->news)
		ring_buffer__consume(c->news);
	fd = bpf_map__fd(old ? c->skel->maps.counts1 : c->skel->maps.counts0);
	c->drains++;
	err = drain_map(c, fd);
	/* a stack still counted after its delete from the store is looked up
	 * at the next drain; older ones are not needed again */
	stackcache__sweep(c->stacks, c->drains, 2);
	p_debug("drain %llu: %s map", (unsigned long long)c->drains, old ? "second" : "first");
	return err;
}

static void read_stats(struct capture *c)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.stats);
	__u64 sum[PSTAT_MAX] = { 0 }, *vals;
	__u32 i;
	int cpu;

	if (ncpus <= 0)
		return;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return;
	for (i = 0; i < PSTAT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (cpu = 0; cpu < ncpus; cpu++)
			sum[i] += vals[cpu];
	}
	free(vals);
	c->meta.samples = sum[PSTAT_SAMPLES];
	c->meta.lost_ustack = sum[PSTAT_USTACK_ERR];
	c->meta.lost_kstack = sum[PSTAT_KSTACK_ERR];
	c->meta.trunc_ustack = sum[PSTAT_USTACK_TRUNC];
	c->meta.trunc_kstack = sum[PSTAT_KSTACK_TRUNC];
	c->meta.lost_stacks_full = sum[PSTAT_STACKS_FULL];
	c->meta.lost_counts_full = sum[PSTAT_COUNTS_FULL] + sum[PSTAT_SCRATCH_ERR];
	c->pid_reused = sum[PSTAT_PID_REUSED];
	c->news_lost = sum[PSTAT_NEW_LOST];
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
	add_count(lost, sizeof(lost), "stack store full", m->lost_stacks_full);
	add_count(lost, sizeof(lost), "count map full", m->lost_counts_full);
	add_count(lost, sizeof(lost), "missing from the store", m->missing_stacks);
	add_count(cut, sizeof(cut), "user", m->trunc_ustack);
	add_count(cut, sizeof(cut), "kernel", m->trunc_kstack);
	if (lost[0] && cut[0])
		p_warn("stacks lost: %s; truncated at %d frames: %s", lost, PROFILE_MAX_DEPTH, cut);
	else if (lost[0])
		p_warn("stacks lost: %s", lost);
	else if (cut[0])
		p_warn("no stack lost; truncated at %d frames: %s", PROFILE_MAX_DEPTH, cut);
}

/* What the kernel's refusal means (a missing capability, seccomp). */
static const char *cap_hint(enum privhint_need need, int err)
{
	static char buf[192];

	return privhint(need, err, buf, sizeof(buf));
}

static int open_perf_events(struct capture *c, unsigned int hz, struct bpf_link ***links_out,
			    int *nlinks)
{
	struct perf_event_attr attr;
	struct bpf_link **links;
	int ncpus = libbpf_num_possible_cpus(), cpu, fd, n = 0, err;

	links = calloc(ncpus > 0 ? ncpus : 1, sizeof(*links));
	if (!links)
		return -ENOMEM;
	*links_out = links;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = sizeof(attr);
	attr.freq = 1;
	attr.sample_freq = hz;
	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;	/* offline CPU */
			err = errno;
			p_err("failed to open perf event on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_PERF, err));
			*nlinks = n;
			return -err;
		}
		links[n] = bpf_program__attach_perf_event(c->skel->progs.do_sample, fd);
		if (!links[n]) {
			err = errno;
			close(fd);
			p_err("failed to attach BPF program on cpu %d: %s%s", cpu, strerror(err),
			      cap_hint(PRIVHINT_BPF, err));
			*nlinks = n;
			return -err;
		}
		n++;
	}
	*nlinks = n;
	return 0;
}

/* Open every output before anything is loaded: a missing or read-only
 * directory, a directory given as a file, a link or FIFO planted there,
 * binary data for a terminal, each is one line now rather than a lost
 * capture later. Return 0, or 1 once every problem is said. */
static int open_outputs(struct output *outs, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		outs[i].of = outfile__open(outs[i].path);
		if (!outs[i].of) {
			p_err("cannot write %s: %s", outs[i].path, outfile__strerror(errno));
			bad = 1;
			continue;
		}
		if (outs[i].fmt == FMT_PPROF && isatty(fileno(outfile__fp(outs[i].of)))) {
			p_err("pprof is binary: not writing it to a terminal (give -o FILE.pb.gz, "
			      "or pipe it)");
			bad = 1;
		}
	}
	if (bad)
		for (i = 0; i < n; i++) {
			outfile__abort(outs[i].of);
			outs[i].of = NULL;
		}
	return bad;
}

/* Write and commit one output opened by open_outputs. */
static int write_output(struct capture *c, struct output *o)
{
	struct outfile *of = o->of;
	int err;

	o->of = NULL;
	switch (o->fmt) {
	case FMT_FOLDED:
		err = prof__write_folded(c->prof, outfile__fp(of));
		break;
	case FMT_PPROF:
		err = prof__write_pprof(c->prof, outfile__fp(of));
		break;
	case FMT_JSON:
		err = prof__write_json(c->prof, outfile__fp(of));
		break;
	case FMT_TOP:
		err = prof__write_top(c->prof, outfile__fp(of), 25);
		break;
	case FMT_SVG:
		err = prof__write_svg(c->prof, outfile__fp(of), c->title);
		break;
	default:
		err = -ENOTSUP;
		break;
	}
	if (err) {
		outfile__abort(of);
		p_err("cannot write %s: %s", o->path, strerror(-err));
		return err;
	}
	err = outfile__commit(of);
	if (err)
		p_err("cannot write %s: %s", o->path, outfile__strerror(err));
	return err;
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

/* Whether PID is still the process that started at START (0: any), and
 * not a zombie. */
static bool target_alive(pid_t pid, uint64_t start)
{
	char path[64], *buf = NULL, *p;
	uint64_t now = 0;
	bool alive;

	snprintf(path, sizeof(path), "%s/%d/stat", proc__root(), (int)pid);
	if (read_file(path, &buf, NULL, 4096))
		return false;
	p = strrchr(buf, ')');
	alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X' &&
		proc__parse_stat_starttime(buf, &now) == 0 && (!start || now == start);
	free(buf);
	return alive;
}

static bool any_alive(const struct capture *c)
{
	int i;

	for (i = 0; i < c->npids; i++)
		if (target_alive(c->pids[i], c->starts[i]))
			return true;
	return false;
}

/* The boot-time offset of our time namespace in clock ticks: /proc shows
 * start times shifted by it, BPF sees them unshifted. */
static uint64_t timens_boot_ticks(uint64_t ns_per_tick)
{
	char *buf = NULL, *line, *save = NULL;
	long long sec, nsec;
	uint64_t ticks = 0;

	if (read_file("/proc/self/timens_offsets", &buf, NULL, 4096))
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "boottime %lld %lld", &sec, &nsec) == 2 && sec >= 0 && nsec >= 0)
			ticks = ((uint64_t)sec * 1000000000ull + (uint64_t)nsec) / ns_per_tick;
	free(buf);
	return ticks;
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

static const struct pe_resolver r2r_resolver = {
	.open = r2r__pe_open,
	.lookup = r2r__pe_lookup,
	.close = r2r__pe_close,
};

int cmd_profile(int argc, char **argv)
{
	enum { OPT_CGROUP = 256, OPT_FORMAT, OPT_USER, OPT_KERNEL, OPT_MAX_STACKS,
	       OPT_MAX_PERF_MAP, OPT_SPLIT, OPT_JSON };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "all", no_argument, NULL, 'a' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "user-only", no_argument, NULL, OPT_USER },
		{ "kernel-only", no_argument, NULL, OPT_KERNEL },
		{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
		{ "max-perf-map", required_argument, NULL, OPT_MAX_PERF_MAP },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct output outs[MAX_OUTPUTS];
	struct capture c = { .stacks_fd = -1 };
	struct bpf_link **links = NULL, *exec_link = NULL;
	const char *name = NULL, *cgroup = NULL;
	enum out_format forced = FMT_NONE;
	pid_t *pids = NULL;
	uint64_t *starts = NULL, ns_per_tick = 10000000, boot_ticks = 0;
	long tck;
	int npids = 0, nouts = 0, nlinks = 0, i, opt, err, ret = 1, targets;
	bool all = false, user_only = false, kernel_only = false, json = false, tty;
	uint64_t hz = 99, secs = 30, dev, ino, cgid = 0, t0, last_drain, now, last_tty = 0;
	uint64_t max_stacks = 8192;
	unsigned int split = 0;
	char cgroup_procs[PATH_MAX + 16] = "";
	struct sigaction sa;
	struct timespec wall;

	/* first of all: a signal at any later moment ends the capture cleanly */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	while ((opt = getopt_long(argc, argv, "p:n:aF:d:o:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			free(pids);
			pids = NULL;
			npids = parse_pid_list(optarg, &pids);
			if (npids <= 0) {
				ret = usage_error("invalid PID list '%s'", optarg);
				goto cleanup;
			}
			break;
		case 'n':
			name = optarg;
			break;
		case OPT_CGROUP:
			cgroup = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'F':
			if (parse_u64(optarg, 1, 10000, &hz)) {
				ret = usage_error("invalid frequency '%s' (1-10000 Hz)", optarg);
				goto cleanup;
			}
			break;
		case 'd':
			if (parse_u64(optarg, 0, 31 * 86400, &secs)) {
				ret = usage_error("invalid duration '%s' (seconds)", optarg);
				goto cleanup;
			}
			break;
		case 'o':
			if (nouts == MAX_OUTPUTS) {
				ret = usage_error("at most %d outputs", MAX_OUTPUTS);
				goto cleanup;
			}
			outs[nouts].path = optarg;
			outs[nouts].of = NULL;
			outs[nouts++].fmt = format_of_path(optarg);
			break;
		case OPT_FORMAT:
			forced = format_of(optarg);
			if (forced == FMT_NONE) {
				ret = usage_error("unknown format '%s' (folded, pprof, svg, top, json)",
						  optarg);
				goto cleanup;
			}
			break;
		case OPT_USER:
			user_only = true;
			break;
		case OPT_KERNEL:
			kernel_only = true;
			break;
		case OPT_MAX_STACKS:
			if (parse_u64(optarg, 64, 1u << 20, &max_stacks)) {
				ret = usage_error("invalid --max-stacks '%s' (64-1048576)", optarg);
				goto cleanup;
			}
			break;
		case OPT_MAX_PERF_MAP: {
			uint64_t bytes;

			if (parse_size(optarg, 1 << 20, 4ull << 30, &bytes)) {
				ret = usage_error("invalid --max-perf-map '%s' (a size from 1M to 4G, "
						  "e.g. 512M)", optarg);
				goto cleanup;
			}
			perfmap__set_max((size_t)bytes);
			break;
		}
		case OPT_SPLIT: {
			if (strcmp(optarg, "pid") && strcmp(optarg, "tid")) {
				ret = usage_error("invalid --split '%s' (pid or tid)", optarg);
				goto cleanup;
			}
			split = optarg[0] == 'p' ? PROF_SPLIT_PID : PROF_SPLIT_TID;
			break;
		}
		case OPT_JSON:
			json = true;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'h':
			help();
			ret = 0;
			goto cleanup;
		default:
			ret = usage_hint();
			goto cleanup;
		}
	}
	if (optind < argc) {
		ret = usage_error("unexpected argument '%s'", argv[optind]);
		goto cleanup;
	}
	targets = (npids > 0) + (name != NULL) + (cgroup != NULL) + all;
	if (targets != 1) {
		ret = usage_error("give exactly one target: -p PID, -n NAME, --cgroup PATH or -a");
		goto cleanup;
	}
	if (user_only && kernel_only) {
		ret = usage_error("--user-only and --kernel-only exclude each other");
		goto cleanup;
	}
	if (json && forced != FMT_NONE && forced != FMT_JSON) {
		ret = usage_error("--json and --format %s exclude each other",
				  forced == FMT_FOLDED ? "folded" : forced == FMT_PPROF ? "pprof" :
				  forced == FMT_SVG ? "svg" : "top");
		goto cleanup;
	}
	if (!nouts) {
		outs[0].path = "-";
		outs[0].fmt = forced != FMT_NONE ? forced : json ? FMT_JSON : FMT_TOP;
		outs[0].of = NULL;
		nouts = 1;
	}
	for (i = 0; i < nouts; i++) {
		struct stat sb;

		if (forced != FMT_NONE)
			outs[i].fmt = forced;
		if (strcmp(outs[i].path, "-") && stat(outs[i].path, &sb) == 0 &&
		    S_ISDIR(sb.st_mode)) {
			ret = usage_error("-o %s: is a directory; give a file in it, e.g. "
					  "%s/cpu.pb.gz", outs[i].path, outs[i].path);
			goto cleanup;
		}
		if (outs[i].fmt == FMT_NONE) {
			ret = usage_error("cannot tell the format of '%s' from its name: end it in "
					  ".folded, .pb.gz, .svg or .json, or use --format",
					  outs[i].path);
			goto cleanup;
		}
	}

	/* targets */
	if (npids) {
		for (i = 0; i < npids; i++) {
			char msg[512];

			if (proc__check_target(pids[i], msg, sizeof(msg))) {
				p_err("%s", msg);
				goto cleanup;
			}
		}
	} else if (name) {
		npids = proc__find_by_name(name, &pids);
		if (npids < 0) {
			p_err("cannot list processes: %s", strerror(-npids));
			goto cleanup;
		}
		if (npids == 0) {
			p_err("no process matches '%s' (see 'sidescope ps')", name);
			goto cleanup;
		}
		say_chosen(name, pids, npids);
	} else if (cgroup) {
		char path[PATH_MAX];
		struct stat sb;
		struct stat u;

		/* relative paths: under the v2 hierarchy, which a hybrid
		 * layout mounts at /sys/fs/cgroup/unified */
		snprintf(path, sizeof(path), "%s%s",
			 cgroup[0] == '/' ? "" :
			 stat("/sys/fs/cgroup/unified/cgroup.procs", &u) == 0 ?
			 "/sys/fs/cgroup/unified/" : "/sys/fs/cgroup/", cgroup);
		if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
			p_err("no cgroup directory %s", path);
			goto cleanup;
		}
		cgid = sb.st_ino;	/* a v2 cgroup's id is its directory's inode */
		snprintf(cgroup_procs, sizeof(cgroup_procs), "%s/cgroup.procs", path);
	}
	/* a target is the process its PID names now (PIDs get reused) */
	tck = sysconf(_SC_CLK_TCK);
	if (tck > 0 && tck <= 1000000000L)
		ns_per_tick = 1000000000ull / (uint64_t)tck;
	boot_ticks = timens_boot_ticks(ns_per_tick);
	starts = calloc(npids > 0 ? npids : 1, sizeof(*starts));
	if (!starts) {
		p_err("out of memory");
		goto cleanup;
	}
	for (i = 0; i < npids; i++)
		if (proc__start_time(pids[i], &starts[i]))
			starts[i] = 0;
	c.pids = pids;
	c.starts = starts;
	c.npids = npids;
	if (npids == 1) {
		struct proc_status st;

		if (proc__read_status(pids[0], &st) == 0)
			snprintf(c.title, sizeof(c.title), "CPU profile: %s (PID %d)", st.name,
				 (int)pids[0]);
	} else if (npids) {
		snprintf(c.title, sizeof(c.title), "CPU profile: %d processes", npids);
	} else {
		snprintf(c.title, sizeof(c.title), "CPU profile: %s", cgroup ? cgroup : "all");
	}
	err = proc__pidns(0, &dev, &ino);
	if (err) {
		p_err("cannot read this process's PID namespace: %s", strerror(-err));
		goto cleanup;
	}

	if (open_outputs(outs, nouts))
		goto cleanup;

	libbpf_set_print(libbpf_print);
	c.sz = symbolizer__new();
	/* ReadyToRun code in mapped .dll images is named from the image itself;
	 * SIDESCOPE_NO_R2R=1 leaves it to perf maps (for comparisons) */
	if (c.sz && !getenv("SIDESCOPE_NO_R2R"))
		symbolizer__set_pe_resolver(c.sz, &r2r_resolver);
	c.prof = prof__new();
	c.stacks = stackcache__new();
	if (!c.sz || !c.prof || !c.stacks) {
		p_err("out of memory");
		goto cleanup;
	}
	prof__set_split(c.prof, split);
	for (i = 0; i < npids; i++)
		if (starts[i])
			symbolizer__watch_start(c.sz, pids[i], starts[i]);
	if (cgroup_procs[0])
		watch_cgroup(c.sz, cgroup_procs);
	if (all) {
		/* the pod's processes as they are now: a short-lived one is
		 * still symbolized after it exits */
		pid_t *list = NULL;
		int n = proc__list(&list);

		for (i = 0; i < n; i++)
			if (list[i] != getpid() && !proc__is_kernel_thread(list[i]))
				symbolizer__watch(c.sz, list[i]);
		free(list);
	}

	c.skel = profile_bpf__open();
	if (!c.skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), cap_hint(PRIVHINT_BPF, err));
		goto cleanup;
	}
	c.skel->rodata->pidns_dev = dev;
	c.skel->rodata->pidns_ino = ino;
	c.skel->rodata->filter_mode = npids ? PROFILE_FILTER_PIDS :
				      cgroup ? PROFILE_FILTER_CGROUP : PROFILE_FILTER_ALL;
	c.skel->rodata->filter_cgroup = cgid;
	c.skel->rodata->want_user = !kernel_only;
	c.skel->rodata->want_kernel = !user_only;
	c.skel->rodata->ns_per_tick = ns_per_tick;
	bpf_map__set_max_entries(c.skel->maps.pids, npids > 0 ? npids : 1);
	/* about 1 KB of kernel memory a stack, preallocated */
	bpf_map__set_max_entries(c.skel->maps.stacks, (__u32)max_stacks);
	bpf_map__set_max_entries(c.skel->maps.counts0, (__u32)max_stacks);
	bpf_map__set_max_entries(c.skel->maps.counts1, (__u32)max_stacks);
	/* processes reported once: the targets, or as many as a pod runs */
	bpf_map__set_max_entries(c.skel->maps.seen, npids ? (__u32)npids * 2 + 64 : 16384);
	err = profile_bpf__load(c.skel);
	if (err) {
		p_err("failed to load BPF program: %s%s", strerror(-err), cap_hint(PRIVHINT_BPF, -err));
		goto cleanup;
	}
	c.stacks_fd = bpf_map__fd(c.skel->maps.stacks);
	c.news = ring_buffer__new(bpf_map__fd(c.skel->maps.news), on_new_process, &c, NULL);
	if (!c.news) {
		err = errno;
		p_err("cannot read the BPF ring buffer: %s", strerror(err));
		goto cleanup;
	}
	/* an exec makes the next sample report the process again (its maps
	 * changed); without it, the next drain still finds the new maps */
	exec_link = bpf_program__attach(c.skel->progs.on_exec);
	if (!exec_link)
		p_debug("no exec tracepoint (%s): new program images are read at drains",
			strerror(errno));
	for (i = 0; i < npids; i++) {
		__u32 k = (__u32)pids[i];
		__u64 v = starts[i] > boot_ticks ? starts[i] - boot_ticks : 0;

		bpf_map_update_elem(bpf_map__fd(c.skel->maps.pids), &k, &v, BPF_ANY);
	}

	clock_gettime(CLOCK_REALTIME, &wall);
	c.meta.time_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	c.meta.hz = (unsigned int)hz;
	c.meta.period_ns = 1000000000ull / hz;
	err = open_perf_events(&c, (unsigned int)hz, &links, &nlinks);
	if (err)
		goto cleanup;
	tty = isatty(STDERR_FILENO);
	t0 = last_drain = now_ns();
	p_debug("sampling at %llu Hz on %d CPUs", (unsigned long long)hz, nlinks);
	while (!stop_signal) {
		now = now_ns();
		if (secs && now - t0 >= secs * 1000000000ull)
			break;
		if (now - last_drain >= DRAIN_NS) {
			err = drain(&c);
			if (err) {
				p_err("cannot read the counts: %s", strerror(-err));
				goto cleanup;
			}
			last_drain = now;
			/* forget exited processes, or -a over hours grows */
			symbolizer__sweep(c.sz);
			if (npids && !any_alive(&c)) {
				if (npids == 1)
					p_info("target PID %d exited; stopping", (int)pids[0]);
				else
					p_info("every target process has exited; stopping");
				break;
			}
		}
		if (tty && now - last_tty >= 100000000ull) {
			last_tty = now;
			read_stats(&c);
			if (secs)
				fprintf(stderr, "\r%s: %llu/%llu s, %llu samples ", log__prog(),
					(unsigned long long)((now - t0) / 1000000000ull),
					(unsigned long long)secs, (unsigned long long)c.meta.samples);
			else
				fprintf(stderr, "\r%s: %llu s, %llu samples (Ctrl-C to stop) ",
					log__prog(), (unsigned long long)((now - t0) / 1000000000ull),
					(unsigned long long)c.meta.samples);
		}
		/* processes first sampled: watched within milliseconds, while
		 * they live (a signal ends the wait early) */
		err = ring_buffer__poll(c.news, 100);
		if (err < 0 && err != -EINTR) {
			p_err("cannot read the BPF ring buffer: %s", strerror(-err));
			goto cleanup;
		}
	}
	if (tty)
		fputc('\n', stderr);
	/* stop sampling, then take what both maps still hold */
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	bpf_link__destroy(exec_link);
	exec_link = NULL;
	c.meta.duration_ns = now_ns() - t0;
	err = drain(&c);
	if (!err)
		err = drain(&c);
	if (err) {
		p_err("cannot read the counts: %s", strerror(-err));
		goto cleanup;
	}
	read_stats(&c);
	if (c.pid_reused)
		p_info("left out %llu samples of another process that got a target's PID",
		       (unsigned long long)c.pid_reused);
	{
		struct symbolizer_stats ss;

		symbolizer__stats(c.sz, &ss);
		c.meta.perfmap_bad_lines = ss.perfmap_bad_lines;
		if (ss.kallsyms_err && !user_only)
			p_warn("kernel symbols unavailable: %s (needs CAP_SYSLOG)",
			       strerror(-ss.kallsyms_err));
		if (ss.files_denied)
			p_warn("%zu binar%s of the targets unreadable: permission denied (other "
			       "users' processes need CAP_SYS_PTRACE; run 'doctor')",
			       ss.files_denied, ss.files_denied == 1 ? "y" : "ies");
	}
	prof__set_meta(c.prof, &c.meta);
	report_losses(&c.meta);
	if (c.news_lost)
		p_info("%llu reports of processes sampled for the first time were lost (ring "
		       "buffer full); their maps were read at the next drain",
		       (unsigned long long)c.news_lost);
	if (c.meta.lost_stacks_full + c.meta.lost_counts_full)
		p_warn("the stack store or the count map was full: raise --max-stacks (now %llu)",
		       (unsigned long long)max_stacks);
	if (!prof__total(c.prof))
		p_warn("no samples: the targets did not run on a CPU while sampling");
	ret = 0;
	{
		int failed = 0;

		for (i = 0; i < nouts; i++) {
			if (write_output(&c, &outs[i])) {
				failed++;
				continue;
			}
			if (strcmp(outs[i].path, "-"))
				p_info("wrote %s", outs[i].path);
		}
		if (failed) {
			ret = 1;
			if (nouts > 1)
				p_err("%d of %d outputs not written", failed, nouts);
		}
	}
	p_debug("%llu samples, %zu stacks, %llu drains",
		(unsigned long long)prof__total(c.prof), prof__nstacks(c.prof),
		(unsigned long long)c.drains);
cleanup:
	for (i = 0; i < nouts; i++)
		outfile__abort(outs[i].of);
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	bpf_link__destroy(exec_link);
	ring_buffer__free(c.news);
	free(c.keys);
	free(c.vals);
	free(c.stack_keys);
	free(c.stack_vals);
	profile_bpf__destroy(c.skel);
	stackcache__free(c.stacks);
	symbolizer__free(c.sz);
	prof__free(c.prof);
	free(pids);
	free(starts);
	return ret;
}
