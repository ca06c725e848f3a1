// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The aggregations of sidescope uprobe (upagg.h): histograms, counts per
 * value and per stack, read out of the BPF maps and reported. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "core/json.h"
#include "core/log.h"
#include "prof/capture.h"
#include "sym/stackcache.h"
#include "sym/symbolize.h"
#include "uprobe/upagg.h"

static uint64_t slot_min(int i)
{
	return i ? 1ULL << i : 0;
}

static uint64_t slot_max(int i)
{
	return (i < 63 ? (1ULL << (i + 1)) : 0) - 1;
}

static void hist_text(FILE *f, const struct uphist *d, const uint64_t *h)
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
	fprintf(f, "\n%s\n", d->heading);
	if (lo < 0)
		return;
	fprintf(f, "%24s : %-10s %s\n", d->unit, "count", "distribution");
	for (i = lo; i <= hi; i++) {
		int bar = (int)(max ? h[i] * 30 / max : 0), k;
		char stars[31];

		for (k = 0; k < 30; k++)
			stars[k] = k < bar ? '*' : ' ';
		stars[30] = '\0';
		fprintf(f, "%11llu -> %-10llu : %-10llu |%s|\n", (unsigned long long)slot_min(i),
			(unsigned long long)slot_max(i), (unsigned long long)h[i], stars);
	}
}

static void hist_json(FILE *f, const struct uphist *d, const uint64_t *h, uint64_t total)
{
	struct json j;
	int i;

	json__init(&j, f);
	json__obj(&j);
	json__key(&j, "type");
	json__str(&j, d->type);
	json__key(&j, "probe");
	json__str(&j, d->probe);
	if (d->expr) {
		json__key(&j, "expr");
		json__str(&j, d->expr);
		json__key(&j, "negative");
		json__u64(&j, d->negative);
	}
	json__key(&j, d->count_key);
	json__u64(&j, total);
	if (!d->expr) {
		json__key(&j, "unit");
		json__str(&j, d->unit);
	}
	json__key(&j, "buckets");
	json__arr(&j);
	for (i = 0; i < UP_HIST_SLOTS; i++) {
		if (!h[i])
			continue;
		json__obj(&j);
		json__key(&j, "min");
		json__u64(&j, slot_min(i));
		json__key(&j, "max");
		json__u64(&j, slot_max(i));
		json__key(&j, "count");
		json__u64(&j, h[i]);
		json__end(&j);
	}
	json__end(&j);
	json__end(&j);
	fputc('\n', f);
}

void upagg__print_hist(FILE *f, bool json, const struct uphist *d, const uint64_t *h,
		       uint64_t total)
{
	if (json)
		hist_json(f, d, h, total);
	else
		hist_text(f, d, h);
}

/* One value of the by map. */
struct byent {
	struct up_bykey k;
	uint64_t n;
};

static int by_cmp(const void *a, const void *b)
{
	const struct byent *x = a, *y = b;

	if (x->k.probe != y->k.probe)
		return x->k.probe < y->k.probe ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->k.value != y->k.value)
		return x->k.value < y->k.value ? -1 : 1;
	return memcmp(x->k.data, y->k.data, sizeof(x->k.data));
}

/* Room for one more entry in *V (N used of *CAP). 0 or -ENOMEM. */
static int by_grow(struct byent **v, size_t n, size_t *cap)
{
	struct byent *nv;

	if (n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 256;
	nv = realloc(*v, *cap * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	return 0;
}

/* Every entry of the by maps (FD: strings, IFD: integers) into *OUT,
 * sorted; their number, or a negative errno. Nothing deletes from the maps
 * meanwhile: every key found is there. */
static ssize_t read_by(int fd, int ifd, struct byent **out)
{
	struct up_bykey key, next, *prev = NULL;
	struct up_byint ikey, inext, *iprev = NULL;
	struct byent *v = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (by_grow(&v, n, &cap))
			goto nomem;
		v[n].k = next;
		if (bpf_map_lookup_elem(fd, &next, &v[n].n) == 0)
			n++;
		key = next;
		prev = &key;
	}
	while (bpf_map_get_next_key(ifd, iprev, &inext) == 0) {
		if (by_grow(&v, n, &cap))
			goto nomem;
		memset(&v[n].k, 0, sizeof(v[n].k));
		v[n].k.probe = inext.probe;
		v[n].k.flags = inext.flags;
		v[n].k.value = inext.value;
		if (bpf_map_lookup_elem(ifd, &inext, &v[n].n) == 0)
			n++;
		ikey = inext;
		iprev = &ikey;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_cmp);
	*out = v;
	return (ssize_t)n;
nomem:
	free(v);
	return -ENOMEM;
}

static void json_string(FILE *f, const char *s)
{
	struct json j;

	json__init(&j, f);
	json__str(&j, s);
}

/* Probe PS's values E[0, N) onto OUT, the first TOP of them. */
static int print_by(const struct probe_spec *ps, const struct byent *e, size_t n,
		    struct upfmt *fmt, bool json, size_t top, FILE *out)
{
	uint64_t hits = 0, rest = 0;
	size_t i, len;

	for (i = 0; i < n; i++) {
		hits += e[i].n;
		if (i >= top)
			rest += e[i].n;
	}
	if (json) {
		fputs("{\"type\":\"by\",\"probe\":", out);
		json_string(out, ps->label);
		fputs(",\"expr\":", out);
		json_string(out, ps->by.text);
		fprintf(out, ",\"hits\":%llu,\"distinct\":%zu,\"values\":[",
			(unsigned long long)hits, n);
	} else {
		fprintf(out, "\n%s by %s: %llu hit%s, %zu value%s%s\n", ps->label, ps->by.text,
			(unsigned long long)hits, hits == 1 ? "" : "s", n, n == 1 ? "" : "s",
			n > top ? " (the most frequent first)" : "");
		if (n)
			fprintf(out, "%10s  %s\n", "COUNT", "VALUE");
	}
	for (i = 0; i < n && i < top; i++) {
		const char *v = upfmt__by_value(fmt, ps, &e[i].k, &len);

		if (!v)
			return -ENOMEM;
		if (json)
			fprintf(out, "%s{\"count\":%llu,%s}", i ? "," : "",
				(unsigned long long)e[i].n, v);
		else
			fprintf(out, "%10llu  %s\n", (unsigned long long)e[i].n, v);
	}
	if (json)
		fprintf(out, "],\"other\":%llu}\n", (unsigned long long)rest);
	else if (n > top)
		fprintf(out, "%10llu  (%zu other values; --top shows more)\n",
			(unsigned long long)rest, n - top);
	return 0;
}

int upagg__report_by(int fd, int ifd, struct probe_spec *const *specs, int nspecs,
		     struct upfmt *fmt, bool json, size_t top, FILE *out)
{
	struct byent *e = NULL;
	ssize_t n = read_by(fd, ifd, &e);
	size_t at = 0, end;
	int i, err = 0;

	if (n < 0)
		return (int)n;
	for (i = 0; i < nspecs && !err; i++) {
		if (!specs[i]->by.text)
			continue;
		while (at < (size_t)n && e[at].k.probe < (uint32_t)i)
			at++;
		for (end = at; end < (size_t)n && e[end].k.probe == (uint32_t)i; end++)
			;
		err = print_by(specs[i], e + at, end - at, fmt, json, top, out);
		at = end;
	}
	free(e);
	return err;
}

struct upstacks {
	struct capture c;
	pid_t pid;
	uint64_t start;
	unsigned long long max_stacks;	/* the maps' size, for the hint */
};

struct upstacks *upstacks__new(const struct capture_maps *m, pid_t pid, uint64_t start,
			       const struct pe_resolver *pe, unsigned long long max_stacks)
{
	struct upstacks *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->max_stacks = max_stacks;
	u->pid = pid;
	u->start = start;
	u->c.maps = *m;
	u->c.maps.news = -1;
	u->c.maps.offstart = -1;
	if (pid > 0) {
		u->c.pids = &u->pid;
		u->c.starts = &u->start;
		u->c.npids = 1;
	}
	u->c.sz = symbolizer__new();
	u->c.prof = prof__new();
	u->c.stacks = stackcache__new();
	u->c.meta.mode = PROF_MODE_HITS;
	if (!u->c.sz || !u->c.prof || !u->c.stacks || capture__start(&u->c)) {
		upstacks__free(u);
		return NULL;
	}
	symbolizer__set_pe_resolver(u->c.sz, pe);
	if (pid > 0)
		symbolizer__watch_start(u->c.sz, pid, start);
	return u;
}

int upstacks__drain(struct upstacks *u)
{
	return capture__drain(&u->c);
}

/* "what N" appended to BUF (", " between), as prof__add_fails does. */
static void add_loss(char *buf, size_t size, const char *what, uint64_t n)
{
	size_t l = strlen(buf);

	if (n && l < size)
		snprintf(buf + l, size - l, "%s%s %llu", l ? ", " : "", what, (unsigned long long)n);
}

struct prof *upstacks__finish(struct upstacks *u, uint64_t start_ns, uint64_t duration_ns)
{
	struct capture *c = &u->c;
	char lost[256] = "";
	int err;

	/* twice: the first flips the maps, the second empties what the last
	 * programs to run counted into the other */
	err = capture__drain(c);
	if (!err)
		err = capture__drain(c);
	if (err) {
		p_err("cannot read the stacks: %s", strerror(-err));
		return NULL;
	}
	capture__read_stats(c);
	c->meta.time_ns = start_ns;
	c->meta.duration_ns = duration_ns;
	prof__set_meta(c->prof, &c->meta);
	add_loss(lost, sizeof(lost), "unreadable", c->meta.lost_ustack);
	prof__add_fails(lost, sizeof(lost), "stack store", c->meta.lost_stacks);
	prof__add_fails(lost, sizeof(lost), "count map", c->meta.lost_counts);
	add_loss(lost, sizeof(lost), "missing from the store", c->meta.missing_stacks);
	if (lost[0])
		p_warn("hit stacks lost: %s", lost);
	capture__say_fail_hints(c, "--max-stacks", u->max_stacks);
	if (c->meta.trunc_ustack)
		p_info("%llu hit stacks truncated at %d frames",
		       (unsigned long long)c->meta.trunc_ustack, PROFILE_MAX_DEPTH);
	return c->prof;
}

void upstacks__free(struct upstacks *u)
{
	if (!u)
		return;
	capture__free(&u->c);
	prof__free(u->c.prof);
	stackcache__free(u->c.stacks);
	symbolizer__free(u->c.sz);
	free(u);
}
