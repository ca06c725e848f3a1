// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope uprobe: attach uprobes/uretprobes to functions of any binary in
 * the pod and print their arguments and return values, UTF-16 strings
 * (.NET System.String, char16_t*) included. One precompiled BPF program
 * runs a per-probe fetch recipe; events come through a ring buffer and are
 * decoded and formatted here (tools/lib/uprobe/upfmt.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/appfile.h"
#include "commands.h"
#include "dotnet/r2r.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/privhint.h"
#include "uprobe/probespec.h"
#include "core/proc.h"
#include "uprobe/upfmt.h"
#include "uprobe/uplink.h"
#include "uprobe/uptarget.h"
#include "core/json.h"
#include "core/util.h"
#include "uprobe.skel.h"

#define DEFAULT_MAX_STR	256
#define SAVE_MAGIC	"SSUPRB1\n"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

static void help(void)
{
	printf(
"sidescope uprobe: print arguments and return values of functions, UTF-16 too\n"
"\n"
"USAGE: sidescope uprobe [-p PID] [-d SECONDS] [-c COUNT] [-o FILE] [--json]\n"
"                        [--max-str N] [--latency] PROBE...\n"
"\n"
"PROBE:\n"
"  p:BINARY:SYMBOL[+OFFSET] [(FILTER)] [\"FORMAT\"[, ARG...]]   on entry\n"
"  r:BINARY:SYMBOL [(FILTER)] [\"FORMAT\"[, ARG...]]            on return\n"
"  p:BINARY:0xFILEOFFSET ...                                  at a file offset\n"
"  BINARY: an absolute path (with -p, in the target's mount namespace) or a\n"
"  library name: 'c' is libc.so.6 (with -p, among the files PID has mapped).\n"
"  .NET assemblies (.dll) take method names when this build has the\n"
"  ReadyToRun resolver, else a file offset.\n"
"  ARG: arg1..arg6, retval, numbers, +/- constants, *(u8|u16|u32|u64|s8|...\n"
"  *)(EXPR); str(E[,MAX]) bytes, str16(E[,MAX]) NUL-terminated UTF-16,\n"
"  str16(E,LEN) or str16n(E,LEN) LEN UTF-16 units, dotnet_string(E[,MAX]).\n"
"  FILTER: == != < <= > >= && || ! over ARG expressions (run in BPF).\n"
"  FORMAT: %%d %%i %%u %%x %%lx %%ld %%p %%c %%s %%%%, widths like %%-10s.\n"
"\n"
"OPTIONS:\n"
"  -p, --pid PID      trace this process only (PIDs as the pod shows them)\n"
"  -d, --duration S   stop after S seconds (default: until Ctrl-C, or until\n"
"                     PID exits)\n"
"  -c, --count N      stop after N events\n"
"  -o, --output FILE  write events to FILE (atomically, at the end)\n"
"      --json         one JSON object a line, with typed values\n"
"      --max-str N    cut strings after N characters (default %d, max %d)\n"
"      --latency      pair entry and return per thread; log2 histograms\n"
"      --buffer-kb N  ring buffer size in KiB (power of 2; default 4096)\n"
"      --save FILE    also save raw events for --replay\n"
"      --replay FILE  decode and print saved events (no tracing)\n"
"      --check        probe a function of sidescope itself: do uprobes work\n"
"                     here, with these privileges? ('doctor uprobe' runs it)\n"
"  -v, --verbose      debug messages and libbpf output\n"
"  -h, --help         print this help\n"
"\n"
"A probe stays on the file it was attached to. If BINARY is replaced on disk\n"
"(renamed over, deleted) tracing goes on with a warning: processes started\n"
"from the new file are not traced. If BINARY is modified in place, tracing\n"
"stops with a warning, since the probes would no longer match its code.\n"
"SIGINT and SIGTERM end the trace at any moment: the output holds every\n"
"event read, the exit status is 0 (128+N only for a signal in the first\n"
"milliseconds, before sidescope has set up, with no output written).\n"
"\n"
"EXAMPLES:\n"
"  sidescope uprobe -p 42 'p:c:open \"%%s\", str(arg1)'     # files PID 42 opens\n"
"  sidescope uprobe -p 42 'r:c:malloc (retval == 0) \"NULL\"'  # failed mallocs\n"
"  sidescope uprobe -p 42 'p:/app/app:greet \"%%s\", str16(arg1)' # char16_t*\n"
"  sidescope uprobe -p 42 --json 'p:/app/App.dll:App.Echo \"%%s\",\n"
"      dotnet_string(arg1)'                    # a .NET string argument\n"
"  sidescope uprobe -p 42 --latency -d 10 p:z:deflate  # deflate() durations\n"
"\n"
"PRIVILEGES: CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE where the kernel has\n"
"uprobe_multi links (6.6 and newer); older kernels need CAP_SYS_ADMIN too.\n"
"SIDESCOPE_UPROBE_LINK=perf forces uprobe perf events.\n",
	DEFAULT_MAX_STR, UP_MAX_UNITS);
}

struct session {
	struct probe_spec *specs[UP_MAX_PROBES];
	int nspecs;
	char *hosts[UP_MAX_PROBES];	/* resolved file, as this process names it */
	int fds[UP_MAX_PROBES];		/* that file, opened once (appfile) */
	uint64_t offsets[UP_MAX_PROBES];
	uint64_t printed[UP_MAX_PROBES];
	uint64_t malformed;
	uint64_t count_limit;
	uint64_t total_printed;
	struct upfmt *fmt;
	FILE *out;
	FILE *save;
	int write_err;
	bool json;
	bool quiet;	/* --latency alone: count the events, print none */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !log_verbose)
		return 0;
	if (!log_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct up_event_hdr *h = data;
	int err;

	if (s->count_limit && s->total_printed >= s->count_limit)
		return 1;
	if (s->save) {
		uint32_t n = (uint32_t)size;

		if (fwrite(&n, sizeof(n), 1, s->save) != 1 || fwrite(data, 1, size, s->save) != size)
			s->write_err = EIO;
	}
	err = s->quiet ? 0 : upfmt__event(s->fmt, data, size, s->out);
	if (err == -EINVAL) {
		s->malformed++;
		return 0;
	}
	if (err) {
		s->write_err = EIO;
		return -EIO;
	}
	s->printed[h->probe]++;
	s->total_printed++;
	if (s->count_limit && s->total_printed >= s->count_limit) {
		exiting = 1;
		return 1;
	}
	return 0;
}

/* Whether PID has exited (gone, or a zombie). */
static bool target_gone(pid_t pid)
{
	char path[64], *buf = NULL, *p;
	bool gone = true;

	snprintf(path, sizeof(path), "%s/%d/stat", proc__root(), (int)pid);
	if (read_file(path, &buf, NULL, 4096))
		return true;
	p = strrchr(buf, ')');
	if (p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X')
		gone = false;
	free(buf);
	return gone;
}

static int sum_percpu(int fd, uint32_t key, int ncpu, uint64_t *vals, uint64_t *out)
{
	int i, err;

	*out = 0;
	err = bpf_map_lookup_elem(fd, &key, vals);
	if (err)
		return -errno;
	for (i = 0; i < ncpu; i++)
		*out += vals[i];
	return 0;
}

static void print_hist(FILE *f, const char *label, const uint64_t *h, uint64_t total)
{
	int lo = -1, hi = -1, i;
	uint64_t max = 0;

	for (i = 0; i < UP_HIST_SLOTS; i++) {
		if (!h[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (h[i] > max)
			max = h[i];
	}
	fprintf(f, "\nlatency of %s: %llu calls\n", label, (unsigned long long)total);
	if (lo < 0)
		return;
	fprintf(f, "%24s : %-10s %s\n", "ns", "count", "distribution");
	for (i = lo; i <= hi; i++) {
		unsigned long long a = i ? 1ULL << i : 0, b = (i < 63 ? (1ULL << (i + 1)) : 0) - 1;
		int bar = (int)(max ? h[i] * 30 / max : 0), k;
		char stars[31];

		for (k = 0; k < 30; k++)
			stars[k] = k < bar ? '*' : ' ';
		stars[30] = '\0';
		fprintf(f, "%11llu -> %-10llu : %-10llu |%s|\n", a, b, (unsigned long long)h[i], stars);
	}
}

static void print_hist_json(FILE *f, const char *label, const uint64_t *h, uint64_t total)
{
	bool first = true;
	int i;

	fputs("{\"type\":\"latency\",\"probe\":", f);
	json_write_string(f, label);
	fprintf(f, ",\"calls\":%llu,\"unit\":\"ns\",\"buckets\":[", (unsigned long long)total);
	for (i = 0; i < UP_HIST_SLOTS; i++) {
		if (!h[i])
			continue;
		fprintf(f, "%s{\"min\":%llu,\"max\":%llu,\"count\":%llu}", first ? "" : ",",
			i ? 1ULL << i : 0ULL, (i < 63 ? (1ULL << (i + 1)) : 0ULL) - 1,
			(unsigned long long)h[i]);
		first = false;
	}
	fputs("]}\n", f);
}

/* Hits, filtered, lost per probe on stderr (and as JSON on the output);
 * latency histograms on the output. */
static int report(struct session *s, struct uprobe_bpf *skel, bool latency)
{
	int ncpu = libbpf_num_possible_cpus(), i, j, sfd, hfd;
	uint64_t *vals, tot_lost = 0, tot_hits = 0, tot_outside = 0;
	uint64_t st[UP_MAX_PROBES][UP_NSTATS];
	uint64_t *hist = NULL;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	hist = calloc(UP_HIST_SLOTS, sizeof(*hist));
	if (!vals || !hist) {
		free(vals);
		free(hist);
		return -ENOMEM;
	}
	sfd = bpf_map__fd(skel->maps.stats);
	hfd = bpf_map__fd(skel->maps.hist);
	for (i = 0; i < s->nspecs; i++)
		for (j = 0; j < UP_NSTATS; j++)
			if (sum_percpu(sfd, (uint32_t)(i * UP_NSTATS + j), ncpu, vals, &st[i][j]))
				st[i][j] = 0;
	if (latency) {
		for (i = 0; i < s->nspecs; i++) {
			uint64_t total = 0;

			for (j = 0; j < UP_HIST_SLOTS; j++) {
				if (sum_percpu(hfd, (uint32_t)(i * UP_HIST_SLOTS + j), ncpu, vals, &hist[j]))
					hist[j] = 0;
				total += hist[j];
			}
			if (s->json)
				print_hist_json(s->out, s->specs[i]->label, hist, total);
			else
				print_hist(s->out, s->specs[i]->label, hist, total);
		}
	}
	for (i = 0; i < s->nspecs; i++) {
		tot_hits += st[i][UP_STAT_HITS];
		tot_lost += st[i][UP_STAT_LOST];
		tot_outside += st[i][UP_STAT_OUTSIDE];
		p_info("%s%s: %llu hits, %llu filtered out, %llu printed, %llu lost",
		       s->specs[i]->label, s->specs[i]->is_ret ? " (ret)" : "",
		       (unsigned long long)st[i][UP_STAT_HITS],
		       (unsigned long long)st[i][UP_STAT_FILTERED],
		       (unsigned long long)s->printed[i],
		       (unsigned long long)st[i][UP_STAT_LOST]);
	}
	if (tot_lost)
		p_warn("%llu events lost: the ring buffer was full (raise --buffer-kb, "
		       "filter, or print less)", (unsigned long long)tot_lost);
	if (tot_outside)
		p_debug("%llu hits outside this PID namespace ignored",
			(unsigned long long)tot_outside);
	if (s->malformed)
		p_warn("%llu malformed events skipped", (unsigned long long)s->malformed);
	if (s->json) {
		fputs("{\"type\":\"summary\",\"probes\":[", s->out);
		for (i = 0; i < s->nspecs; i++) {
			fputs(i ? ",{\"probe\":" : "{\"probe\":", s->out);
			json_write_string(s->out, s->specs[i]->label);
			fprintf(s->out, ",\"spec\":");
			json_write_string(s->out, s->specs[i]->text);
			fprintf(s->out, ",\"hits\":%llu,\"filtered\":%llu,\"printed\":%llu,\"lost\":%llu}",
				(unsigned long long)st[i][UP_STAT_HITS],
				(unsigned long long)st[i][UP_STAT_FILTERED],
				(unsigned long long)s->printed[i],
				(unsigned long long)st[i][UP_STAT_LOST]);
		}
		fprintf(s->out, "],\"hits\":%llu,\"printed\":%llu,\"lost\":%llu,\"malformed\":%llu}\n",
			(unsigned long long)tot_hits, (unsigned long long)s->total_printed,
			(unsigned long long)tot_lost, (unsigned long long)s->malformed);
	}
	free(vals);
	free(hist);
	return 0;
}

/* --replay: decode saved events as fast as possible; report the rate. */
static int replay(const char *path, struct outfile *of, bool json)
{
	struct probe_spec *specs[UP_MAX_PROBES] = { 0 };
	uint32_t nspecs = 0, maxstr = 0, i, n;
	struct upfmt *fmt = NULL;
	uint64_t events = 0, bad = 0, t0, t1;
	int64_t rt_off = 0;
	char magic[8], *buf = NULL;
	int err = 1;
	FILE *in;

	in = fopen(path, "rb");
	if (!in) {
		p_err("cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	if (fread(magic, 1, 8, in) != 8 || memcmp(magic, SAVE_MAGIC, 8) ||
	    fread(&nspecs, 4, 1, in) != 1 || fread(&maxstr, 4, 1, in) != 1 ||
	    fread(&rt_off, 8, 1, in) != 1 ||
	    nspecs == 0 || nspecs > UP_MAX_PROBES || maxstr > UP_MAX_UNITS) {
		p_err("%s: not a sidescope uprobe capture (made with --save)", path);
		goto cleanup;
	}
	buf = malloc(sizeof(struct up_event));
	if (!buf)
		goto cleanup;
	for (i = 0; i < nspecs; i++) {
		struct ps_error perr;

		if (fread(&n, 4, 1, in) != 1 || n == 0 || n > 4096 || fread(buf, 1, n, in) != n) {
			p_err("%s: truncated header", path);
			goto cleanup;
		}
		buf[n] = '\0';
		specs[i] = probespec__parse(buf, &perr);
		if (!specs[i] || probespec__finish(specs[i], maxstr, &perr)) {
			p_err("%s: bad probe in header: %s", path, perr.msg);
			goto cleanup;
		}
	}
	/* the live session's clock offset: replayed times match the originals */
	fmt = upfmt__new(specs, (int)nspecs, json, rt_off);
	if (!fmt)
		goto cleanup;
	t0 = now_ns();
	while (fread(&n, 4, 1, in) == 1) {
		if (n > sizeof(struct up_event) || fread(buf, 1, n, in) != n) {
			bad++;
			break;
		}
		if (upfmt__event(fmt, buf, n, outfile__fp(of)) == -EINVAL)
			bad++;
		events++;
	}
	t1 = now_ns();
	if (fflush(outfile__fp(of)) || ferror(outfile__fp(of))) {
		p_err("cannot write output: %s", strerror(errno));
		goto cleanup;
	}
	p_info("replayed %llu events in %.3f s: %.0f events/s%s",
	       (unsigned long long)events, (double)(t1 - t0) / 1e9,
	       t1 > t0 ? (double)events * 1e9 / (double)(t1 - t0) : 0.0,
	       bad ? " (some malformed)" : "");
	err = 0;
cleanup:
	for (i = 0; i < UP_MAX_PROBES; i++)
		probespec__free(specs[i]);
	upfmt__free(fmt);
	free(buf);
	fclose(in);
	return err;
}

/* The files probed, watched for replacement while tracing. */
struct watched {
	const char *name;	/* as the probe spec gives it */
	const char *path;	/* host-visible path */
	int fd;			/* the file attached to */
	struct stat st;
	bool replaced;
};

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether PATH (resolved as uptarget__binary does) still names the file ST. */
static bool same_file_at(const char *path, const struct stat *st)
{
	struct stat now;
	int fd = appfile__open(path, 0, &now);

	if (fd < 0)
		return false;
	close(fd);
	return same_inode(&now, st);
}

/* Warn once when a probed path names another file now; return true when a
 * probed file was modified in place (its probes no longer match its code). */
static bool binaries_changed(struct watched *w, int n)
{
	struct stat now;
	int i;

	for (i = 0; i < n; i++) {
		if (w[i].fd < 0)
			continue;
		if (fstat(w[i].fd, &now) == 0 &&
		    (now.st_size != w[i].st.st_size ||
		     now.st_mtim.tv_sec != w[i].st.st_mtim.tv_sec ||
		     now.st_mtim.tv_nsec != w[i].st.st_mtim.tv_nsec)) {
			p_warn("%s was modified in place while probed; stopping", w[i].name);
			return true;
		}
		if (!w[i].replaced && !same_file_at(w[i].path, &w[i].st)) {
			w[i].replaced = true;
			p_warn("%s was replaced on disk; the probes stay on the original file "
			       "(processes started from the new one are not traced)", w[i].name);
		}
	}
	return false;
}

static int attach_one(struct uprobe_bpf *skel, struct uplink **links, int *nlinks,
		      pid_t pid, const char *path, const char *host, uint64_t off, bool ret,
		      uint64_t cookie, const char *label)
{
	struct uplink *l;

	l = uplink__attach(skel->progs.uprobe_hit, pid, path, off, ret, cookie);
	if (!l) {
		int err = errno;

		p_err("cannot attach %s to %s at file offset 0x%llx: %s%s", label, host,
		      (unsigned long long)off, uplink__strerror(err), uplink__hint(err));
		return -err;
	}
	links[(*nlinks)++] = l;
	return 0;
}

/* --check probes this function of our own executable. */
__attribute__((noinline)) void uprobe__check_point(void)
{
	__asm__ volatile("" ::: "memory");
}

/* "p:EXE:0xOFFSET" for uprobe__check_point, from our own mappings, so that
 * it works on a stripped binary too. */
static int check_spec(char *buf, size_t size)
{
	uint64_t addr = (uint64_t)(uintptr_t)&uprobe__check_point;
	struct proc_maps *m = proc_maps__load(getpid());
	const struct proc_map *map;
	int r = -ENOENT;

	if (!m)
		return -errno;
	map = proc_maps__find(m, addr);
	if (map && map->path[0] == '/') {
		snprintf(buf, size, "p:%s:0x%llx", map->path,
			 (unsigned long long)(addr - map->start + map->offset));
		r = 0;
	}
	proc_maps__free(m);
	return r;
}

int cmd_uprobe(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_MAXSTR, OPT_LATENCY, OPT_BUFKB, OPT_SAVE, OPT_REPLAY,
	       OPT_CHECK };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "max-str", required_argument, NULL, OPT_MAXSTR },
		{ "latency", no_argument, NULL, OPT_LATENCY },
		{ "buffer-kb", required_argument, NULL, OPT_BUFKB },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct session s = { 0 };
	struct uprobe_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct uplink *links[UP_MAX_PROBES * 2] = { 0 };
	struct outfile *of = NULL;
	const char *output = "-", *save_path = NULL, *replay_path = NULL;
	uint64_t duration = 0, max_str = DEFAULT_MAX_STR, buf_kb = 4096, v, deadline = 0;
	uint64_t pidns_dev, pidns_ino;
	int64_t rt_off;
	bool latency = false, check = false, print_calls;
	char check_buf[PATH_MAX + 64];
	char *check_argv[] = { check_buf, NULL };
	long pid = 0;
	int c, i, err = 1, nlinks = 0, nwatched = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct watched watched[UP_MAX_PROBES];
	uint64_t next_check = 0;
	char msg[1024];

	/* first of all: a signal at any later moment ends the trace cleanly */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < UP_MAX_PROBES; i++)
		s.fds[i] = -1;

	while ((c = getopt_long(argc, argv, "p:d:c:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_long(optarg, 1, INT_MAX, &pid))
				return usage_error("invalid PID '%s'", optarg);
			break;
		case 'd':
			if (parse_u64(optarg, 0, 365ULL * 86400, &duration))
				return usage_error("invalid duration '%s' (seconds; 0: until Ctrl-C)",
						   optarg);
			break;
		case 'c':
			if (parse_u64(optarg, 1, UINT64_MAX, &s.count_limit))
				return usage_error("invalid count '%s'", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_JSON:
			s.json = true;
			break;
		case OPT_MAXSTR:
			if (parse_u64(optarg, 1, UP_MAX_UNITS, &max_str))
				return usage_error("invalid --max-str '%s' (1 to %d)", optarg, UP_MAX_UNITS);
			break;
		case OPT_LATENCY:
			latency = true;
			break;
		case OPT_BUFKB:
			if (parse_u64(optarg, 4, 1 << 20, &v) || (v & (v - 1)))
				return usage_error("invalid --buffer-kb '%s' (a power of 2, 4 to 1048576)",
						   optarg);
			buf_kb = v;
			break;
		case OPT_SAVE:
			save_path = optarg;
			break;
		case OPT_REPLAY:
			replay_path = optarg;
			break;
		case OPT_CHECK:
			check = true;
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
	if (replay_path) {
		if (optind < argc)
			return usage_error("--replay takes its probes from the capture, not from arguments");
		of = outfile__open(output);
		if (!of) {
			p_err("cannot write %s: %s", output, outfile__strerror(errno));
			return 1;
		}
		err = replay(replay_path, of, s.json);
		if (err) {
			outfile__abort(of);
			return err;
		}
		if (outfile__commit(of)) {
			p_err("cannot write %s: %s", output, outfile__strerror(errno));
			return 1;
		}
		return 0;
	}
	if (check) {
		if (optind < argc)
			return usage_error("--check takes no probes: it probes sidescope itself");
		c = check_spec(check_buf, sizeof(check_buf));
		if (c) {
			p_err("cannot find this executable's own code: %s", strerror(-c));
			return 1;
		}
		argv = check_argv;
		argc = 1;
		optind = 0;
		pid = getpid();
		output = "/dev/null";
	}
	/* with --latency, lines per call only in a format asked for */
	print_calls = strcmp(output, "-") || s.json;
	if (optind >= argc)
		return usage_error("no probe given (e.g. 'p:c:malloc \"%%d\", arg1')");
	if (argc - optind > UP_MAX_PROBES)
		return usage_error("too many probes (at most %d)", UP_MAX_PROBES);

	/* .NET method names in PE images resolve through the R2R reader */
	uptarget__set_pe_resolver(r2r__uprobe_resolve);

	/* parse every spec before touching the system: usage errors exit 2 */
	for (i = optind; i < argc; i++) {
		struct ps_error perr;
		struct probe_spec *ps = probespec__parse(argv[i], &perr);

		if (!ps) {
			if (errno == ENOMEM) {
				p_err("out of memory");
				goto cleanup;
			}
			probespec__print_error(argv[i], &perr);
			err = 2;
			goto cleanup;
		}
		s.specs[s.nspecs++] = ps;
		if (probespec__finish(ps, (unsigned int)max_str, &perr)) {
			p_err("%s: %s", argv[i], perr.msg);
			err = 2;
			goto cleanup;
		}
		ps->recipe.latency = latency;
		/* --latency alone prints its histograms, not a line per call */
		ps->recipe.no_events = latency && !print_calls && !s.count_limit && !save_path;
	}
	s.quiet = latency && !print_calls;

	libbpf_set_print(libbpf_print);
	if (pid > 0 && proc__check_target((pid_t)pid, msg, sizeof(msg))) {
		p_err("%s", msg);
		goto cleanup;
	}

	/* every output is checked before anything is attached */
	of = outfile__open(output);
	if (!of) {
		p_err("cannot write %s: %s", output, outfile__strerror(errno));
		goto cleanup;
	}
	s.out = outfile__fp(of);
	rt_off = upfmt__realtime_offset();
	if (save_path) {
		uint32_t n = (uint32_t)s.nspecs, m = (uint32_t)max_str;

		s.save = fopen(save_path, "wb");
		if (!s.save) {
			p_err("cannot open %s: %s", save_path, strerror(errno));
			goto cleanup;
		}
		fwrite(SAVE_MAGIC, 1, 8, s.save);
		fwrite(&n, 4, 1, s.save);
		fwrite(&m, 4, 1, s.save);
		fwrite(&rt_off, 8, 1, s.save);
		for (i = 0; i < s.nspecs; i++) {
			uint32_t l = (uint32_t)strlen(s.specs[i]->text);

			fwrite(&l, 4, 1, s.save);
			fwrite(s.specs[i]->text, 1, l, s.save);
		}
	}


	/* resolve every probe to a file and an offset */
	for (i = 0; i < s.nspecs; i++) {
		struct probe_spec *ps = s.specs[i];
		char host[PATH_MAX], root[64] = "";
		int r;

		msg[0] = '\0';
		r = uptarget__binary((pid_t)pid, ps->binary, host, sizeof(host), &s.fds[i], msg,
				     sizeof(msg));
		if (r) {
			p_err("%s", msg[0] ? msg : strerror(-r));
			goto cleanup;
		}
		s.hosts[i] = strdup(host);
		if (!s.hosts[i]) {
			p_err("out of memory");
			goto cleanup;
		}
		if (!ps->symbol) {
			s.offsets[i] = ps->offset;
			continue;
		}
		if (pid > 0)
			snprintf(root, sizeof(root), "%s/%ld/root", proc__root(), pid);
		r = uptarget__symbol(s.fds[i], host, root, ps->symbol, &s.offsets[i], msg,
				     sizeof(msg));
		if (r) {
			p_err("%s", msg);
			goto cleanup;
		}
		s.offsets[i] += ps->offset;
		p_debug("%s -> %s at file offset 0x%llx", ps->text, host,
			(unsigned long long)s.offsets[i]);
	}

	if (proc__pidns(0, &pidns_dev, &pidns_ino)) {
		p_err("cannot read this process's PID namespace (/proc/self/ns/pid)");
		goto cleanup;
	}
	{
		/* needs CAP_SYS_RESOURCE, which a sidecar does not have; the kernel
		 * charges BPF memory to the cgroup anyway */
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	skel = uprobe_bpf__open();
	if (!skel) {
		p_err("cannot open the BPF program: %s", strerror(errno));
		goto cleanup;
	}
	skel->rodata->pidns_dev = pidns_dev;
	skel->rodata->pidns_ino = pidns_ino;
	skel->rodata->target_tgid = (__u32)pid;
	/* an eighth of the buffer queued, or the 50 ms poll timer, wakes us */
	skel->rodata->wake_bytes = buf_kb * 1024 / 8;
	if (bpf_map__set_max_entries(skel->maps.events, (__u32)(buf_kb * 1024))) {
		p_err("cannot size the ring buffer");
		goto cleanup;
	}
	c = uplink__prepare(skel->progs.uprobe_hit);
	if (!c)
		c = uprobe_bpf__load(skel);
	if (c) {
		privhint(PRIVHINT_BPF, -c, msg, sizeof(msg));
		p_err("cannot load the BPF program: %s%s", strerror(-c),
		      msg[0] ? msg : " (run with -v for details)");
		goto cleanup;
	}
	for (i = 0; i < s.nspecs; i++) {
		__u32 key = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.recipes), &key, &s.specs[i]->recipe,
					BPF_ANY)) {
			p_err("cannot store the recipe of %s: %s", s.specs[i]->text, strerror(errno));
			goto cleanup;
		}
	}
	for (i = 0; i < s.nspecs; i++) {
		struct probe_spec *ps = s.specs[i];
		char self[64];
		int j;

		/* the file as it is when attached: a later change is noticed */
		for (j = 0; j < nwatched && strcmp(watched[j].path, s.hosts[i]); j++)
			;
		if (j == nwatched) {
			watched[j] = (struct watched){ ps->binary, s.hosts[i], s.fds[i] };
			if (fstat(watched[j].fd, &watched[j].st))
				watched[j].fd = -1;
			nwatched++;
		}
		/* the kernel follows /proc/self/fd/N to the very file opened and
		 * checked, never a link the app has planted since */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", s.fds[i]);
		if (attach_one(skel, links, &nlinks, (pid_t)pid, self, s.hosts[i], s.offsets[i],
			       ps->is_ret, (uint64_t)i, ps->label))
			goto cleanup;
		/* the other half of the pair for --latency */
		if (latency && attach_one(skel, links, &nlinks, (pid_t)pid, self, s.hosts[i],
					  s.offsets[i], !ps->is_ret,
					  (uint64_t)i | (ps->is_ret ? UP_COOKIE_LAT_ENTRY :
							 UP_COOKIE_LAT_RET), ps->label))
			goto cleanup;
	}

	s.fmt = upfmt__new(s.specs, s.nspecs, s.json, rt_off);
	if (!s.fmt) {
		p_err("out of memory");
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &s, NULL);
	if (!rb) {
		p_err("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (check) {
		/* fire the probe in this process and wait for its event */
		uprobe__check_point();
		for (i = 0; i < 20 && !s.printed[0]; i++) {
			/* small events do not wake the reader: consume too */
			ring_buffer__poll(rb, 50);
			ring_buffer__consume(rb);
		}
		if (!s.printed[0]) {
			p_err("the check probe attached but no event arrived");
			goto cleanup;
		}
		printf("uprobes work: probe attached through %s, event received\n",
		       uplink__multi_supported() ? "a uprobe_multi link" : "a perf event");
		err = 0;
		goto cleanup;
	}
	if (duration)
		deadline = now_ns() + duration * 1000000000ULL;
	if (pid > 0)
		p_info("tracing %d probe%s in PID %ld; Ctrl-C to end", s.nspecs,
		       s.nspecs == 1 ? "" : "s", pid);
	else
		p_info("tracing %d probe%s in every process of this PID namespace; Ctrl-C to end",
		       s.nspecs, s.nspecs == 1 ? "" : "s");

	while (!exiting) {
		c = ring_buffer__poll(rb, 50);
		/* BPF wakes us only once much is queued (cheap under load): take
		 * what a quiet stretch left on this 50 ms timer */
		if (c == 0)
			c = ring_buffer__consume(rb);
		if (c < 0 && c != -EINTR) {
			if (s.write_err)
				p_err("cannot write output: %s", strerror(s.write_err));
			else
				p_err("cannot read the ring buffer: %s", strerror(-c));
			goto cleanup;
		}
		/* events show up as they come, even through a pipe (kubectl exec) */
		if (c > 0)
			fflush(s.out);
		if (deadline && now_ns() >= deadline)
			break;
		if (pid > 0 && target_gone((pid_t)pid)) {
			p_info("PID %ld exited", pid);
			break;
		}
		if (now_ns() >= next_check) {
			if (binaries_changed(watched, nwatched))
				break;
			next_check = now_ns() + 200000000ull;
		}
	}
	/* what is already in the buffer belongs to the capture */
	if (!(s.count_limit && s.total_printed >= s.count_limit))
		ring_buffer__consume(rb);
	for (i = 0; i < nlinks; i++) {
		uplink__destroy(links[i]);
		links[i] = NULL;
	}
	if (!(s.count_limit && s.total_printed >= s.count_limit))
		ring_buffer__consume(rb);
	if (s.write_err) {
		p_err("cannot write output: %s", strerror(s.write_err));
		goto cleanup;
	}
	if (report(&s, skel, latency)) {
		p_err("cannot read the counters");
		goto cleanup;
	}
	if (s.save && (fflush(s.save) || ferror(s.save))) {
		p_err("cannot write %s: %s", save_path, strerror(errno));
		goto cleanup;
	}
	c = outfile__commit(of);
	of = NULL;
	if (c) {
		p_err("cannot write %s: %s", output, outfile__strerror(c));
		goto cleanup;
	}
	err = 0;
cleanup:
	outfile__abort(of);
	if (s.save)
		fclose(s.save);
	ring_buffer__free(rb);
	for (i = 0; i < nlinks; i++)
		uplink__destroy(links[i]);
	/* the watched descriptors are the probes' own: closed below */
	uprobe_bpf__destroy(skel);
	upfmt__free(s.fmt);
	for (i = 0; i < s.nspecs; i++) {
		probespec__free(s.specs[i]);
		free(s.hosts[i]);
		if (s.fds[i] >= 0)
			close(s.fds[i]);
	}
	return err;
}
