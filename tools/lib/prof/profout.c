// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writers of the profile model: folded, pprof, JSON, top table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/escape.h"
#include "profile.pb-c.h"
#include "prof/prof_int.h"
#include "core/json.h"
#include "core/util.h"

static int finish(FILE *f)
{
	if (fflush(f) || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}

/* A folded frame holds no ';' (the separator) and, like every name the
 * application chose, no control character: escaped, with backslashes left
 * alone (readers of folded stacks parse no escapes). A write error shows in
 * ferror(f). */
static void put_folded_name(FILE *f, const char *s)
{
	const char *semi;

	/* ';' is never part of a UTF-8 sequence: splitting there is safe */
	while ((semi = strchr(s, ';'))) {
		escape__fwrite(f, s, (size_t)(semi - s), ESCAPE_KEEP_BACKSLASH);
		fputc(':', f);
		s = semi + 1;
	}
	escape__fwrite(f, s, strlen(s), ESCAPE_KEEP_BACKSLASH);
}

int prof__write_folded(const struct prof *p, FILE *f)
{
	uint32_t *idx = prof__sorted(p, p->split);
	char root[PROF_ROOT_MAX];
	size_t i, j, k;

	if (!idx)
		return -ENOMEM;
	/* one line per stack as prof__set_split tells them apart: the
	 * stacks of several processes and threads that print the same merge */
	for (i = 0; i < p->nstacks; i = k) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		const char *r = prof__root(s, p->split, root, sizeof(root));
		uint64_t count = s->count;

		for (k = i + 1; k < p->nstacks && prof__same(p, idx[i], idx[k], p->split); k++)
			count += p->stacks[idx[k]].count;
		put_folded_name(f, r[0] ? r : "[unknown]");
		for (j = 0; j < s->n; j++) {
			const struct prof_func *fn = prof__frame_func(p, s, j);

			fputc(';', f);
			put_folded_name(f, fn->name);
			fputs(frame_kind_suffix(fn->kind), f);
		}
		fprintf(f, " %llu\n", (unsigned long long)count);
	}
	free(idx);
	return finish(f);
}

static const char *kind_name(enum frame_kind k)
{
	static const char *const names[] = { "unknown", "native", "kernel", "jit", "r2r" };

	return k < FRAME_KIND_MAX ? names[k] : "unknown";
}

static void json_meta(FILE *f, const struct prof_meta *m, uint64_t total)
{
	fprintf(f, "{\"hz\":%u,\"period_ns\":%llu,\"time_ns\":%llu,\"duration_ns\":%llu,"
		"\"samples\":%llu,\"samples_in_profile\":%llu,"
		"\"lost\":{\"user_stack_errors\":%llu,\"kernel_stack_errors\":%llu,"
		"\"stack_store_full\":%llu,\"count_map_full\":%llu,\"missing_stacks\":%llu},"
		"\"truncated\":{\"user\":%llu,\"kernel\":%llu},\"perfmap_bad_lines\":%llu}",
		m->hz, (unsigned long long)m->period_ns, (unsigned long long)m->time_ns,
		(unsigned long long)m->duration_ns, (unsigned long long)m->samples,
		(unsigned long long)total, (unsigned long long)m->lost_ustack,
		(unsigned long long)m->lost_kstack, (unsigned long long)m->lost_stacks_full,
		(unsigned long long)m->lost_counts_full, (unsigned long long)m->missing_stacks,
		(unsigned long long)m->trunc_ustack, (unsigned long long)m->trunc_kstack,
		(unsigned long long)m->perfmap_bad_lines);
}

int prof__write_json(const struct prof *p, FILE *f)
{
	const unsigned int keys = PROF_SPLIT_PID | PROF_SPLIT_TID | PROF_KEY_COMM | PROF_KEY_FUNCS;
	uint32_t *idx = prof__sorted(p, keys);
	size_t i, j, k;

	if (!idx)
		return -ENOMEM;
	fputs("{\"meta\":", f);
	json_meta(f, &p->meta, p->total);
	fputs(",\n\"functions\":[", f);
	for (i = 0; i < p->nfuncs; i++) {
		const struct prof_func *fn = &p->funcs[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_write_string(f, fn->name);
		fprintf(f, ",\"kind\":\"%s\",\"module\":", kind_name(fn->kind));
		json_write_string(f, fn->obj ? p->objs[fn->obj - 1].module : "");
		fputs(",\"build_id\":", f);
		json_write_string(f, fn->obj ? p->objs[fn->obj - 1].build_id : "");
		fputc('}', f);
	}
	/* one entry per thread and functions: addresses and lines are pprof's */
	fputs("],\n\"stacks\":[", f);
	for (i = 0; i < p->nstacks; i = k) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		uint64_t count = s->count;

		for (k = i + 1; k < p->nstacks && prof__same(p, idx[i], idx[k], keys); k++)
			count += p->stacks[idx[k]].count;
		fprintf(f, "%s{\"pid\":%u,\"tid\":%u,\"comm\":", i ? ",\n" : "\n", s->pid,
			s->tid);
		json_write_string(f, s->comm);
		fputs(",\"thread\":", f);
		json_write_string(f, s->thread);
		fprintf(f, ",\"count\":%llu,\"frames\":[", (unsigned long long)count);
		for (j = 0; j < s->n; j++)
			fprintf(f, "%s%u", j ? "," : "", p->locs[s->locs[j]].fid);
		fputs("]}", f);
	}
	fputs("]}\n", f);
	free(idx);
	return finish(f);
}

struct top_row {
	uint32_t fid;
	uint64_t self, total;
};

static int cmp_top(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

int prof__write_top(const struct prof *p, FILE *f, size_t limit)
{
	struct top_row *rows = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*rows));
	uint32_t *seen = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*seen));
	double tot = p->total ? (double)p->total : 1;
	size_t i, j;
	int err = -ENOMEM;

	if (!rows || !seen)
		goto cleanup;
	for (i = 0; i < p->nfuncs; i++)
		rows[i].fid = (uint32_t)i;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[i];

		if (s->n)
			rows[p->locs[s->locs[s->n - 1]].fid].self += s->count;
		/* count each function once per stack, recursion or not */
		for (j = 0; j < s->n; j++) {
			uint32_t fid = p->locs[s->locs[j]].fid;

			if (seen[fid] == i + 1)
				continue;
			seen[fid] = (uint32_t)i + 1;
			rows[fid].total += s->count;
		}
	}
	qsort(rows, p->nfuncs, sizeof(*rows), cmp_top);
	fprintf(f, "%llu samples at %u Hz over %.1f s\n", (unsigned long long)p->total,
		p->meta.hz, p->meta.duration_ns / 1e9);
	fprintf(f, "%6s %7s %6s %7s  %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", "FUNCTION");
	for (i = 0; i < p->nfuncs && i < limit; i++) {
		const struct prof_func *fn = &p->funcs[rows[i].fid];
		char joined[256], name[ESCAPE_MAX(48) + 1];

		if (!rows[i].self && !rows[i].total)
			break;
		/* a name cut here at 255 bytes is more than 48 columns anyway:
		 * even 4-byte UTF-8 gives 63 */
		snprintf(joined, sizeof(joined), "%s%s", fn->name, frame_kind_suffix(fn->kind));
		/* 6+1+7+1+6+1+7+2 = 31 columns before the name; 80 in all */
		escape__str(name, sizeof(name), joined, strlen(joined), 48, 0);
		fprintf(f, "%5.1f%% %7llu %5.1f%% %7llu  %s\n", 100.0 * rows[i].self / tot,
			(unsigned long long)rows[i].self, 100.0 * rows[i].total / tot,
			(unsigned long long)rows[i].total, name);
	}
	err = finish(f);
cleanup:
	free(rows);
	free(seen);
	return err;
}

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
			i = ((uintptr_t)t->keys[j] >> 3) * 0x9e3779b97f4a7c15ull & (ncap - 1);
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
	i = ((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull & (t->hcap - 1);
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
	uint64_t h = ((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull ^
		     ((uintptr_t)file >> 3) * 0xc2b2ae3d27d4eb4full ^ start;
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

#define S(x) strtab_add(&st, (x))

/* pprof takes the first mapping for the main binary: executables before
 * shared objects and pseudo-files. */
static bool main_like(const char *module)
{
	return module[0] == '/' && !strstr(module, ".so");
}

int prof__write_pprof(const struct prof *p, FILE *f)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[3], *vtp[2];
	Perftools__Profiles__Mapping *maps = NULL, **mapp = NULL;
	Perftools__Profiles__Function *funcs = NULL, **funcp = NULL;
	Perftools__Profiles__Location *locs = NULL, **locp = NULL;
	Perftools__Profiles__Line *lines = NULL, **linep = NULL;
	Perftools__Profiles__Sample *samples = NULL, **samplep = NULL;
	Perftools__Profiles__Label *labels = NULL, **labelp = NULL;
	struct functab ft = { 0 };
	const struct frame_line **llines = NULL;
	uint32_t *lnl = NULL;
	uint64_t *locids = NULL;
	int64_t *values = NULL, comments[4];
	struct strtab st = { 0 };
	char cbuf[4][160];
	uint8_t *buf = NULL;
	size_t i, j, k, nloc = 0, len, nmap = 0, nline = 0, maxfn;
	uint32_t *idx = NULL, *mapid = NULL;
	int err = -ENOMEM;
	const struct prof_meta *m = &p->meta;

	if (S("") != 0)
		goto cleanup;
	for (i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&vt[i]);
	vt[0].type = S("samples");
	vt[0].unit = S("count");
	vt[1].type = S("cpu");
	vt[1].unit = S("nanoseconds");
	vt[2] = vt[1];
	vtp[0] = &vt[0];
	vtp[1] = &vt[1];
	pr.n_sample_type = 2;
	pr.sample_type = vtp;
	pr.period_type = &vt[2];
	pr.period = (int64_t)m->period_ns;
	pr.time_nanos = (int64_t)m->time_ns;
	pr.duration_nanos = (int64_t)m->duration_ns;

	/* each location's lines: the model's, or looked up now (DWARF is read
	 * for pprof only) */
	llines = calloc(p->nlocs + 1, sizeof(*llines));
	lnl = calloc(p->nlocs + 1, sizeof(*lnl));
	if (!llines || !lnl)
		goto cleanup;
	for (i = 0; i < p->nlocs; i++) {
		const struct prof_loc *l = &p->locs[i];
		int n;

		llines[i] = l->lines;
		lnl[i] = l->nlines;
		if (!l->nlines && l->ref.fn && !l->unresolved) {
			n = l->ref.fn(l->ref.src, l->ref.vaddr, &llines[i]);
			if (n == -ENOMEM)
				goto cleanup;
			lnl[i] = n > 0 ? (uint32_t)(n < FRAME_MAX_LINES ? n : FRAME_MAX_LINES) : 0;
		}
		nline += lnl[i] ? lnl[i] : 1;
	}
	maxfn = nline;
	for (ft.cap = 256; ft.cap < 2 * maxfn + 2; ft.cap *= 2)
		;
	ft.name = calloc(ft.cap, sizeof(*ft.name));
	ft.file = calloc(ft.cap, sizeof(*ft.file));
	ft.start = calloc(ft.cap, sizeof(*ft.start));
	ft.id = calloc(ft.cap, sizeof(*ft.id));
	maps = calloc(p->nmaps + 1, sizeof(*maps));
	mapp = calloc(p->nmaps + 1, sizeof(*mapp));
	mapid = calloc(p->nmaps + 1, sizeof(*mapid));
	funcs = calloc(maxfn + 1, sizeof(*funcs));
	funcp = calloc(maxfn + 1, sizeof(*funcp));
	locs = calloc(p->nlocs + 1, sizeof(*locs));
	locp = calloc(p->nlocs + 1, sizeof(*locp));
	lines = calloc(nline + 1, sizeof(*lines));
	linep = calloc(nline + 1, sizeof(*linep));
	samples = calloc(p->nstacks + 1, sizeof(*samples));
	samplep = calloc(p->nstacks + 1, sizeof(*samplep));
	labels = calloc(4 * p->nstacks + 1, sizeof(*labels));
	labelp = calloc(4 * p->nstacks + 1, sizeof(*labelp));
	values = calloc(2 * p->nstacks + 1, sizeof(*values));
	for (i = 0; i < p->nstacks; i++)
		nloc += p->stacks[i].n;
	locids = calloc(nloc + 1, sizeof(*locids));
	idx = prof__sorted(p, PROF_SPLIT_PID | PROF_SPLIT_TID | PROF_KEY_COMM | PROF_KEY_FUNCS);
	if (!ft.name || !ft.file || !ft.start || !ft.id || !maps || !mapp || !mapid || !funcs ||
	    !funcp || !locs || !locp || !lines || !linep || !samples || !samplep || !labels ||
	    !labelp || !values || !locids || !idx)
		goto cleanup;

	/* mappings: what each one's locations tell about its symbols */
	for (j = 0; j < 2; j++)
		for (i = 0; i < p->nmaps; i++) {
			const struct prof_map *pm = &p->maps[i];
			const struct prof_obj *o = &p->objs[pm->obj - 1];

			if (main_like(o->module) != (j == 0))
				continue;
			perftools__profiles__mapping__init(&maps[nmap]);
			maps[nmap].id = nmap + 1;
			maps[nmap].memory_start = pm->start;
			maps[nmap].memory_limit = pm->limit;
			maps[nmap].file_offset = pm->offset;
			maps[nmap].filename = S(o->module);
			maps[nmap].build_id = S(o->build_id);
			maps[nmap].has_functions = maps[nmap].has_filenames = 1;
			maps[nmap].has_line_numbers = maps[nmap].has_inline_frames = 1;
			mapp[nmap] = &maps[nmap];
			mapid[i + 1] = (uint32_t)++nmap;
		}
	pr.n_mapping = nmap;
	pr.mapping = mapp;
	/* locations: the address, and its lines innermost first; a function
	 * per (name, file, first line). An unresolved address gets no line,
	 * so that its reader can name it from the mapping's build id. */
	nline = 0;
	for (i = 0; i < p->nlocs; i++) {
		const struct prof_loc *l = &p->locs[i];
		const struct prof_func *fn = &p->funcs[l->fid];
		Perftools__Profiles__Mapping *mp = l->map ? &maps[mapid[l->map] - 1] : NULL;
		const struct frame_line *ll = llines[i];
		size_t n = l->unresolved ? 0 : lnl[i] ? lnl[i] : 1;

		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = l->map ? mapid[l->map] : 0;
		locs[i].address = l->addr;
		locs[i].n_line = n;
		locs[i].line = n ? &linep[nline] : NULL;
		if (mp && (l->unresolved || !lnl[i])) {
			mp->has_functions &= !l->unresolved;
			mp->has_filenames = mp->has_line_numbers = mp->has_inline_frames = 0;
		}
		for (k = 0; k < n; k++) {
			const struct frame_line *fl = lnl[i] ? &ll[k] : NULL;
			const char *name = fl && fl->function ? fl->function : fn->name;
			const char *file = fl && fl->file ? fl->file : "";
			uint64_t fid = functab_id(&ft, name, file, fl ? fl->start_line : 0);

			if (fid == ft.n) {
				Perftools__Profiles__Function *pf = &funcs[fid - 1];

				perftools__profiles__function__init(pf);
				pf->id = fid;
				pf->name = pf->system_name = S(name);
				pf->filename = S(file);
				pf->start_line = fl ? fl->start_line : 0;
				funcp[fid - 1] = pf;
			}
			perftools__profiles__line__init(&lines[nline]);
			lines[nline].function_id = fid;
			lines[nline].line = fl ? fl->line : 0;
			if (mp && fl && !file[0])
				mp->has_filenames = 0;
			if (mp && fl && !fl->line)
				mp->has_line_numbers = 0;
			linep[nline] = &lines[nline];
			nline++;
		}
		locp[i] = &locs[i];
	}
	pr.n_function = ft.n;
	pr.function = funcp;
	pr.n_location = p->nlocs;
	pr.location = locp;
	nloc = 0;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		Perftools__Profiles__Sample *sm = &samples[i];
		Perftools__Profiles__Label *lb = &labels[4 * i];

		perftools__profiles__sample__init(sm);
		sm->location_id = &locids[nloc];
		for (j = s->n; j-- > 0;)	/* pprof wants the leaf first */
			locids[nloc++] = s->locs[j] + 1;
		sm->n_location_id = s->n;
		values[2 * i] = (int64_t)s->count;
		values[2 * i + 1] = (int64_t)(s->count * m->period_ns);
		sm->value = &values[2 * i];
		sm->n_value = 2;
		for (j = 0; j < 4; j++) {
			perftools__profiles__label__init(&lb[j]);
			labelp[4 * i + j] = &lb[j];
		}
		lb[0].key = S("pid");
		lb[0].num = s->pid;
		lb[1].key = S("tid");
		lb[1].num = s->tid;
		lb[2].key = S("comm");
		lb[2].str = S(s->comm[0] ? s->comm : s->thread);
		lb[3].key = S("thread");
		lb[3].str = S(s->thread);
		sm->label = &labelp[4 * i];
		sm->n_label = 4;
		samplep[i] = sm;
	}
	pr.n_sample = p->nstacks;
	pr.sample = samplep;
	/* the capture's losses travel with the profile (pprof -comments) */
	snprintf(cbuf[0], sizeof(cbuf[0]), "sidescope: %llu samples counted in BPF, %llu in profile",
		 (unsigned long long)m->samples, (unsigned long long)p->total);
	snprintf(cbuf[1], sizeof(cbuf[1]),
		 "lost: user stack errors %llu, kernel stack errors %llu, stack store full %llu, count map full %llu, missing stacks %llu",
		 (unsigned long long)m->lost_ustack, (unsigned long long)m->lost_kstack,
		 (unsigned long long)m->lost_stacks_full, (unsigned long long)m->lost_counts_full,
		 (unsigned long long)m->missing_stacks);
	snprintf(cbuf[2], sizeof(cbuf[2]), "truncated stacks: user %llu, kernel %llu",
		 (unsigned long long)m->trunc_ustack, (unsigned long long)m->trunc_kstack);
	snprintf(cbuf[3], sizeof(cbuf[3]), "perf map lines skipped: %llu",
		 (unsigned long long)m->perfmap_bad_lines);
	/* the model interns every string; these four are ours, kept in cbuf */
	for (i = 0; i < 4; i++)
		comments[i] = S(cbuf[i]);
	pr.n_comment = 4;
	pr.comment = comments;
	for (i = 0; i < 4; i++)
		if (comments[i] < 0)
			goto cleanup;
	pr.n_string_table = st.n;
	pr.string_table = st.s;
	/* a string that did not fit in the table (no memory) left -1 */
	for (i = 0; i < pr.n_function; i++)
		if (funcs[i].name < 0 || funcs[i].filename < 0)
			goto cleanup;

	len = perftools__profiles__profile__get_packed_size(&pr);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto cleanup;
	perftools__profiles__profile__pack(&pr, buf);
	err = gzip_write(f, buf, len);
	if (!err)
		err = finish(f);
cleanup:
	free(buf);
	free(idx);
	free(mapid);
	free(maps);
	free(mapp);
	free(funcs);
	free(funcp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(samples);
	free(samplep);
	free(labels);
	free(labelp);
	free(values);
	free(locids);
	free(llines);
	free(lnl);
	free(ft.name);
	free(ft.file);
	free(ft.start);
	free(ft.id);
	free(st.s);
	free(st.keys);
	free(st.vals);
	return err;
}
