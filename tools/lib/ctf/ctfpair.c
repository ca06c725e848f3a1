// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Begin/end pairs of trace events and their Chrome trace events, within
 * budgets (ctfpair.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/json.h"
#include "core/util.h"
#include "ctf/ctfpair.h"

int ctfpair__classify(const char *name, char **base)
{
	static const struct { const char *w; enum ctfpair_kind k; } words[] = {
		{ "start", CTFPAIR_BEGIN }, { "begin", CTFPAIR_BEGIN },
		{ "stop", CTFPAIR_END }, { "end", CTFPAIR_END },
	};
	size_t len = strlen(name), i, wl, blen;
	const char *v;

	*base = NULL;
	/* strip "_V<digits>" */
	v = name + len;
	while (v > name && v[-1] >= '0' && v[-1] <= '9')
		v--;
	if (v < name + len && v - name >= 2 && v[-1] == 'V' && v[-2] == '_')
		len = (size_t)(v - name) - 2;
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		wl = strlen(words[i].w);
		if (len <= wl || strncasecmp(name + len - wl, words[i].w, wl) != 0)
			continue;
		blen = len - wl;
		if (name[blen - 1] == '_' || name[blen - 1] == ':') {
			blen--;
		} else if (!(name[blen] >= 'A' && name[blen] <= 'Z' &&
			     strncmp(name + blen + 1, words[i].w + 1, wl - 1) == 0)) {
			/* not CamelCase: "Append", "Legend", "BACKEND" are no ends */
			continue;
		}
		if (blen == 0)
			continue;
		*base = strndup(name, blen);
		if (!*base)
			return -ENOMEM;
		return words[i].k;
	}
	return CTFPAIR_NONE;
}

void ctfpair__default_limits(struct ctfpair_limits *lim)
{
	*lim = (struct ctfpair_limits){ .max_open = CTFPAIR_MAX_OPEN, .max_depth = CTFPAIR_MAX_DEPTH,
					.max_args = CTFPAIR_MAX_ARGS };
}

/* ---- the open begins ------------------------------------------------------- */

/* A begin event waiting for its end: on its key's stack (newest on top)
 * and on the list of every open begin (oldest first), which is the order
 * the budgets drop them in. */
struct open_slice {
	uint64_t ts;
	uint64_t seq;		/* the order they were opened in */
	char *args;		/* its payload as JSON text; NULL: too long */
	struct open_key *key;
	struct open_slice *older, *newer;	/* on its key's stack */
	struct open_slice *prev, *next;		/* on the list of all */
};

/* The open begins of one thread and name. */
struct open_key {
	uint64_t hash;
	uint32_t thread;
	int64_t pid, tid;	/* as shown */
	const char *base;	/* the feeder's, lives as long as the pairer */
	uint32_t depth;
	struct open_slice *top, *bottom;
};

struct ctfpair {
	struct ctfpair_opts o;
	struct ctfpair_stats *st;
	FILE *out;		/* the events, ",\n" between them */
	int fd;
	size_t written;		/* bytes of them that reached the fd */
	bool first;
	bool origin_set;
	uint64_t seed;		/* of the key table's hash */
	struct open_key **keys;	/* open addressing, linear probing */
	size_t cap_keys, n_keys;
	struct open_slice *oldest, *newest;
	size_t n_open;
	uint64_t seq;
};

static uint64_t key_hash(const struct ctfpair *r, uint32_t thread, const char *base)
{
	return hash__pair(hash__more(r->seed, base, strlen(base)), thread);
}

static size_t key_slot(const struct ctfpair *r, const struct open_key *k)
{
	return (size_t)k->hash & (r->cap_keys - 1);
}

static int keys_grow(struct ctfpair *r)
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

/* The slot of the key (THREAD, BASE), or of the free slot where it goes. */
static size_t key_find(const struct ctfpair *r, uint64_t h, uint32_t thread, const char *base)
{
	size_t i;

	for (i = (size_t)h & (r->cap_keys - 1); r->keys[i]; i = (i + 1) & (r->cap_keys - 1)) {
		const struct open_key *k = r->keys[i];

		if (k->hash == h && k->thread == thread &&
		    (k->base == base || !strcmp(k->base, base)))
			break;
	}
	return i;
}

/* Remove empty key K from the table: linear probing's backward shift, so
 * that no tombstone is left for a later search to step over. */
static void key_remove(struct ctfpair *r, struct open_key *k)
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
static void open_unlink(struct ctfpair *r, struct open_slice *s)
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

static void open_drop(struct ctfpair *r, struct open_slice *s)
{
	open_unlink(r, s);
	free(s->args);
	free(s);
	r->st->begins_dropped++;
}

/* Open begin E (ARGS taken). 0 or -ENOMEM. */
static int open_push(struct ctfpair *r, const struct ctfpair_event *e, char *args)
{
	uint64_t h = key_hash(r, e->thread, e->base);
	struct open_slice *s;
	struct open_key *k;
	size_t i;

	if ((r->n_keys + 1) * 2 > r->cap_keys && keys_grow(r))
		goto nomem;
	/* one dropped at most: the key's oldest, else the oldest of all */
	k = r->keys[key_find(r, h, e->thread, e->base)];
	if (k && k->depth >= r->o.lim.max_depth)
		open_drop(r, k->bottom);
	else if (r->n_open >= r->o.lim.max_open && r->oldest)
		open_drop(r, r->oldest);
	/* found again: a key that went with its last begin moved others */
	i = key_find(r, h, e->thread, e->base);
	k = r->keys[i];
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			goto nomem;
		*k = (struct open_key){ .hash = h, .thread = e->thread, .pid = e->pid, .tid = e->tid,
					.base = e->base };
		r->keys[i] = k;
		r->n_keys++;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		if (!k->depth)
			key_remove(r, k);
		goto nomem;
	}
	*s = (struct open_slice){ .ts = e->ts, .seq = r->seq++, .args = args, .key = k,
				  .older = k->top, .prev = r->newest };
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

/* The innermost open begin of E's name on its thread, left where it is;
 * NULL: none. */
static struct open_slice *open_top(const struct ctfpair *r, const struct ctfpair_event *e)
{
	struct open_key *k;

	if (!r->cap_keys)
		return NULL;
	k = r->keys[key_find(r, key_hash(r, e->thread, e->base), e->thread, e->base)];
	return k ? k->top : NULL;
}

/* ---- events ----------------------------------------------------------------- */

static void event_start(struct ctfpair *r, struct json *j)
{
	if (!r->first)
		fputs(",\n", r->out);
	r->first = false;
	json__init(j, r->out);
	json__obj(j);
}

/* A time, microseconds with ns decimals, TS - ORIGIN (negative before). */
static void put_time(struct json *j, const char *key, uint64_t ts, uint64_t origin)
{
	uint64_t d = ts >= origin ? ts - origin : origin - ts;

	json__key(j, key);
	json__num(j, "%s%" PRIu64 ".%03u", ts >= origin ? "" : "-", d / 1000,
		  (unsigned)(d % 1000));
}

static void put_payload(struct ctfpair *r, struct json *j, const void *payload)
{
	if (payload) {
		r->o.payload(j, payload);
	} else {
		json__obj(j);
		json__end(j);
	}
}

static void put_meta(struct ctfpair *r, const char *what, const struct ctfpair_event *e,
		     bool tid)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, what);
	json__key(&j, "pid"); json__i64(&j, e->pid);
	if (tid) {
		json__key(&j, "tid"); json__i64(&j, e->tid);
	}
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "name");
	json__str(&j, e->procname && *e->procname ? e->procname : "?");
	json__end(&j);
	json__end(&j);
}

/* The thread's name (and its process's) unless it has one. */
static void name_thread(struct ctfpair *r, const struct ctfpair_event *e)
{
	if (r->o.named && r->o.named(r->o.named_ctx, e->tid))
		return;
	put_meta(r, "thread_name", e, true);
	if (r->o.process_names && e->pid == e->tid)
		put_meta(r, "process_name", e, false);
}

/* The payload as JSON text in *TEXT, NULL when longer than max_args
 * (counted). 0, or -ENOMEM. */
static int payload_text(struct ctfpair *r, const void *payload, char **text)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *m = open_memstream(&buf, &len);

	*text = NULL;
	if (!m)
		return -ENOMEM;
	json__init(&j, m);
	if (payload || !r->o.no_payload_null)
		put_payload(r, &j, payload);
	else
		json__null(&j);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	if (len > r->o.lim.max_args) {
		free(buf);
		r->st->args_dropped++;
		return 0;
	}
	*text = buf;
	return 0;
}

static void put_slice(struct ctfpair *r, const struct open_slice *s, uint64_t end,
		      const void *eargs, bool unfinished)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "X");
	if (r->o.cat) {
		json__key(&j, "cat"); json__str(&j, r->o.cat);
	}
	json__key(&j, "name"); json__str(&j, s->key->base);
	put_time(&j, "ts", s->ts, r->o.origin);
	put_time(&j, "dur", end > s->ts ? end : s->ts, s->ts);
	json__key(&j, "pid"); json__i64(&j, s->key->pid);
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
	if (unfinished) {
		json__key(&j, "unfinished");
		json__bool(&j, true);
	} else if (eargs || !r->o.no_payload_null) {
		json__key(&j, "end");
		put_payload(r, &j, eargs);
	}
	json__end(&j);
	json__end(&j);
	r->st->slices++;
}

static void put_instant(struct ctfpair *r, const struct ctfpair_event *e)
{
	struct json j;

	event_start(r, &j);
	json__key(&j, "ph"); json__str(&j, "i");
	json__key(&j, "s"); json__str(&j, "t");
	if (r->o.cat) {
		json__key(&j, "cat"); json__str(&j, r->o.cat);
	}
	json__key(&j, "name"); json__str(&j, e->name);
	put_time(&j, "ts", e->ts, r->o.origin);
	json__key(&j, "pid"); json__i64(&j, e->pid);
	json__key(&j, "tid"); json__i64(&j, e->tid);
	json__key(&j, "args");
	put_payload(r, &j, e->payload);
	json__end(&j);
	r->st->instants++;
}

int ctfpair__event(struct ctfpair *r, const struct ctfpair_event *e)
{
	struct open_slice *s;
	char *args;

	if (e->new_thread)
		name_thread(r, e);
	if (!r->st->first_ns || e->ts < r->st->first_ns)
		r->st->first_ns = e->ts;
	if (e->ts > r->st->last_ns)
		r->st->last_ns = e->ts;
	if (r->o.origin_first && !r->origin_set) {
		r->o.origin = e->ts;
		r->origin_set = true;
	}
	if (e->kind == CTFPAIR_BEGIN) {
		if (payload_text(r, e->payload, &args))
			return -ENOMEM;
		return open_push(r, e, args);
	}
	if (e->kind == CTFPAIR_END) {
		s = open_top(r, e);
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
	struct ctfpair *r = cookie;
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

size_t ctfpair__written(const struct ctfpair *r)
{
	return r->written;
}

uint64_t ctfpair__origin(const struct ctfpair *r)
{
	return r->o.origin;
}

struct ctfpair *ctfpair__new(int fd, const struct ctfpair_opts *o, struct ctfpair_stats *st)
{
	static const cookie_io_functions_t io = { .write = out_write };
	struct ctfpair *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	*r = (struct ctfpair){ .o = *o, .st = st, .fd = fd, .first = true };
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

static bool budget_left(const struct ctfpair *r)
{
	return !r->o.lim.max_bytes || r->written < r->o.lim.max_bytes;
}

static void finish_one(struct ctfpair *r, struct open_slice *s)
{
	if (budget_left(r))
		put_slice(r, s, r->st->last_ns, NULL, true);
	else
		r->st->unwritten++;
	open_unlink(r, s);
	free(s->args);
	free(s);
}

static int cmp_by_thread(const void *a, const void *b)
{
	const struct open_slice *x = *(struct open_slice *const *)a;
	const struct open_slice *y = *(struct open_slice *const *)b;

	if (x->key->thread != y->key->thread)
		return x->key->thread < y->key->thread ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ctfpair__finish(struct ctfpair *r)
{
	struct open_slice *s, **v = NULL;
	size_t i, n = 0;

	/* by thread: max_open of them sorted; without the memory, oldest
	 * first */
	if (r->o.open_by_thread && r->n_open > 1)
		v = malloc(r->n_open * sizeof(*v));
	if (v) {
		for (s = r->oldest; s; s = s->next)
			v[n++] = s;
		qsort(v, n, sizeof(*v), cmp_by_thread);
		for (i = 0; i < n; i++)
			finish_one(r, v[i]);
		free(v);
	}
	while ((s = r->oldest))
		finish_one(r, s);
	return fflush(r->out) || ferror(r->out) ? -EIO : 0;
}

void ctfpair__free(struct ctfpair *r)
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
