// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The timeline model and its Chrome trace event writer (timeline.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/util.h"
#include "timeline/timeline.h"

struct tl_stack {
	uint64_t hash;
	const char *const *names;	/* leaf first; the array is ours */
	size_t n;
};

struct tl_sample {
	uint64_t ts;
	int32_t tid;
	int32_t stack;		/* index into stacks, -1: none */
	bool kernel;
};

struct tl_instant {
	uint64_t ts;
	int32_t tid;
	const char *name;	/* the caller's (a probe's label) */
	char *args;		/* JSON object text, or NULL */
};

struct tl_thread {
	int32_t tid;
	char *name;
};

struct timeline {
	pid_t pid;
	char pname[64];
	uint64_t origin, period;
	struct tl_stack *stacks;
	size_t n_stacks, cap_stacks;
	int32_t *slots;		/* open addressing on the hash: index + 1, 0 free */
	size_t cap_slots;
	struct tl_sample *samples;
	size_t n_samples, cap_samples;
	struct tl_instant *instants;
	size_t n_instants, cap_instants;
	struct tl_thread *threads;
	size_t n_threads, cap_threads;
	char *raw;
	size_t raw_len;
	uint64_t slices;
};

/* Room for one more element in *ARR (of SIZE bytes, N used of *CAP). */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr, *q;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	q = realloc(*p, ncap * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

/* The comm of PID/TID from /proc into BUF ("" when gone). Not the app's
 * file system: procfs of our own namespace, bounded. */
static void read_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64], *s = NULL;
	size_t len = 0;

	buf[0] = '\0';
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_file(path, &s, &len, 256))
		return;
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\0'))
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	free(s);
}

struct timeline *timeline__new(pid_t pid, uint64_t origin_ns, uint64_t period_ns)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->pid = pid;
	tl->origin = origin_ns;
	tl->period = period_ns ? period_ns : 1;
	read_comm(pid, 0, tl->pname, sizeof(tl->pname));
	return tl;
}

void timeline__free(struct timeline *tl)
{
	size_t i;

	if (!tl)
		return;
	for (i = 0; i < tl->n_stacks; i++)
		free((void *)tl->stacks[i].names);
	free(tl->stacks);
	free(tl->slots);
	free(tl->samples);
	for (i = 0; i < tl->n_instants; i++)
		free(tl->instants[i].args);
	free(tl->instants);
	for (i = 0; i < tl->n_threads; i++)
		free(tl->threads[i].name);
	free(tl->threads);
	free(tl->raw);
	free(tl);
}

static size_t slot_of(const struct timeline *tl, uint64_t hash)
{
	return (size_t)hash__u64(hash) & (tl->cap_slots - 1);
}

int timeline__find_stack(const struct timeline *tl, uint64_t hash)
{
	size_t i;

	if (!tl->cap_slots)
		return -ENOENT;
	for (i = slot_of(tl, hash); tl->slots[i]; i = (i + 1) & (tl->cap_slots - 1))
		if (tl->stacks[tl->slots[i] - 1].hash == hash)
			return tl->slots[i] - 1;
	return -ENOENT;
}

/* The hash table at twice the stacks, at least. */
static int rehash(struct timeline *tl)
{
	size_t cap = tl->cap_slots ? tl->cap_slots * 2 : 256, i, k;
	int32_t *s;

	if (tl->cap_slots && (tl->n_stacks + 1) * 2 <= tl->cap_slots)
		return 0;
	s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(tl->slots);
	tl->slots = s;
	tl->cap_slots = cap;
	for (i = 0; i < tl->n_stacks; i++) {
		for (k = slot_of(tl, tl->stacks[i].hash); s[k]; k = (k + 1) & (cap - 1))
			;
		s[k] = (int32_t)i + 1;
	}
	return 0;
}

int timeline__stack(struct timeline *tl, uint64_t hash, const char *const *names, size_t n)
{
	const char **copy;
	size_t k;
	int idx = timeline__find_stack(tl, hash);

	if (idx >= 0)
		return idx;
	if (rehash(tl) || grow(&tl->stacks, &tl->cap_stacks, tl->n_stacks, sizeof(*tl->stacks)))
		return -ENOMEM;
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, names, n * sizeof(*copy));
	tl->stacks[tl->n_stacks] = (struct tl_stack){ hash, copy, n };
	for (k = slot_of(tl, hash); tl->slots[k]; k = (k + 1) & (tl->cap_slots - 1))
		;
	tl->slots[k] = (int32_t)tl->n_stacks + 1;
	return (int)tl->n_stacks++;
}

bool timeline__has_thread(const struct timeline *tl, pid_t tid)
{
	size_t i;

	/* newest first: the threads sampled are the ones seen last */
	for (i = tl->n_threads; i-- > 0;)
		if (tl->threads[i].tid == tid)
			return true;
	return false;
}

int timeline__thread(struct timeline *tl, pid_t tid, const char *comm)
{
	char name[64];

	if (timeline__has_thread(tl, tid))
		return 0;
	if (grow(&tl->threads, &tl->cap_threads, tl->n_threads, sizeof(*tl->threads)))
		return -ENOMEM;
	read_comm(tl->pid, tid, name, sizeof(name));
	if (!name[0] && comm)
		snprintf(name, sizeof(name), "%s", comm);
	if (!name[0])
		snprintf(name, sizeof(name), "thread %d", (int)tid);
	tl->threads[tl->n_threads].tid = tid;
	tl->threads[tl->n_threads].name = strdup(name);
	if (!tl->threads[tl->n_threads].name)
		return -ENOMEM;
	tl->n_threads++;
	return 0;
}

int timeline__sample(struct timeline *tl, uint64_t ts, pid_t tid, int stack, bool kernel)
{
	if (timeline__thread(tl, tid, NULL) ||
	    grow(&tl->samples, &tl->cap_samples, tl->n_samples, sizeof(*tl->samples)))
		return -ENOMEM;
	tl->samples[tl->n_samples++] = (struct tl_sample){ ts, tid, stack, kernel };
	return 0;
}

int timeline__instant(struct timeline *tl, uint64_t ts, pid_t tid, const char *name,
		      const char *args, size_t args_len)
{
	char *a = NULL;

	if (timeline__thread(tl, tid, NULL) ||
	    grow(&tl->instants, &tl->cap_instants, tl->n_instants, sizeof(*tl->instants)))
		return -ENOMEM;
	if (args) {
		a = strndup(args, args_len);
		if (!a)
			return -ENOMEM;
	}
	tl->instants[tl->n_instants++] = (struct tl_instant){ ts, tid, name, a };
	return 0;
}

int timeline__raw_events(struct timeline *tl, const char *text, size_t len)
{
	char *r;

	if (!len)
		return 0;
	r = realloc(tl->raw, tl->raw_len + len + 3);
	if (!r)
		return -ENOMEM;
	tl->raw = r;
	if (tl->raw_len) {
		memcpy(r + tl->raw_len, ",\n", 2);
		tl->raw_len += 2;
	}
	memcpy(r + tl->raw_len, text, len);
	tl->raw_len += len;
	r[tl->raw_len] = '\0';
	return 0;
}

int timeline__raw_take(struct timeline *tl, char *text, size_t len)
{
	int err;

	if (tl->raw_len || !len) {
		err = timeline__raw_events(tl, text, len);
		free(text);
		return err;
	}
	free(tl->raw);
	tl->raw = text;
	tl->raw_len = len;
	return 0;
}

void timeline__counts(const struct timeline *tl, struct timeline_counts *c)
{
	c->samples = tl->n_samples;
	c->slices = tl->slices;
	c->instants = tl->n_instants;
	c->threads = tl->n_threads;
}

/* ---- writing ---------------------------------------------------------- */

struct writer {
	FILE *out;
	bool first;
	const struct timeline *tl;
};

void timeline__event_start(FILE *out, bool *first, struct json *j)
{
	if (!*first)
		fputs(",\n", out);
	*first = false;
	json__init(j, out);
	json__obj(j);
}

static void event_start(struct writer *w, struct json *j)
{
	timeline__event_start(w->out, &w->first, j);
}

void timeline__put_time(struct json *j, const char *key, uint64_t ts, uint64_t origin)
{
	uint64_t d = ts >= origin ? ts - origin : origin - ts;

	json__key(j, key);
	json__num(j, "%s%" PRIu64 ".%03u", ts >= origin ? "" : "-", d / 1000,
		  (unsigned)(d % 1000));
}

static void put_meta(struct writer *w, const char *what, pid_t tid, const char *name)
{
	struct json j;

	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, what);
	json__key(&j, "pid"); json__i64(&j, w->tl->pid);
	if (tid) {
		json__key(&j, "tid"); json__i64(&j, tid);
	}
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "name"); json__str(&j, name);
	json__end(&j);
	json__end(&j);
}

static const char *leaf_of(const struct timeline *tl, const struct tl_sample *s)
{
	if (s->stack < 0 || !tl->stacks[s->stack].n)
		return s->kernel ? "[kernel]" : "[no user stack]";
	return tl->stacks[s->stack].names[0];
}

/* One slice: samples FROM..TO (inclusive) of one thread, ending at END. */
static void put_slice(struct writer *w, const struct tl_sample *from, const struct tl_sample *to,
		      uint64_t end)
{
	const struct timeline *tl = w->tl;
	const struct tl_sample *s;
	uint64_t kernel = 0;
	struct json j;
	size_t i;

	for (s = from; s <= to; s++)
		kernel += s->kernel;
	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "X");
	json__key(&j, "cat"); json__str(&j, "cpu");
	json__key(&j, "name"); json__str(&j, leaf_of(tl, from));
	timeline__put_time(&j, "ts", from->ts, tl->origin);
	timeline__put_time(&j, "dur", end, from->ts);
	json__key(&j, "pid"); json__i64(&j, tl->pid);
	json__key(&j, "tid"); json__i64(&j, from->tid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "samples"); json__u64(&j, (uint64_t)(to - from) + 1);
	if (kernel) {
		json__key(&j, "in_kernel"); json__u64(&j, kernel);
	}
	json__key(&j, "stack");
	json__arr(&j);
	if (from->stack >= 0)
		for (i = 0; i < tl->stacks[from->stack].n; i++)
			json__str(&j, tl->stacks[from->stack].names[i]);
	json__end(&j);
	json__end(&j);
	json__end(&j);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct tl_sample *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return 0;
}

/* The samples, sorted per thread and time, as merged slices. */
static void put_slices(struct writer *w, struct timeline *tl)
{
	struct tl_sample *s = tl->samples;
	size_t i, start = 0;

	/* none when a stop came before the first sample */
	if (tl->n_samples)
		qsort(s, tl->n_samples, sizeof(*s), cmp_sample);
	tl->slices = 0;
	for (i = 1; i <= tl->n_samples; i++) {
		const struct tl_sample *last = &s[i - 1];
		uint64_t end = last->ts + tl->period;

		if (i < tl->n_samples && s[i].tid == last->tid &&
		    s[i].ts - last->ts <= 2 * tl->period &&
		    !strcmp(leaf_of(tl, &s[i]), leaf_of(tl, &s[start])))
			continue;
		/* a slice never overlaps the next one of its thread */
		if (i < tl->n_samples && s[i].tid == last->tid && s[i].ts < end)
			end = s[i].ts;
		put_slice(w, &s[start], last, end);
		tl->slices++;
		start = i;
	}
}

static void put_instant(struct writer *w, const struct tl_instant *in)
{
	struct json j;

	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "i");
	json__key(&j, "s"); json__str(&j, "t");
	json__key(&j, "cat"); json__str(&j, "uprobe");
	json__key(&j, "name"); json__str(&j, in->name);
	timeline__put_time(&j, "ts", in->ts, w->tl->origin);
	json__key(&j, "pid"); json__i64(&j, w->tl->pid);
	json__key(&j, "tid"); json__i64(&j, in->tid);
	json__key(&j, "args");
	/* the uprobe formatter's object: validated and escaped there */
	json__num(&j, "%s", in->args ? in->args : "{}");
	json__end(&j);
}

int timeline__write(struct timeline *tl, FILE *out, timeline_other_fn other, void *arg)
{
	struct writer w = { out, true, tl };
	struct json doc;
	size_t i;

	fputs("{\"traceEvents\":[\n", out);
	put_meta(&w, "process_name", 0, tl->pname[0] ? tl->pname : "?");
	for (i = 0; i < tl->n_threads; i++)
		put_meta(&w, "thread_name", tl->threads[i].tid, tl->threads[i].name);
	put_slices(&w, tl);
	for (i = 0; i < tl->n_instants; i++)
		put_instant(&w, &tl->instants[i]);
	if (tl->raw_len) {
		if (!w.first)
			fputs(",\n", out);
		fwrite(tl->raw, 1, tl->raw_len, out);
	}
	fputs("\n],\"displayTimeUnit\":\"ms\",\"otherData\":", out);
	json__init(&doc, out);
	json__obj(&doc);
	json__key(&doc, "source"); json__str(&doc, "sidescope timeline");
	json__key(&doc, "pid"); json__i64(&doc, tl->pid);
	json__key(&doc, "clock"); json__str(&doc, "CLOCK_MONOTONIC");
	json__key(&doc, "origin_ns"); json__u64(&doc, tl->origin);
	json__key(&doc, "samples"); json__u64(&doc, tl->n_samples);
	json__key(&doc, "slices"); json__u64(&doc, tl->slices);
	json__key(&doc, "probe_hits"); json__u64(&doc, tl->n_instants);
	if (other)
		other(arg, &doc);
	json__end(&doc);
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}
