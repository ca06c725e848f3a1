// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Chrome trace event writer (chrome.h). */
#include "ctf/bt2.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/chrome.h"
#include "ctf/ctfpair.h"

/* A begin event waiting for its end. */
struct open_slice {
	const char *base;	/* the class's: lives as long as the summary */
	uint64_t ts;
	char *args;		/* its payload as JSON text */
};

/* A thread's track: its open begin events, innermost last. */
struct chrome_track {
	int64_t vpid, vtid;
	struct open_slice *open;
	size_t n_open, cap_open;
};

/* Any field as JSON. The writer tracks JSON_MAX_DEPTH levels: a value
 * nested deeper is written by a writer of its own. */
static void field_json(struct json *j, const bt_field *f);

void chrome__field_json(struct json *j, const bt_field *f)
{
	field_json(j, f);
}

static void field_json(struct json *j, const bt_field *f)
{
	bt_field_class_type t = bt_field_get_class_type(f);
	uint64_t i, n;

	if (j->depth >= JSON_MAX_DEPTH) {
		struct json sub;

		json__num(j, "%s", "");	/* the comma before it, if one is due */
		json__init(&sub, j->f);
		field_json(&sub, f);
		return;
	}
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		json__i64(j, bt_field_integer_signed_get_value(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		json__u64(j, bt_field_integer_unsigned_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		json__bool(j, bt_field_bool_get_value(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL)) {
		double d = bt_field_real_double_precision_get_value(f);

		if (d != d || d - d != 0)	/* NaN, infinities: not JSON */
			json__null(j);
		else
			json__num(j, "%.17g", d);
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		json__strn(j, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE) {
		const bt_field_class *fc = bt_field_borrow_class_const(f);

		n = bt_field_class_structure_get_member_count(fc);
		json__obj(j);
		for (i = 0; i < n; i++) {
			json__key(j, bt_field_class_structure_member_get_name(
				bt_field_class_structure_borrow_member_by_index_const(fc, i)));
			field_json(j, bt_field_structure_borrow_member_field_by_index_const(f, i));
		}
		json__end(j);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
		n = bt_field_array_get_length(f);
		json__arr(j);
		for (i = 0; i < n; i++)
			field_json(j, bt_field_array_borrow_element_field_by_index_const(f, i));
		json__end(j);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION)) {
		const bt_field *in = bt_field_option_borrow_field_const(f);

		if (in)
			field_json(j, in);
		else
			json__null(j);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT)) {
		field_json(j, bt_field_variant_borrow_selected_option_field_const(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		json__u64(j, bt_field_bit_array_get_value_as_integer(f));
	} else {
		json__null(j);
	}
}

void chrome__begin(struct chrome *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->first_out = true;
	json__init(&w->doc, out);
	json__obj(&w->doc);
	json__key(&w->doc, "displayTimeUnit");
	json__str(&w->doc, "ns");
	json__key(&w->doc, "traceEvents");
	json__arr(&w->doc);
	fputc('\n', out);
}

/* Start the next element of "traceEvents" (one a line) in J. */
static void event_start(struct chrome *w, struct json *j)
{
	if (w->first_out)
		w->first_out = false;
	else
		fputs(",\n", w->out);
	json__init(j, w->out);
	json__obj(j);
}

/* A time, in microseconds with three decimals, TS - ORIGIN (0 if earlier). */
static void time_us(struct json *j, const char *key, uint64_t ts, uint64_t origin)
{
	uint64_t d = ts >= origin ? ts - origin : 0;

	json__key(j, key);
	json__num(j, "%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

static void track_meta(struct chrome *w, const struct ctf_thread *t)
{
	const char *name = t->procname[0] ? t->procname : "?";
	struct json j;

	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, "thread_name");
	json__key(&j, "pid"); json__i64(&j, t->vpid);
	json__key(&j, "tid"); json__i64(&j, t->vtid);
	json__key(&j, "args"); json__obj(&j); json__key(&j, "name"); json__str(&j, name); json__end(&j);
	json__end(&j);
	if (t->vpid != t->vtid)
		return;
	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "M");
	json__key(&j, "name"); json__str(&j, "process_name");
	json__key(&j, "pid"); json__i64(&j, t->vpid);
	json__key(&j, "args"); json__obj(&j); json__key(&j, "name"); json__str(&j, name); json__end(&j);
	json__end(&j);
}

/* A slice NAME from B to E on track T: BARGS the begin's payload (JSON
 * text, NULL: none), EARGS the end's (NULL: none). */
static void complete(struct chrome *w, const struct chrome_track *t, const char *name,
		     uint64_t b, uint64_t e, const char *bargs, const bt_field *eargs,
		     bool unfinished)
{
	struct json j;

	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "X");
	json__key(&j, "name"); json__str(&j, name);
	time_us(&j, "ts", b, w->origin);
	time_us(&j, "dur", e, b);
	json__key(&j, "pid"); json__i64(&j, t->vpid);
	json__key(&j, "tid"); json__i64(&j, t->vtid);
	json__key(&j, "args");
	json__obj(&j);
	json__key(&j, "begin");
	json__num(&j, "%s", bargs ? bargs : "null");
	if (eargs) {
		json__key(&j, "end");
		field_json(&j, eargs);
	}
	if (unfinished) {
		json__key(&j, "unfinished");
		json__bool(&j, true);
	}
	json__end(&j);
	json__end(&j);
}

/* The track of thread T, made on its first event; NULL: no memory. */
static struct chrome_track *track(struct chrome *w, struct ctf_thread *t)
{
	struct chrome_track *k;

	if (t->track)
		return t->track;
	if (w->n_tracks == w->cap_tracks) {
		size_t cap = w->cap_tracks ? w->cap_tracks * 2 : 16;
		struct chrome_track **n = realloc(w->tracks, cap * sizeof(*n));

		if (!n)
			return NULL;
		w->tracks = n;
		w->cap_tracks = cap;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->vpid = t->vpid;
	k->vtid = t->vtid;
	w->tracks[w->n_tracks++] = k;
	t->track = k;
	return k;
}

/* Keep begin event E on track K until its end. Return 0 or -ENOMEM. */
static int open_slice(struct chrome_track *k, const struct ctf_event *e, const bt_field *payload)
{
	struct open_slice *s;
	char *args = NULL;
	size_t len = 0;
	struct json j;
	FILE *m;

	if (k->n_open == k->cap_open) {
		size_t cap = k->cap_open ? k->cap_open * 2 : 8;

		s = realloc(k->open, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		k->open = s;
		k->cap_open = cap;
	}
	m = open_memstream(&args, &len);
	if (!m)
		return -ENOMEM;
	json__init(&j, m);
	if (payload)
		field_json(&j, payload);
	else
		json__null(&j);
	if (fclose(m)) {
		free(args);
		return -ENOMEM;
	}
	k->open[k->n_open++] = (struct open_slice){ e->cls->base, e->ts, args };
	return 0;
}

/* Close the innermost open slice of end event E on track K; false if none
 * is open. */
static bool close_slice(struct chrome *w, struct chrome_track *k, const struct ctf_event *e,
			const bt_field *payload)
{
	size_t i;

	for (i = k->n_open; i-- > 0;) {
		struct open_slice s = k->open[i];

		if (strcmp(s.base, e->cls->base) != 0)
			continue;
		complete(w, k, s.base, s.ts, e->ts, s.args, payload, false);
		free(s.args);
		memmove(&k->open[i], &k->open[i + 1], (k->n_open - i - 1) * sizeof(*k->open));
		k->n_open--;
		return true;
	}
	return false;
}

int chrome__event(struct chrome *w, const struct ctf_event *e)
{
	const bt_field *payload = bt_event_borrow_payload_field_const(e->ev);
	struct chrome_track *k;
	struct json j;

	if (e->new_thread)
		track_meta(w, e->thread);
	k = track(w, e->thread);
	if (!k)
		return -ENOMEM;
	if (!w->origin_set) {
		w->origin = e->ts;
		w->origin_set = true;
	}
	if (e->cls->kind == CTFPAIR_BEGIN)
		return open_slice(k, e, payload);
	/* an end whose begin is not in the trace: kept as an instant */
	if (e->cls->kind == CTFPAIR_END && close_slice(w, k, e, payload))
		return 0;
	event_start(w, &j);
	json__key(&j, "ph"); json__str(&j, "i");
	json__key(&j, "s"); json__str(&j, "t");
	json__key(&j, "name"); json__str(&j, e->cls->name);
	time_us(&j, "ts", e->ts, w->origin);
	json__key(&j, "pid"); json__i64(&j, k->vpid);
	json__key(&j, "tid"); json__i64(&j, k->vtid);
	json__key(&j, "args");
	if (payload) {
		field_json(&j, payload);
	} else {
		json__obj(&j);
		json__end(&j);
	}
	json__end(&j);
	return 0;
}

void chrome__finish(struct chrome *w, const struct ctf_summary *s)
{
	size_t i, n;

	for (i = 0; i < w->n_tracks; i++) {
		struct chrome_track *k = w->tracks[i];

		for (n = 0; n < k->n_open; n++) {
			complete(w, k, k->open[n].base, k->open[n].ts, s->last, k->open[n].args,
				 NULL, true);
			free(k->open[n].args);
		}
		k->n_open = 0;
	}
	fputc('\n', w->out);
	json__end(&w->doc);
	json__key(&w->doc, "otherData");
	json__obj(&w->doc);
	json__key(&w->doc, "source"); json__str(&w->doc, "sidescope ctf chrome");
	json__key(&w->doc, "clock_origin_ns"); json__u64(&w->doc, w->origin);
	json__key(&w->doc, "events"); json__u64(&w->doc, s->events);
	json__key(&w->doc, "discarded_events"); json__u64(&w->doc, s->discarded_events);
	json__key(&w->doc, "discarded_packets"); json__u64(&w->doc, s->discarded_packets);
	json__end(&w->doc);
	json__end(&w->doc);
	fputc('\n', w->out);
}

void chrome__free(struct chrome *w)
{
	size_t i, n;

	for (i = 0; i < w->n_tracks; i++) {
		for (n = 0; n < w->tracks[i]->n_open; n++)
			free(w->tracks[i]->open[n].args);
		free(w->tracks[i]->open);
		free(w->tracks[i]);
	}
	free(w->tracks);
	w->tracks = NULL;
	w->n_tracks = w->cap_tracks = 0;
}
