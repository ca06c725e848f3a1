// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sidescope ctf: read the CTF traces lttng-capture leaves, through the
 * libbabeltrace2 graph API (src.ctf.fs and a sink of our own), and turn them
 * into a terminal summary or a Chrome trace event JSON file for Perfetto.
 *
 * The summary sink reads every stream of the source directly, one input
 * port per source output port, with no muxer in between: counts do not need
 * a global order, and skipping the muxer keeps us near the decoding floor.
 * The Chrome writer needs begin/end pairs in time order per thread, and a
 * thread's events may sit in several per-CPU streams, so it reads through
 * flt.utils.muxer. */
#include <babeltrace2/babeltrace.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "ctf/ctfpair.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/json.h"
#include "core/util.h"

enum mode { MODE_SUMMARY, MODE_CHROME };

/* Where a named field lives in an event. */
enum field_scope { SCOPE_NONE, SCOPE_PAYLOAD, SCOPE_SPEC_CTX, SCOPE_COMMON_CTX };

struct field_ref {
	enum field_scope scope;
	uint64_t index;
};

/* One per event class (several classes can share a name: one per trace). */
struct ev_stat {
	const bt_event_class *cls;
	char *name;		/* a copy: the classes die with the graph */
	char *base;		/* begin/end pairs: the name without its suffix */
	int kind;		/* enum ctfpair_kind */
	uint64_t count, first, last;
	int64_t ctx_vpid, ctx_vtid, ctx_procname;	/* common context index or -1 */
	struct field_ref by;
};

struct thread {
	int64_t vpid, vtid;
	uint64_t count;
	char procname[32];
	bool used;
	/* chrome: open begin events, innermost last */
	struct open_slice *open;
	size_t n_open, cap_open;
};

struct open_slice {
	const char *base;
	uint64_t ts;
	char *args;	/* JSON object text */
};

struct value_count {
	char *value;
	uint64_t count;
	bool used;
};

struct ctf_ctx {
	enum mode mode;
	const char *by;		/* --by FIELD */
	/* event classes: open addressing on the class pointer */
	struct ev_stat *ev;
	size_t ev_cap, ev_n;
	const bt_event_class *last_cls;
	struct ev_stat *last_ev;
	/* threads: open addressing on (vpid, vtid) */
	struct thread *th;
	size_t th_cap, th_n;
	/* --by values */
	struct value_count *val;
	size_t val_cap, val_n;
	uint64_t by_missing;
	uint64_t events, first, last;
	uint64_t discarded_events, discarded_events_msgs;
	uint64_t discarded_packets, discarded_packets_msgs;
	bool no_clock;
	/* sink plumbing */
	uint64_t n_ports;
	bt_message_iterator **iters;
	uint64_t n_iters, cur;
	/* chrome */
	FILE *out;
	bool origin_set, first_out;
	uint64_t origin;
	int err;	/* negative errno from inside the sink */
};

static void help(void)
{
	printf(
"sidescope ctf: summarize LTTng CTF traces or convert them for Perfetto\n"
"\n"
"USAGE: sidescope ctf summary TRACE_DIR [--by FIELD] [--top N] [--json]\n"
"       sidescope ctf chrome TRACE_DIR -o FILE\n"
"\n"
"TRACE_DIR is searched for CTF traces (directories holding a 'metadata'\n"
"file), however deep: the output directory of lttng-capture, a session\n"
"directory, a snapshot or a rotation chunk all work. All traces found are\n"
"read together.\n"
"\n"
"summary: discarded events and packets first, then events per name (count,\n"
"first and last time relative to the first event, rate), per process and\n"
"per thread (from the vpid, vtid and procname contexts), and the most\n"
"frequent values of one field.\n"
"chrome: Chrome trace event JSON (Perfetto, chrome://tracing): one track per\n"
"thread, each event an instant with its payload as args; events whose names\n"
"end in Start/Stop or Begin/End (also GCStart_V2/GCEnd_V1, request_start/\n"
"request_stop) become duration slices.\n"
"\n"
"OPTIONS:\n"
"      --by FIELD    summary: count the values of this payload (or context)\n"
"                    field\n"
"      --top N       summary: show N values of --by and N threads (default 10)\n"
"      --json        summary: print one JSON object\n"
"  -o, --output FILE chrome: write here ('-' for stdout)\n"
"  -v, --verbose     babeltrace2's warnings too\n"
"  -h, --help        print this help\n"
"\n"
"EXAMPLES:\n"
"  sidescope ctf summary /out/lttng-20260101-120000   # what happened\n"
"  sidescope ctf summary /out/trace --by path          # busiest paths\n"
"  sidescope ctf summary /out/trace --json | jq .events\n"
"  sidescope ctf chrome /out/trace -o trace.json       # open in Perfetto\n");
}

/* ---- trace directories ------------------------------------------------- */

static char **found_dirs;
static size_t n_found, cap_found;

static int find_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	char **n;

	if (type != FTW_F || strcmp(base, "metadata") != 0 || !S_ISREG(st->st_mode))
		return 0;
	if (n_found == cap_found) {
		cap_found = cap_found ? cap_found * 2 : 8;
		n = realloc(found_dirs, cap_found * sizeof(*n));
		if (!n)
			return -1;
		found_dirs = n;
	}
	found_dirs[n_found] = strndup(path, ftw->base > 0 ? (size_t)ftw->base - 1 : 0);
	if (!found_dirs[n_found])
		return -1;
	n_found++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Find the CTF trace directories under dir. Return the count or -errno. */
static int find_traces(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (nftw(dir, find_cb, 32, FTW_PHYS))
		return errno ? -errno : -ENOMEM;
	if (n_found > 1)
		qsort(found_dirs, n_found, sizeof(*found_dirs), cmp_str);
	return (int)n_found;
}

static void free_traces(void)
{
	size_t i;

	for (i = 0; i < n_found; i++)
		free(found_dirs[i]);
	free(found_dirs);
	found_dirs = NULL;
	n_found = cap_found = 0;
}

/* ---- metadata packets ---------------------------------------------------
 * LTTng writes the metadata as packets, each with a 37-byte header (CTF 1.8
 * "metadata_packet_header": magic, uuid, checksum, content and packet size
 * in bits, schemes, version). babeltrace2 2.0 loops forever on a metadata
 * file cut in the middle of a packet, so check that the file is a run of
 * whole packets before it sees the file. Text metadata passes. */

#define CTF_META_MAGIC 0x75D11D57U
#define CTF_META_HDR 37

static uint32_t meta_u32(const unsigned char *p, bool swap)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return swap ? __builtin_bswap32(v) : v;
}

/* Return 0 if the metadata file of trace dir is text or whole packets,
 * -EBADMSG (why in buf) if it is cut short or damaged, -errno if it cannot
 * be read. */
static int check_metadata(const char *tdir, char *why, size_t size)
{
	unsigned char h[CTF_META_HDR];
	char path[PATH_MAX];
	struct stat st;
	uint64_t off = 0;
	bool swap;
	FILE *f;
	int err = -EBADMSG;

	if ((size_t)snprintf(path, sizeof(path), "%s/metadata", tdir) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st)) {
		err = -errno;
		goto cleanup;
	}
	if (st.st_size == 0) {
		snprintf(why, size, "'%s' is empty", path);
		goto cleanup;
	}
	if (fread(h, 1, 4, f) != 4 || (meta_u32(h, false) != CTF_META_MAGIC &&
				       meta_u32(h, true) != CTF_META_MAGIC)) {
		err = 0;	/* text metadata: babeltrace2 parses it */
		goto cleanup;
	}
	swap = meta_u32(h, false) != CTF_META_MAGIC;
	while (off < (uint64_t)st.st_size) {
		uint32_t content, packet;

		if (fseeko(f, (off_t)off, SEEK_SET) || fread(h, 1, sizeof(h), f) != sizeof(h)) {
			snprintf(why, size, "'%s' is cut short in the packet header at byte %" PRIu64,
				 path, off);
			goto cleanup;
		}
		content = meta_u32(h + 24, swap);
		packet = meta_u32(h + 28, swap);
		if (meta_u32(h, swap) != CTF_META_MAGIC || packet % 8 || packet < CTF_META_HDR * 8 ||
		    content > packet || content < CTF_META_HDR * 8) {
			snprintf(why, size, "'%s' has a damaged packet header at byte %" PRIu64,
				 path, off);
			goto cleanup;
		}
		if (off + packet / 8 > (uint64_t)st.st_size) {
			snprintf(why, size, "'%s' is cut short: its packet at byte %" PRIu64
				 " needs %u bytes, %" PRIu64 " are there", path, off, packet / 8,
				 (uint64_t)st.st_size - off);
			goto cleanup;
		}
		off += packet / 8;
	}
	err = 0;
cleanup:
	fclose(f);
	return err;
}

/* ---- tables ------------------------------------------------------------ */

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static size_t hash_u64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	return (size_t)x;
}

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

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

static void resolve_by(struct ctf_ctx *c, struct ev_stat *e)
{
	int64_t i;

	e->by.scope = SCOPE_NONE;
	if (!c->by)
		return;
	i = member_index(bt_event_class_borrow_payload_field_class_const(e->cls), c->by);
	if (i >= 0) {
		e->by = (struct field_ref){ SCOPE_PAYLOAD, (uint64_t)i };
		return;
	}
	i = member_index(bt_event_class_borrow_specific_context_field_class_const(e->cls), c->by);
	if (i >= 0) {
		e->by = (struct field_ref){ SCOPE_SPEC_CTX, (uint64_t)i };
		return;
	}
	i = member_index(bt_stream_class_borrow_event_common_context_field_class_const(
				 bt_event_class_borrow_stream_class_const(e->cls)), c->by);
	if (i >= 0)
		e->by = (struct field_ref){ SCOPE_COMMON_CTX, (uint64_t)i };
}

static int ev_grow(struct ctf_ctx *c);

static struct ev_stat *ev_lookup(struct ctf_ctx *c, const bt_event_class *cls)
{
	const bt_field_class *cc;
	struct ev_stat *e;
	size_t i;

	if (cls == c->last_cls)
		return c->last_ev;
	if (c->ev_n * 2 >= c->ev_cap && ev_grow(c))
		return NULL;
	for (i = hash_ptr(cls) & (c->ev_cap - 1); c->ev[i].cls; i = (i + 1) & (c->ev_cap - 1))
		if (c->ev[i].cls == cls)
			goto found;
	e = &c->ev[i];
	e->cls = cls;
	e->name = strdup(bt_event_class_get_name(cls) ? bt_event_class_get_name(cls) : "(unnamed)");
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
	resolve_by(c, e);
	c->ev_n++;
found:
	c->last_cls = cls;
	c->last_ev = &c->ev[i];
	return c->last_ev;
}

static int ev_grow(struct ctf_ctx *c)
{
	size_t cap = c->ev_cap ? c->ev_cap * 2 : 64, i, j;
	struct ev_stat *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < c->ev_cap; i++) {
		if (!c->ev[i].cls)
			continue;
		for (j = hash_ptr(c->ev[i].cls) & (cap - 1); n[j].cls; j = (j + 1) & (cap - 1))
			;
		n[j] = c->ev[i];
	}
	free(c->ev);
	c->ev = n;
	c->ev_cap = cap;
	c->last_cls = NULL;
	return 0;
}

static struct thread *th_lookup(struct ctf_ctx *c, int64_t vpid, int64_t vtid, bool *created)
{
	size_t i, j;

	*created = false;
	if (c->th_n * 2 >= c->th_cap) {
		size_t cap = c->th_cap ? c->th_cap * 2 : 64;
		struct thread *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < c->th_cap; i++) {
			if (!c->th[i].used)
				continue;
			for (j = hash_u64((uint64_t)c->th[i].vpid * 1000003 ^ (uint64_t)c->th[i].vtid) & (cap - 1);
			     n[j].used; j = (j + 1) & (cap - 1))
				;
			n[j] = c->th[i];
		}
		free(c->th);
		c->th = n;
		c->th_cap = cap;
	}
	for (i = hash_u64((uint64_t)vpid * 1000003 ^ (uint64_t)vtid) & (c->th_cap - 1);
	     c->th[i].used; i = (i + 1) & (c->th_cap - 1))
		if (c->th[i].vpid == vpid && c->th[i].vtid == vtid)
			return &c->th[i];
	c->th[i].used = true;
	c->th[i].vpid = vpid;
	c->th[i].vtid = vtid;
	c->th_n++;
	*created = true;
	return &c->th[i];
}

static int val_add(struct ctf_ctx *c, const char *v)
{
	size_t i, j;

	if (c->val_n * 2 >= c->val_cap) {
		size_t cap = c->val_cap ? c->val_cap * 2 : 256;
		struct value_count *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (i = 0; i < c->val_cap; i++) {
			if (!c->val[i].used)
				continue;
			for (j = hash_str(c->val[i].value) & (cap - 1); n[j].used; j = (j + 1) & (cap - 1))
				;
			n[j] = c->val[i];
		}
		free(c->val);
		c->val = n;
		c->val_cap = cap;
	}
	for (i = hash_str(v) & (c->val_cap - 1); c->val[i].used; i = (i + 1) & (c->val_cap - 1)) {
		if (strcmp(c->val[i].value, v) == 0) {
			c->val[i].count++;
			return 0;
		}
	}
	c->val[i].value = strdup(v);
	if (!c->val[i].value)
		return -ENOMEM;
	c->val[i].used = true;
	c->val[i].count = 1;
	c->val_n++;
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

/* Any field as JSON. */
static void field_json(FILE *o, const bt_field *f)
{
	bt_field_class_type t = bt_field_get_class_type(f);
	uint64_t i, n;

	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		fprintf(o, "%" PRId64, bt_field_integer_signed_get_value(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		fprintf(o, "%" PRIu64, bt_field_integer_unsigned_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BOOL) {
		fputs(bt_field_bool_get_value(f) ? "true" : "false", o);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL)) {
		double d = bt_field_real_double_precision_get_value(f);

		if (d != d || d - d != 0)	/* NaN, infinities: not JSON */
			fputs("null", o);
		else
			fprintf(o, "%.17g", d);
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		json_write_stringn(o, bt_field_string_get_value(f), bt_field_string_get_length(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE) {
		const bt_field_class *fc = bt_field_borrow_class_const(f);

		n = bt_field_class_structure_get_member_count(fc);
		fputc('{', o);
		for (i = 0; i < n; i++) {
			if (i)
				fputc(',', o);
			json_write_string(o, bt_field_class_structure_member_get_name(
				bt_field_class_structure_borrow_member_by_index_const(fc, i)));
			fputc(':', o);
			field_json(o, bt_field_structure_borrow_member_field_by_index_const(f, i));
		}
		fputc('}', o);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
		n = bt_field_array_get_length(f);
		fputc('[', o);
		for (i = 0; i < n; i++) {
			if (i)
				fputc(',', o);
			field_json(o, bt_field_array_borrow_element_field_by_index_const(f, i));
		}
		fputc(']', o);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_OPTION)) {
		const bt_field *in = bt_field_option_borrow_field_const(f);

		if (in)
			field_json(o, in);
		else
			fputs("null", o);
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT)) {
		field_json(o, bt_field_variant_borrow_selected_option_field_const(f));
	} else if (t == BT_FIELD_CLASS_TYPE_BIT_ARRAY) {
		fprintf(o, "%" PRIu64, bt_field_bit_array_get_value_as_integer(f));
	} else {
		fputs("null", o);
	}
}

/* ---- messages ------------------------------------------------------------ */

static void chrome_sep(struct ctf_ctx *c)
{
	if (c->first_out)
		c->first_out = false;
	else
		fputs(",\n", c->out);
}

static void chrome_ts(FILE *o, uint64_t ts, uint64_t origin)
{
	uint64_t d = ts >= origin ? ts - origin : 0;

	fprintf(o, "%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

static void chrome_thread_meta(struct ctf_ctx *c, const struct thread *t)
{
	chrome_sep(c);
	fprintf(c->out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64
		",\"tid\":%" PRId64 ",\"args\":{\"name\":", t->vpid, t->vtid);
	json_write_string(c->out, t->procname[0] ? t->procname : "?");
	fputs("}}", c->out);
	if (t->vpid == t->vtid) {
		chrome_sep(c);
		fprintf(c->out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64
			",\"args\":{\"name\":", t->vpid);
		json_write_string(c->out, t->procname[0] ? t->procname : "?");
		fputs("}}", c->out);
	}
}

static void chrome_complete(struct ctf_ctx *c, const struct thread *t, const char *name,
			    uint64_t b, uint64_t e, const char *bargs, const bt_field *eargs,
			    bool unfinished)
{
	chrome_sep(c);
	fputs("{\"ph\":\"X\",\"name\":", c->out);
	json_write_string(c->out, name);
	fputs(",\"ts\":", c->out);
	chrome_ts(c->out, b, c->origin);
	fputs(",\"dur\":", c->out);
	chrome_ts(c->out, e, b);
	fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"begin\":%s",
		t->vpid, t->vtid, bargs ? bargs : "null");
	if (eargs) {
		fputs(",\"end\":", c->out);
		field_json(c->out, eargs);
	}
	if (unfinished)
		fputs(",\"unfinished\":true", c->out);
	fputs("}}", c->out);
}

static int chrome_event(struct ctf_ctx *c, struct ev_stat *e, struct thread *t,
			const bt_event *ev, uint64_t ts)
{
	const bt_field *payload = bt_event_borrow_payload_field_const(ev);
	size_t i;

	if (!c->origin_set) {
		c->origin = ts;
		c->origin_set = true;
	}
	if (e->kind == CTFPAIR_BEGIN) {
		struct open_slice *s;
		char *args = NULL;
		size_t len = 0;
		FILE *m;

		if (t->n_open == t->cap_open) {
			size_t cap = t->cap_open ? t->cap_open * 2 : 8;

			s = realloc(t->open, cap * sizeof(*s));
			if (!s)
				return -ENOMEM;
			t->open = s;
			t->cap_open = cap;
		}
		m = open_memstream(&args, &len);
		if (!m)
			return -ENOMEM;
		if (payload)
			field_json(m, payload);
		else
			fputs("null", m);
		if (fclose(m))
			return -ENOMEM;
		t->open[t->n_open++] = (struct open_slice){ e->base, ts, args };
		return 0;
	}
	if (e->kind == CTFPAIR_END) {
		for (i = t->n_open; i-- > 0;) {
			struct open_slice s = t->open[i];

			if (strcmp(s.base, e->base) != 0)
				continue;
			chrome_complete(c, t, s.base, s.ts, ts, s.args, payload, false);
			free(s.args);
			memmove(&t->open[i], &t->open[i + 1], (t->n_open - i - 1) * sizeof(*t->open));
			t->n_open--;
			return 0;
		}
		/* an end whose begin is not in the trace: keep it as an instant */
	}
	chrome_sep(c);
	fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", c->out);
	json_write_string(c->out, e->name);
	fputs(",\"ts\":", c->out);
	chrome_ts(c->out, ts, c->origin);
	fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":", t->vpid, t->vtid);
	if (payload)
		field_json(c->out, payload);
	else
		fputs("{}", c->out);
	fputc('}', c->out);
	return 0;
}

static int handle_event(struct ctf_ctx *c, const bt_message *msg)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_clock_snapshot *cs;
	struct ev_stat *e;
	uint64_t ts = 0;
	int64_t ns;

	e = ev_lookup(c, bt_event_borrow_class_const(ev));
	if (!e)
		return -ENOMEM;
	if (bt_message_event_borrow_stream_class_default_clock_class_const(msg)) {
		cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
		if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
			ts = (uint64_t)ns;
	} else {
		c->no_clock = true;
	}
	e->count++;
	if (ts < e->first)
		e->first = ts;
	if (ts > e->last)
		e->last = ts;
	c->events++;

	if (e->ctx_vtid >= 0 || c->mode == MODE_CHROME) {
		const bt_field *cc = bt_event_borrow_common_context_field_const(ev);
		/* no context: one track 0/0 for Chrome, "unknown" (-1) for summary */
		int64_t vpid = c->mode == MODE_CHROME ? 0 : -1, vtid = vpid;
		struct thread *t;
		bool created;

		if (cc && e->ctx_vpid >= 0)
			vpid = field_int(bt_field_structure_borrow_member_field_by_index_const(cc, (uint64_t)e->ctx_vpid));
		if (cc && e->ctx_vtid >= 0)
			vtid = field_int(bt_field_structure_borrow_member_field_by_index_const(cc, (uint64_t)e->ctx_vtid));
		t = th_lookup(c, vpid, vtid, &created);
		if (!t)
			return -ENOMEM;
		t->count++;
		if (created && cc && e->ctx_procname >= 0) {
			const bt_field *p = bt_field_structure_borrow_member_field_by_index_const(
				cc, (uint64_t)e->ctx_procname);

			if (bt_field_get_class_type(p) == BT_FIELD_CLASS_TYPE_STRING)
				snprintf(t->procname, sizeof(t->procname), "%s", bt_field_string_get_value(p));
		}
		if (c->mode == MODE_CHROME) {
			if (created)
				chrome_thread_meta(c, t);
			return chrome_event(c, e, t, ev, ts);
		}
	}
	if (e->by.scope != SCOPE_NONE) {
		const bt_field *s = NULL, *f;
		char buf[256];

		switch (e->by.scope) {
		case SCOPE_PAYLOAD: s = bt_event_borrow_payload_field_const(ev); break;
		case SCOPE_SPEC_CTX: s = bt_event_borrow_specific_context_field_const(ev); break;
		case SCOPE_COMMON_CTX: s = bt_event_borrow_common_context_field_const(ev); break;
		default: break;
		}
		f = s ? bt_field_structure_borrow_member_field_by_index_const(s, e->by.index) : NULL;
		if (f && field_text(f, buf, sizeof(buf)))
			return val_add(c, buf);
		c->by_missing++;
	} else if (c->by) {
		c->by_missing++;
	}
	return 0;
}

static int handle_message(struct ctf_ctx *c, const bt_message *msg)
{
	uint64_t n;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT:
		return handle_event(c, msg);
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		c->discarded_events_msgs++;
		if (bt_message_discarded_events_get_count(msg, &n) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			c->discarded_events += n;
		break;
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		c->discarded_packets_msgs++;
		if (bt_message_discarded_packets_get_count(msg, &n) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			c->discarded_packets += n;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the sink component ------------------------------------------------ */

static bt_component_class_initialize_method_status
sink_init(bt_self_component_sink *self, bt_self_component_sink_configuration *conf,
	  const bt_value *params, void *data)
{
	struct ctf_ctx *c = data;
	char name[32];
	uint64_t i;

	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), c);
	for (i = 0; i < c->n_ports; i++) {
		snprintf(name, sizeof(name), "in%" PRIu64, i);
		if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) !=
		    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
			return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status
sink_configured(bt_self_component_sink *self)
{
	struct ctf_ctx *c = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	uint64_t i;

	c->iters = calloc(c->n_ports ? c->n_ports : 1, sizeof(*c->iters));
	if (!c->iters)
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_MEMORY_ERROR;
	for (i = 0; i < c->n_ports; i++) {
		if (bt_message_iterator_create_from_sink_component(self,
			bt_self_component_sink_borrow_input_port_by_index(self, i),
			&c->iters[i]) != BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
			return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
		c->n_iters++;
	}
	return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static bt_component_class_sink_consume_method_status sink_consume(bt_self_component_sink *self)
{
	struct ctf_ctx *c = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	bt_message_array_const msgs;
	uint64_t count, i;
	int err = 0;

	if (c->n_iters == 0)
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	if (c->cur >= c->n_iters)
		c->cur = 0;
	switch (bt_message_iterator_next(c->iters[c->cur], &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		for (i = 0; i < count; i++) {
			if (!err)
				err = handle_message(c, msgs[i]);
			bt_message_put_ref(msgs[i]);
		}
		if (err) {
			c->err = err;
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
		}
		/* stay on this stream: batches from one iterator are cheapest */
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		bt_message_iterator_put_ref(c->iters[c->cur]);
		c->iters[c->cur] = c->iters[--c->n_iters];
		return c->n_iters ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK
				  : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		c->cur++;
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
	default:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
	}
}

static void sink_finalize(bt_self_component_sink *self)
{
	struct ctf_ctx *c = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	uint64_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_iters; i++)
		bt_message_iterator_put_ref(c->iters[i]);
	free(c->iters);
	c->iters = NULL;
	c->n_iters = 0;
}

/* The text of a babeltrace2 error cause without the trailing
 * "msg-it-addr=0x..."-style fields, which only mean something to its
 * developers. */
static void cause_text(const bt_error_cause *cause, char *buf, size_t size)
{
	const char *m = bt_error_cause_get_message(cause);
	const char *cut;
	size_t n;

	if (!m)
		m = "unknown error";
	cut = strstr(m, ": msg-it-addr=");
	n = cut ? (size_t)(cut - m) : strlen(m);
	/* one line, and what it quotes of the trace's metadata (names the
	 * application registered) escaped */
	escape__str(buf, size, m, n, 0, 0);
}

/* Report the current thread's babeltrace2 error in one line and clear it:
 * the deepest cause that names a file of the trace (that says what is
 * broken and where), else the deepest cause a plugin gave. With -v, every
 * cause follows. */
static void report_bt_error(const char *what, const char *dir)
{
	const bt_error *e = bt_current_thread_take_error();
	const bt_error_cause *pick = NULL;
	uint64_t i, n;
	char msg[512];

	if (!e) {
		p_err("%s '%s' failed (no details from babeltrace2)", what, dir);
		return;
	}
	n = bt_error_get_cause_count(e);
	for (i = 0; i < n && !pick; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
		const char *m = bt_error_cause_get_message(c);

		if (m && strstr(m, dir))
			pick = c;
	}
	for (i = 0; i < n && !pick; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);

		if (bt_error_cause_get_actor_type(c) != BT_ERROR_CAUSE_ACTOR_TYPE_UNKNOWN)
			pick = c;
	}
	if (!pick && n)
		pick = bt_error_borrow_cause_by_index(e, 0);
	if (pick)
		cause_text(pick, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "unknown error");
	p_err("%s '%s' failed: %s (cut short, damaged or still being written? "
	      "-v shows more)", what, dir, msg);
	for (i = 0; log_verbose && i < n; i++) {
		cause_text(bt_error_borrow_cause_by_index(e, i), msg, sizeof(msg));
		fprintf(stderr, "  caused by: %s\n", msg);
	}
	bt_error_release(e);
}

/* Build src.ctf.fs over every trace found, [muxer,] our sink; run it. */
static int read_traces(struct ctf_ctx *c, const char *dir)
{
	const bt_plugin *ctf_plugin = NULL, *utils_plugin = NULL;
	const bt_component_class_sink_consume_method consume = sink_consume;
	bt_component_class_sink *sink_cls = NULL;
	const bt_component_source *src = NULL;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	bt_value *params = NULL, *inputs = NULL;
	bt_graph *graph = NULL;
	bt_logging_level lvl = log_verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;
	uint64_t i, n_out;
	int err = -EIO;
	size_t k;

	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf_plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &utils_plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK) {
		p_err("cannot load babeltrace2's ctf and utils plugins (install babeltrace2)");
		goto cleanup;
	}
	graph = bt_graph_create(0);
	params = bt_value_map_create();
	if (!graph || !params ||
	    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (k = 0; k < n_found; k++)
		if (bt_value_array_append_string_element(inputs, found_dirs[k]) !=
		    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
			err = -ENOMEM;
			goto cleanup;
		}
	if (bt_graph_add_source_component(graph,
			bt_plugin_borrow_source_component_class_by_name_const(ctf_plugin, "fs"),
			"source", params, lvl, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		report_bt_error("opening trace", dir);
		goto cleanup;
	}
	n_out = bt_component_source_get_output_port_count(src);
	if (c->mode == MODE_CHROME) {
		if (bt_graph_add_filter_component(graph,
				bt_plugin_borrow_filter_component_class_by_name_const(utils_plugin, "muxer"),
				"muxer", NULL, lvl, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
			report_bt_error("creating the muxer for", dir);
			goto cleanup;
		}
		c->n_ports = 1;
	} else {
		c->n_ports = n_out;
	}
	sink_cls = bt_component_class_sink_create("sidescope", consume);
	if (!sink_cls ||
	    bt_component_class_sink_set_initialize_method(sink_cls, sink_init) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_sink_set_graph_is_configured_method(sink_cls, sink_configured) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_sink_set_finalize_method(sink_cls, sink_finalize) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (bt_graph_add_sink_component_with_initialize_method_data(graph, sink_cls, "sink", NULL, c, lvl, &sink) !=
	    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		report_bt_error("creating the reader for", dir);
		goto cleanup;
	}
	for (i = 0; i < n_out; i++) {
		const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(src, i);
		const bt_port_input *ip = mux
			? bt_component_filter_borrow_input_port_by_index_const(mux, i)
			: bt_component_sink_borrow_input_port_by_index_const(sink, i);

		if (!ip || bt_graph_connect_ports(graph, op, ip, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			report_bt_error("connecting the streams of", dir);
			goto cleanup;
		}
	}
	if (mux && bt_graph_connect_ports(graph,
			bt_component_filter_borrow_output_port_by_index_const(mux, 0),
			bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL) !=
		   BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		report_bt_error("connecting the muxer for", dir);
		goto cleanup;
	}
	for (;;) {
		bt_graph_run_status st = bt_graph_run(graph);

		if (st == BT_GRAPH_RUN_STATUS_OK)
			break;
		if (st == BT_GRAPH_RUN_STATUS_AGAIN)
			continue;
		if (c->err) {
			err = c->err;
			p_err("reading trace '%s' failed: %s", dir, strerror(-err));
			bt_current_thread_clear_error();
		} else {
			report_bt_error("reading trace", dir);
		}
		goto cleanup;
	}
	err = 0;
cleanup:
	bt_graph_put_ref(graph);
	bt_component_class_sink_put_ref(sink_cls);
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf_plugin);
	bt_plugin_put_ref(utils_plugin);
	return err;
}

/* ---- reports ------------------------------------------------------------- */

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
static struct name_row *name_rows(struct ctf_ctx *c, size_t *n_out)
{
	struct name_row *r = calloc(c->ev_n ? c->ev_n : 1, sizeof(*r));
	size_t i, n = 0, m = 0;

	if (!r)
		return NULL;
	for (i = 0; i < c->ev_cap; i++)
		if (c->ev[i].cls && c->ev[i].count)
			r[n++] = (struct name_row){ c->ev[i].name, c->ev[i].count, c->ev[i].first, c->ev[i].last };
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
	const struct thread *x = a, *y = b;

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
	const struct value_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->value, y->value);
}

/* Compact the tables into sorted arrays (threads, processes, values). */
static struct proc_row *sort_tables(struct ctf_ctx *c, size_t *n_proc)
{
	struct proc_row *p;
	size_t i, j, n = 0, np = 0;

	for (i = 0; i < c->th_cap; i++)
		if (c->th[i].used)
			c->th[n++] = c->th[i];
	c->th_cap = c->th_n = n;
	if (n > 1)
		qsort(c->th, n, sizeof(*c->th), cmp_thread);
	for (i = 0, j = 0; i < c->val_cap; i++)
		if (c->val[i].used)
			c->val[j++] = c->val[i];
	c->val_cap = c->val_n = j;
	if (j > 1)
		qsort(c->val, j, sizeof(*c->val), cmp_val);
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		return NULL;
	for (i = 0; i < n; i++) {
		for (j = 0; j < np && p[j].vpid != c->th[i].vpid; j++)
			;
		if (j == np)
			p[np++] = (struct proc_row){ c->th[i].vpid, 0, 0, c->th[i].procname };
		p[j].count += c->th[i].count;
		p[j].threads++;
		if (c->th[i].vtid == c->th[i].vpid)
			p[j].procname = c->th[i].procname;
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

/* The rate as a table cell ("-" when there is none) or a JSON value. */
static const char *rate_str(char *buf, size_t size, uint64_t count, uint64_t first,
			    uint64_t last, bool json)
{
	double r;

	if (!rate(count, first, last, &r))
		snprintf(buf, size, "%s", json ? "null" : "-");
	else
		snprintf(buf, size, json ? "%.3f" : "%.0f", r);
	return buf;
}

static void print_json(struct ctf_ctx *c, FILE *o, const char *dir, struct name_row *r, size_t n,
		       struct proc_row *p, size_t np)
{
	char rb[64];
	size_t i;

	fputs("{\"trace\":", o);
	json_write_string(o, dir);
	fputs(",\"trace_dirs\":[", o);
	for (i = 0; i < n_found; i++) {
		if (i)
			fputc(',', o);
		json_write_string(o, found_dirs[i]);
	}
	fprintf(o, "],\"discarded_events\":%" PRIu64 ",\"discarded_events_records\":%" PRIu64
		",\"discarded_packets\":%" PRIu64 ",\"discarded_packets_records\":%" PRIu64
		",\"events\":%" PRIu64,
		c->discarded_events, c->discarded_events_msgs, c->discarded_packets,
		c->discarded_packets_msgs, c->events);
	if (c->events)
		fprintf(o, ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"duration_s\":%.9f",
			c->first, c->last, (double)(c->last - c->first) / 1e9);
	fputs(",\"by_name\":[", o);
	for (i = 0; i < n; i++) {
		fprintf(o, "%s{\"name\":", i ? "," : "");
		json_write_string(o, r[i].name);
		fprintf(o, ",\"count\":%" PRIu64 ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64
			",\"rate_per_s\":%s}", r[i].count, r[i].first, r[i].last,
			rate_str(rb, sizeof(rb), r[i].count, r[i].first, r[i].last, true));
	}
	fputs("],\"processes\":[", o);
	for (i = 0; i < np; i++) {
		fprintf(o, "%s{\"vpid\":%" PRId64 ",\"procname\":", i ? "," : "", p[i].vpid);
		json_write_string(o, p[i].procname);
		fprintf(o, ",\"events\":%" PRIu64 ",\"threads\":%" PRIu64 "}", p[i].count, p[i].threads);
	}
	fputs("],\"threads\":[", o);
	for (i = 0; i < c->th_n; i++) {
		fprintf(o, "%s{\"vpid\":%" PRId64 ",\"vtid\":%" PRId64 ",\"procname\":",
			i ? "," : "", c->th[i].vpid, c->th[i].vtid);
		json_write_string(o, c->th[i].procname);
		fprintf(o, ",\"events\":%" PRIu64 "}", c->th[i].count);
	}
	fputc(']', o);
	if (c->by) {
		fputs(",\"by\":{\"field\":", o);
		json_write_string(o, c->by);
		fprintf(o, ",\"missing\":%" PRIu64 ",\"values\":[", c->by_missing);
		for (i = 0; i < c->val_n; i++) {
			fprintf(o, "%s{\"value\":", i ? "," : "");
			json_write_string(o, c->val[i].value);
			fprintf(o, ",\"count\":%" PRIu64 "}", c->val[i].count);
		}
		fputs("]}", o);
	}
	fputs("}\n", o);
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

/* S escaped into BUF for a message: trace directories are named after the
 * application's process (ust/pid/PROCNAME-PID-DATE). */
static const char *shown_str(char *buf, size_t size, const char *s)
{
	escape__str(buf, size, s, strlen(s), 0, 0);
	return buf;
}

static void print_text(struct ctf_ctx *c, FILE *o, const char *dir, struct name_row *r, size_t n,
		       struct proc_row *p, size_t np, size_t top)
{
	char cb[ESCAPE_MAX(CELL_MAX) + 1], rb[64];
	double rt;
	size_t i;

	if (c->discarded_events || c->discarded_events_msgs)
		fprintf(o, "!!! WARNING: %" PRIu64 " EVENTS DISCARDED (in %" PRIu64 " places): the\n"
			"!!! ring buffers were full. Counts below are too low. Use a larger\n"
			"!!! --buffer-size, fewer events, or --snapshot.\n",
			c->discarded_events, c->discarded_events_msgs);
	if (c->discarded_packets || c->discarded_packets_msgs)
		fprintf(o, "!!! WARNING: %" PRIu64 " PACKETS DISCARDED (in %" PRIu64 " places): whole\n"
			"!!! sub-buffers were lost (overwrite mode or a slow consumer).\n",
			c->discarded_packets, c->discarded_packets_msgs);
	fprintf(o, "trace: %s (%zu CTF trace dir%s)\n", dir, n_found, n_found == 1 ? "" : "s");
	if (!c->events) {
		fprintf(o, "no events\n");
		return;
	}
	fprintf(o, "events: %" PRIu64 " in %.6f s", c->events, (double)(c->last - c->first) / 1e9);
	if (rate(c->events, c->first, c->last, &rt))
		fprintf(o, " (%.0f/s)", rt);
	fprintf(o, "%s\n\n", c->no_clock ? " (some streams have no clock)" : "");
	fprintf(o, "%-38s %10s %10s %9s %9s\n", "EVENT", "COUNT", "RATE/s", "FIRST_s", "LAST_s");
	for (i = 0; i < n; i++)
		fprintf(o, "%s %10" PRIu64 " %10s %9.3f %9.3f\n", cell(cb, r[i].name, 38), r[i].count,
			rate_str(rb, sizeof(rb), r[i].count, r[i].first, r[i].last, false),
			(double)(r[i].first - c->first) / 1e9, (double)(r[i].last - c->first) / 1e9);
	if (c->th_n == 0 || (c->th_n == 1 && c->th[0].vtid < 0)) {
		fprintf(o, "\n(no vpid/vtid contexts in this trace: no per-process view)\n");
	} else {
		fprintf(o, "\n%-8s %-16s %8s %12s\n", "VPID", "PROCNAME", "THREADS", "EVENTS");
		for (i = 0; i < np; i++)
			fprintf(o, "%-8" PRId64 " %s %8" PRIu64 " %12" PRIu64 "\n", p[i].vpid,
				cell(cb, p[i].procname[0] ? p[i].procname : "?", 16), p[i].threads,
				p[i].count);
		fprintf(o, "\n%-8s %-8s %-16s %12s\n", "VPID", "VTID", "PROCNAME", "EVENTS");
		for (i = 0; i < c->th_n && i < top; i++)
			fprintf(o, "%-8" PRId64 " %-8" PRId64 " %s %12" PRIu64 "\n", c->th[i].vpid,
				c->th[i].vtid,
				cell(cb, c->th[i].procname[0] ? c->th[i].procname : "?", 16),
				c->th[i].count);
		if (c->th_n > top)
			fprintf(o, "(%zu more threads; --top N shows more)\n", c->th_n - top);
	}
	if (c->by) {
		fprintf(o, "\nTOP VALUES OF '%s'", c->by);
		if (c->by_missing)
			fprintf(o, " (%" PRIu64 " events without it)", c->by_missing);
		fprintf(o, "\n%12s  %s\n", "COUNT", "VALUE");
		for (i = 0; i < c->val_n && i < top; i++) {
			/* 12 + 2 columns before the value: 80 in all */
			escape__str(cb, sizeof(cb), c->val[i].value, strlen(c->val[i].value), 66, 0);
			fprintf(o, "%12" PRIu64 "  %s\n", c->val[i].count, cb);
		}
		if (c->val_n == 0)
			fprintf(o, "%12s  (no event has a field '%s')\n", "-", c->by);
	}
}

static void ctx_free(struct ctf_ctx *c)
{
	size_t i, j;

	for (i = 0; i < c->ev_cap; i++) {
		free(c->ev[i].name);
		free(c->ev[i].base);
	}
	free(c->ev);
	for (i = 0; i < c->th_cap; i++) {
		for (j = 0; j < c->th[i].n_open; j++)
			free(c->th[i].open[j].args);
		free(c->th[i].open);
	}
	free(c->th);
	for (i = 0; i < c->val_cap; i++)
		free(c->val[i].value);
	free(c->val);
}

/* Slices still open at the end of the trace end there, marked unfinished. */
static void chrome_flush_open(struct ctf_ctx *c)
{
	size_t i, j;

	for (i = 0; i < c->th_cap; i++) {
		struct thread *t = &c->th[i];

		if (!t->used)
			continue;
		for (j = 0; j < t->n_open; j++) {
			chrome_complete(c, t, t->open[j].base, t->open[j].ts, c->last,
					t->open[j].args, NULL, true);
			free(t->open[j].args);
		}
		t->n_open = 0;
	}
}

int cmd_ctf(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_BY, OPT_TOP };
	static const struct option opts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ctf_ctx c = { .first = UINT64_MAX };
	const char *sub, *dir, *output = NULL;
	struct outfile *of = NULL;
	struct name_row *rows = NULL;
	struct proc_row *procs = NULL;
	size_t n_rows = 0, n_procs = 0;
	bool json = false;
	uint64_t top = 10;
	int ch, err, ret = 1;
	size_t i;

	while ((ch = getopt_long(argc, argv, "+o:vh", opts, NULL)) != -1) {
		if (ch == 'h') {
			help();
			return 0;
		}
		if (ch == 'v') {
			log_verbose = true;
			continue;
		}
		return usage_hint();
	}
	if (optind >= argc)
		return usage_error("missing subcommand: summary or chrome");
	sub = argv[optind];
	if (strcmp(sub, "summary") == 0)
		c.mode = MODE_SUMMARY;
	else if (strcmp(sub, "chrome") == 0)
		c.mode = MODE_CHROME;
	else
		return usage_error("unknown subcommand '%s' (summary or chrome)", sub);
	/* drop the subcommand and parse again from scratch (optind = 0 resets
	 * GNU getopt), so options may come before or after TRACE_DIR */
	memmove(&argv[1], &argv[optind + 1], (size_t)(argc - optind) * sizeof(*argv));
	argc -= optind;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "o:vh", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_BY: c.by = optarg; break;
		case OPT_TOP:
			if (parse_u64(optarg, 1, 1000000, &top))
				return usage_error("bad --top '%s' (a number from 1)", optarg);
			break;
		case OPT_JSON: json = true; break;
		case 'o': output = optarg; break;
		case 'v': log_verbose = true; break;
		case 'h': help(); return 0;
		default: return usage_hint();
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "missing TRACE_DIR" : "too many arguments");
	dir = argv[optind];
	if (c.mode == MODE_CHROME && !output)
		return usage_error("chrome needs -o FILE");
	if (c.mode == MODE_CHROME && (json || c.by))
		return usage_error("--json and --by are summary options");
	if (c.mode == MODE_SUMMARY && output)
		return usage_error("-o is a chrome option; summary prints to stdout");

	err = find_traces(dir);
	if (err < 0) {
		p_err("cannot read trace directory '%s': %s", dir, strerror(-err));
		goto cleanup;
	}
	if (err == 0) {
		p_err("no CTF trace under '%s' (no 'metadata' file; give the output "
		      "directory of lttng-capture)", dir);
		goto cleanup;
	}
	for (i = 0; i < n_found; i++) {
		char why[PATH_MAX + 128], shown[ESCAPE_MAX(PATH_MAX + 128) + 1];

		p_debug("trace: %s", shown_str(shown, sizeof(shown), found_dirs[i]));
		err = check_metadata(found_dirs[i], why, sizeof(why));
		if (err == -EBADMSG) {
			p_err("trace '%s' is damaged: %s (a copy cut short or a full disk?)",
			      dir, shown_str(shown, sizeof(shown), why));
			goto cleanup;
		}
		if (err) {
			p_err("cannot read '%s/metadata': %s", shown_str(shown, sizeof(shown), found_dirs[i]),
			      strerror(-err));
			goto cleanup;
		}
	}

	if (c.mode == MODE_CHROME) {
		of = outfile__open(output);
		if (!of) {
			p_err("cannot write '%s': %s", output, outfile__strerror(errno));
			goto cleanup;
		}
		c.out = outfile__fp(of);
		c.first_out = true;
		fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", c.out);
	}
	err = read_traces(&c, dir);
	if (err)
		goto cleanup;
	for (i = 0; i < c.ev_cap; i++)
		if (c.ev[i].cls && c.ev[i].count) {
			if (c.ev[i].first < c.first)
				c.first = c.ev[i].first;
			if (c.ev[i].last > c.last)
				c.last = c.ev[i].last;
		}
	if (c.mode == MODE_CHROME) {
		chrome_flush_open(&c);
		fprintf(c.out, "\n],\"otherData\":{\"source\":\"sidescope ctf chrome\","
			"\"clock_origin_ns\":%" PRIu64 ",\"events\":%" PRIu64
			",\"discarded_events\":%" PRIu64 ",\"discarded_packets\":%" PRIu64 "}}\n",
			c.origin, c.events, c.discarded_events, c.discarded_packets);
		err = outfile__commit(of);
		of = NULL;
		if (err) {
			p_err("cannot write '%s': %s", output, outfile__strerror(err));
			goto cleanup;
		}
		if (c.discarded_events || c.discarded_packets)
			p_warn("%" PRIu64 " events and %" PRIu64 " packets were discarded "
			       "while tracing; the timeline has gaps",
			       c.discarded_events, c.discarded_packets);
		p_info("%" PRIu64 " events from %zu trace dir%s written to %s", c.events, n_found,
		       n_found == 1 ? "" : "s", output);
		ret = 0;
		goto cleanup;
	}
	rows = name_rows(&c, &n_rows);
	procs = sort_tables(&c, &n_procs);
	if (!rows || !procs) {
		p_err("out of memory");
		goto cleanup;
	}
	if (json)
		print_json(&c, stdout, dir, rows, n_rows, procs, n_procs);
	else
		print_text(&c, stdout, dir, rows, n_rows, procs, n_procs, (size_t)top);
	if (fflush(stdout) || ferror(stdout)) {
		p_err("cannot write the summary: %s", strerror(errno));
		goto cleanup;
	}
	if (c.discarded_events || c.discarded_packets)
		p_warn("%" PRIu64 " events and %" PRIu64 " packets were discarded while tracing",
		       c.discarded_events, c.discarded_packets);
	ret = 0;
cleanup:
	outfile__abort(of);
	free(rows);
	free(procs);
	ctx_free(&c);
	free_traces();
	return ret;
}
