// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profile as pprof: a gzip'd profile.proto message (protobuf-c). The
 * string table, functions and locations get their ids in the order they
 * are first met, so the bytes do not depend on any hash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/hash.h"
#include "prof/prof_int.h"
#include "profile.pb-c.h"

/* pprof string table, deduplicated through the model's interned pointers:
 * the index of a string is looked up in a small open-addressing table. */
struct strtab {
	char **s;
	size_t n, cap;
	const char **keys;
	int64_t *vals;
	size_t hcap;
};

static int64_t strtab_add(struct strtab *t, const char *s)
{
	size_t i;

	if (t->n * 2 >= t->hcap) {
		size_t ncap = t->hcap ? t->hcap * 2 : 1024, j;
		const char **k = calloc(ncap, sizeof(*k));
		int64_t *v = calloc(ncap, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (j = 0; j < t->hcap; j++) {
			if (!t->keys[j])
				continue;
			i = hash__u64((uintptr_t)t->keys[j]) & (ncap - 1);
			while (k[i])
				i = (i + 1) & (ncap - 1);
			k[i] = t->keys[j];
			v[i] = t->vals[j];
		}
		free(t->keys);
		free(t->vals);
		t->keys = k;
		t->vals = v;
		t->hcap = ncap;
	}
	i = hash__u64((uintptr_t)s) & (t->hcap - 1);
	while (t->keys[i]) {
		if (t->keys[i] == s)
			return t->vals[i];
		i = (i + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		char **ns = realloc(t->s, ncap * sizeof(*ns));

		if (!ns)
			return -1;
		t->s = ns;
		t->cap = ncap;
	}
	t->s[t->n] = (char *)s;
	t->keys[i] = s;
	t->vals[i] = (int64_t)t->n;
	return (int64_t)t->n++;
}

static int gzip_write(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[65536];
	z_stream zs;
	int zr;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)buf;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		zr = deflate(&zs, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		if (fwrite(out, 1, sizeof(out) - zs.avail_out, f) != sizeof(out) - zs.avail_out) {
			deflateEnd(&zs);
			return -EIO;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

/* pprof functions by (name, file, first line), all interned pointers. */
struct functab {
	const char **name, **file;
	uint32_t *start, *id;
	size_t cap, n;
};

static uint64_t functab_id(struct functab *t, const char *name, const char *file, uint32_t start)
{
	uint64_t h = hash__pair(hash__pair(hash__u64((uintptr_t)name), (uintptr_t)file), start);
	size_t i;

	for (i = h & (t->cap - 1); t->id[i]; i = (i + 1) & (t->cap - 1))
		if (t->name[i] == name && t->file[i] == file && t->start[i] == start)
			return t->id[i];
	t->name[i] = name;
	t->file[i] = file;
	t->start[i] = start;
	t->id[i] = (uint32_t)++t->n;
	return t->id[i];
}

/* pprof takes the first mapping for the main binary: executables before
 * shared objects and pseudo-files. */
static bool main_like(const char *module)
{
	return module[0] == '/' && !strstr(module, ".so");
}

/* A pprof message being built from the model: the message and the arrays
 * its pointers point into. */
struct pprof {
	const struct prof *p;
	Perftools__Profiles__Profile pr;
	Perftools__Profiles__ValueType vt[3], *vtp[2];
	Perftools__Profiles__Mapping *maps, **mapp;
	Perftools__Profiles__Function *funcs, **funcp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Sample *samples, **samplep;
	Perftools__Profiles__Label *labels, **labelp;
	struct functab ft;
	const struct frame_line **llines;	/* each location's lines */
	uint32_t *lnl;				/* and how many */
	uint64_t *locids;
	int64_t *values, comments[4];
	struct strtab st;
	char cbuf[4][320];
	uint32_t *idx;		/* stacks in output order */
	uint32_t *mapid;	/* the model's mapping id -> pprof's */
	size_t nline;		/* lines in all, then lines written */
};

#define S(x) strtab_add(&b->st, (x))

/* The empty string first, the sample and period types, the times. */
static int pp_header(struct pprof *b)
{
	const struct prof_meta *m = &b->p->meta;
	size_t i;

	if (S("") != 0)
		return -ENOMEM;
	for (i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&b->vt[i]);
	b->vtp[0] = &b->vt[0];
	b->vtp[1] = &b->vt[1];
	b->pr.sample_type = b->vtp;
	b->pr.period_type = &b->vt[2];
	if (m->mode == PROF_MODE_HITS) {
		b->vt[0].type = S("hits");
		b->vt[0].unit = S("count");
		b->vt[2] = b->vt[0];
		b->pr.n_sample_type = 1;
		b->pr.period = 1;
	} else if (m->mode == PROF_MODE_CPU) {
		b->vt[0].type = S("samples");
		b->vt[0].unit = S("count");
		b->vt[1].type = S("cpu");
		b->vt[1].unit = S("nanoseconds");
		b->vt[2] = b->vt[1];
		b->pr.n_sample_type = 2;
		b->pr.period = (int64_t)m->period_ns;
	} else {
		/* one value: the time, as pprof's other off-CPU and wall
		 * profilers write it */
		b->vt[0].type = S(m->mode == PROF_MODE_OFFCPU ? "off_cpu" : "wall");
		b->vt[0].unit = S("nanoseconds");
		b->vt[2] = b->vt[0];
		b->pr.n_sample_type = 1;
		b->pr.period = 1;
	}
	b->pr.time_nanos = (int64_t)m->time_ns;
	b->pr.duration_nanos = (int64_t)m->duration_ns;
	return 0;
}

/* Each location's lines: the model's, or looked up now (DWARF is read for
 * pprof only); b->nline the lines in all (one for a location without). */
static int pp_lines(struct pprof *b)
{
	const struct prof *p = b->p;
	size_t i;

	b->llines = calloc(p->nlocs + 1, sizeof(*b->llines));
	b->lnl = calloc(p->nlocs + 1, sizeof(*b->lnl));
	if (!b->llines || !b->lnl)
		return -ENOMEM;
	for (i = 0; i < p->nlocs; i++) {
		const struct prof_loc *l = &p->locs[i];
		int n;

		b->llines[i] = l->lines;
		b->lnl[i] = l->nlines;
		if (!l->nlines && l->ref.fn && !l->unresolved) {
			n = l->ref.fn(l->ref.src, l->ref.vaddr, &b->llines[i]);
			if (n == -ENOMEM)
				return -ENOMEM;
			b->lnl[i] = n > 0 ? (uint32_t)(n < FRAME_MAX_LINES ? n : FRAME_MAX_LINES) : 0;
		}
		b->nline += b->lnl[i] ? b->lnl[i] : 1;
	}
	return 0;
}

/* Every array of the message, sized from the model and b->nline. */
static int pp_alloc(struct pprof *b)
{
	const struct prof *p = b->p;
	size_t maxfn = b->nline, nloc = 0, i;
	struct functab *ft = &b->ft;

	for (ft->cap = 256; ft->cap < 2 * maxfn + 2; ft->cap *= 2)
		;
	ft->name = calloc(ft->cap, sizeof(*ft->name));
	ft->file = calloc(ft->cap, sizeof(*ft->file));
	ft->start = calloc(ft->cap, sizeof(*ft->start));
	ft->id = calloc(ft->cap, sizeof(*ft->id));
	b->maps = calloc(p->nmaps + 1, sizeof(*b->maps));
	b->mapp = calloc(p->nmaps + 1, sizeof(*b->mapp));
	b->mapid = calloc(p->nmaps + 1, sizeof(*b->mapid));
	b->funcs = calloc(maxfn + 1, sizeof(*b->funcs));
	b->funcp = calloc(maxfn + 1, sizeof(*b->funcp));
	b->locs = calloc(p->nlocs + 1, sizeof(*b->locs));
	b->locp = calloc(p->nlocs + 1, sizeof(*b->locp));
	b->lines = calloc(b->nline + 1, sizeof(*b->lines));
	b->linep = calloc(b->nline + 1, sizeof(*b->linep));
	b->samples = calloc(p->nstacks + 1, sizeof(*b->samples));
	b->samplep = calloc(p->nstacks + 1, sizeof(*b->samplep));
	b->labels = calloc(4 * p->nstacks + 1, sizeof(*b->labels));
	b->labelp = calloc(4 * p->nstacks + 1, sizeof(*b->labelp));
	b->values = calloc(2 * p->nstacks + 1, sizeof(*b->values));
	for (i = 0; i < p->nstacks; i++)
		nloc += p->stacks[i].n;
	b->locids = calloc(nloc + 1, sizeof(*b->locids));
	b->idx = prof__sorted(p, PROF_SPLIT_PID | PROF_SPLIT_TID | PROF_KEY_COMM | PROF_KEY_FUNCS);
	if (!ft->name || !ft->file || !ft->start || !ft->id || !b->maps || !b->mapp ||
	    !b->mapid || !b->funcs || !b->funcp || !b->locs || !b->locp || !b->lines ||
	    !b->linep || !b->samples || !b->samplep || !b->labels || !b->labelp || !b->values ||
	    !b->locids || !b->idx)
		return -ENOMEM;
	return 0;
}

/* Mappings, those of executables first: what each one's locations tell
 * about its symbols is set by pp_location. */
static void pp_mappings(struct pprof *b)
{
	const struct prof *p = b->p;
	size_t i, j, nmap = 0;

	for (j = 0; j < 2; j++)
		for (i = 0; i < p->nmaps; i++) {
			const struct prof_map *pm = &p->maps[i];
			const struct prof_obj *o = &p->objs[pm->obj - 1];
			Perftools__Profiles__Mapping *mp = &b->maps[nmap];

			if (main_like(o->module) != (j == 0))
				continue;
			perftools__profiles__mapping__init(mp);
			mp->id = nmap + 1;
			mp->memory_start = pm->start;
			mp->memory_limit = pm->limit;
			mp->file_offset = pm->offset;
			mp->filename = S(o->module);
			mp->build_id = S(o->build_id);
			mp->has_functions = mp->has_filenames = 1;
			mp->has_line_numbers = mp->has_inline_frames = 1;
			b->mapp[nmap] = mp;
			b->mapid[i + 1] = (uint32_t)++nmap;
		}
	b->pr.n_mapping = nmap;
	b->pr.mapping = b->mapp;
}

/* Line K of location L: its function, one per (name, file, first line),
 * added when first met. */
static void pp_line(struct pprof *b, const struct prof_loc *l, const struct frame_line *fl,
		    Perftools__Profiles__Mapping *mp)
{
	const struct prof_func *fn = &b->p->funcs[l->fid];
	const char *name = fl && fl->function ? fl->function : fn->name;
	const char *file = fl && fl->file ? fl->file : "";
	uint64_t fid = functab_id(&b->ft, name, file, fl ? fl->start_line : 0);
	Perftools__Profiles__Line *ln = &b->lines[b->nline];

	if (fid == b->ft.n) {
		Perftools__Profiles__Function *pf = &b->funcs[fid - 1];

		perftools__profiles__function__init(pf);
		pf->id = fid;
		pf->name = pf->system_name = S(name);
		pf->filename = S(file);
		pf->start_line = fl ? fl->start_line : 0;
		b->funcp[fid - 1] = pf;
	}
	perftools__profiles__line__init(ln);
	ln->function_id = fid;
	ln->line = fl ? fl->line : 0;
	if (mp && fl && !file[0])
		mp->has_filenames = 0;
	if (mp && fl && !fl->line)
		mp->has_line_numbers = 0;
	b->linep[b->nline++] = ln;
}

/* Location I: the address, and its lines innermost first. An unresolved
 * address gets no line, so that its reader can name it from the
 * mapping's build id. */
static void pp_location(struct pprof *b, size_t i)
{
	const struct prof_loc *l = &b->p->locs[i];
	Perftools__Profiles__Mapping *mp = l->map ? &b->maps[b->mapid[l->map] - 1] : NULL;
	Perftools__Profiles__Location *lc = &b->locs[i];
	size_t n = l->unresolved ? 0 : b->lnl[i] ? b->lnl[i] : 1, k;

	perftools__profiles__location__init(lc);
	lc->id = i + 1;
	lc->mapping_id = l->map ? b->mapid[l->map] : 0;
	lc->address = l->addr;
	lc->n_line = n;
	lc->line = n ? &b->linep[b->nline] : NULL;
	if (mp && (l->unresolved || !b->lnl[i])) {
		mp->has_functions &= !l->unresolved;
		mp->has_filenames = mp->has_line_numbers = mp->has_inline_frames = 0;
	}
	for (k = 0; k < n; k++)
		pp_line(b, l, b->lnl[i] ? &b->llines[i][k] : NULL, mp);
	b->locp[i] = lc;
}

static void pp_locations(struct pprof *b)
{
	size_t i;

	b->nline = 0;
	for (i = 0; i < b->p->nlocs; i++)
		pp_location(b, i);
	b->pr.n_function = b->ft.n;
	b->pr.function = b->funcp;
	b->pr.n_location = b->p->nlocs;
	b->pr.location = b->locp;
}

/* One sample per stack, the leaf first, labelled with its process and
 * thread. */
static void pp_samples(struct pprof *b)
{
	const struct prof *p = b->p;
	size_t i, j, nloc = 0;

	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[b->idx[i]];
		Perftools__Profiles__Sample *sm = &b->samples[i];
		Perftools__Profiles__Label *lb = &b->labels[4 * i];

		perftools__profiles__sample__init(sm);
		sm->location_id = &b->locids[nloc];
		for (j = s->n; j-- > 0;)	/* pprof wants the leaf first */
			b->locids[nloc++] = s->locs[j] + 1;
		sm->n_location_id = s->n;
		b->values[2 * i] = (int64_t)s->count;
		b->values[2 * i + 1] = (int64_t)(s->count * p->meta.period_ns);
		sm->value = &b->values[2 * i];
		sm->n_value = p->meta.mode == PROF_MODE_CPU ? 2 : 1;
		for (j = 0; j < 4; j++) {
			perftools__profiles__label__init(&lb[j]);
			b->labelp[4 * i + j] = &lb[j];
		}
		lb[0].key = S("pid");
		lb[0].num = s->pid;
		lb[1].key = S("tid");
		lb[1].num = s->tid;
		lb[2].key = S("comm");
		lb[2].str = S(s->comm[0] ? s->comm : s->thread);
		lb[3].key = S("thread");
		lb[3].str = S(s->thread);
		sm->label = &b->labelp[4 * i];
		sm->n_label = 4;
		b->samplep[i] = sm;
	}
	b->pr.n_sample = p->nstacks;
	b->pr.sample = b->samplep;
}

/* The capture's losses travel with the profile (pprof -comments). */
static int pp_comments(struct pprof *b)
{
	const struct prof_meta *m = &b->p->meta;
	size_t i;

	if (m->mode == PROF_MODE_CPU || m->mode == PROF_MODE_HITS)
		snprintf(b->cbuf[0], sizeof(b->cbuf[0]),
			 "sidescope: %llu samples counted in BPF, %llu in profile",
			 (unsigned long long)m->samples, (unsigned long long)b->p->total);
	else
		snprintf(b->cbuf[0], sizeof(b->cbuf[0]),
			 "sidescope: %s profile, %llu samples and %llu off-CPU periods (%s, at least "
			 "%llu ns) counted in BPF, %llu ns in profile; missed context switches %llu, "
			 "periods lost to a full start map %llu", prof__mode_name(m->mode),
			 (unsigned long long)m->samples, (unsigned long long)m->off_periods,
			 prof__states_name(m->off_states), (unsigned long long)m->min_block_ns,
			 (unsigned long long)b->p->total, (unsigned long long)m->missed_switches,
			 (unsigned long long)m->lost_off_full);
	snprintf(b->cbuf[1], sizeof(b->cbuf[1]),
		 "lost: user stack errors %llu, kernel stack errors %llu, missing stacks %llu",
		 (unsigned long long)m->lost_ustack, (unsigned long long)m->lost_kstack,
		 (unsigned long long)m->missing_stacks);
	prof__add_fails(b->cbuf[1], sizeof(b->cbuf[1]), "stack store", m->lost_stacks);
	prof__add_fails(b->cbuf[1], sizeof(b->cbuf[1]), "count map", m->lost_counts);
	snprintf(b->cbuf[2], sizeof(b->cbuf[2]), "truncated stacks: user %llu, kernel %llu",
		 (unsigned long long)m->trunc_ustack, (unsigned long long)m->trunc_kstack);
	snprintf(b->cbuf[3], sizeof(b->cbuf[3]), "perf map lines skipped: %llu",
		 (unsigned long long)m->perfmap_bad_lines);
	/* the model interns every string; these four are ours, kept in cbuf */
	for (i = 0; i < 4; i++)
		b->comments[i] = S(b->cbuf[i]);
	b->pr.n_comment = 4;
	b->pr.comment = b->comments;
	for (i = 0; i < 4; i++)
		if (b->comments[i] < 0)
			return -ENOMEM;
	return 0;
}

/* The string table in, packed, gzip'd onto F. */
static int pp_pack(struct pprof *b, FILE *f)
{
	uint8_t *buf;
	size_t i, len;
	int err;

	b->pr.n_string_table = b->st.n;
	b->pr.string_table = b->st.s;
	/* a string that did not fit in the table (no memory) left -1 */
	for (i = 0; i < b->pr.n_function; i++)
		if (b->funcs[i].name < 0 || b->funcs[i].filename < 0)
			return -ENOMEM;
	len = perftools__profiles__profile__get_packed_size(&b->pr);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(&b->pr, buf);
	err = gzip_write(f, buf, len);
	free(buf);
	return err ? err : prof__finish(f);
}

static void pp_free(struct pprof *b)
{
	free(b->idx);
	free(b->mapid);
	free(b->maps);
	free(b->mapp);
	free(b->funcs);
	free(b->funcp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->samples);
	free(b->samplep);
	free(b->labels);
	free(b->labelp);
	free(b->values);
	free(b->locids);
	free(b->llines);
	free(b->lnl);
	free(b->ft.name);
	free(b->ft.file);
	free(b->ft.start);
	free(b->ft.id);
	free(b->st.s);
	free(b->st.keys);
	free(b->st.vals);
}

int prof__write_pprof(const struct prof *p, FILE *f)
{
	struct pprof b = { .p = p, .pr = PERFTOOLS__PROFILES__PROFILE__INIT };
	int err;

	err = pp_header(&b);
	if (!err)
		err = pp_lines(&b);
	if (!err)
		err = pp_alloc(&b);
	if (!err) {
		pp_mappings(&b);
		pp_locations(&b);
		pp_samples(&b);
		err = pp_comments(&b);
	}
	if (!err)
		err = pp_pack(&b, f);
	pp_free(&b);
	return err;
}
