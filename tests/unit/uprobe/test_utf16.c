// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* UTF-16LE -> UTF-8: pairs, lone surrogates, NUL, limits, cut marker. */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "uprobe/utf16.h"

struct tcase {
	const char *name;
	uint16_t in[16];
	size_t nunits;		/* units of in[] given as bytes */
	size_t max;
	unsigned int flags;
	const char *want;
	int cut;
	size_t replaced;
};

#define M UTF16_MARK_CUT
#define Z UTF16_STOP_NUL

static const struct tcase cases[] = {
	{ "ascii", { 'h', 'i', '!' }, 3, 256, M, "hi!", 0, 0 },
	{ "empty", { 0 }, 0, 256, M, "", 0, 0 },
	{ "empty NUL-terminated", { 0, 'x' }, 2, 256, M | Z, "", 0, 0 },
	{ "latin-1", { 0xe9, 't', 0xe9 }, 3, 256, M, "\xc3\xa9t\xc3\xa9", 0, 0 },
	{ "cjk", { 0x4f60, 0x597d }, 2, 256, M, "\xe4\xbd\xa0\xe5\xa5\xbd", 0, 0 },
	{ "emoji pair", { 0xd83d, 0xde00 }, 2, 256, M, "\xf0\x9f\x98\x80", 0, 0 },
	{ "max code point", { 0xdbff, 0xdfff }, 2, 256, M, "\xf4\x8f\xbf\xbf", 0, 0 },
	{ "lone high", { 'a', 0xd800, 'b' }, 3, 256, M, "a\xef\xbf\xbd" "b", 0, 1 },
	{ "lone low", { 0xdc00, 'b' }, 2, 256, M, "\xef\xbf\xbd" "b", 0, 1 },
	{ "high at the end", { 'a', 0xd83d }, 2, 256, M, "a\xef\xbf\xbd", 0, 1 },
	{ "two highs", { 0xd83d, 0xd83d, 0xde00 }, 3, 256, M, "\xef\xbf\xbd\xf0\x9f\x98\x80", 0, 1 },
	{ "stop at NUL", { 'a', 'b', 0, 'c' }, 4, 256, M | Z, "ab", 0, 0 },
	{ "NUL kept without STOP_NUL", { 'a', 0, 'c' }, 3, 256, 0, "a\0c", 0, 0 },
	{ "cut at max", { 'a', 'b', 'c', 'd' }, 4, 2, M, "ab\xe2\x80\xa6", 1, 0 },
	{ "cut without marker", { 'a', 'b', 'c', 'd' }, 4, 2, 0, "ab", 1, 0 },
	{ "NUL right at the limit is no cut", { 'a', 'b', 0 }, 3, 2, M | Z, "ab", 0, 0 },
	{ "pair not split at the limit", { 'a', 0xd83d, 0xde00 }, 3, 2, M, "a\xe2\x80\xa6", 1, 0 },
	{ "MORE marks a cut", { 'a', 'b' }, 2, 256, M | UTF16_MORE, "ab\xe2\x80\xa6", 1, 0 },
	{ "MORE: high surrogate at the end waits for its pair", { 'a', 0xd83d }, 2, 256,
	  M | UTF16_MORE, "a\xe2\x80\xa6", 1, 0 },
	{ "control characters pass through", { '\n', 0x85 }, 2, 256, M, "\n\xc2\x85", 0, 0 },
};

int main(void)
{
	char out[256];
	struct utf16_info info;
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		uint8_t bytes[32];
		size_t k, wl = 0;

		for (k = 0; k < c->nunits; k++) {
			bytes[2 * k] = (uint8_t)c->in[k];
			bytes[2 * k + 1] = (uint8_t)(c->in[k] >> 8);
		}
		n = utf16__to_utf8(bytes, c->nunits * 2, c->max, c->flags, out, sizeof(out), &info);
		/* the NUL-passing case has an embedded NUL */
		wl = strcmp(c->name, "NUL kept without STOP_NUL") == 0 ? 3 : strlen(c->want);
		ok(n == wl && memcmp(out, c->want, wl) == 0 && out[n] == '\0', "%s: text", c->name);
		if (n != wl || memcmp(out, c->want, wl))
			diag("got '%.*s' (%zu bytes)", (int)n, out, n);
		is_int(info.cut, c->cut, "%s: cut flag", c->name);
		is_int(info.replaced, c->replaced, "%s: replacements", c->name);
	}

	/* odd byte counts: the stray byte is ignored */
	n = utf16__to_utf8("a\0b", 3, 256, M, out, sizeof(out), &info);
	is_str(out, "a", "odd byte count ignores the last byte");
	is_int(info.units, 1, "odd byte count: one unit");

	/* a small destination: cut, marked, never overflowed */
	{
		uint8_t big[200];
		char small[8];

		for (i = 0; i < 100; i++) {
			big[2 * i] = 0x4f;	/* U+594F: 3 UTF-8 bytes */
			big[2 * i + 1] = 0x59;
		}
		memset(small, 'X', sizeof(small));
		n = utf16__to_utf8(big, sizeof(big), 100, M, small, sizeof(small), &info);
		ok(n < sizeof(small) && small[n] == '\0', "small destination: NUL-terminated in bounds");
		ok(info.cut, "small destination: marked cut");
		is_int(n, 6, "small destination: one character, then the marker");
		ok(memcmp(small + 3, UTF16_CUT_MARK, 3) == 0, "small destination ends with the marker");
		n = utf16__to_utf8(big, sizeof(big), 100, M, small, 2, &info);
		ok(n <= 1 && small[n] == '\0', "tiny destination stays in bounds");
		n = utf16__to_utf8(big, sizeof(big), 100, M, small, 0, &info);
		is_int(n, 0, "zero-sized destination writes nothing");
	}
	ok(utf16__utf8_size(256) >= 256 * 3 + 4, "output size bound covers every input");

	/* every unit value decodes to valid UTF-8 of bounded size */
	{
		uint8_t u[4];
		int bad = 0;
		uint32_t v;

		for (v = 0; v < 0x10000; v++) {
			u[0] = (uint8_t)v;
			u[1] = (uint8_t)(v >> 8);
			u[2] = 0x00;
			u[3] = 0xdc;
			n = utf16__to_utf8(u, 4, 2, 0, out, sizeof(out), &info);
			if (n > 8)
				bad++;
		}
		is_int(bad, 0, "all 65536 leading units decode within bounds");
	}
	return done_testing();
}
