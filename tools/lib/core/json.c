// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one JSON writer and string escaper (json.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"

void json_write_stringn(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	fputc('"', f);
	while (i < n) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c == '\n') {
			fputs("\\n", f);
			i++;
		} else if (c == '\t') {
			fputs("\\t", f);
			i++;
		} else if (c == '\r') {
			fputs("\\r", f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			fputc(c, f);
			i++;
		} else if ((l = utf8_seq_len(s + i, n - i))) {
			/* C1 controls (U+009B is a CSI) are valid JSON as they
			 * are, but not on the terminal the JSON is printed on */
			if (l == 2 && c == 0xc2 && s[i + 1] < 0xa0)
				fprintf(f, "\\u%04x", s[i + 1]);
			else
				fwrite(s + i, 1, l, f);
			i += l;
		} else {
			fputs("\\ufffd", f);
			i++;
		}
	}
	fputc('"', f);
}

void json_write_string(FILE *f, const char *s)
{
	json_write_stringn(f, s, strlen(s));
}

void json__init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

/* Before any value: the comma after the previous item of this level. */
static void item(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH) {
		if (j->has_items[j->depth - 1])
			fputc(',', j->f);
		j->has_items[j->depth - 1] = true;
	}
}

static void open(struct json *j, char o, char c)
{
	item(j);
	fputc(o, j->f);
	if (j->depth < JSON_MAX_DEPTH) {
		j->has_items[j->depth] = false;
		j->closer[j->depth] = c;
	}
	j->depth++;
}

void json__obj(struct json *j)
{
	open(j, '{', '}');
}

void json__arr(struct json *j)
{
	open(j, '[', ']');
}

void json__end(struct json *j)
{
	if (j->depth <= 0)
		return;
	j->depth--;
	fputc(j->depth < JSON_MAX_DEPTH ? j->closer[j->depth] : '}', j->f);
	j->after_key = false;
}

void json__key(struct json *j, const char *key)
{
	item(j);
	json_write_string(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void json__str(struct json *j, const char *s)
{
	item(j);
	json_write_string(j->f, s);
}

void json__strn(struct json *j, const char *s, size_t n)
{
	item(j);
	json_write_stringn(j->f, s, n);
}

void json__u64(struct json *j, uint64_t v)
{
	item(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json__i64(struct json *j, int64_t v)
{
	item(j);
	fprintf(j->f, "%" PRId64, v);
}

void json__bool(struct json *j, bool v)
{
	item(j);
	fputs(v ? "true" : "false", j->f);
}

void json__null(struct json *j)
{
	item(j);
	fputs("null", j->f);
}

void json__num(struct json *j, const char *fmt, ...)
{
	va_list ap;

	item(j);
	va_start(ap, fmt);
	vfprintf(j->f, fmt, ap);
	va_end(ap);
}
