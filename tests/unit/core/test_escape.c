// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The terminal sanitizer: every class of byte, C1 controls (U+009B, the
 * one-byte CSI), invalid UTF-8, NULs inside a given length, and cuts to a
 * byte or column limit that never split an escape or a UTF-8 sequence. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "prof/prof.h"
#include "tap.h"
#include "core/json.h"
#include "core/util.h"

#define K ESCAPE_KEEP_BACKSLASH

struct ecase {
	const char *name;
	const char *in;
	size_t n;		/* bytes of in; 0: strlen */
	unsigned int flags;
	const char *want;
};

static const struct ecase ecases[] = {
	{ "printable ASCII", "Sample.Fib(int) a~z {}[]<>'\"", 0, 0,
	  "Sample.Fib(int) a~z {}[]<>'\"" },
	{ "empty", "", 0, 0, "" },
	{ "backslash doubled", "C:\\app\\x", 0, 0, "C:\\\\app\\\\x" },
	{ "backslash kept", "C:\\app\\x", 0, K, "C:\\app\\x" },
	{ "newline, tab, CR", "a\nb\tc\rd", 0, 0, "a\\nb\\tc\\rd" },
	{ "newline with backslash kept", "a\n\\", 0, K, "a\\n\\" },
	{ "ESC and a CSI sequence", "\x1b[2J\x1b]0;pwned\x07", 0, 0,
	  "\\x1b[2J\\x1b]0;pwned\\x07" },
	{ "other C0", "\x01\x08\x0b\x0c\x1f", 0, 0, "\\x01\\x08\\x0b\\x0c\\x1f" },
	{ "DEL", "a\x7f" "b", 0, 0, "a\\x7fb" },
	{ "NUL inside the length", "a\0b\0", 4, 0, "a\\x00b\\x00" },
	{ "C1 U+0080", "\xc2\x80", 0, 0, "\\u0080" },
	{ "C1 U+009B, the one-byte CSI", "x\xc2\x9b" "31mred", 0, 0, "x\\u009b31mred" },
	{ "C1 U+009D (OSC) and U+009F", "\xc2\x9d\xc2\x9f", 0, 0, "\\u009d\\u009f" },
	{ "U+00A0 is not C1", "\xc2\xa0", 0, 0, "\xc2\xa0" },
	{ "Latin-1, euro, CJK, emoji", "h\xc3\xa9 \xe2\x82\xac \xe4\xbd\xa0 \xf0\x9f\x94\xa5", 0, 0,
	  "h\xc3\xa9 \xe2\x82\xac \xe4\xbd\xa0 \xf0\x9f\x94\xa5" },
	{ "U+FFFF and U+10FFFF pass", "\xef\xbf\xbf\xf4\x8f\xbf\xbf", 0, 0,
	  "\xef\xbf\xbf\xf4\x8f\xbf\xbf" },
	{ "lone continuation byte", "a\x80" "b", 0, 0, "a\\x80b" },
	{ "0xff and 0xfe", "\xff\xfe", 0, 0, "\\xff\\xfe" },
	{ "overlong '/'", "\xc0\xaf", 0, 0, "\\xc0\\xaf" },
	{ "overlong C1 is not a C1", "\xe0\x82\x9b", 0, 0, "\\xe0\\x82\\x9b" },
	{ "surrogate", "\xed\xa0\x80", 0, 0, "\\xed\\xa0\\x80" },
	{ "past U+10FFFF", "\xf4\x90\x80\x80", 0, 0, "\\xf4\\x90\\x80\\x80" },
	{ "sequence cut at the end", "ok\xe2\x82", 0, 0, "ok\\xe2\\x82" },
	{ "sequence cut by ASCII", "\xe2\x82" "a", 0, 0, "\\xe2\\x82a" },
	{ "C1 lead byte alone", "\xc2", 0, 0, "\\xc2" },
	{ "C1 lead byte before ASCII", "\xc2[", 0, 0, "\\xc2[" },
};

struct bcase {
	const char *name;
	const char *in;
	size_t n;		/* 0: strlen */
	size_t size, maxcols;
	unsigned int flags;
	const char *want;
	size_t cols;
};

static const struct bcase bcases[] = {
	{ "fits", "abc", 0, 4, 0, 0, "abc", 3 },
	{ "fits the columns exactly", "abcde", 0, 64, 5, 0, "abcde", 5 },
	{ "cut to columns", "abcdefgh", 0, 64, 5, 0, "ab...", 5 },
	{ "cut to bytes", "abcdefgh", 0, 6, 0, 0, "ab...", 5 },
	{ "bytes tighter than columns", "abcdefgh", 0, 5, 7, 0, "a...", 4 },
	{ "escape not cut", "ab\x01" "cd", 0, 64, 6, 0, "ab...", 5 },
	{ "escape kept when it fits", "ab\x01", 0, 64, 6, 0, "ab\\x01", 6 },
	{ "C1 escape not cut", "ab\xc2\x9b", 0, 64, 7, 0, "ab...", 5 },
	{ "C1 escape kept", "ab\xc2\x9b", 0, 64, 8, 0, "ab\\u009b", 8 },
	{ "UTF-8 counts one column", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 0, 64, 4, 0,
	  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4 },
	{ "UTF-8 not cut by columns", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 0, 64, 4, 0,
	  "\xc3\xa9...", 4 },
	{ "UTF-8 not cut by bytes", "h\xc3\xa9llo", 0, 6, 0, 0, "h...", 4 },
	{ "emoji not cut by bytes", "\xf0\x9f\x94\xa5\xf0\x9f\x94\xa5", 0, 8, 0, 0, "\xf0\x9f\x94\xa5...", 4 },
	{ "NUL inside the length", "a\0b", 3, 64, 0, 0, "a\\x00b", 6 },
	{ "backslash kept", "a\\b", 0, 64, 0, K, "a\\b", 3 },
	{ "backslash pair not cut", "abc\\", 0, 64, 4, 0, "a...", 4 },
	{ "room for two dots only", "abcdef", 0, 3, 0, 0, "..", 2 },
	{ "two columns only", "abc", 0, 64, 2, 0, "..", 2 },
	{ "size 1", "abc", 0, 1, 0, 0, "", 0 },
	{ "empty input", "", 0, 8, 3, 0, "", 0 },
	{ "invalid byte counts four columns", "\xff" "ab", 0, 64, 6, 0, "\\xffab", 6 },
	{ "invalid byte alone does not leave room for dots", "\xff" "abc", 0, 64, 6, 0, "...", 3 },
	{ "invalid byte cut whole", "a\xff" "bcd", 0, 64, 6, 0, "a...", 4 },
};

/* Nothing in S may be a control character (C0, DEL, C1) or invalid UTF-8. */
static bool terminal_safe(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	while (i < n) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return false;
		l = utf8_seq_len(s + i, n - i);
		if (!l || (l == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0))
			return false;
		i += l;
	}
	return true;
}

/* OUT is the escape of a whole-unit prefix of IN, perhaps with up to three
 * dots after it: no escape and no UTF-8 sequence was cut. */
static bool whole_prefix(const char *in, size_t n, const char *out)
{
	char full[64];
	size_t olen = strlen(out), k, d;

	for (d = 0; d <= 3 && d <= olen; d++) {
		if (d && out[olen - d] != '.')
			break;
		for (k = 0; k <= n; k++) {
			size_t len = escape__mem(full, in, k, 0);
			size_t used = 0, l;

			if (len != olen - d || memcmp(full, out, len))
				continue;
			/* K must end a unit: a valid sequence is never split */
			while (used < k) {
				l = utf8_seq_len((const unsigned char *)in + used, n - used);
				used += l ? l : 1;
			}
			if (used == k)
				return true;
		}
	}
	return false;
}

static void test_exhaustive(void)
{
	static const size_t sizes[] = { 1, 3, 4, 5, 7, 9, 13, 64 };
	static const size_t colss[] = { 0, 2, 3, 4, 5, 6, 8 };
	unsigned char in[6];
	char out[64], mem[64];
	size_t bad_safe = 0, bad_cut = 0, bad_limit = 0, runs = 0, i, j, k;
	uint32_t x = 12345;

	for (i = 0; i < 65536 + 20000; i++) {
		size_t n;

		if (i < 65536) {
			in[0] = (unsigned char)(i >> 8);
			in[1] = (unsigned char)i;
			n = 2;
		} else {
			/* random 3..6-byte strings biased toward interesting bytes */
			static const unsigned char pick[] = { 'a', '\\', '\n', 0, 0x1b, 0x7f,
							      0x80, 0x9b, 0xa0, 0xbf, 0xc2,
							      0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff };

			n = 3 + (i % 4);
			for (k = 0; k < n; k++) {
				x = x * 1103515245u + 12345u;
				in[k] = pick[(x >> 16) % sizeof(pick)];
			}
		}
		k = escape__mem(mem, (const char *)in, n, 0);
		bad_safe += !terminal_safe(mem, k);
		for (j = 0; j < ARRAY_SIZE(sizes); j++)
			for (k = 0; k < ARRAY_SIZE(colss); k++) {
				size_t cols = escape__str(out, sizes[j], (const char *)in, n, colss[k], 0);

				runs++;
				bad_safe += !terminal_safe(out, strlen(out));
				bad_cut += !whole_prefix((const char *)in, n, out);
				bad_limit += strlen(out) >= sizes[j] ||
					     (colss[k] && cols > colss[k]);
			}
	}
	diag("%zu bounded escapes of 2- to 6-byte strings", runs);
	is_int(bad_safe, 0, "no output holds a control character or invalid UTF-8");
	is_int(bad_cut, 0, "no cut splits an escape or a UTF-8 sequence");
	is_int(bad_limit, 0, "no output passes its byte or column limit");
}

static void test_fwrite(void)
{
	size_t n = 5000 * 3 + 7, i, len;
	char *in = malloc(n), *want = malloc(ESCAPE_MAX(n)), *got = NULL;
	size_t glen = 0;
	FILE *f;

	if (!in || !want) {
		ok(0, "fwrite: memory");
		return;
	}
	/* euro signs and C1 controls across every 4096-byte boundary */
	for (i = 0; i + 3 <= n; i += 3)
		memcpy(in + i, i % 7 ? "\xe2\x82\xac" : "\xc2\x9b\\", 3);
	memcpy(in + i, "\x01\xff", n - i < 2 ? n - i : 2);
	len = escape__mem(want, in, n, 0);
	f = open_memstream(&got, &glen);
	ok(f && escape__fwrite(f, in, n, 0) == 0, "fwrite: returns 0");
	if (f)
		fclose(f);
	ok(got && glen == len && memcmp(got, want, len) == 0,
	   "fwrite: same bytes as escape__mem over buffer boundaries");
	free(got);

	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		is_int(escape__fwrite(f, "abc", 3, 0), -EIO, "fwrite: a write error is -EIO");
		fclose(f);
	} else {
		/* every Linux system has it: not a skip */
		ok(0, "/dev/full opens");
	}
	free(in);
	free(want);
}

static char *write_mem(struct prof *p, bool top)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = top ? prof__write_top(p, f, 10) : prof__write_folded(p, f);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The profile's writers over names a hostile application chose. */
static void test_prof_writers(void)
{
	struct prof *p = prof__new();
	struct prof_frame fr[] = {
		{ "main", FRAME_NATIVE, "/app/bin", "" },
		{ "evil\x1b[2J\xc2\x9b" "31m;split\nline\\x", FRAME_JIT, "[jit]", "" },
		{ "bad\xff\xe2\x82 utf8", FRAME_JIT, "[jit]", "" },
	};
	struct prof_frame wide[] = {
		{ "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\x01\x01\x01\x01\x01\x01"
		  "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01", FRAME_NATIVE, "/app/bin", "" },
	};
	char *out, *line, *save = NULL;
	int bad = 0, lines = 0;

	if (!p) {
		ok(0, "prof__new");
		return;
	}
	prof__add(p, &(struct prof_sample){ .pid = 7, .thread = "app\x1b]0;t\x07" }, fr, 3, 5);
	prof__add(p, &(struct prof_sample){ .pid = 7, .thread = "app" }, wide, 1, 1);
	out = write_mem(p, false);
	is_str(out, "app;\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
	       "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
	       "\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01\\x01"
	       "\\x01\\x01 1\n"
	       "app\\x1b]0:t\\x07;main;evil\\x1b[2J\\u009b31m:split\\nline\\x_[j];"
	       "bad\\xff\\xe2\\x82 utf8_[j] 5\n",
	       "folded: escaped, ';' as ':', backslashes kept, one line per stack");
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		bad += !terminal_safe(line, strlen(line));
	ok(out && !bad, "folded: no control character");
	free(out);

	out = write_mem(p, true);
	ok(out != NULL, "top: written");
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t cols = 0, i;

		for (i = 0; line[i]; i++)
			cols += ((unsigned char)line[i] & 0xc0) != 0x80;
		bad += cols > 80 || !terminal_safe(line, strlen(line));
		lines++;
	}
	is_int(lines, 6, "top: header and four functions");
	is_int(bad, 0, "top: every line safe and within 80 columns");
	free(out);
	out = write_mem(p, true);
	ok(out && strstr(out, "  evil\\x1b[2J\\u009b31m;split\\nline\\\\x_[j]\n") != NULL,
	   "top: escaped, backslash doubled");
	ok(out && strstr(out, "  \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
			      "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
			      "\xe2\x82\xac\xe2\x82\xac\\x01\\x01\\x01\\x01\\x01\\x01"
			      "\\x01\\x01...\n") != NULL,
	   "top: UTF-8 counts one column, cut to 48 with its dots");
	free(out);
	prof__free(p);

	/* 42 columns, then an escape that would end past 45: cut before it */
	p = prof__new();
	if (!p)
		return;
	prof__add(p, &(struct prof_sample){ .pid = 7, .thread = "app" },
		  &(struct prof_frame){ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					"\x01" "bbb", FRAME_NATIVE, "/app/bin", "" }, 1, 1);
	out = write_mem(p, true);
	ok(out && strstr(out, "  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\n") != NULL,
	   "top: an escape that does not fit is left out whole");
	free(out);
	prof__free(p);
}

/* JSON has its own escaping; C1 controls are escaped there too, since JSON
 * is printed on terminals as well. */
static void test_json(void)
{
	static const char in[] = "a\x1b\xc2\x9b\xc2\x85\xc2\xa0\x7f\xff\"\\";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		ok(0, "json: memstream");
		return;
	}
	json_write_stringn(f, in, sizeof(in) - 1);
	fclose(f);
	is_str(buf, "\"a\\u001b\\u009b\\u0085\xc2\xa0\\u007f\\ufffd\\\"\\\\\"",
	       "json: C0, C1, DEL escaped, invalid UTF-8 replaced");
	free(buf);
}

int main(void)
{
	char out[256];
	size_t i, n, len;

	for (i = 0; i < ARRAY_SIZE(ecases); i++) {
		const struct ecase *c = &ecases[i];
		char *d;

		n = c->n ? c->n : strlen(c->in);
		len = escape__mem(out, c->in, n, c->flags);
		ok(len == strlen(c->want) && memcmp(out, c->want, len) == 0, "mem: %s", c->name);
		if (len != strlen(c->want) || memcmp(out, c->want, len))
			diag("got '%.*s'", (int)len, out);
		ok(len <= ESCAPE_MAX(n), "mem: %s: within ESCAPE_MAX", c->name);
		d = escape__dup(c->in, n, c->flags);
		is_str(d, c->want, "dup: %s", c->name);
		free(d);
		/* no limit: the bounded form is the same text */
		escape__str(out, sizeof(out), c->in, n, 0, c->flags);
		is_str(out, c->want, "str: %s", c->name);
	}

	for (i = 0; i < ARRAY_SIZE(bcases); i++) {
		const struct bcase *c = &bcases[i];
		size_t cols;

		memset(out, 'Z', sizeof(out));
		n = c->n ? c->n : strlen(c->in);
		cols = escape__str(out, c->size, c->in, n, c->maxcols, c->flags);
		is_str(out, c->want, "bounded: %s", c->name);
		is_int(cols, c->cols, "bounded: %s: columns", c->name);
		is_int(out[c->size], 'Z', "bounded: %s: nothing written past SIZE", c->name);
	}
	memset(out, 'Z', sizeof(out));
	is_int(escape__str(out, 0, "abc", 3, 0, 0), 0, "size 0: nothing written");
	is_int(out[0], 'Z', "size 0: DST untouched");

	test_exhaustive();
	test_fwrite();
	test_prof_writers();
	test_json();
	return done_testing();
}
