// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The counts of a trace and the summary report (summary.h). */
#include "ctf/bt2.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/ctfpair.h"
#include "ctf/summary.h"
#include "core/escape.h"
#include "core/hash.h"
#include "core/json.h"

/* ---- tables ------------------------------------------------------------ */

static int64_t member_index(const bt_field_class *fc, const char *name)
{
	uint64_t i, n;

	if (!fc || bt_field_class_get_type(fc) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return -1;
	n = bt_field_class_structure_get_member_count(fc);
	for (i = 0; i < n; i++) {
		const bt_field_class_structure_member *m =
			bt_field_class_structure_borrow_member_by_index_const(fc, i);

		if (strcmp(bt_field_class_structure_member_get_name(m), name) == 0)
			return (int64_t)i;
	}
	return -1;
}

static void resolve_by(struct ctf_summary *s, struct ctf_class *e)
{
	int64_t i;

	e->by.scope = CTF_SCOPE_NONE;
	if (!s->by)
		return;
	i = member_index(bt_event_class_borrow_payload_field_class_const(e->cls), s->by);
	if (i >= 0) {
		e->by = (struct ctf_field_ref){ CTF_SCOPE_PAYLOAD, (uint64_t)i };
		return;
	}
	i = member_index(bt_event_class_borrow_specific_context_field_class_const(e->cls), s->by);
	if (i >= 0) {
		e->by = (struct ctf_field_ref){ CTF_SCOPE_SPEC_CTX, (uint64_t)i };
		return;
	}
	i = member_index(bt_stream_class_borrow_event_common_context_field_class_const(
				 bt_event_class_borrow_stream_class_const(e->cls)), s->by);
	if (i >= 0)
		e->by = (struct ctf_field_ref){ CTF_SCOPE_COMMON_CTX, (uint64_t)i };
}

static size_t cls_hash(const bt_event_class *cls)
{
	return (size_t)hash__u64((uintptr_t)cls);
}

static int ev_grow(struct ctf_summary *s)
{
	size_t cap = s->ev_cap ? s->ev_cap * 2 : 64, i, j;
	struct ctf_class *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < s->ev_cap; i++) {
		if (!s->ev[i].cls)
			continue;
		for (j = cls_hash(s->ev[i].cls) & (cap - 1); n[j].cls; j = (j + 1) & (cap - 1))
			;
		n[j] = s->ev[i];
	}
	free(s->ev);
	s->ev = n;
	s->ev_cap = cap;
	s->last_cls = NULL;
	return 0;
}

/* The entry of event class CLS, made on its first event; NULL: no memory. */
static struct ctf_class *ev_lookup(struct ctf_summary *s, const bt_event_class *cls)
{
	const char *name = bt_event_class_get_name(cls);
	const bt_field_class *cc;
	struct ctf_class *e;
	size_t i;

	if (cls == s->last_cls)
		return s->last_ev;
	if (s->ev_n * 2 >= s->ev_cap && ev_grow(s))
		return NULL;
	for (i = cls_hash(cls) & (s->ev_cap - 1); s->ev[i].cls; i = (i + 1) & (s->ev_cap - 1))
		if (s->ev[i].cls == cls)
			goto found;
	e = &s->ev[i];
	e->cls = cls;
	e->name = strdup(name ? name : "(unnamed)");
	if (!e->name)
		return NULL;
	e->kind = ctfpair__classify(e->name, &e->base);
	if (e->kind < 0)
		return NULL;
	e->first = UINT64_MAX;
	cc = bt_stream_class_borrow_event_common_context_field_class_const(
		bt_event_class_borrow_stream_class_const(cls));
	e->ctx_vpid = member_index(cc, "vpid");
	e->ctx_vtid = member_index(cc, "vtid");
	e->ctx_procname = member_index(cc, "procname");
	resolve_by(s, e);
	s->ev_n++;
found:
	s->last_cls = cls;
	s->last_ev = &s->ev[i];
	return s->last_ev;
}

static size_t th_hash(const struct ctf_summary *s, int64_t vpid, int64_t vtid)
{
	return (size_t)hash__pair((uint64_t)vpid ^ s->seed, (uint64_t)vtid);
}

/* The thread VPID/VTID (*created if this made it), or 'other' once there
 * are max_threads; NULL: no memory. */
static struct ctf_thread *th_lookup(struct ctf_summary *s, int64_t vpid, int64_t vtid,
				    bool *created)
{
	size_t i, j;

	*created = false;
	if (s->th_n * 2 >= s->th_cap) {
		size_t cap = s->th_cap ? s->th_cap * 2 : 64;
		struct ctf_thread *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < s->th_cap; i++) {
			if (!s->th[i].used)
				continue;
			for (j = th_hash(s, s->th[i].vpid, s->th[i].vtid) & (cap - 1); n[j].used;
			     j = (j + 1) & (cap - 1))
				;
			n[j] = s->th[i];
		}
		free(s->th);
		s->th = n;
		s->th_cap = cap;
	}
	for (i = th_hash(s, vpid, vtid) & (s->th_cap - 1); s->th[i].used; i = (i + 1) & (s->th_cap - 1))
		if (s->th[i].vpid == vpid && s->th[i].vtid == vtid)
			return &s->th[i];
	if (s->max_threads && s->th_n >= s->max_threads) {
		s->other.used = true;
		s->other.vpid = s->other.vtid = -1;
		return &s->other;
	}
	s->th[i].used = true;
	s->th[i].vpid = vpid;
	s->th[i].vtid = vtid;
	s->th[i].seq = (uint32_t)s->th_n;
	s->th_n++;
	*created = true;
	return &s->th[i];
}

/* The values are the app's: the seed keeps them from piling up in one run
 * of slots (the table's order is not the report's). */
static size_t val_hash(const struct ctf_summary *s, const char *v)
{
	return (size_t)hash__u64(hash__more(HASH_SEED ^ s->seed, v, strlen(v)));
}

static int val_add(struct ctf_summary *s, const char *v)
{
	size_t i, j;

	if (s->val_n * 2 >= s->val_cap) {
		size_t cap = s->val_cap ? s->val_cap * 2 : 256;
		struct ctf_value *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (i = 0; i < s->val_cap; i++) {
			if (!s->val[i].used)
				continue;
			for (j = val_hash(s, s->val[i].value) & (cap - 1); n[j].used; j = (j + 1) & (cap - 1))
				;
			n[j] = s->val[i];
		}
		free(s->val);
		s->val = n;
		s->val_cap = cap;
	}
	for (i = val_hash(s, v) & (s->val_cap - 1); s->val[i].used; i = (i + 1) & (s->val_cap - 1)) {
		if (strcmp(s->val[i].value, v) == 0) {
			s->val[i].count++;
			return 0;
		}
	}
	if (s->max_values && s->val_n >= s->max_values) {
		s->values_left_out++;
		return 0;
	}
	s->val[i].value = strdup(v);
	if (!s->val[i].value)
		return -ENOMEM;
	s->val[i].used = true;
	s->val[i].count = 1;
	s->val_n++;
	return 0;
}

/* ---- fields -------------------------------------------------------------- */

static int64_t field_int(const bt_field *f)
{
	if (!f)
		return -1;
	if (bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return bt_field_integer_signed_get_value(f);
	if (bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return (int64_t)bt_field_integer_unsigned_get_value(f);
	return -1;
}

/* A scalar field as text, for --by. Return false for compound fields. */
static bool field_text(const bt_field *f, char *buf, size_t size)
{
	bt_field_class_type t = bt_field_get_class_type(f);

	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ENUMERATION)) {
		bt_field_class_enumeration_mapping_label_array labels;
		uint64_t n = 0;

		if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_ENUMERATION))
			bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n);
		else
			bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n);
		if (n > 0) {
			snprintf(buf, size, "%s", labels[0]);
			return true;
		}
	}
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		snprintf(buf, size, "%" PRId64, bt_field_integer_signed_get_value(f));
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		snprintf(buf, size, "%" PRIu64, bt_field_integer_unsigned_get_value(f));
	else if (t == BT_FIELD_CLASS_TYPE_STRING)
		snprintf(buf, size, "%s", bt_field_string_get_value(f));
	else if (t == BT_FIELD_CLASS_TYPE_BOOL)
		snprintf(buf, size, "%s", bt_field_bool_get_value(f) ? "true" : "false");
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL))
		snprintf(buf, size, "%g", bt_field_real_double_precision_get_value(f));
	else
		return false;
	return true;
}

/* ---- messages ------------------------------------------------------------ */

/* The thread of event EV (class E), counted; NULL: no memory. */
static struct ctf_thread *event_thread(struct ctf_summary *s, struct ctf_class *e,
				       const bt_event *ev, bool *created)
{
	const bt_field *cc = bt_event_borrow_common_context_field_const(ev);
	/* no context: one track 0/0 for Chrome, "unknown" (-1) for summary */
	int64_t vpid = s->all_threads ? 0 : -1, vtid = vpid;
	struct ctf_thread *t;

	if (cc && e->ctx_vpid >= 0)
		vpid = field_int(bt_field_structure_borrow_member_field_by_index_const(cc, (uint64_t)e->ctx_vpid));
	if (cc && e->ctx_vtid >= 0)
		vtid = field_int(bt_field_structure_borrow_member_field_by_index_const(cc, (uint64_t)e->ctx_vtid));
	t = th_lookup(s, vpid, vtid, created);
	if (!t)
		return NULL;
	t->count++;
	if (*created && cc && e->ctx_procname >= 0) {
		const bt_field *p = bt_field_structure_borrow_member_field_by_index_const(
			cc, (uint64_t)e->ctx_procname);

		if (bt_field_get_class_type(p) == BT_FIELD_CLASS_TYPE_STRING)
			snprintf(t->procname, sizeof(t->procname), "%s", bt_field_string_get_value(p));
	}
	return t;
}

/* Count the --by field of event EV (class E). Return 0 or -ENOMEM. */
static int event_by(struct ctf_summary *s, struct ctf_class *e, const bt_event *ev)
{
	const bt_field *sc = NULL, *f;
	char buf[256];

	if (e->by.scope == CTF_SCOPE_NONE) {
		if (s->by)
			s->by_missing++;
		return 0;
	}
	switch (e->by.scope) {
	case CTF_SCOPE_PAYLOAD: sc = bt_event_borrow_payload_field_const(ev); break;
	case CTF_SCOPE_SPEC_CTX: sc = bt_event_borrow_specific_context_field_const(ev); break;
	case CTF_SCOPE_COMMON_CTX: sc = bt_event_borrow_common_context_field_const(ev); break;
	default: break;
	}
	f = sc ? bt_field_structure_borrow_member_field_by_index_const(sc, e->by.index) : NULL;
	if (f && field_text(f, buf, sizeof(buf)))
		return val_add(s, buf);
	s->by_missing++;
	return 0;
}

static int event(struct ctf_summary *s, const bt_message *msg, struct ctf_event *out)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_clock_snapshot *cs;
	struct ctf_class *e;
	uint64_t ts = 0;
	int64_t ns;

	e = ev_lookup(s, bt_event_borrow_class_const(ev));
	if (!e)
		return -ENOMEM;
	if (bt_message_event_borrow_stream_class_default_clock_class_const(msg)) {
		cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
		if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
			ts = (uint64_t)ns;
	} else {
		s->no_clock = true;
	}
	e->count++;
	if (ts < e->first)
		e->first = ts;
	if (ts > e->last)
		e->last = ts;
	s->events++;
	*out = (struct ctf_event){ .ev = ev, .cls = e, .ts = ts };
	if (e->ctx_vtid >= 0 || s->all_threads) {
		out->thread = event_thread(s, e, ev, &out->new_thread);
		if (!out->thread)
			return -ENOMEM;
	}
	return event_by(s, e, ev) ? -ENOMEM : 1;
}

int ctf_summary__message(struct ctf_summary *s, const bt_message *msg, struct ctf_event *out)
{
	uint64_t n;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT:
		return event(s, msg, out);
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		s->discarded_events_msgs++;
		if (bt_message_discarded_events_get_count(msg, &n) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			s->discarded_events += n;
		break;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		s->discarded_packets_msgs++;
		if (bt_message_discarded_packets_get_count(msg, &n) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			s->discarded_packets += n;
		break;
	default:
		break;
	}
	return 0;
}

void ctf_summary__finish(struct ctf_summary *s)
{
	size_t i;

	s->first = UINT64_MAX;
	s->last = 0;
	for (i = 0; i < s->ev_cap; i++)
		if (s->ev[i].cls && s->ev[i].count) {
			if (s->ev[i].first < s->first)
				s->first = s->ev[i].first;
			if (s->ev[i].last > s->last)
				s->last = s->ev[i].last;
		}
}

void ctf_summary__free(struct ctf_summary *s)
{
	size_t i;

	for (i = 0; i < s->ev_cap; i++) {
		free(s->ev[i].name);
		free(s->ev[i].base);
	}
	free(s->ev);
	free(s->th);
	for (i = 0; i < s->val_cap; i++)
		free(s->val[i].value);
	free(s->val);
	memset(s, 0, sizeof(*s));
}

/* ---- reports ------------------------------------------------------------- */

/* Only the totals are known: the reader was killed. */
static bool killed(const struct ctf_summary *s)
{
	return s->cut && !strcmp(s->cut, "killed");
}

struct name_row {
	const char *name;
	uint64_t count, first, last;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct name_row *)a)->name, ((const struct name_row *)b)->name);
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct name_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Events per name, most frequent first; caller frees. */
static struct name_row *name_rows(const struct ctf_summary *s, size_t *n_out)
{
	struct name_row *r = calloc(s->ev_n ? s->ev_n : 1, sizeof(*r));
	size_t i, n = 0, m = 0;

	if (!r)
		return NULL;
	for (i = 0; i < s->ev_cap; i++)
		if (s->ev[i].cls && s->ev[i].count)
			r[n++] = (struct name_row){ s->ev[i].name, s->ev[i].count, s->ev[i].first, s->ev[i].last };
	qsort(r, n, sizeof(*r), cmp_name);
	for (i = 0; i < n; i++) {
		if (m && strcmp(r[m - 1].name, r[i].name) == 0) {
			r[m - 1].count += r[i].count;
			if (r[i].first < r[m - 1].first)
				r[m - 1].first = r[i].first;
			if (r[i].last > r[m - 1].last)
				r[m - 1].last = r[i].last;
		} else {
			r[m++] = r[i];
		}
	}
	qsort(r, m, sizeof(*r), cmp_count_desc);
	*n_out = m;
	return r;
}

struct proc_row {
	int64_t vpid;
	uint64_t count, threads;
	const char *procname;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct ctf_thread *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->vpid != y->vpid)
		return x->vpid < y->vpid ? -1 : 1;
	return x->vtid < y->vtid ? -1 : x->vtid > y->vtid;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->vpid < y->vpid ? -1 : x->vpid > y->vpid;
}

static int cmp_val(const void *a, const void *b)
{
	const struct ctf_value *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->value, y->value);
}

/* Compact the tables into sorted arrays (threads, values) and make the
 * process rows from the threads; caller frees them. */
static struct proc_row *sort_tables(struct ctf_summary *s, size_t *n_proc)
{
	struct proc_row *p;
	size_t i, j, n = 0, np = 0;

	for (i = 0; i < s->th_cap; i++)
		if (s->th[i].used)
			s->th[n++] = s->th[i];
	s->th_cap = s->th_n = n;
	if (n > 1)
		qsort(s->th, n, sizeof(*s->th), cmp_thread);
	for (i = 0, j = 0; i < s->val_cap; i++)
		if (s->val[i].used)
			s->val[j++] = s->val[i];
	s->val_cap = s->val_n = j;
	if (j > 1)
		qsort(s->val, j, sizeof(*s->val), cmp_val);
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		return NULL;
	for (i = 0; i < n; i++) {
		for (j = 0; j < np && p[j].vpid != s->th[i].vpid; j++)
			;
		if (j == np)
			p[np++] = (struct proc_row){ s->th[i].vpid, 0, 0, s->th[i].procname };
		p[j].count += s->th[i].count;
		p[j].threads++;
		if (s->th[i].vtid == s->th[i].vpid)
			p[j].procname = s->th[i].procname;
	}
	qsort(p, np, sizeof(*p), cmp_proc);
	*n_proc = np;
	return p;
}

/* A rate is shown for a span of at least a second: 8 events within 4 us
 * are not "2,000,000/s". Return false when there is none to show. */
#define RATE_MIN_SPAN_NS 1000000000ull
static bool rate(uint64_t count, uint64_t first, uint64_t last, double *r)
{
	if (last < first || last - first < RATE_MIN_SPAN_NS)
		return false;
	*r = (double)count * 1e9 / (double)(last - first);
	return true;
}

/* The rate as a table cell, "-" when there is none. */
static const char *rate_str(char *buf, size_t size, uint64_t count, uint64_t first,
			    uint64_t last)
{
	double r;

	if (!rate(count, first, last, &r))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.0f", r);
	return buf;
}

/* The rows of the report. */
struct report {
	const struct ctf_summary *s;
	const char *dir;
	const struct ctf_traces *t;
	struct name_row *r;
	size_t n;
	struct proc_row *p;
	size_t np;
};

static void json_rows(struct json *j, const struct report *rp)
{
	const struct ctf_summary *s = rp->s;
	double rt;
	size_t i;

	json__key(j, "by_name");
	json__arr(j);
	for (i = 0; i < rp->n; i++) {
		json__obj(j);
		json__key(j, "name"); json__str(j, rp->r[i].name);
		json__key(j, "count"); json__u64(j, rp->r[i].count);
		json__key(j, "first_ns"); json__u64(j, rp->r[i].first);
		json__key(j, "last_ns"); json__u64(j, rp->r[i].last);
		json__key(j, "rate_per_s");
		if (rate(rp->r[i].count, rp->r[i].first, rp->r[i].last, &rt))
			json__num(j, "%.3f", rt);
		else
			json__null(j);
		json__end(j);
	}
	json__end(j);
	json__key(j, "processes");
	json__arr(j);
	for (i = 0; i < rp->np; i++) {
		json__obj(j);
		json__key(j, "vpid"); json__i64(j, rp->p[i].vpid);
		json__key(j, "procname"); json__str(j, rp->p[i].procname);
		json__key(j, "events"); json__u64(j, rp->p[i].count);
		json__key(j, "threads"); json__u64(j, rp->p[i].threads);
		json__end(j);
	}
	json__end(j);
	json__key(j, "threads");
	json__arr(j);
	for (i = 0; i < s->th_n; i++) {
		json__obj(j);
		json__key(j, "vpid"); json__i64(j, s->th[i].vpid);
		json__key(j, "vtid"); json__i64(j, s->th[i].vtid);
		json__key(j, "procname"); json__str(j, s->th[i].procname);
		json__key(j, "events"); json__u64(j, s->th[i].count);
		json__end(j);
	}
	json__end(j);
	if (s->other.count) {
		json__key(j, "other_threads_events"); json__u64(j, s->other.count);
	}
}

static void print_json(FILE *o, const struct report *rp)
{
	const struct ctf_summary *s = rp->s;
	struct json j;
	size_t i;

	json__init(&j, o);
	json__obj(&j);
	json__key(&j, "trace"); json__str(&j, rp->dir);
	json__key(&j, "trace_dirs");
	json__arr(&j);
	for (i = 0; i < rp->t->n; i++)
		json__str(&j, rp->t->dirs[i]);
	json__end(&j);
	json__key(&j, "discarded_events"); json__u64(&j, s->discarded_events);
	json__key(&j, "discarded_events_records"); json__u64(&j, s->discarded_events_msgs);
	json__key(&j, "discarded_packets"); json__u64(&j, s->discarded_packets);
	json__key(&j, "discarded_packets_records"); json__u64(&j, s->discarded_packets_msgs);
	json__key(&j, "events"); json__u64(&j, s->events);
	if (s->cut) {
		json__key(&j, "read_cut"); json__str(&j, s->cut);
	}
	if (s->events && !killed(s)) {
		json__key(&j, "first_ns"); json__u64(&j, s->first);
		json__key(&j, "last_ns"); json__u64(&j, s->last);
		json__key(&j, "duration_s"); json__num(&j, "%.9f", (double)(s->last - s->first) / 1e9);
	}
	json_rows(&j, rp);
	if (s->by) {
		json__key(&j, "by");
		json__obj(&j);
		json__key(&j, "field"); json__str(&j, s->by);
		json__key(&j, "missing"); json__u64(&j, s->by_missing);
		if (s->values_left_out) {
			json__key(&j, "values_left_out"); json__u64(&j, s->values_left_out);
		}
		json__key(&j, "values");
		json__arr(&j);
		for (i = 0; i < s->val_n; i++) {
			json__obj(&j);
			json__key(&j, "value"); json__str(&j, s->val[i].value);
			json__key(&j, "count"); json__u64(&j, s->val[i].count);
			json__end(&j);
		}
		json__end(&j);
		json__end(&j);
	}
	json__end(&j);
	fputc('\n', o);
}

/* NAME (the application's: event names, procnames, payloads) escaped into
 * BUF, cut to COLS columns and padded to them. */
#define CELL_MAX 80
static const char *cell(char buf[ESCAPE_MAX(CELL_MAX) + 1], const char *name, size_t cols)
{
	size_t w = escape__str(buf, ESCAPE_MAX(CELL_MAX) + 1, name, strlen(name), cols, 0);
	size_t len = strlen(buf);

	for (; w < cols; w++)
		buf[len++] = ' ';
	buf[len] = '\0';
	return buf;
}

/* The discarded-data warnings and the totals line. Return false when
 * there are no events (the report ends there). */
static bool text_head(FILE *o, const struct report *rp)
{
	const struct ctf_summary *s = rp->s;
	double rt;

	if (s->discarded_events || s->discarded_events_msgs)
		fprintf(o, "!!! WARNING: %" PRIu64 " EVENTS DISCARDED (in %" PRIu64 " places): the\n"
			"!!! ring buffers were full. Counts below are too low. Use a larger\n"
			"!!! --buffer-size, fewer events, or --snapshot.\n",
			s->discarded_events, s->discarded_events_msgs);
	if (s->discarded_packets || s->discarded_packets_msgs)
		fprintf(o, "!!! WARNING: %" PRIu64 " PACKETS DISCARDED (in %" PRIu64 " places): whole\n"
			"!!! sub-buffers were lost (overwrite mode or a slow consumer).\n",
			s->discarded_packets, s->discarded_packets_msgs);
	fprintf(o, "trace: %s (%zu CTF trace dir%s)\n", rp->dir, rp->t->n, rp->t->n == 1 ? "" : "s");
	if (killed(s)) {
		fprintf(o, "read cut short: its reader did not stop in time and was killed;\n"
			"only the count of events is known\nevents: %" PRIu64 "\n", s->events);
		return false;
	}
	if (s->cut)
		fprintf(o, "read cut short (%s): the counts cover the events read before it\n",
			s->cut);
	if (!s->events) {
		fprintf(o, "no events\n");
		return false;
	}
	fprintf(o, "events: %" PRIu64 " in %.6f s", s->events, (double)(s->last - s->first) / 1e9);
	if (rate(s->events, s->first, s->last, &rt))
		fprintf(o, " (%.0f/s)", rt);
	fprintf(o, "%s\n\n", s->no_clock ? " (some streams have no clock)" : "");
	return true;
}

/* The processes and the TOP busiest threads. */
static void text_threads(FILE *o, const struct report *rp, size_t top)
{
	const struct ctf_summary *s = rp->s;
	char cb[ESCAPE_MAX(CELL_MAX) + 1];
	size_t i;

	if (s->th_n == 0 || (s->th_n == 1 && s->th[0].vtid < 0)) {
		fprintf(o, "\n(no vpid/vtid contexts in this trace: no per-process view)\n");
		return;
	}
	fprintf(o, "\n%-8s %-16s %8s %12s\n", "VPID", "PROCNAME", "THREADS", "EVENTS");
	for (i = 0; i < rp->np; i++)
		fprintf(o, "%-8" PRId64 " %s %8" PRIu64 " %12" PRIu64 "\n", rp->p[i].vpid,
			cell(cb, rp->p[i].procname[0] ? rp->p[i].procname : "?", 16),
			rp->p[i].threads, rp->p[i].count);
	fprintf(o, "\n%-8s %-8s %-16s %12s\n", "VPID", "VTID", "PROCNAME", "EVENTS");
	for (i = 0; i < s->th_n && i < top; i++)
		fprintf(o, "%-8" PRId64 " %-8" PRId64 " %s %12" PRIu64 "\n", s->th[i].vpid,
			s->th[i].vtid, cell(cb, s->th[i].procname[0] ? s->th[i].procname : "?", 16),
			s->th[i].count);
	if (s->th_n > top)
		fprintf(o, "(%zu more threads; --top N shows more)\n", s->th_n - top);
	if (s->other.count)
		fprintf(o, "(%" PRIu64 " events of threads past the first %zu not told apart)\n",
			s->other.count, s->max_threads);
}

static void print_text(FILE *o, const struct report *rp, size_t top)
{
	const struct ctf_summary *s = rp->s;
	char cb[ESCAPE_MAX(CELL_MAX) + 1], rb[64];
	size_t i;

	if (!text_head(o, rp))
		return;
	fprintf(o, "%-38s %10s %10s %9s %9s\n", "EVENT", "COUNT", "RATE/s", "FIRST_s", "LAST_s");
	for (i = 0; i < rp->n; i++)
		fprintf(o, "%s %10" PRIu64 " %10s %9.3f %9.3f\n", cell(cb, rp->r[i].name, 38),
			rp->r[i].count,
			rate_str(rb, sizeof(rb), rp->r[i].count, rp->r[i].first, rp->r[i].last),
			(double)(rp->r[i].first - s->first) / 1e9, (double)(rp->r[i].last - s->first) / 1e9);
	text_threads(o, rp, top);
	if (!s->by)
		return;
	fprintf(o, "\nTOP VALUES OF '%s'", s->by);
	if (s->by_missing)
		fprintf(o, " (%" PRIu64 " events without it)", s->by_missing);
	fprintf(o, "\n%12s  %s\n", "COUNT", "VALUE");
	for (i = 0; i < s->val_n && i < top; i++) {
		/* 12 + 2 columns before the value: 80 in all */
		escape__str(cb, sizeof(cb), s->val[i].value, strlen(s->val[i].value), 66, 0);
		fprintf(o, "%12" PRIu64 "  %s\n", s->val[i].count, cb);
	}
	if (s->val_n == 0)
		fprintf(o, "%12s  (no event has a field '%s')\n", "-", s->by);
	if (s->values_left_out)
		fprintf(o, "(%" PRIu64 " events with values past the first %zu not counted)\n",
			s->values_left_out, s->max_values);
}

int ctf_summary__print(struct ctf_summary *s, FILE *o, const char *dir,
		       const struct ctf_traces *t, bool json, size_t top)
{
	struct report rp = { .s = s, .dir = dir, .t = t };
	int err = 0;

	rp.r = name_rows(s, &rp.n);
	rp.p = sort_tables(s, &rp.np);
	if (!rp.r || !rp.p)
		err = -ENOMEM;
	else if (json)
		print_json(o, &rp);
	else
		print_text(o, &rp, top);
	free(rp.r);
	free(rp.p);
	return err;
}
