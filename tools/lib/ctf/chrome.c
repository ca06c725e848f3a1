// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Chrome trace event writer (chrome.h). */
#include "ctf/bt2.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctf/chrome.h"
#include "ctf/ctfpair.h"

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

static void write_payload(struct json *j, const void *payload)
{
	field_json(j, payload);
}

int chrome__begin(struct chrome *w, FILE *out, struct chrome_totals *tot,
		  const struct ctfpair_limits *lim)
{
	struct ctfpair_opts o = { .lim = *lim, .payload = write_payload, .origin_first = true,
				  .process_names = true, .no_payload_null = true,
				  .open_by_thread = true };

	memset(w, 0, sizeof(*w));
	w->out = out;
	w->tot = tot;
	json__init(&w->doc, out);
	json__obj(&w->doc);
	json__key(&w->doc, "displayTimeUnit");
	json__str(&w->doc, "ns");
	json__key(&w->doc, "traceEvents");
	json__arr(&w->doc);
	fputc('\n', out);
	/* the events go to the descriptor from here on */
	if (fflush(out) || ferror(out))
		return -EIO;
	w->events_at = ftello(out);
	w->pair = ctfpair__new(fileno(out), &o, &tot->pair);
	return w->pair ? 0 : -ENOMEM;
}

int chrome__event(struct chrome *w, const struct ctf_summary *s, const struct ctf_event *e)
{
	struct ctfpair_event pe;
	int err;

	if (e->thread == &s->other) {
		w->tot->other_threads++;
		return 0;
	}
	pe = (struct ctfpair_event){
		.kind = e->cls->kind, .name = e->cls->name, .base = e->cls->base,
		.thread = e->thread->seq, .pid = e->thread->vpid, .tid = e->thread->vtid,
		.new_thread = e->new_thread, .procname = e->thread->procname, .ts = e->ts,
		.payload = bt_event_borrow_payload_field_const(e->ev),
	};
	err = ctfpair__event(w->pair, &pe);
	w->tot->origin = ctfpair__origin(w->pair);
	return err;
}

int chrome__close_slices(struct chrome *w)
{
	return ctfpair__finish(w->pair);
}

int chrome__end(struct chrome *w, const char *cut)
{
	const struct chrome_totals *t = w->tot;

	fputc('\n', w->out);
	json__end(&w->doc);
	json__key(&w->doc, "otherData");
	json__obj(&w->doc);
	json__key(&w->doc, "source"); json__str(&w->doc, "sidescope ctf chrome");
	json__key(&w->doc, "clock_origin_ns"); json__u64(&w->doc, t->origin);
	json__key(&w->doc, "events"); json__u64(&w->doc, t->events);
	json__key(&w->doc, "discarded_events"); json__u64(&w->doc, t->discarded_events);
	json__key(&w->doc, "discarded_packets"); json__u64(&w->doc, t->discarded_packets);
	if (t->pair.begins_dropped || t->pair.args_dropped || t->other_threads) {
		json__key(&w->doc, "lost");
		json__obj(&w->doc);
		json__key(&w->doc, "begins_dropped"); json__u64(&w->doc, t->pair.begins_dropped);
		json__key(&w->doc, "begin_args_dropped"); json__u64(&w->doc, t->pair.args_dropped);
		json__key(&w->doc, "other_threads_events"); json__u64(&w->doc, t->other_threads);
		json__end(&w->doc);
	}
	if (cut) {
		json__key(&w->doc, "read_cut"); json__str(&w->doc, cut);
	}
	json__end(&w->doc);
	json__end(&w->doc);
	fputc('\n', w->out);
	return fflush(w->out) || ferror(w->out) ? -EIO : 0;
}

int chrome__salvage(struct chrome *w)
{
	int fd = fileno(w->out);
	char buf[65536 + 1];
	off_t end, at, cut;
	ssize_t n, i;

	if (w->events_at < 0)
		return -ESPIPE;
	end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return errno == ESPIPE ? -ESPIPE : -errno;
	/* from the end back: blocks that overlap by a byte, for a ",\n"
	 * across two */
	cut = w->events_at;
	for (at = end; at > w->events_at; at -= n - 1) {
		off_t from = at - w->events_at > 65536 ? at - 65536 : w->events_at;

		n = pread(fd, buf, (size_t)(at - from), from);
		if (n < 0)
			return -errno;
		if (n < 2 || n != at - from)
			break;
		for (i = n - 2; i >= 0; i--)
			if (buf[i] == ',' && buf[i + 1] == '\n')
				break;
		if (i >= 0) {
			cut = from + i;
			break;
		}
	}
	if (ftruncate(fd, cut) || fseeko(w->out, cut, SEEK_SET))
		return -errno;
	return 0;
}

void chrome__free(struct chrome *w)
{
	ctfpair__free(w->pair);
	w->pair = NULL;
}
