// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Event decoding for sidescope uprobe. Hot path: one line is built in a
 * growable buffer and written with one fwrite; time of day is cached per
 * second. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/escape.h"
#include "uprobe/argkind.h"
#include "uprobe/upfmt.h"
#include "uprobe/utf16.h"
#include "core/json.h"
#include "core/util.h"

struct buf {
	char *p;
	size_t len, cap;
};

/* A decoded argument. */
struct dval {
	const char *s;		/* string (UTF-8, not escaped), or NULL */
	size_t n;
	const char *mark;	/* "(null)", "<fault>" ... instead of a string */
	bool cut;
	bool partial;
	int64_t count;		/* length field for counted strings */
};

struct upfmt {
	struct probe_spec *const *specs;
	int nspecs;
	bool json;
	int64_t rt_off;
	struct buf line;
	struct buf text;	/* JSON mode: the formatted text before escaping */
	char *tmp;		/* decoded strings, one area per argument */
	size_t tmpsz;		/* size of one area */
	uint64_t gen;		/* event number: decoded[] is valid for it */
	uint64_t decoded_gen[PS_MAX_ARGS];
	struct dval decoded[PS_MAX_ARGS];
	time_t cached_sec;
	char cached_hms[16];	/* "HH:MM:SS" */
	char cached_iso[32];	/* "YYYY-MM-DDTHH:MM:SS" */
};

static int buf_grow(struct buf *b, size_t need)
{
	size_t cap;
	char *p;

	if (b->len + need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 1024;
	while (cap < b->len + need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put(struct buf *b, const char *s, size_t n)
{
	if (buf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putc_(struct buf *b, char c)
{
	put(b, &c, 1);
}

static void printf_(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void printf_(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (buf_grow(b, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (buf_grow(b, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Integers without vfprintf: it dominated the profile of --replay. */
static void put_u64(struct buf *b, uint64_t v)
{
	char t[24];
	int i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(b, t + i, sizeof(t) - (size_t)i);
}

static void put_s64(struct buf *b, int64_t v)
{
	if (v < 0) {
		putc_(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

static void put_hex(struct buf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char t[16];
	int i = sizeof(t);

	do {
		t[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	put(b, t + i, sizeof(t) - (size_t)i);
}

/* v in at least WIDTH columns, left-aligned (text-mode PID and TID) */
static void put_u64_left(struct buf *b, uint64_t v, size_t width)
{
	size_t start = b->len;

	put_u64(b, v);
	while (b->len - start < width)
		putc_(b, ' ');
}

/* usec as 6 digits */
static void put_usec(struct buf *b, long usec)
{
	char t[6];
	int i;

	for (i = 5; i >= 0; i--) {
		t[i] = (char)('0' + usec % 10);
		usec /= 10;
	}
	put(b, t, 6);
}

/* Text: control characters (C0, DEL, C1) escaped, invalid UTF-8 as \xNN. */
static void put_text(struct buf *b, const char *str, size_t n)
{
	if (buf_grow(b, ESCAPE_MAX(n) + 8))
		return;
	b->len += escape__mem(b->p + b->len, str, n, 0);
}

/* JSON string literal; invalid UTF-8 becomes U+FFFD. */
static void put_json(struct buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, l;

	if (buf_grow(b, n * 6 + 8))
		return;
	b->p[b->len++] = '"';
	while (i < n) {
		unsigned char c = s[i];
		char *d = b->p + b->len;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*d = (char)c;
			b->len++;
			i++;
		} else if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r') {
			d[0] = '\\';
			d[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : (char)c;
			b->len += 2;
			i++;
		} else if (c < 0x80) {
			memcpy(d, "\\u00", 4);
			d[4] = hex[c >> 4];
			d[5] = hex[c & 15];
			b->len += 6;
			i++;
		} else if ((l = utf8_seq_len(s + i, n - i))) {
			if (l == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
				/* C1 controls, as json_write_string does */
				memcpy(d, "\\u00", 4);
				d[4] = hex[s[i + 1] >> 4];
				d[5] = hex[s[i + 1] & 15];
				b->len += 6;
			} else {
				memcpy(d, s + i, l);
				b->len += l;
			}
			i += l;
		} else {
			memcpy(d, "\\ufffd", 6);
			b->len += 6;
			i++;
		}
	}
	b->p[b->len++] = '"';
}

int64_t upfmt__realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
}

struct upfmt *upfmt__new(struct probe_spec *const *specs, int nspecs, bool json,
			 int64_t realtime_offset_ns)
{
	struct upfmt *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->specs = specs;
	f->nspecs = nspecs;
	f->json = json;
	f->rt_off = realtime_offset_ns;
	f->cached_sec = -1;
	f->tmpsz = utf16__utf8_size(UP_STR_MAX);
	f->tmp = malloc(f->tmpsz * PS_MAX_ARGS);
	if (!f->tmp) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void upfmt__free(struct upfmt *f)
{
	if (!f)
		return;
	free(f->line.p);
	free(f->text.p);
	free(f->tmp);
	free(f);
}

static int64_t cast_s(uint64_t v, char lmod)
{
	switch (lmod) {
	case 'H': return (int8_t)v;
	case 'h': return (int16_t)v;
	case 'l': case 'z': return (int64_t)v;
	default: return (int32_t)v;
	}
}

static uint64_t cast_u(uint64_t v, char lmod)
{
	switch (lmod) {
	case 'H': return (uint8_t)v;
	case 'h': return (uint16_t)v;
	case 'l': case 'z': return v;
	default: return (uint32_t)v;
	}
}


/* Decode string slot V (argument ARG) into its area of f->tmp. */
static void decode_str_once(struct upfmt *f, int arg, const struct up_slot *sl,
			    const struct up_val *v, const uint8_t *data, struct dval *d);

static void decode_str(struct upfmt *f, int arg, const struct up_slot *sl,
		       const struct up_val *v, const uint8_t *data, struct dval *d)
{
	/* text and JSON args both want the string: decode it once per event */
	if (f->decoded_gen[arg] == f->gen) {
		*d = f->decoded[arg];
		return;
	}
	decode_str_once(f, arg, sl, v, data, d);
	f->decoded[arg] = *d;
	f->decoded_gen[arg] = f->gen;
}

static void decode_str_once(struct upfmt *f, int arg, const struct up_slot *sl,
			    const struct up_val *v, const uint8_t *data, struct dval *d)
{
	const struct argkind *ak = argkind__get(sl->kind);
	struct utf16_info info;
	unsigned int fl;
	size_t max = sl->max_units;

	memset(d, 0, sizeof(*d));
	d->count = v->count;
	if (v->flags & UP_VF_NULL) {
		d->mark = "(null)";
		return;
	}
	if (v->flags & UP_VF_BADLEN) {
		d->mark = "<bad length>";
		return;
	}
	if (v->flags & UP_VF_FAULT) {
		d->mark = "<fault>";
		return;
	}
	d->partial = v->flags & UP_VF_PARTIAL;
	if (!(ak->flags & AK_UTF16)) {
		size_t n = v->len;

		/* raw bytes: stop at a NUL in case the copy holds one; a counted
		 * string (Go's) may hold NULs, which the escaper shows */
		const void *z = ak->flags & AK_COUNTED ? NULL : memchr(data + v->off, 0, n);

		if (z)
			n = (size_t)((const uint8_t *)z - (data + v->off));
		d->s = (const char *)data + v->off;
		d->n = n;
		d->cut = v->flags & UP_VF_CUT;
		return;
	}
	fl = 0;
	if (ak->flags & AK_NUL)
		fl |= UTF16_STOP_NUL;
	if (v->flags & UP_VF_CUT)
		fl |= UTF16_MORE;
	d->n = utf16__to_utf8(data + v->off, v->len, max, fl, f->tmp + arg * f->tmpsz, f->tmpsz,
			      &info);
	d->s = f->tmp + arg * f->tmpsz;
	d->cut = info.cut;
}

static void put_time(struct upfmt *f, struct buf *b, uint64_t ts)
{
	int64_t rt = (int64_t)ts + f->rt_off;
	time_t sec = (time_t)(rt / 1000000000LL);
	long usec = (long)((rt % 1000000000LL) / 1000);

	if (sec != f->cached_sec) {
		struct tm tm;

		gmtime_r(&sec, &tm);
		strftime(f->cached_hms, sizeof(f->cached_hms), "%H:%M:%S", &tm);
		strftime(f->cached_iso, sizeof(f->cached_iso), "%Y-%m-%dT%H:%M:%S", &tm);
		f->cached_sec = sec;
	}
	if (f->json)
		putc_(b, '"');
	puts_(b, f->json ? f->cached_iso : f->cached_hms);
	putc_(b, '.');
	put_usec(b, usec);
	if (f->json)
		puts_(b, "Z\"");
}

static size_t utf8_chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static void put_int(struct buf *b, const struct ps_piece *pc, uint64_t v)
{
	/* plain conversions, the common case, skip vfprintf */
	if (strcmp(pc->cfmt, "%lld") == 0 || strcmp(pc->cfmt, "%lli") == 0)
		put_s64(b, cast_s(v, pc->lmod));
	else if (strcmp(pc->cfmt, "%llu") == 0)
		put_u64(b, cast_u(v, pc->lmod));
	else if (strcmp(pc->cfmt, "%llx") == 0)
		put_hex(b, cast_u(v, pc->lmod));
	else if (pc->conv == 'd' || pc->conv == 'i')
		printf_(b, pc->cfmt, (long long)cast_s(v, pc->lmod));
	else if (pc->conv == 'p')
		printf_(b, pc->cfmt, (unsigned long long)v);
	else
		printf_(b, pc->cfmt, (unsigned long long)cast_u(v, pc->lmod));
}

static void put_char(struct buf *b, uint64_t v, bool json)
{
	uint32_t cp = (uint32_t)cast_u(v, 'h');
	char tmp[8];
	size_t n;

	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd;
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		n = 1;
	} else {
		uint8_t u[2] = { (uint8_t)cp, (uint8_t)(cp >> 8) };

		n = utf16__to_utf8(u, 2, 1, 0, tmp, sizeof(tmp), NULL);
	}
	if (json)
		put_json(b, tmp, n);
	else
		put_text(b, tmp, n);
}

/* The formatted text of the event (text mode: escaped; json: raw UTF-8 in
 * the returned buffer, escaped by the caller). */
static void format_text(struct upfmt *f, const struct probe_spec *ps,
			const struct up_event_hdr *h, const uint8_t *data,
			struct buf *b, bool escape, bool *any_cut)
{
	int i;

	for (i = 0; i < ps->npieces; i++) {
		const struct ps_piece *pc = &ps->pieces[i];
		const struct up_val *v;
		struct dval d;

		if (pc->lit) {
			if (escape)
				put_text(b, pc->lit, strlen(pc->lit));
			else
				puts_(b, pc->lit);
			continue;
		}
		v = &h->vals[pc->arg];
		if (pc->conv != 's') {
			if (v->flags & UP_VF_FAULT)
				puts_(b, "<fault>");
			else if (pc->conv == 'c')
				put_char(b, v->value, false);
			else
				put_int(b, pc, v->value);
			continue;
		}
		decode_str(f, pc->arg, &ps->recipe.slots[pc->arg], v, data, &d);
		if (d.mark) {
			puts_(b, d.mark);
			continue;
		}
		if (pc->width > 0) {
			size_t c = utf8_chars(d.s, d.n);

			for (; c < (size_t)pc->width; c++)
				putc_(b, ' ');
		}
		if (escape)
			put_text(b, d.s, d.n);
		else
			put(b, d.s, d.n);
		if (d.partial)
			puts_(b, "<fault>");
		if (d.cut) {
			puts_(b, UTF16_CUT_MARK);
			*any_cut = true;
		}
		if (pc->width < 0) {
			size_t c = utf8_chars(d.s, d.n) + d.cut;

			for (; c < (size_t)-pc->width; c++)
				putc_(b, ' ');
		}
	}
}

static void format_json_args(struct upfmt *f, const struct probe_spec *ps,
			     const struct up_event_hdr *h, const uint8_t *data, struct buf *b)
{
	int i;

	puts_(b, ",\"args\":[");
	for (i = 0; i < ps->nargs; i++) {
		const struct up_val *v = &h->vals[i];
		const struct argkind *ak = argkind__get(ps->args[i].kind);
		const struct ps_piece *pc = NULL;
		int k;

		for (k = 0; k < ps->npieces; k++)
			if (!ps->pieces[k].lit && ps->pieces[k].arg == i)
				pc = &ps->pieces[k];
		if (i)
			putc_(b, ',');
		puts_(b, "{\"expr\":");
		put_json(b, ps->args[i].text, strlen(ps->args[i].text));
		puts_(b, ",\"type\":\"");
		puts_(b, ak->name);
		putc_(b, '"');
		if (!ak->unit) {
			if (v->flags & UP_VF_FAULT)
				puts_(b, ",\"value\":null,\"fault\":true");
			else if (pc && pc->conv == 'c') {
				puts_(b, ",\"value\":");
				put_char(b, v->value, true);
			} else if (pc && (pc->conv == 'd' || pc->conv == 'i')) {
				puts_(b, ",\"value\":");
				put_s64(b, cast_s(v->value, pc->lmod));
			} else {
				puts_(b, ",\"value\":");
				put_u64(b, pc && pc->conv != 'p' ? cast_u(v->value, pc->lmod) : v->value);
			}
		} else {
			struct dval d;

			decode_str(f, i, &ps->recipe.slots[i], v, data, &d);
			puts_(b, ",\"address\":\"0x");
			put_hex(b, v->value);
			putc_(b, '"');
			if (ak->flags & AK_COUNTED)
				if (!(v->flags & (UP_VF_NULL | UP_VF_FAULT)))
				{
					puts_(b, ",\"length\":");
					put_s64(b, d.count);
				}
			if (d.mark) {
				puts_(b, ",\"value\":null");
				if (v->flags & UP_VF_FAULT)
					puts_(b, ",\"fault\":true");
				if (v->flags & UP_VF_BADLEN)
					puts_(b, ",\"bad_length\":true");
			} else {
				puts_(b, ",\"value\":");
				put_json(b, d.s, d.n);
				if (d.partial)
					puts_(b, ",\"fault\":true");
				if (d.cut)
					puts_(b, ",\"truncated\":true");
			}
		}
		putc_(b, '}');
	}
	putc_(b, ']');
}

const char *upfmt__by_value(struct upfmt *f, const struct probe_spec *ps,
			    const struct up_bykey *k, size_t *len)
{
	const struct up_slot *sl = &ps->recipe.slots[ps->recipe.by_slot % UP_MAX_SLOTS];
	struct up_val v = { .len = k->len, .count = k->count, .flags = k->flags };
	struct buf *b = &f->line;
	struct dval d;

	b->len = 0;
	if (ps->by.kind == UP_KIND_INT) {
		if (f->json)
			puts_(b, "\"value\":");
		if (k->flags & UP_VF_FAULT)
			puts_(b, f->json ? "null,\"fault\":true" : "<fault>");
		else
			put_s64(b, (int64_t)k->value);
	} else {
		v.len = k->len <= UP_BY_BYTES ? k->len : UP_BY_BYTES;
		/* the slot's limit, not the cut flag of the copy, decides */
		v.flags &= ~UP_VF_CUT;
		if (k->flags & UP_VF_CUT)
			v.flags |= UP_VF_CUT;
		decode_str_once(f, 0, sl, &v, k->data, &d);
		if (f->json) {
			puts_(b, "\"value\":");
			if (d.mark)
				put_json(b, d.mark, strlen(d.mark));
			else
				put_json(b, d.s, d.n);
			if (d.cut)
				puts_(b, ",\"truncated\":true");
		} else if (d.mark) {
			puts_(b, d.mark);
		} else {
			putc_(b, '"');
			put_text(b, d.s, d.n);
			if (d.cut)
				puts_(b, UTF16_CUT_MARK);
			putc_(b, '"');
		}
	}
	/* a fresh event must decode its strings again */
	f->gen++;
	if (buf_grow(b, 1))
		return NULL;
	b->p[b->len] = '\0';
	*len = b->len;
	return b->p;
}

const char *upfmt__line(struct upfmt *f, const void *data, size_t size, size_t *len)
{
	const struct up_event_hdr *h = data;
	const uint8_t *sdata = (const uint8_t *)data + sizeof(*h);
	size_t dlen;
	const struct probe_spec *ps;
	struct buf *b = &f->line;
	bool cut = false;
	uint32_t i;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h) ||
	    h->probe >= (uint32_t)f->nspecs || h->nslots > UP_MAX_SLOTS)
		return NULL;
	ps = f->specs[h->probe];
	if (h->nslots != ps->recipe.nslots)
		return NULL;
	dlen = h->size - sizeof(*h);
	for (i = 0; i < h->nslots; i++)
		if ((uint64_t)h->vals[i].off + h->vals[i].len > dlen)
			return NULL;
	b->len = 0;
	f->gen++;
	if (f->json) {
		struct buf *text = &f->text;
		char comm[17];

		memcpy(comm, h->comm, 16);
		comm[16] = '\0';
		puts_(b, "{\"time\":");
		put_time(f, b, h->ts);
		puts_(b, ",\"ts_ns\":");
		put_u64(b, h->ts);
		puts_(b, ",\"pid\":");
		put_u64(b, h->pid);
		puts_(b, ",\"tid\":");
		put_u64(b, h->tid);
		puts_(b, ",\"comm\":");
		put_json(b, comm, strnlen(comm, 16));
		puts_(b, ",\"probe\":");
		put_json(b, ps->label, strlen(ps->label));
		puts_(b, ps->is_ret ? ",\"type\":\"return\"" : ",\"type\":\"entry\"");
		/* the formatted text, then the typed values */
		text->len = 0;
		format_text(f, ps, h, sdata, text, false, &cut);
		puts_(b, ",\"text\":");
		put_json(b, text->p ? text->p : "", text->len);
		format_json_args(f, ps, h, sdata, b);
		if (cut)
			puts_(b, ",\"truncated\":true");
		puts_(b, "}\n");
	} else {
		char comm[17];

		memcpy(comm, h->comm, 16);
		comm[16] = '\0';
		put_time(f, b, h->ts);
		putc_(b, ' ');
		put_u64_left(b, h->pid, 7);
		putc_(b, ' ');
		put_u64_left(b, h->tid, 7);
		putc_(b, ' ');
		put_text(b, comm, strnlen(comm, 16));
		for (i = (uint32_t)strnlen(comm, 16); i < 15; i++)
			putc_(b, ' ');
		putc_(b, ' ');
		put_text(b, ps->label, strlen(ps->label));
		if (ps->is_ret)
			puts_(b, " (ret)");
		if (ps->npieces) {
			putc_(b, ' ');
			format_text(f, ps, h, sdata, b, true, &cut);
		}
		putc_(b, '\n');
	}
	if (buf_grow(b, 1))
		return NULL;
	b->p[b->len] = '\0';
	*len = b->len;
	return b->p;
}

int upfmt__event(struct upfmt *f, const void *data, size_t size, FILE *out)
{
	const char *line;
	size_t len;

	line = upfmt__line(f, data, size, &len);
	if (!line)
		return -EINVAL;
	if (fwrite(line, 1, len, out) != len)
		return -EIO;
	return 0;
}
