// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A timeline's LTTng events as Chrome trace events, within budgets
 * (tlpair.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/json.h"
#include "core/util.h"
#include "ctf/ctfpair.h"
#include "timeline/tlpair.h"

/* A begin event waiting for its end: on its key's stack (newest on top)
 * and on the list of every open begin (oldest first), which is the order
 * the budgets drop them in. */
struct open_slice {
	uint64_t ts;
	char *args;		/* its payload as JSON text; NULL: too long */
	struct open_key *key;
	struct open_slice *older, *newer;	/* on its key's stack */
	struct open_slice *prev, *next;		/* on the list of all */
};

/* The open begins of one thread and name. */
struct open_key {
	uint64_t hash;
	pid_t tid;
	const char *base;	/* the feeder's, lives as long as the pairer */
	uint32_t depth;
	struct open_slice *top, *bottom;
};

struct tl_pair {
	struct tl_pair_opts o;
	struct tl_read_limits lim;
	struct tl_lttng_stats *st;
	FILE *out;		/* the events, ",\n" between them */
	int fd;
	size_t written;		/* bytes of them that reached the fd */
	bool first;
	uint64_t seed;		/* of the key table's hash */
	struct open_key **keys;	/* open addressing, linear probing */
	size_t cap_keys, n_keys;
	struct open_slice *oldest, *newest;
	size_t n_open;
};

static uint64_t key_hash(const struct tl_pair *r, pid_t tid, const char *base)
{
	return hash__pair(hash__more(r->seed, base, strlen(base)), (uint64_t)(uint32_t)tid);
}

static size_t key_slot(const struct tl_pair *r, const struct open_key *k)
{
	return (size_t)k->hash & (r->cap_keys - 1);
}

static int keys_grow(struct tl_pair *r)
{
	size_t cap = r->cap_keys ? r->cap_keys * 2 : 64, i, j;
	struct open_key **n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < r->cap_keys; i++) {
		if (!r->keys[i])
			continue;
		for (j = (size_t)r->keys[i]->hash & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
			;
		n[j] = r->keys[i];
	}
	free(r->keys);
	r->keys = n;
	r->cap_keys = cap;
	return 0;
}

/* The slot of the key (TID, BASE), or of the free slot where it goes. */
static size_t key_find(const struct tl_pair *r, uint64_t h, pid_t tid, const char *base)
{
	size_t i;

	for (i = (size_t)h & (r->cap_keys - 1); r->keys[i]; i = (i + 1) & (r->cap_keys - 1)) {
		const struct open_key *k = r->keys[i];

		if (k->hash == h && k->tid == tid && (k->base == base || !strcmp(k->base, base)))
			break;
	}
	return i;
}

/* Remove empty key K from the table: linear probing's backward shift, so
 * that no tombstone is left for a later search to step over. */
static void key_remove(struct tl_pair *r, struct open_key *k)
{
	size_t mask = r->cap_keys - 1, i = key_slot(r, k), j, home;

	while (r->keys[i] != k)
		i = (i + 1) & mask;
	for (j = (i + 1) & mask; r->keys[j]; j = (j + 1) & mask) {
		home = key_slot(r, r->keys[j]);
		/* an entry may move back to I when its home is not in (I, J] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			r->keys[i] = r->keys[j];
			i = j;
		}
	}
	r->keys[i] = NULL;
	r->n_keys--;
	free(k);
}

/* Take S off its key's stack and the list of all; its key goes with its
 * last begin. S itself is the caller's to free. */
static void open_unlink(struct tl_pair *r, struct open_slice *s)
{
	struct open_key *k = s->key;

	if (s->older)
		s->older->newer = s->newer;
	else
		k->bottom = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		k->top = s->older;
	if (s->prev)
		s->prev->next = s->next;
	else
		r->oldest = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		r->newest = s->prev;
	r->n_open--;
	if (--k->depth == 0)
		key_remove(r, k);
}

static void open_drop(struct tl_pair *r, struct open_slice *s)
{
	open_unlink(r, s);
	free(s->args);
	free(s);
	r->st->begins_dropped++;
}

/* Open a begin of BASE on TID at TS (ARGS taken). 0 or -ENOMEM. */
static int open_push(struct tl_pair *r, pid_t tid, const char *base, uint64_t ts, char *args)
{
	uint64_t h = key_hash(r, tid, base);
	struct open_slice *s;
	struct open_key *k;
	size_t i;

	if ((r->n_keys + 1) * 2 > r->cap_keys && keys_grow(r))
		goto nomem;
	/* one dropped at most: the key's oldest, else the oldest of all */
	k = r->keys[key_find(r, h, tid, base)];
	if (k && k->depth >= r->lim.max_depth)
		open_drop(r, k->bottom);
	else if (r->n_open >= r->lim.max_open && r->oldest)
		open_drop(r, r->oldest);
	/* found again: a key that went with its last begin moved others */
	i = key_find(r, h, tid, base);
	k = r->keys[i];
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			goto nomem;
		*k = (struct open_key){ .hash = h, .tid = tid, .base = base };
		r->keys[i] = k;
		r->n_keys++;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		if (!k->depth)
			key_remove(r, k);
		goto nomem;
	}
	*s = (struct open_slice){ .ts = ts, .args = args, .key = k, .older = k->top,
				  .prev = r->newest };
	if (k->top)
		k->top->newer = s;
	else
		k->bottom = s;
	k->top = s;
	k->depth++;
	if (r->newest)
		r->newest->next = s;
	else
		r->oldest = s;
	r->newest = s;
	r->n_open++;
	return 0;
nomem:
	free(args);
	return -ENOMEM;
}

/* The innermost open begin of BASE on TID, left where it is; NULL: none. */
static struct open_slice *open_top(const struct tl_pair *r, pid_t tid, const char *base)
{
	struct open_key *k;

	if (!r->cap_keys)
		return NULL;
	k = r->keys[key_find(r, key_hash(r, tid, base), tid, base)];
	return k ? k->top : NULL;
}

/* ---- events ----------------------------------------------------------------- */

static void event_start(struct tl_pair *r, struct json *j)
{
	timeline__event_start(r->out, &r->first, j);
}

static void put_payload(struct tl_pair *r, struct json *j, const void *payload)
{
	if (payload) {
		r->o.payload(j, payload);
	} else {
		json__obj(j);
		json__end(j);
	}
}

/* A thread_name for TID unless the timeline has it. */
static void name_thread(struct tl_pair *r, pid_t tid, const char *procname)
{
	struct json j;

	if (r->o.tl && timeline__has_thread(r->o.tl, tid))
		return;
	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, "thread_name");
	json__key(&j, "pid"); json__i64(&j, r->o.pid);
	json__key(&j, "tid"); json__i64(&j, tid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "name"); json__str(&j, procname && *procname ? procname : "?");
	json__end(&j);
	json__end(&j);
}

/* The payload as JSON text in *TEXT, NULL when longer than max_args
 * (counted). 0, or -ENOMEM. */
static int payload_text(struct tl_pair *r, const void *payload, char **text)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *m = open_memstream(&buf, &len);

	*text = NULL;
	if (!m)
		return -ENOMEM;
	json__init(&j, m);
	put_payload(r, &j, payload);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	if (len > r->lim.max_args) {
		free(buf);
		r->st->args_dropped++;
		return 0;
	}
	*text = buf;
	return 0;
}

static void put_slice(struct tl_pair *r, const struct open_slice *s, uint64_t end,
		      const void *eargs, bool unfinished)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "X");
	json__key(&j, "cat"); json__str(&j, "lttng");
	json__key(&j, "name"); json__str(&j, s->key->base);
	timeline__put_time(&j, "ts", s->ts, r->o.origin);
	timeline__put_time(&j, "dur", end > s->ts ? end : s->ts, s->ts);
	json__key(&j, "pid"); json__i64(&j, r->o.pid);
	json__key(&j, "tid"); json__i64(&j, s->key->tid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "begin");
	if (s->args) {
		json__num(&j, "%s", s->args);
	} else {
		json__null(&j);
		/* said, so that a null is not taken for the app's */
		json__key(&j, "begin_too_long"); json__bool(&j, true);
	}
	if (!unfinished) {
		json__key(&j, "end");
		put_payload(r, &j, eargs);
	} else {
		json__key(&j, "unfinished");
		json__bool(&j, true);
	}
	json__end(&j);
	json__end(&j);
	r->st->slices++;
}

static void put_instant(struct tl_pair *r, const struct tl_event *e)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "i");
	json__key(&j, "s"); json__str(&j, "t");
	json__key(&j, "cat"); json__str(&j, "lttng");
	json__key(&j, "name"); json__str(&j, e->name);
	timeline__put_time(&j, "ts", e->ts, r->o.origin);
	json__key(&j, "pid"); json__i64(&j, r->o.pid);
	json__key(&j, "tid"); json__i64(&j, e->tid);
	json__key(&j, "args");
	put_payload(r, &j, e->payload);
	json__end(&j);
	r->st->instants++;
}

int tl_pair__event(struct tl_pair *r, const struct tl_event *e)
{
	struct open_slice *s;
	char *args;

	if (e->new_thread)
		name_thread(r, e->tid, e->procname);
	if (!r->st->first_ns || e->ts < r->st->first_ns)
		r->st->first_ns = e->ts;
	if (e->ts > r->st->last_ns)
		r->st->last_ns = e->ts;
	if (e->kind == CTFPAIR_BEGIN) {
		if (payload_text(r, e->payload, &args))
			return -ENOMEM;
		return open_push(r, e->tid, e->base, e->ts, args);
	}
	if (e->kind == CTFPAIR_END) {
		s = open_top(r, e->tid, e->base);
		if (s) {
			put_slice(r, s, e->ts, e->payload, false);
			open_unlink(r, s);
			free(s->args);
			free(s);
			return 0;
		}
		/* an end without its begin: an instant */
	}
	put_instant(r, e);
	return 0;
}

/* ---- the output ------------------------------------------------------------ */

/* The events' stream: every byte to the fd, counted for max_bytes. */
static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	struct tl_pair *r = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = write(r->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)n;
		r->written += (size_t)n;
	}
	return (ssize_t)done;
}

size_t tl_pair__written(const struct tl_pair *r)
{
	return r->written;
}

struct tl_pair *tl_pair__new(int fd, const struct tl_pair_opts *o, struct tl_lttng_stats *st)
{
	static const cookie_io_functions_t io = { .write = out_write };
	struct tl_pair *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	*r = (struct tl_pair){ .o = *o, .lim = *o->lim, .st = st, .fd = fd, .first = true };
	/* secret: the app chooses the threads and names hashed */
	if (getrandom(&r->seed, sizeof(r->seed), GRND_NONBLOCK) != sizeof(r->seed))
		r->seed = now_ns() ^ ((uint64_t)getpid() << 32);
	r->out = fopencookie(r, "w", io);
	if (!r->out) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(r->out, NULL, _IOFBF, 65536);
	return r;
}

int tl_pair__finish(struct tl_pair *r)
{
	struct open_slice *s;

	while ((s = r->oldest)) {
		if (r->written < r->lim.max_bytes)
			put_slice(r, s, r->st->last_ns, NULL, true);
		else
			r->st->unwritten++;
		open_unlink(r, s);
		free(s->args);
		free(s);
	}
	return fflush(r->out) || ferror(r->out) ? -EIO : 0;
}

void tl_pair__free(struct tl_pair *r)
{
	struct open_slice *s, *next;
	size_t i;

	if (!r)
		return;
	for (s = r->oldest; s; s = next) {
		next = s->next;
		free(s->args);
		free(s);
	}
	for (i = 0; i < r->cap_keys; i++)
		free(r->keys[i]);
	free(r->keys);
	fclose(r->out);
	free(r);
}
