// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Profile model: interned strings, objects (module, build id), functions
 * (name, kind, object), mappings (object, address range), locations
 * (address, function, source lines) and stacks of locations with counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "prof/prof.h"
#include "prof/prof_int.h"

const char *prof__intern(struct prof *p, const char *s)
{
	size_t i;

	if (p->strs_n * 2 >= p->strs_cap) {
		size_t ncap = p->strs_cap ? p->strs_cap * 2 : 1024, j;
		char **n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (j = 0; j < p->strs_cap; j++) {
			if (!p->strs[j])
				continue;
			i = hash__str(p->strs[j]) & (ncap - 1);
			while (n[i])
				i = (i + 1) & (ncap - 1);
			n[i] = p->strs[j];
		}
		free(p->strs);
		p->strs = n;
		p->strs_cap = ncap;
	}
	i = hash__str(s) & (p->strs_cap - 1);
	while (p->strs[i]) {
		if (strcmp(p->strs[i], s) == 0)
			return p->strs[i];
		i = (i + 1) & (p->strs_cap - 1);
	}
	p->strs[i] = strdup(s);
	if (!p->strs[i])
		return NULL;
	p->strs_n++;
	return p->strs[i];
}

struct prof *prof__new(void)
{
	return calloc(1, sizeof(struct prof));
}

void prof__free(struct prof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].locs);
	free(p->stacks);
	free(p->stack_ht.slots);
	for (i = 0; i < p->nlocs; i++)
		free(p->locs[i].lines);
	free(p->locs);
	free(p->loc_ht.slots);
	free(p->maps);
	free(p->map_ht.slots);
	free(p->funcs);
	free(p->func_ht.slots);
	free(p->objs);
	for (i = 0; i < p->strs_cap; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p);
}

void prof__set_split(struct prof *p, unsigned int split)
{
	p->split = split & (PROF_SPLIT_PID | PROF_SPLIT_TID);
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *a;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	a = realloc(*arr, ncap * elem);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = ncap;
	return 0;
}

typedef uint64_t (*hash_fn)(const struct prof *p, uint32_t i);

/* Make room in T for one more of N entries hashed by HF. */
static int table_room(struct prof_table *t, size_t n, hash_fn hf, const struct prof *p)
{
	size_t ncap = t->cap ? t->cap * 2 : 256, i, j;
	uint32_t *s;

	if ((n + 1) * 2 < t->cap)
		return 0;
	while ((n + 1) * 2 >= ncap)
		ncap *= 2;
	s = calloc(ncap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		j = hf(p, (uint32_t)i) & (ncap - 1);
		while (s[j])
			j = (j + 1) & (ncap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->cap = ncap;
	return 0;
}

/* Insert id I (hashed H) into T, which has room. */
static void table_put(struct prof_table *t, uint64_t h, uint32_t i)
{
	size_t j = h & (t->cap - 1);

	while (t->slots[j])
		j = (j + 1) & (t->cap - 1);
	t->slots[j] = i + 1;
}

#define TABLE_EACH(t, h, id)							\
	for (size_t j_ = (t)->cap ? (h) & ((t)->cap - 1) : 0, id;		\
	     (t)->cap && ((id) = (t)->slots[j_]) != 0; j_ = (j_ + 1) & ((t)->cap - 1))

static uint64_t func_hash_of(const char *name, enum frame_kind kind, uint32_t obj)
{
	uint64_t h = hash__more(HASH_SEED, &name, sizeof(name));

	h = hash__more(h, &kind, sizeof(kind));
	return hash__u64(hash__more(h, &obj, sizeof(obj)));
}

static uint64_t func_hash(const struct prof *p, uint32_t i)
{
	return func_hash_of(p->funcs[i].name, p->funcs[i].kind, p->funcs[i].obj);
}

static uint64_t map_hash_of(const struct prof_map *m)
{
	uint64_t h = hash__more(HASH_SEED, &m->obj, sizeof(m->obj));

	h = hash__more(h, &m->start, sizeof(m->start));
	h = hash__more(h, &m->limit, sizeof(m->limit));
	return hash__u64(hash__more(h, &m->offset, sizeof(m->offset)));
}

static uint64_t map_hash(const struct prof *p, uint32_t i)
{
	return map_hash_of(&p->maps[i]);
}

static uint64_t loc_hash_of(const struct prof_loc *l)
{
	uint64_t h = hash__more(HASH_SEED, &l->fid, sizeof(l->fid));

	h = hash__more(h, &l->map, sizeof(l->map));
	h = hash__more(h, &l->addr, sizeof(l->addr));
	h = hash__more(h, &l->unresolved, sizeof(l->unresolved));
	h = hash__more(h, &l->ref, sizeof(l->ref));
	/* the lines' strings are interned: their pointers identify them */
	return hash__u64(hash__more(h, l->lines, l->nlines * sizeof(*l->lines)));
}

static uint64_t loc_hash(const struct prof *p, uint32_t i)
{
	return loc_hash_of(&p->locs[i]);
}

static uint64_t stack_hash_of(const struct prof_stack *s)
{
	uint64_t h = hash__more(HASH_SEED, &s->pid, sizeof(s->pid));

	h = hash__more(h, &s->tid, sizeof(s->tid));
	h = hash__more(h, &s->comm, sizeof(s->comm));
	h = hash__more(h, &s->thread, sizeof(s->thread));
	return hash__u64(hash__more(h, s->locs, s->n * sizeof(*s->locs)));
}

static uint64_t stack_hash(const struct prof *p, uint32_t i)
{
	return stack_hash_of(&p->stacks[i]);
}

static int obj_id(struct prof *p, const char *module, const char *build_id, uint32_t *out)
{
	size_t i;

	if (!module[0]) {
		*out = 0;
		return 0;
	}
	module = prof__intern(p, module);
	build_id = prof__intern(p, build_id);
	if (!module || !build_id)
		return -ENOMEM;
	/* few: the files a capture touched */
	for (i = 0; i < p->nobjs; i++)
		if (p->objs[i].module == module && p->objs[i].build_id == build_id) {
			*out = (uint32_t)i + 1;
			return 0;
		}
	if (grow((void **)&p->objs, &p->objs_cap, p->nobjs, sizeof(*p->objs)))
		return -ENOMEM;
	p->objs[p->nobjs].module = module;
	p->objs[p->nobjs].build_id = build_id;
	*out = (uint32_t)++p->nobjs;
	return 0;
}

static int func_id(struct prof *p, const char *name, enum frame_kind kind, uint32_t obj,
		   uint32_t *out)
{
	uint64_t h;

	name = prof__intern(p, name);
	if (!name)
		return -ENOMEM;
	h = func_hash_of(name, kind, obj);
	TABLE_EACH(&p->func_ht, h, id) {
		const struct prof_func *fn = &p->funcs[id - 1];

		if (fn->name == name && fn->kind == kind && fn->obj == obj) {
			*out = id - 1;
			return 0;
		}
	}
	if (grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs, sizeof(*p->funcs)) ||
	    table_room(&p->func_ht, p->nfuncs, func_hash, p))
		return -ENOMEM;
	p->funcs[p->nfuncs] = (struct prof_func){ name, kind, obj };
	table_put(&p->func_ht, h, (uint32_t)p->nfuncs);
	*out = (uint32_t)p->nfuncs++;
	return 0;
}

static int map_id(struct prof *p, uint32_t obj, const struct prof_frame *f, uint32_t *out)
{
	struct prof_map m = { obj, f->map_start, f->map_limit, f->map_offset };
	uint64_t h;

	if (!obj) {
		*out = 0;
		return 0;
	}
	h = map_hash_of(&m);
	TABLE_EACH(&p->map_ht, h, id) {
		const struct prof_map *o = &p->maps[id - 1];

		if (o->obj == m.obj && o->start == m.start && o->limit == m.limit &&
		    o->offset == m.offset) {
			*out = id;
			return 0;
		}
	}
	if (grow((void **)&p->maps, &p->maps_cap, p->nmaps, sizeof(*p->maps)) ||
	    table_room(&p->map_ht, p->nmaps, map_hash, p))
		return -ENOMEM;
	p->maps[p->nmaps] = m;
	table_put(&p->map_ht, h, (uint32_t)p->nmaps);
	*out = (uint32_t)++p->nmaps;
	return 0;
}

static int loc_id(struct prof *p, const struct prof_frame *f, uint32_t *out)
{
	struct frame_line lines[FRAME_MAX_LINES];
	struct prof_loc l = { 0 };
	uint32_t obj;
	uint64_t h;
	size_t i, n = f->nlines < FRAME_MAX_LINES ? f->nlines : FRAME_MAX_LINES;
	int err;

	err = obj_id(p, f->module ? f->module : "", f->build_id ? f->build_id : "", &obj);
	if (!err)
		err = func_id(p, f->name, f->kind, obj, &l.fid);
	if (!err)
		err = map_id(p, obj, f, &l.map);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const struct frame_line *in = &f->lines[i];

		lines[i] = *in;
		lines[i].function = in->function ? prof__intern(p, in->function) : NULL;
		lines[i].file = prof__intern(p, in->file ? in->file : "");
		if ((in->function && !lines[i].function) || !lines[i].file)
			return -ENOMEM;
	}
	l.addr = f->addr;
	l.ref = n ? (struct frame_lines_ref){ 0 } : f->lines_ref;
	l.lines = n ? lines : NULL;
	l.nlines = (uint32_t)n;
	l.unresolved = f->unresolved;
	h = loc_hash_of(&l);
	TABLE_EACH(&p->loc_ht, h, id) {
		const struct prof_loc *o = &p->locs[id - 1];

		if (o->fid == l.fid && o->map == l.map && o->addr == l.addr &&
		    o->unresolved == l.unresolved && o->nlines == l.nlines &&
		    o->ref.fn == l.ref.fn && o->ref.src == l.ref.src &&
		    o->ref.vaddr == l.ref.vaddr &&
		    (!n || memcmp(o->lines, lines, n * sizeof(*lines)) == 0)) {
			*out = id - 1;
			return 0;
		}
	}
	if (grow((void **)&p->locs, &p->locs_cap, p->nlocs, sizeof(*p->locs)) ||
	    table_room(&p->loc_ht, p->nlocs, loc_hash, p))
		return -ENOMEM;
	if (n) {
		l.lines = malloc(n * sizeof(*l.lines));
		if (!l.lines)
			return -ENOMEM;
		memcpy(l.lines, lines, n * sizeof(*l.lines));
	}
	p->locs[p->nlocs] = l;
	table_put(&p->loc_ht, h, (uint32_t)p->nlocs);
	*out = (uint32_t)p->nlocs++;
	return 0;
}

int prof__add(struct prof *p, const struct prof_sample *smp, const struct prof_frame *frames,
	      size_t n, uint64_t count)
{
	return prof__add_id(p, smp, frames, n, count, NULL);
}

int prof__add_count(struct prof *p, size_t id, uint64_t count)
{
	if (id >= p->nstacks)
		return -EINVAL;
	p->stacks[id].count += count;
	p->total += count;
	return 0;
}

int prof__add_id(struct prof *p, const struct prof_sample *smp, const struct prof_frame *frames,
		 size_t n, uint64_t count, size_t *id_out)
{
	struct prof_stack s = { smp->pid, smp->tid };
	uint64_t h;
	size_t i;
	int err = -ENOMEM;

	s.comm = prof__intern(p, smp->comm ? smp->comm : "");
	s.thread = prof__intern(p, smp->thread ? smp->thread : s.comm ? s.comm : "");
	if (!s.comm || !s.thread)
		return -ENOMEM;
	s.locs = malloc((n ? n : 1) * sizeof(*s.locs));
	if (!s.locs)
		return -ENOMEM;
	s.n = n;
	s.count = count;
	for (i = 0; i < n; i++) {
		err = loc_id(p, &frames[i], &s.locs[i]);
		if (err)
			goto cleanup;
	}
	p->total += count;
	h = stack_hash_of(&s);
	TABLE_EACH(&p->stack_ht, h, id) {
		struct prof_stack *o = &p->stacks[id - 1];

		if (o->pid == s.pid && o->tid == s.tid && o->comm == s.comm &&
		    o->thread == s.thread && o->n == n &&
		    memcmp(o->locs, s.locs, n * sizeof(*s.locs)) == 0) {
			o->count += count;
			if (id_out)
				*id_out = id - 1;
			err = 0;
			goto cleanup;
		}
	}
	err = -ENOMEM;
	if (grow((void **)&p->stacks, &p->stacks_cap, p->nstacks, sizeof(*p->stacks)) ||
	    table_room(&p->stack_ht, p->nstacks, stack_hash, p)) {
		p->total -= count;
		goto cleanup;
	}
	p->stacks[p->nstacks] = s;
	table_put(&p->stack_ht, h, (uint32_t)p->nstacks);
	if (id_out)
		*id_out = p->nstacks;
	p->nstacks++;
	return 0;
cleanup:
	free(s.locs);
	return err;
}

int prof__finish(FILE *f)
{
	if (fflush(f) || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}

void prof__set_meta(struct prof *p, const struct prof_meta *m)
{
	p->meta = *m;
}

const struct prof_meta *prof__meta(const struct prof *p)
{
	return &p->meta;
}

uint64_t prof__total(const struct prof *p)
{
	return p->total;
}

size_t prof__nstacks(const struct prof *p)
{
	return p->nstacks;
}

bool prof__timed(const struct prof *p)
{
	return p->meta.mode == PROF_MODE_OFFCPU || p->meta.mode == PROF_MODE_WALL;
}

uint64_t prof__shown(const struct prof *p, uint64_t count)
{
	return prof__timed(p) ? (count + 500) / 1000 : count;
}

const char *prof__mode_name(enum prof_mode m)
{
	return m == PROF_MODE_OFFCPU ? "off-CPU" : m == PROF_MODE_WALL ? "wall-clock" :
	       m == PROF_MODE_HITS ? "uprobe" : "CPU";
}

const char *prof__fail_name(unsigned int cause)
{
	static const char *const names[MAP_FAIL_N] = {
		[MAP_FAIL_FULL] = "full",
		[MAP_FAIL_NOMEM] = "out of kernel memory",
		[MAP_FAIL_BUSY] = "busy",
		[MAP_FAIL_OTHER] = "refused",
	};

	return cause < MAP_FAIL_N ? names[cause] : "refused";
}

const char *prof__fail_advice(unsigned int cause, const char *what, const char *option,
			      unsigned long long now, char *buf, size_t size)
{
	switch (cause) {
	case MAP_FAIL_FULL:
		snprintf(buf, size, "%s was full: raise %s (now %llu)", what, option, now);
		break;
	case MAP_FAIL_NOMEM:
		/* maps filled as they go take each element from the BPF
		 * memory allocator's per-CPU cache, refilled after the
		 * interrupt; what it allocates is charged to our cgroup */
		snprintf(buf, size, "the kernel had no element free for %s at that moment (a burst "
			 "of new stacks emptied its per-CPU cache, or the container is near its "
			 "memory limit): not a matter of %s", what, option);
		break;
	case MAP_FAIL_BUSY:
		snprintf(buf, size, "%s was locked at that moment (by a program on the same CPU, "
			 "or for long by another CPU): not a matter of %s", what, option);
		break;
	default:
		snprintf(buf, size, "the kernel refused an element of %s for another reason", what);
		break;
	}
	return buf;
}

void prof__add_fails(char *buf, size_t size, const char *what, const uint64_t *lost)
{
	unsigned int c;

	for (c = 0; c < MAP_FAIL_N; c++) {
		size_t len = strlen(buf);

		if (lost[c])
			snprintf(buf + len, size - len, "%s%s %s %llu", len ? ", " : "", what,
				 prof__fail_name(c), (unsigned long long)lost[c]);
	}
}

const char *prof__states_name(unsigned int states)
{
	switch (states & (PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK)) {
	case PROF_STATE_SLEEP:
		return "interruptible sleep (S)";
	case PROF_STATE_DISK:
		return "uninterruptible sleep (D)";
	case PROF_STATE_SLEEP | PROF_STATE_DISK:
		return "blocked (S and D)";
	case PROF_STATE_RUNNABLE:
		return "waiting for a CPU";
	case PROF_STATE_RUNNABLE | PROF_STATE_SLEEP | PROF_STATE_DISK:
		return "blocked or waiting for a CPU";
	}
	return "some states";
}

const char *frame_kind_suffix(enum frame_kind k)
{
	switch (k) {
	case FRAME_KERNEL:
		return "_[k]";
	case FRAME_JIT:
		return "_[j]";
	case FRAME_R2R:
		return "_[r]";
	default:
		return "";
	}
}

const char *prof__root(const struct prof_stack *s, unsigned int split, char *buf, size_t size)
{
	const char *name = s->thread[0] ? s->thread : "[unknown]";

	if (split & PROF_SPLIT_TID)
		snprintf(buf, size, "%s-%u/%u", name, s->pid, s->tid);
	else if (split & PROF_SPLIT_PID)
		snprintf(buf, size, "%s-%u", name, s->pid);
	else
		return s->thread;
	return buf;
}

static const struct prof *sort_p;
static unsigned int sort_keys;

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* Order (and, at 0, sameness) of two stacks under KEYS. */
static int cmp_keyed(const struct prof *p, const struct prof_stack *x,
		     const struct prof_stack *y, unsigned int keys)
{
	size_t i;
	int c;

	c = strcmp(x->thread, y->thread);
	if (c)
		return c;
	if ((keys & (PROF_SPLIT_PID | PROF_SPLIT_TID)) && (c = cmp_u32(x->pid, y->pid)))
		return c;
	if ((keys & PROF_SPLIT_TID) && (c = cmp_u32(x->tid, y->tid)))
		return c;
	if ((keys & PROF_KEY_COMM) && (c = strcmp(x->comm, y->comm)))
		return c;
	for (i = 0; i < x->n && i < y->n; i++) {
		const struct prof_func *a = prof__frame_func(p, x, i);
		const struct prof_func *b = prof__frame_func(p, y, i);

		if (a == b)
			continue;
		c = strcmp(a->name, b->name);
		if (c)
			return c;
		if (a->kind != b->kind)
			return a->kind < b->kind ? -1 : 1;
		if ((keys & PROF_KEY_FUNCS) && a->obj != b->obj)
			return a->obj < b->obj ? -1 : 1;
	}
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return 0;
}

static int cmp_stacks(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct prof_stack *x = &sort_p->stacks[i], *y = &sort_p->stacks[j];
	int c = cmp_keyed(sort_p, x, y, sort_keys);

	if (c)
		return c;
	/* stable output within one entry */
	if ((c = cmp_u32(x->pid, y->pid)) || (c = cmp_u32(x->tid, y->tid)))
		return c;
	return cmp_u32(i, j);
}

uint32_t *prof__sorted(const struct prof *p, unsigned int keys)
{
	uint32_t *idx = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*idx));
	size_t i;

	if (!idx)
		return NULL;
	for (i = 0; i < p->nstacks; i++)
		idx[i] = (uint32_t)i;
	/* qsort has no context argument; writers are single-threaded */
	sort_p = p;
	sort_keys = keys;
	qsort(idx, p->nstacks, sizeof(*idx), cmp_stacks);
	return idx;
}

bool prof__same(const struct prof *p, uint32_t a, uint32_t b, unsigned int keys)
{
	return cmp_keyed(p, &p->stacks[a], &p->stacks[b], keys) == 0;
}

int prof__foreach(const struct prof *p, prof_stack_cb cb, void *ctx)
{
	const char **names = NULL;
	enum frame_kind *kinds = NULL;
	uint32_t *idx;
	size_t i, j, k, max = 0;
	char root[PROF_ROOT_MAX];
	int ret = 0;

	idx = prof__sorted(p, p->split);
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].n > max)
			max = p->stacks[i].n;
	names = malloc((max + 1) * sizeof(*names));
	kinds = malloc((max + 1) * sizeof(*kinds));
	if (!names || !kinds) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < p->nstacks && !ret; i = k) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		uint64_t count = s->count;

		for (k = i + 1; k < p->nstacks && prof__same(p, idx[i], idx[k], p->split); k++)
			count += p->stacks[idx[k]].count;
		names[0] = prof__root(s, p->split, root, sizeof(root));
		kinds[0] = FRAME_UNKNOWN;
		for (j = 0; j < s->n; j++) {
			names[j + 1] = prof__frame_func(p, s, j)->name;
			kinds[j + 1] = prof__frame_func(p, s, j)->kind;
		}
		ret = cb(ctx, names, kinds, s->n + 1, count);
	}
cleanup:
	free(idx);
	free(names);
	free(kinds);
	return ret;
}
