// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writers of the profile model: folded, pprof, JSON, top table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "escape.h"
#include "profile.pb-c.h"
#include "prof_int.h"
#include "util.h"

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
	uint32_t *idx = prof__sorted(p);
	size_t i, j;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[idx[i]];

		put_folded_name(f, s->comm[0] ? s->comm : "[unknown]");
		for (j = 0; j < s->n; j++) {
			const struct prof_func *fn = &p->funcs[s->fids[j]];

			fputc(';', f);
			put_folded_name(f, fn->name);
			fputs(frame_kind_suffix(fn->kind), f);
		}
		fprintf(f, " %llu\n", (unsigned long long)s->count);
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
	uint32_t *idx = prof__sorted(p);
	size_t i, j;

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
		json_write_string(f, fn->map ? p->maps[fn->map - 1].module : "");
		fputs(",\"build_id\":", f);
		json_write_string(f, fn->map ? p->maps[fn->map - 1].build_id : "");
		fputc('}', f);
	}
	fputs("],\n\"stacks\":[", f);
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[idx[i]];

		fprintf(f, "%s{\"pid\":%u,\"comm\":", i ? ",\n" : "\n", s->pid);
		json_write_string(f, s->comm);
		fprintf(f, ",\"count\":%llu,\"frames\":[", (unsigned long long)s->count);
		for (j = 0; j < s->n; j++)
			fprintf(f, "%s%u", j ? "," : "", s->fids[j]);
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
			rows[s->fids[s->n - 1]].self += s->count;
		/* count each function once per stack, recursion or not */
		for (j = 0; j < s->n; j++) {
			if (seen[s->fids[j]] == i + 1)
				continue;
			seen[s->fids[j]] = (uint32_t)i + 1;
			rows[s->fids[j]].total += s->count;
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

#define S(x) strtab_add(&st, (x))

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
	uint64_t *locids = NULL;
	int64_t *values = NULL, comments[4];
	struct strtab st = { 0 };
	char cbuf[4][160];
	uint8_t *buf = NULL;
	size_t i, j, nloc = 0, len, nmap = 0;
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

	maps = calloc(p->nmaps + 1, sizeof(*maps));
	mapp = calloc(p->nmaps + 1, sizeof(*mapp));
	funcs = calloc(p->nfuncs + 1, sizeof(*funcs));
	funcp = calloc(p->nfuncs + 1, sizeof(*funcp));
	locs = calloc(p->nfuncs + 1, sizeof(*locs));
	locp = calloc(p->nfuncs + 1, sizeof(*locp));
	lines = calloc(p->nfuncs + 1, sizeof(*lines));
	linep = calloc(p->nfuncs + 1, sizeof(*linep));
	samples = calloc(p->nstacks + 1, sizeof(*samples));
	samplep = calloc(p->nstacks + 1, sizeof(*samplep));
	labels = calloc(2 * p->nstacks + 1, sizeof(*labels));
	labelp = calloc(2 * p->nstacks + 1, sizeof(*labelp));
	values = calloc(2 * p->nstacks + 1, sizeof(*values));
	for (i = 0; i < p->nstacks; i++)
		nloc += p->stacks[i].n;
	locids = calloc(nloc + 1, sizeof(*locids));
	idx = prof__sorted(p);
	if (!maps || !mapp || !funcs || !funcp || !locs || !locp || !lines || !linep ||
	    !samples || !samplep || !labels || !labelp || !values || !locids || !idx)
		goto cleanup;

	/* pprof takes the first mapping for the main binary: executables
	 * before shared objects and pseudo-files */
	mapid = calloc(p->nmaps + 1, sizeof(*mapid));
	if (!mapid)
		goto cleanup;
	for (j = 0; j < 2; j++)
		for (i = 0; i < p->nmaps; i++) {
			const char *mod = p->maps[i].module;
			bool main_like = mod[0] == '/' && !strstr(mod, ".so");

			if (main_like != (j == 0))
				continue;
			perftools__profiles__mapping__init(&maps[nmap]);
			maps[nmap].id = nmap + 1;
			maps[nmap].filename = S(mod);
			maps[nmap].build_id = S(p->maps[i].build_id);
			maps[nmap].has_functions = 1;
			mapp[nmap] = &maps[nmap];
			mapid[i + 1] = (uint32_t)++nmap;
		}
	pr.n_mapping = p->nmaps;
	pr.mapping = mapp;
	/* one function and one location per (name, kind, mapping) */
	for (i = 0; i < p->nfuncs; i++) {
		perftools__profiles__function__init(&funcs[i]);
		funcs[i].id = i + 1;
		funcs[i].name = funcs[i].system_name = S(p->funcs[i].name);
		funcp[i] = &funcs[i];
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = i + 1;
		linep[i] = &lines[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = mapid[p->funcs[i].map];
		locs[i].n_line = 1;
		locs[i].line = &linep[i];
		locp[i] = &locs[i];
	}
	pr.n_function = pr.n_location = p->nfuncs;
	pr.function = funcp;
	pr.location = locp;
	nloc = 0;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		Perftools__Profiles__Sample *sm = &samples[i];

		perftools__profiles__sample__init(sm);
		sm->location_id = &locids[nloc];
		for (j = s->n; j-- > 0;)	/* pprof wants the leaf first */
			locids[nloc++] = s->fids[j] + 1;
		sm->n_location_id = s->n;
		values[2 * i] = (int64_t)s->count;
		values[2 * i + 1] = (int64_t)(s->count * m->period_ns);
		sm->value = &values[2 * i];
		sm->n_value = 2;
		perftools__profiles__label__init(&labels[2 * i]);
		perftools__profiles__label__init(&labels[2 * i + 1]);
		labels[2 * i].key = S("pid");
		labels[2 * i].num = s->pid;
		labels[2 * i + 1].key = S("comm");
		labels[2 * i + 1].str = S(s->comm);
		labelp[2 * i] = &labels[2 * i];
		labelp[2 * i + 1] = &labels[2 * i + 1];
		sm->label = &labelp[2 * i];
		sm->n_label = 2;
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
	free(st.s);
	free(st.keys);
	free(st.vals);
	return err;
}
