// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writers of the profile model: folded stacks, JSON, top table (pprof:
 * pprof.c, flame graph: profsvg.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "prof/prof_int.h"
#include "core/json.h"
#include "core/util.h"

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
	return prof__finish(f);
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
	return prof__finish(f);
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
	err = prof__finish(f);
cleanup:
	free(rows);
	free(seen);
	return err;
}
