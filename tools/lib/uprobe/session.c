// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The uprobe tracing engine (session.h): resolve, load, attach, read the
 * ring buffer, report. One precompiled BPF program runs a per-probe fetch
 * recipe; events are decoded and formatted by upfmt. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/appfile.h"
#include "core/err.h"
#include "core/json.h"
#include "core/log.h"
#include "core/privhint.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "uprobe/session.h"
#include "uprobe/upagg.h"
#include "uprobe/upfmt.h"
#include "uprobe/uplink.h"
#include "uprobe/uptarget.h"
#include "uprobe.skel.h"

#define SAVE_MAGIC	"SSUPRB1\n"

/* A file probed, watched for replacement while tracing. */
struct watched {
	const char *name;	/* as the probe spec gives it */
	const char *path;	/* host-visible path */
	int fd;			/* the file attached to */
	struct stat st;
	bool replaced;
};

struct session {
	struct session_opts o;
	struct probe_spec *specs[UP_MAX_PROBES];
	int nspecs;
	char *hosts[UP_MAX_PROBES];	/* resolved file, as this process names it */
	int fds[UP_MAX_PROBES];		/* that file, opened once (appfile) */
	uint64_t offsets[UP_MAX_PROBES];
	uint64_t *rets[UP_MAX_PROBES];	/* Go: the return half on these RETs */
	size_t nrets[UP_MAX_PROBES];
	uint64_t printed[UP_MAX_PROBES];
	uint64_t malformed;
	uint64_t total_printed;
	uint64_t lost;			/* at session__finish */
	uint64_t target_start;		/* the target's start time (ticks) */
	int64_t rt_off;			/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct upfmt *fmt;
	FILE *out;
	FILE *save;
	const char *save_path;
	int write_err;
	bool done;			/* the count is reached */
	struct uprobe_bpf *skel;
	struct ring_buffer *rb;
	struct uplink *links[UP_MAX_PROBES * 2];
	int nlinks;
	struct watched watched[UP_MAX_PROBES];
	int nwatched;
	bool has_by;			/* some probe counts by value */
	struct upstacks *stk;		/* --stacks */
	struct prof *prof;		/* --stacks: the hits per stack, at the end */
	uint64_t start_wall;		/* attached at (ns since the epoch) */
	uint64_t start_mono;
};

struct session *session__new(const struct session_opts *o, struct probe_spec **specs,
			     int nspecs, FILE *out)
{
	struct session *s = calloc(1, sizeof(*s));
	int i;

	if (!s || nspecs > UP_MAX_PROBES) {
		for (i = 0; i < nspecs; i++)
			probespec__free(specs[i]);
		free(s);
		errno = s ? EINVAL : ENOMEM;
		return NULL;
	}
	s->o = *o;
	s->out = out;
	for (i = 0; i < UP_MAX_PROBES; i++)
		s->fds[i] = -1;
	for (i = 0; i < nspecs; i++)
		s->specs[i] = specs[i];
	s->nspecs = nspecs;
	if (o->pid > 0 && proc__start_time(o->pid, &s->target_start))
		s->target_start = 0;
	s->rt_off = upfmt__realtime_offset();
	return s;
}

int session__save(struct session *s, const char *path)
{
	uint32_t n = (uint32_t)s->nspecs, m = s->o.max_str;
	int i;

	s->save = fopen(path, "wb");
	if (!s->save) {
		int err = errno;

		p_err("cannot open %s: %s", path, strerror(err));
		return -err;
	}
	s->save_path = path;
	fwrite(SAVE_MAGIC, 1, 8, s->save);
	fwrite(&n, 4, 1, s->save);
	fwrite(&m, 4, 1, s->save);
	fwrite(&s->rt_off, 8, 1, s->save);
	for (i = 0; i < s->nspecs; i++) {
		uint32_t l = (uint32_t)strlen(s->specs[i]->text);

		fwrite(&l, 4, 1, s->save);
		fwrite(s->specs[i]->text, 1, l, s->save);
	}
	return 0;
}

/* Probe I's offset checked (not inside an instruction), and where its
 * return half goes: on Go code the RET instructions (a uretprobe kills a Go
 * program), found by uptarget__ret_sites, or a refusal. */
static int resolve_sites(struct session *s, int i, const char *root)
{
	struct probe_spec *ps = s->specs[i];
	struct err e = { 0 };
	size_t jumps = 0;
	int r;

	if (s->offsets[i] != 0 && (!ps->symbol || ps->offset)) {
		r = uptarget__check_offset(s->fds[i], s->hosts[i], root, s->offsets[i], &e);
		if (r) {
			p_err("%s: %s", ps->label, e.msg);
			return r;
		}
	}
	if (!ps->is_ret && !s->o.latency)
		return 0;
	r = uptarget__ret_sites(s->fds[i], s->hosts[i], root, s->offsets[i], &s->rets[i],
				&s->nrets[i], &jumps, &e);
	if (r) {
		p_err("%s", e.msg);
		return r;
	}
	if (s->nrets[i])
		p_debug("%s is Go code: its return probe goes on %zu RET instruction%s", ps->label,
			s->nrets[i], s->nrets[i] == 1 ? "" : "s");
	if (jumps)
		p_warn("%s leaves by %zu tail jump%s too: those returns are not seen", ps->label,
		       jumps, jumps == 1 ? "" : "s");
	return 0;
}

/* Probe I: its file opened, its offset found. */
static int resolve_one(struct session *s, int i)
{
	struct probe_spec *ps = s->specs[i];
	char host[PATH_MAX], root[64] = "";
	struct err e = { 0 };
	int r;

	r = uptarget__binary(s->o.pid, ps->binary, host, sizeof(host), &s->fds[i], &e);
	if (r) {
		p_err("%s", e.msg[0] ? e.msg : strerror(-r));
		return r;
	}
	s->hosts[i] = strdup(host);
	if (!s->hosts[i]) {
		p_err("out of memory");
		return -ENOMEM;
	}
	if (s->o.pid > 0)
		snprintf(root, sizeof(root), "%s/%d/root", proc__root(), (int)s->o.pid);
	if (!ps->symbol) {
		s->offsets[i] = ps->offset;
		return resolve_sites(s, i, root);
	}
	r = uptarget__symbol(s->fds[i], host, root, ps->symbol, &s->offsets[i], &e);
	if (r) {
		p_err("%s", e.msg);
		return r;
	}
	s->offsets[i] += ps->offset;
	p_debug("%s -> %s at file offset 0x%llx", ps->text, host,
		(unsigned long long)s->offsets[i]);
	return resolve_sites(s, i, root);
}

int session__resolve(struct session *s)
{
	int i, r;

	for (i = 0; i < s->nspecs; i++) {
		r = resolve_one(s, i);
		if (r)
			return r;
	}
	return 0;
}

/* The maps of --by and --stacks at their sizes, or the least. 0 or
 * -EINVAL (said). */
static int size_aggregations(struct session *s)
{
	struct uprobe_bpf *k = s->skel;
	__u32 keys = 1, ikeys = 1, stacks = s->o.stacks ? s->o.max_stacks : 1;
	int i;

	/* integers and strings have maps of their own: the one in use sized;
	 * a string that cannot be read counts in the integers' map, one key a
	 * probe */
	for (i = 0; i < s->nspecs; i++) {
		if (!s->specs[i]->by.text)
			continue;
		if (ikeys < (__u32)s->nspecs)
			ikeys = (__u32)s->nspecs;
		if (s->specs[i]->by.kind == UP_KIND_INT)
			ikeys = s->o.max_keys;
		else
			keys = s->o.max_keys;
	}
	if (bpf_map__set_max_entries(k->maps.by, keys) ||
	    bpf_map__set_max_entries(k->maps.by_int, ikeys) ||
	    bpf_map__set_max_entries(k->maps.counts0, stacks) ||
	    bpf_map__set_max_entries(k->maps.counts1, stacks) ||
	    bpf_map__set_max_entries(k->maps.stacks, stacks)) {
		p_err("cannot size the maps of values and stacks");
		return -EINVAL;
	}
	return 0;
}

int session__load(struct session *s)
{
	/* needs CAP_SYS_RESOURCE, which a sidecar does not have; the kernel
	 * charges BPF memory to the cgroup anyway */
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	uint64_t pidns_dev, pidns_ino;
	char hint[256];
	int i, c;

	if (proc__pidns(0, &pidns_dev, &pidns_ino)) {
		p_err("cannot read this process's PID namespace (/proc/self/ns/pid)");
		return -EIO;
	}
	setrlimit(RLIMIT_MEMLOCK, &rl);
	s->skel = uprobe_bpf__open();
	if (!s->skel) {
		c = errno;
		p_err("cannot open the BPF program: %s", strerror(c));
		return -c;
	}
	s->skel->rodata->pidns_dev = pidns_dev;
	s->skel->rodata->pidns_ino = pidns_ino;
	s->skel->rodata->target_tgid = (__u32)s->o.pid;
	/* an eighth of the buffer queued, or the 50 ms poll timer, wakes us */
	s->skel->rodata->wake_bytes = (uint64_t)s->o.buf_kb * 1024 / 8;
	if (bpf_map__set_max_entries(s->skel->maps.events, (__u32)(s->o.buf_kb * 1024))) {
		p_err("cannot size the ring buffer");
		return -EINVAL;
	}
	for (i = 0; i < s->nspecs; i++)
		s->has_by |= s->specs[i]->by.text != NULL;
	c = size_aggregations(s);
	if (!c)
		c = uplink__prepare(s->skel->progs.uprobe_hit);
	if (!c)
		c = uprobe_bpf__load(s->skel);
	if (c) {
		privhint(PRIVHINT_BPF, -c, hint, sizeof(hint));
		p_err("cannot load the BPF program: %s%s", strerror(-c),
		      hint[0] ? hint : " (run with -v for details)");
		return c;
	}
	for (i = 0; i < s->nspecs; i++) {
		__u32 key = (__u32)i;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.recipes), &key,
					&s->specs[i]->recipe, BPF_ANY)) {
			c = errno;
			p_err("cannot store the recipe of %s: %s", s->specs[i]->text, strerror(c));
			return -c;
		}
	}
	return 0;
}

static int attach_one(struct session *s, const char *path, int i, bool ret, uint64_t cookie)
{
	struct uplink *l;

	/* Go: the return half is an entry probe on each RET */
	if (ret && s->nrets[i])
		l = uplink__attach_many(s->skel->progs.uprobe_hit, s->o.pid, path, s->rets[i],
					s->nrets[i], false, cookie);
	else
		l = uplink__attach(s->skel->progs.uprobe_hit, s->o.pid, path, s->offsets[i], ret,
				   cookie);
	if (!l) {
		int err = errno;

		p_err("cannot attach %s to %s at file offset 0x%llx: %s%s", s->specs[i]->label,
		      s->hosts[i], (unsigned long long)s->offsets[i], uplink__strerror(err),
		      uplink__hint(err));
		return -err;
	}
	s->links[s->nlinks++] = l;
	return 0;
}

/* The file of probe I as it is when attached: a later change is noticed. */
static void watch(struct session *s, int i)
{
	struct watched *w;
	int j;

	for (j = 0; j < s->nwatched && strcmp(s->watched[j].path, s->hosts[i]); j++)
		;
	if (j < s->nwatched)
		return;
	w = &s->watched[s->nwatched++];
	*w = (struct watched){ s->specs[i]->binary, s->hosts[i], s->fds[i] };
	if (fstat(w->fd, &w->st))
		w->fd = -1;
}

static int on_event(void *ctx, void *data, size_t size);

/* --stacks: the capture of hits per stack, before the first hit. */
static int open_stacks(struct session *s)
{
	struct uprobe_bpf *k = s->skel;
	struct capture_maps m = {
		.counts = { bpf_map__fd(k->maps.counts0), bpf_map__fd(k->maps.counts1) },
		.stacks = bpf_map__fd(k->maps.stacks),
		.stats = bpf_map__fd(k->maps.pstats),
		.news = -1,
		.offstart = -1,
		.active = &k->bss->active,
	};

	s->stk = upstacks__new(&m, s->o.pid, s->target_start, s->o.pe, s->o.max_stacks);
	if (!s->stk) {
		p_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int session__attach(struct session *s)
{
	int i, r;

	if (s->o.stacks) {
		r = open_stacks(s);
		if (r)
			return r;
	}
	s->start_mono = now_ns();
	s->start_wall = (uint64_t)((int64_t)s->start_mono + upfmt__realtime_offset());

	for (i = 0; i < s->nspecs; i++) {
		struct probe_spec *ps = s->specs[i];
		char self[64];

		watch(s, i);
		/* the kernel follows /proc/self/fd/N to the very file opened and
		 * checked, never a link the app has planted since */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", s->fds[i]);
		r = attach_one(s, self, i, ps->is_ret, (uint64_t)i);
		if (r)
			return r;
		/* the other half of the pair for latency */
		if (s->o.latency) {
			r = attach_one(s, self, i, !ps->is_ret, (uint64_t)i |
				       (ps->is_ret ? UP_COOKIE_LAT_ENTRY : UP_COOKIE_LAT_RET));
			if (r)
				return r;
		}
	}
	s->fmt = upfmt__new(s->specs, s->nspecs, s->o.json, s->rt_off);
	if (!s->fmt) {
		p_err("out of memory");
		return -ENOMEM;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		r = errno;
		p_err("cannot open the ring buffer: %s", strerror(r));
		return -r;
	}
	return 0;
}

static bool count_reached(const struct session *s)
{
	return s->o.count_limit && s->total_printed >= s->o.count_limit;
}

/* One record from the ring buffer: saved, formatted, counted. */
static int on_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct up_event_hdr *h = data;
	int err;

	if (count_reached(s))
		return 1;
	if (s->save) {
		uint32_t n = (uint32_t)size;

		if (fwrite(&n, sizeof(n), 1, s->save) != 1 || fwrite(data, 1, size, s->save) != size)
			s->write_err = EIO;
	}
	if (s->o.sink)
		err = s->o.sink(s->o.sink_arg, data, size);
	else
		err = s->o.quiet ? 0 : upfmt__event(s->fmt, data, size, s->out);
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
	if (count_reached(s)) {
		s->done = true;
		return 1;
	}
	return 0;
}

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
static bool binaries_changed(struct session *s)
{
	struct stat now;
	int i;

	for (i = 0; i < s->nwatched; i++) {
		struct watched *w = &s->watched[i];

		if (w->fd < 0)
			continue;
		if (fstat(w->fd, &now) == 0 &&
		    (now.st_size != w->st.st_size ||
		     now.st_mtim.tv_sec != w->st.st_mtim.tv_sec ||
		     now.st_mtim.tv_nsec != w->st.st_mtim.tv_nsec)) {
			p_warn("%s was modified in place while probed; stopping", w->name);
			return true;
		}
		if (!w->replaced && !same_file_at(w->path, &w->st)) {
			w->replaced = true;
			p_warn("%s was replaced on disk; the probes stay on the original file "
			       "(processes started from the new one are not traced)", w->name);
		}
	}
	return false;
}

/* One poll of the ring buffer: what came, flushed. Return the records read
 * or a negative errno (said with p_err). */
static int poll_once(struct session *s)
{
	int c = ring_buffer__poll(s->rb, 50);

	/* BPF wakes us only once much is queued (cheap under load): take what a
	 * quiet stretch left on this 50 ms timer */
	if (c == 0)
		c = ring_buffer__consume(s->rb);
	if (c < 0 && c != -EINTR) {
		if (s->write_err)
			p_err("cannot write output: %s", strerror(s->write_err));
		else
			p_err("cannot read the ring buffer: %s", strerror(-c));
		return s->write_err ? -s->write_err : c;
	}
	/* events show up as they come, even through a pipe (kubectl exec) */
	if (c > 0)
		fflush(s->out);
	return c;
}

int session__poll(struct session *s)
{
	return poll_once(s);
}

uint64_t session__lost(const struct session *s)
{
	return s->lost;
}

int session__run(struct session *s)
{
	uint64_t deadline = 0, next_check = 0, next_drain = 0;
	int c;

	if (s->o.duration_s)
		deadline = now_ns() + s->o.duration_s * 1000000000ULL;
	while (!run__stop && !s->done) {
		c = poll_once(s);
		if (c < 0 && c != -EINTR)
			return c;
		if (deadline && now_ns() >= deadline)
			break;
		if (s->o.pid > 0 && !proc__alive(s->o.pid, s->target_start)) {
			p_info("PID %d exited", (int)s->o.pid);
			break;
		}
		if (now_ns() >= next_check) {
			if (binaries_changed(s))
				break;
			next_check = now_ns() + 200000000ull;
		}
		/* the maps of stacks hold a second's worth at the most */
		if (s->stk && now_ns() >= next_drain) {
			c = upstacks__drain(s->stk);
			if (c) {
				p_err("cannot read the stacks: %s", strerror(-c));
				return c;
			}
			next_drain = now_ns() + 1000000000ull;
		}
	}
	return 0;
}

struct prof *session__profile(struct session *s)
{
	return s->prof;
}

bool session__wait_first(struct session *s)
{
	int i;

	for (i = 0; i < 20 && !s->printed[0]; i++) {
		/* small events do not wake the reader: consume too */
		ring_buffer__poll(s->rb, 50);
		ring_buffer__consume(s->rb);
	}
	return s->printed[0] != 0;
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

/* The latency histogram of each probe on the output. */
static void report_latency(struct session *s, int ncpu, uint64_t *vals, uint64_t *hist)
{
	int hfd = bpf_map__fd(s->skel->maps.hist), i, j;
	char heading[512];
	struct uphist d;

	for (i = 0; i < s->nspecs; i++) {
		uint64_t total = 0;

		for (j = 0; j < UP_HIST_SLOTS; j++) {
			if (sum_percpu(hfd, (uint32_t)(i * UP_HIST_SLOTS + j), ncpu, vals, &hist[j]))
				hist[j] = 0;
			total += hist[j];
		}
		snprintf(heading, sizeof(heading), "latency of %s: %llu calls", s->specs[i]->label,
			 (unsigned long long)total);
		d = (struct uphist){ heading, "latency", s->specs[i]->label, NULL, "calls", "ns", 0 };
		upagg__print_hist(s->out, s->o.json, &d, hist, total);
	}
}

/* The --hist histogram of each probe that has one; ST: the counters. */
static void report_hist(struct session *s, int ncpu, uint64_t *vals, uint64_t *hist,
			uint64_t st[][UP_NSTATS])
{
	int hfd = bpf_map__fd(s->skel->maps.vhist), i, j;
	char heading[512], neg[64];
	struct uphist d;

	for (i = 0; i < s->nspecs; i++) {
		const struct probe_spec *ps = s->specs[i];
		uint64_t total = 0;

		if (!ps->hist.text)
			continue;
		for (j = 0; j < UP_HIST_SLOTS; j++) {
			if (sum_percpu(hfd, (uint32_t)(i * UP_HIST_SLOTS + j), ncpu, vals, &hist[j]))
				hist[j] = 0;
			total += hist[j];
		}
		neg[0] = '\0';
		if (st[i][UP_STAT_NEGATIVE])
			snprintf(neg, sizeof(neg), " (and %llu below 0, not shown)",
				 (unsigned long long)st[i][UP_STAT_NEGATIVE]);
		snprintf(heading, sizeof(heading), "%s at %s: %llu values%s", ps->hist.text,
			 ps->label, (unsigned long long)total, neg);
		d = (struct uphist){ heading, "hist", ps->label, ps->hist.text, "values", "value",
				     st[i][UP_STAT_NEGATIVE] };
		upagg__print_hist(s->out, s->o.json, &d, hist, total);
	}
}

static void summary_json(struct session *s, uint64_t st[][UP_NSTATS], uint64_t hits,
			 uint64_t lost)
{
	struct json j;
	int i;

	json__init(&j, s->out);
	json__obj(&j);
	json__key(&j, "type");
	json__str(&j, "summary");
	json__key(&j, "probes");
	json__arr(&j);
	for (i = 0; i < s->nspecs; i++) {
		json__obj(&j);
		json__key(&j, "probe");
		json__str(&j, s->specs[i]->label);
		json__key(&j, "spec");
		json__str(&j, s->specs[i]->text);
		json__key(&j, "hits");
		json__u64(&j, st[i][UP_STAT_HITS]);
		json__key(&j, "filtered");
		json__u64(&j, st[i][UP_STAT_FILTERED]);
		json__key(&j, "printed");
		json__u64(&j, s->printed[i]);
		json__key(&j, "lost");
		json__u64(&j, st[i][UP_STAT_LOST]);
		json__end(&j);
	}
	json__end(&j);
	json__key(&j, "hits");
	json__u64(&j, hits);
	json__key(&j, "printed");
	json__u64(&j, s->total_printed);
	json__key(&j, "lost");
	json__u64(&j, lost);
	json__key(&j, "malformed");
	json__u64(&j, s->malformed);
	json__end(&j);
	fputc('\n', s->out);
}

/* Hits, filtered, lost per probe on stderr (and as JSON on the output). */
static void report_counts(struct session *s, uint64_t st[][UP_NSTATS])
{
	uint64_t tot_lost = 0, tot_hits = 0, tot_outside = 0;
	int i;

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
	s->lost = tot_lost;
	if (tot_lost)
		p_warn("%llu events lost: the ring buffer was full (raise --buffer-kb, "
		       "filter, or print less)", (unsigned long long)tot_lost);
	for (i = 0; i < s->nspecs; i++) {
		if (st[i][UP_STAT_BY_FULL])
			p_warn("%s: %llu hits not counted by value: the map of values was full "
			       "(raise --max-keys, now %u)", s->specs[i]->label,
			       (unsigned long long)st[i][UP_STAT_BY_FULL], s->o.max_keys);
		if (st[i][UP_STAT_UNREAD])
			p_warn("%s: %llu hits whose --hist value could not be read",
			       s->specs[i]->label, (unsigned long long)st[i][UP_STAT_UNREAD]);
	}
	if (tot_outside)
		p_debug("%llu hits outside this PID namespace ignored",
			(unsigned long long)tot_outside);
	if (s->malformed)
		p_warn("%llu malformed events skipped", (unsigned long long)s->malformed);
	if (s->o.json)
		summary_json(s, st, tot_hits, tot_lost);
}

/* The counters and histograms; 0 or -ENOMEM, -EINVAL. */
static int report(struct session *s)
{
	int ncpu = libbpf_num_possible_cpus(), i, j, sfd;
	uint64_t st[UP_MAX_PROBES][UP_NSTATS];
	uint64_t *vals, *hist;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	hist = calloc(UP_HIST_SLOTS, sizeof(*hist));
	if (!vals || !hist) {
		free(vals);
		free(hist);
		return -ENOMEM;
	}
	sfd = bpf_map__fd(s->skel->maps.stats);
	for (i = 0; i < s->nspecs; i++)
		for (j = 0; j < UP_NSTATS; j++)
			if (sum_percpu(sfd, (uint32_t)(i * UP_NSTATS + j), ncpu, vals, &st[i][j]))
				st[i][j] = 0;
	if (s->o.latency)
		report_latency(s, ncpu, vals, hist);
	report_hist(s, ncpu, vals, hist, st);
	if (s->has_by && upagg__report_by(bpf_map__fd(s->skel->maps.by),
					  bpf_map__fd(s->skel->maps.by_int), s->specs, s->nspecs,
					  s->fmt, s->o.json, s->o.top, s->out)) {
		free(vals);
		free(hist);
		return -ENOMEM;
	}
	report_counts(s, st);
	free(vals);
	free(hist);
	return 0;
}

static void detach(struct session *s)
{
	int i;

	for (i = 0; i < s->nlinks; i++) {
		uplink__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	s->nlinks = 0;
}

int session__finish(struct session *s)
{
	int err;

	/* what is already in the buffer belongs to the capture */
	if (!count_reached(s))
		ring_buffer__consume(s->rb);
	detach(s);
	if (!count_reached(s))
		ring_buffer__consume(s->rb);
	if (s->write_err) {
		p_err("cannot write output: %s", strerror(s->write_err));
		return -s->write_err;
	}
	err = report(s);
	if (err) {
		p_err("cannot read the counters");
		return err;
	}
	if (s->stk) {
		s->prof = upstacks__finish(s->stk, s->start_wall, now_ns() - s->start_mono);
		if (!s->prof)
			return -EIO;
	}
	if (s->save && (fflush(s->save) || ferror(s->save))) {
		err = errno;
		p_err("cannot write %s: %s", s->save_path, strerror(err));
		return err ? -err : -EIO;
	}
	return 0;
}

void session__free(struct session *s)
{
	int i;

	if (!s)
		return;
	if (s->save)
		fclose(s->save);
	ring_buffer__free(s->rb);
	detach(s);
	/* the watched descriptors are the probes' own: closed below */
	upstacks__free(s->stk);
	uprobe_bpf__destroy(s->skel);
	upfmt__free(s->fmt);
	for (i = 0; i < s->nspecs; i++) {
		probespec__free(s->specs[i]);
		free(s->hosts[i]);
		free(s->rets[i]);
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s);
}

/* The specs of a save file's header, parsed and finished again. */
static int read_header(FILE *in, const char *path, struct probe_spec **specs,
		       uint32_t *nspecs, int64_t *rt_off, char *buf)
{
	uint32_t maxstr = 0, i, n;
	char magic[8];

	if (fread(magic, 1, 8, in) != 8 || memcmp(magic, SAVE_MAGIC, 8) ||
	    fread(nspecs, 4, 1, in) != 1 || fread(&maxstr, 4, 1, in) != 1 ||
	    fread(rt_off, 8, 1, in) != 1 ||
	    *nspecs == 0 || *nspecs > UP_MAX_PROBES || maxstr > UP_MAX_UNITS) {
		p_err("%s: not a sidescope uprobe capture (made with --save)", path);
		return -EINVAL;
	}
	for (i = 0; i < *nspecs; i++) {
		struct err e = { 0 };

		if (fread(&n, 4, 1, in) != 1 || n == 0 || n > 4096 || fread(buf, 1, n, in) != n) {
			p_err("%s: truncated header", path);
			return -EINVAL;
		}
		buf[n] = '\0';
		specs[i] = probespec__parse(buf, &e);
		if (!specs[i] || probespec__finish(specs[i], maxstr, &e)) {
			p_err("%s: bad probe in header: %s", path, e.msg);
			return -EINVAL;
		}
	}
	return 0;
}

/* Every saved record through FMT onto OUT; the rate on stderr. */
static int replay_events(FILE *in, struct upfmt *fmt, char *buf, FILE *out)
{
	uint64_t events = 0, bad = 0, t0, t1;
	uint32_t n;

	t0 = now_ns();
	while (fread(&n, 4, 1, in) == 1) {
		if (n > sizeof(struct up_event) || fread(buf, 1, n, in) != n) {
			bad++;
			break;
		}
		if (upfmt__event(fmt, buf, n, out) == -EINVAL)
			bad++;
		events++;
	}
	t1 = now_ns();
	if (fflush(out) || ferror(out)) {
		int err = errno;

		p_err("cannot write output: %s", strerror(err));
		return err ? -err : -EIO;
	}
	p_info("replayed %llu events in %.3f s: %.0f events/s%s",
	       (unsigned long long)events, (double)(t1 - t0) / 1e9,
	       t1 > t0 ? (double)events * 1e9 / (double)(t1 - t0) : 0.0,
	       bad ? " (some malformed)" : "");
	return 0;
}

int session__replay(const char *path, FILE *out, bool json)
{
	struct probe_spec *specs[UP_MAX_PROBES] = { 0 };
	struct upfmt *fmt = NULL;
	uint32_t nspecs = 0, i;
	int64_t rt_off = 0;
	char *buf = NULL;
	int err = -ENOMEM;
	FILE *in;

	in = fopen(path, "rb");
	if (!in) {
		err = errno;
		p_err("cannot open %s: %s", path, strerror(err));
		return -err;
	}
	buf = malloc(sizeof(struct up_event));
	if (!buf)
		goto cleanup;
	err = read_header(in, path, specs, &nspecs, &rt_off, buf);
	if (err)
		goto cleanup;
	/* the live session's clock offset: replayed times match the originals */
	fmt = upfmt__new(specs, (int)nspecs, json, rt_off);
	err = fmt ? replay_events(in, fmt, buf, out) : -ENOMEM;
cleanup:
	for (i = 0; i < UP_MAX_PROBES; i++)
		probespec__free(specs[i]);
	upfmt__free(fmt);
	free(buf);
	fclose(in);
	return err;
}
