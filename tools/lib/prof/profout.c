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
		count = prof__shown(p, count);
		if (!count)
			continue;	/* under half a microsecond */
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

static void json_u64(struct json *j, const char *key, uint64_t v)
{
	json__key(j, key);
	json__u64(j, v);
}

static void json_str(struct json *j, const char *key, const char *v)
{
	json__key(j, key);
	json__str(j, v);
}

static void json_meta(FILE *f, const struct prof_meta *m, uint64_t total)
{
	struct json j;

	json__init(&j, f);
	json__obj(&j);
	json_str(&j, "mode", m->mode == PROF_MODE_OFFCPU ? "off-cpu" :
			     m->mode == PROF_MODE_WALL ? "wall" :
			     m->mode == PROF_MODE_HITS ? "hits" : "cpu");
	/* what "count" is in "stacks" */
	json_str(&j, "unit", m->mode == PROF_MODE_CPU ? "samples" :
			     m->mode == PROF_MODE_HITS ? "hits" : "nanoseconds");
	if ((m->mode == PROF_MODE_OFFCPU || m->mode == PROF_MODE_WALL)) {
		json__key(&j, "states");
		json__arr(&j);
		if (m->off_states & PROF_STATE_RUNNABLE)
			json__str(&j, "runnable");
		if (m->off_states & PROF_STATE_SLEEP)
			json__str(&j, "interruptible");
		if (m->off_states & PROF_STATE_DISK)
			json__str(&j, "uninterruptible");
		json__end(&j);
		json_u64(&j, "min_block_ns", m->min_block_ns);
		json_u64(&j, "off_cpu_periods", m->off_periods);
		json_u64(&j, "still_off_cpu_at_end", m->off_pending);
		json_u64(&j, "switches_noted_1_in", m->off_every_max ? m->off_every_max : 1);
	}
	json_u64(&j, "hz", m->hz);
	json_u64(&j, "period_ns", m->period_ns);
	json_u64(&j, "time_ns", m->time_ns);
	json_u64(&j, "duration_ns", m->duration_ns);
	json_u64(&j, "samples", m->samples);
	json_u64(&j, "samples_in_profile", total);
	json__key(&j, "lost");
	json__obj(&j);
	json_u64(&j, "user_stack_errors", m->lost_ustack);
	json_u64(&j, "kernel_stack_errors", m->lost_kstack);
	json_u64(&j, "stack_store_full", m->lost_stacks[MAP_FAIL_FULL]);
	json_u64(&j, "stack_store_no_memory", m->lost_stacks[MAP_FAIL_NOMEM]);
	json_u64(&j, "stack_store_busy", m->lost_stacks[MAP_FAIL_BUSY]);
	json_u64(&j, "stack_store_refused", m->lost_stacks[MAP_FAIL_OTHER]);
	json_u64(&j, "count_map_full", m->lost_counts[MAP_FAIL_FULL]);
	json_u64(&j, "count_map_no_memory", m->lost_counts[MAP_FAIL_NOMEM]);
	json_u64(&j, "count_map_busy", m->lost_counts[MAP_FAIL_BUSY]);
	json_u64(&j, "count_map_refused", m->lost_counts[MAP_FAIL_OTHER]);
	json_u64(&j, "missing_stacks", m->missing_stacks);
	if ((m->mode == PROF_MODE_OFFCPU || m->mode == PROF_MODE_WALL)) {
		json_u64(&j, "off_cpu_start_map_full", m->lost_off_full);
		json_u64(&j, "missed_switches", m->missed_switches);
		json_u64(&j, "waker_map_full", m->lost_wakers);
	}
	json__end(&j);
	json__key(&j, "truncated");
	json__obj(&j);
	json_u64(&j, "user", m->trunc_ustack);
	json_u64(&j, "kernel", m->trunc_kstack);
	json__end(&j);
	if (m->unwind_tables) {
		/* the walks by unwind tables: the same counts as the summary
		 * line, so that a reader of either sees the same truth */
		json__key(&j, "unwind");
		json__obj(&j);
		json_u64(&j, "user_stacks_walked", m->unwind_tables);
		json_u64(&j, "cut_short", m->unwind_cut);
		json_u64(&j, "cut_at_an_object_loading", m->unwind_wait);
		json__end(&j);
	}
	json_u64(&j, "perfmap_bad_lines", m->perfmap_bad_lines);
	json__end(&j);
}

/* One function as an object, on a line of its own. */
static void json_func(FILE *f, const struct prof *p, const struct prof_func *fn)
{
	struct json j;

	json__init(&j, f);
	json__obj(&j);
	json_str(&j, "name", fn->name);
	json_str(&j, "kind", kind_name(fn->kind));
	json_str(&j, "module", fn->obj ? p->objs[fn->obj - 1].module : "");
	json_str(&j, "build_id", fn->obj ? p->objs[fn->obj - 1].build_id : "");
	json__end(&j);
}

/* One stack entry (COUNT samples) as an object: frames are function ids. */
static void json_stack(FILE *f, const struct prof *p, const struct prof_stack *s,
		       uint64_t count)
{
	struct json j;
	size_t i;

	json__init(&j, f);
	json__obj(&j);
	json_u64(&j, "pid", s->pid);
	json_u64(&j, "tid", s->tid);
	json_str(&j, "comm", s->comm);
	json_str(&j, "thread", s->thread);
	json_u64(&j, "count", count);
	json__key(&j, "frames");
	json__arr(&j);
	for (i = 0; i < s->n; i++)
		json__u64(&j, p->locs[s->locs[i]].fid);
	json__end(&j);
	json__end(&j);
}

/* {"meta":{...},\n"functions":[\n{...},\n...],\n"stacks":[\n{...},...]}:
 * one function or stack a line. */
int prof__write_json(const struct prof *p, FILE *f)
{
	const unsigned int keys = PROF_SPLIT_PID | PROF_SPLIT_TID | PROF_KEY_COMM | PROF_KEY_FUNCS;
	uint32_t *idx = prof__sorted(p, keys);
	size_t i, k;

	if (!idx)
		return -ENOMEM;
	fputs("{\"meta\":", f);
	json_meta(f, &p->meta, p->total);
	fputs(",\n\"functions\":[", f);
	for (i = 0; i < p->nfuncs; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_func(f, p, &p->funcs[i]);
	}
	/* one entry per thread and functions: addresses and lines are pprof's */
	fputs("],\n\"stacks\":[", f);
	for (i = 0; i < p->nstacks; i = k) {
		const struct prof_stack *s = &p->stacks[idx[i]];
		uint64_t count = s->count;

		for (k = i + 1; k < p->nstacks && prof__same(p, idx[i], idx[k], keys); k++)
			count += p->stacks[idx[k]].count;
		fputs(i ? ",\n" : "\n", f);
		json_stack(f, p, s, count);
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

/* The top table's first lines: what was counted, the column names. */
static void top_header(const struct prof *p, FILE *f)
{
	const struct prof_meta *m = &p->meta;

	if (m->mode == PROF_MODE_OFFCPU)
		fprintf(f, "%.3f s off-CPU, %s, over %.1f s; times in ms\n", p->total / 1e9,
			prof__states_name(m->off_states), m->duration_ns / 1e9);
	else if (m->mode == PROF_MODE_WALL)
		fprintf(f, "%.3f s of wall-clock time (on-CPU at %u Hz and off-CPU) over %.1f s; "
			"times in ms\n", p->total / 1e9, m->hz, m->duration_ns / 1e9);
	else if (m->mode == PROF_MODE_HITS)
		fprintf(f, "%llu hits over %.1f s\n", (unsigned long long)p->total,
			m->duration_ns / 1e9);
	else
		fprintf(f, "%llu samples at %u Hz over %.1f s\n", (unsigned long long)p->total,
			m->hz, m->duration_ns / 1e9);
	fprintf(f, "%6s %7s %6s %7s  %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", "FUNCTION");
}

/* A SELF or TOTAL cell, 7 columns: samples, or milliseconds. */
static void top_value(const struct prof *p, FILE *f, uint64_t v)
{
	double ms = v / 1e6;

	if (!prof__timed(p))
		fprintf(f, "%7llu", (unsigned long long)v);
	else
		fprintf(f, ms < 10000 ? "%7.1f" : "%7.0f", ms);
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
	top_header(p, f);
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
		fprintf(f, "%5.1f%% ", 100.0 * rows[i].self / tot);
		top_value(p, f, rows[i].self);
		fprintf(f, " %5.1f%% ", 100.0 * rows[i].total / tot);
		top_value(p, f, rows[i].total);
		fprintf(f, "  %s\n", name);
	}
	err = prof__finish(f);
cleanup:
	free(rows);
	free(seen);
	return err;
}
