// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Profile model: interned strings, functions (name, kind, mapping),
 * mappings (module, build id) and stacks of function ids with counts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "prof_int.h"

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

#define H0 0xcbf29ce484222325ull

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
			i = hash_bytes(H0, p->strs[j], strlen(p->strs[j])) & (ncap - 1);
			while (n[i])
				i = (i + 1) & (ncap - 1);
			n[i] = p->strs[j];
		}
		free(p->strs);
		p->strs = n;
		p->strs_cap = ncap;
	}
	i = hash_bytes(H0, s, strlen(s)) & (p->strs_cap - 1);
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
		free(p->stacks[i].fids);
	free(p->stacks);
	free(p->stack_ht);
	free(p->funcs);
	free(p->func_ht);
	free(p->maps);
	for (i = 0; i < p->strs_cap; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p);
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

/* Rebuild an open-addressing table of ids+1 (0 = empty). */
static int rehash(uint32_t **ht, size_t *cap, size_t n, uint64_t (*hf)(const struct prof *, uint32_t),
		  const struct prof *p)
{
	size_t ncap = *cap ? *cap * 2 : 256, i, j;
	uint32_t *t;

	if (n * 2 < *cap)
		return 0;
	while (n * 2 >= ncap)
		ncap *= 2;
	t = calloc(ncap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		j = hf(p, (uint32_t)i) & (ncap - 1);
		while (t[j])
			j = (j + 1) & (ncap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(*ht);
	*ht = t;
	*cap = ncap;
	return 0;
}

static uint64_t func_hash_of(const char *name, enum frame_kind kind, uint32_t map)
{
	uint64_t h = hash_bytes(H0, &name, sizeof(name));

	h = hash_bytes(h, &kind, sizeof(kind));
	return hash_bytes(h, &map, sizeof(map));
}

static uint64_t func_hash(const struct prof *p, uint32_t i)
{
	return func_hash_of(p->funcs[i].name, p->funcs[i].kind, p->funcs[i].map);
}

static uint64_t stack_hash_of(uint32_t pid, const char *comm, const uint32_t *f, size_t n)
{
	uint64_t h = hash_bytes(H0, &pid, sizeof(pid));

	h = hash_bytes(h, &comm, sizeof(comm));
	return hash_bytes(h, f, n * sizeof(*f));
}

static uint64_t stack_hash(const struct prof *p, uint32_t i)
{
	const struct prof_stack *s = &p->stacks[i];

	return stack_hash_of(s->pid, s->comm, s->fids, s->n);
}

static int map_id(struct prof *p, const char *module, const char *build_id, uint32_t *out)
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
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].module == module && p->maps[i].build_id == build_id) {
			*out = (uint32_t)i + 1;
			return 0;
		}
	if (grow((void **)&p->maps, &p->maps_cap, p->nmaps, sizeof(*p->maps)))
		return -ENOMEM;
	p->maps[p->nmaps].module = module;
	p->maps[p->nmaps].build_id = build_id;
	*out = (uint32_t)++p->nmaps;
	return 0;
}

static int func_id(struct prof *p, const struct prof_frame *f, uint32_t *out)
{
	const char *name;
	uint32_t map;
	size_t j;
	int err;

	err = map_id(p, f->module ? f->module : "", f->build_id ? f->build_id : "", &map);
	if (err)
		return err;
	name = prof__intern(p, f->name);
	if (!name)
		return -ENOMEM;
	if (p->func_ht) {
		j = func_hash_of(name, f->kind, map) & (p->func_ht_cap - 1);
		for (; p->func_ht[j]; j = (j + 1) & (p->func_ht_cap - 1)) {
			const struct prof_func *fn = &p->funcs[p->func_ht[j] - 1];

			if (fn->name == name && fn->kind == f->kind && fn->map == map) {
				*out = p->func_ht[j] - 1;
				return 0;
			}
		}
	}
	if (grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs, sizeof(*p->funcs)))
		return -ENOMEM;
	p->funcs[p->nfuncs] = (struct prof_func){ name, f->kind, map };
	p->nfuncs++;
	if (rehash(&p->func_ht, &p->func_ht_cap, p->nfuncs, func_hash, p))
		return -ENOMEM;
	j = func_hash(p, (uint32_t)p->nfuncs - 1) & (p->func_ht_cap - 1);
	while (p->func_ht[j] && p->func_ht[j] != p->nfuncs)
		j = (j + 1) & (p->func_ht_cap - 1);
	p->func_ht[j] = (uint32_t)p->nfuncs;
	*out = (uint32_t)p->nfuncs - 1;
	return 0;
}

int prof__add(struct prof *p, uint32_t pid, const char *comm,
	      const struct prof_frame *frames, size_t n, uint64_t count)
{
	uint32_t *fids = NULL;
	size_t i, j;
	int err = -ENOMEM;

	comm = prof__intern(p, comm ? comm : "");
	if (!comm)
		return -ENOMEM;
	fids = malloc((n ? n : 1) * sizeof(*fids));
	if (!fids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = func_id(p, &frames[i], &fids[i]);
		if (err)
			goto cleanup;
	}
	p->total += count;
	if (p->stack_ht) {
		j = stack_hash_of(pid, comm, fids, n) & (p->stack_ht_cap - 1);
		for (; p->stack_ht[j]; j = (j + 1) & (p->stack_ht_cap - 1)) {
			struct prof_stack *s = &p->stacks[p->stack_ht[j] - 1];

			if (s->pid == pid && s->comm == comm && s->n == n &&
			    memcmp(s->fids, fids, n * sizeof(*fids)) == 0) {
				s->count += count;
				err = 0;
				goto cleanup;
			}
		}
	}
	err = -ENOMEM;
	if (grow((void **)&p->stacks, &p->stacks_cap, p->nstacks, sizeof(*p->stacks)))
		goto cleanup;
	p->stacks[p->nstacks] = (struct prof_stack){ pid, comm, fids, n, count };
	fids = NULL;
	p->nstacks++;
	if (rehash(&p->stack_ht, &p->stack_ht_cap, p->nstacks, stack_hash, p))
		goto cleanup;
	j = stack_hash(p, (uint32_t)p->nstacks - 1) & (p->stack_ht_cap - 1);
	while (p->stack_ht[j] && p->stack_ht[j] != p->nstacks)
		j = (j + 1) & (p->stack_ht_cap - 1);
	p->stack_ht[j] = (uint32_t)p->nstacks;
	err = 0;
cleanup:
	free(fids);
	return err;
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

static const struct prof *sort_p;

static int cmp_stacks(const void *a, const void *b)
{
	const struct prof_stack *x = &sort_p->stacks[*(const uint32_t *)a];
	const struct prof_stack *y = &sort_p->stacks[*(const uint32_t *)b];
	size_t i;
	int c;

	c = strcmp(x->comm, y->comm);
	if (c)
		return c;
	for (i = 0; i < x->n && i < y->n; i++) {
		c = strcmp(sort_p->funcs[x->fids[i]].name, sort_p->funcs[y->fids[i]].name);
		if (c)
			return c;
	}
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

uint32_t *prof__sorted(const struct prof *p)
{
	uint32_t *idx = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*idx));
	size_t i;

	if (!idx)
		return NULL;
	for (i = 0; i < p->nstacks; i++)
		idx[i] = (uint32_t)i;
	sort_p = p;	/* qsort has no context argument; writers are single-threaded */
	qsort(idx, p->nstacks, sizeof(*idx), cmp_stacks);
	return idx;
}

int prof__foreach(const struct prof *p, prof_stack_cb cb, void *ctx)
{
	const char **names = NULL;
	enum frame_kind *kinds = NULL;
	uint32_t *idx;
	size_t i, j, max = 0;
	int ret = 0;

	idx = prof__sorted(p);
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
	for (i = 0; i < p->nstacks && !ret; i++) {
		const struct prof_stack *s = &p->stacks[idx[i]];

		names[0] = s->comm;
		kinds[0] = FRAME_UNKNOWN;
		for (j = 0; j < s->n; j++) {
			names[j + 1] = p->funcs[s->fids[j]].name;
			kinds[j + 1] = p->funcs[s->fids[j]].kind;
		}
		ret = cb(ctx, names, kinds, s->n + 1, s->count);
	}
cleanup:
	free(idx);
	free(names);
	free(kinds);
	return ret;
}
