// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* utf8_cut, the one cut of the names the application chooses (symbols,
 * perf-map lines, DWARF names): whole up to the bound, else cut before a
 * UTF-8 sequence the bound falls inside, with "..." after. */
#include <string.h>

#include "core/util.h"
#include "tap.h"

struct ccase {
	const char *name;
	const char *in;
	size_t max;
	const char *want;
};

static const struct ccase ccases[] = {
	{ "shorter than the bound", "abc", 5, "abc" },
	{ "exactly the bound", "abcde", 5, "abcde" },
	{ "empty", "", 0, "" },
	{ "one byte over", "abcdef", 5, "abcde..." },
	{ "ASCII cut at the bound", "abcdefghij", 3, "abc..." },
	/* "é" is c3 a9: a bound after c3 leaves it out whole */
	{ "inside a 2-byte sequence", "ab\xc3\xa9z", 3, "ab..." },
	{ "after a 2-byte sequence", "ab\xc3\xa9z", 4, "ab\xc3\xa9..." },
	/* "€" is e2 82 ac */
	{ "after the first of 3 bytes", "a\xe2\x82\xac" "b", 2, "a..." },
	{ "after the second of 3 bytes", "a\xe2\x82\xac" "b", 3, "a..." },
	/* U+1F600 is f0 9f 98 80 */
	{ "inside a 4-byte sequence", "\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 7,
	  "\xf0\x9f\x98\x80..." },
	{ "everything inside the first sequence", "\xf0\x9f\x98\x80x", 2, "..." },
	/* the rule looks at the byte after the bound only: stray continuation
	 * bytes are backed over as part of a sequence */
	{ "stray continuation bytes", "\x80\x80\x80\x80", 2, "..." },
	{ "a lead byte at the bound", "ab\xc3\xa9", 2, "ab..." },
	{ "invalid bytes before the bound kept", "\xff\xfe" "abc", 3, "\xff\xfe" "a..." },
};

int main(void)
{
	char buf[UTF8_CUT_ROOM(16)];
	size_t i;

	for (i = 0; i < sizeof(ccases) / sizeof(ccases[0]); i++) {
		const struct ccase *c = &ccases[i];
		const char *got;

		memset(buf, 'Z', sizeof(buf));
		got = utf8_cut(c->in, c->max, buf);
		is_str(got, c->want, "%s", c->name);
		if (strlen(c->in) <= c->max)
			ok(got == c->in, "%s: the string itself, nothing copied", c->name);
		else
			ok(got == buf, "%s: in the caller's buffer", c->name);
	}
	is_str(utf8_cut("0123456789abcdefXYZ", 16, buf), "0123456789abcdef...",
	       "the longest cut: the bound's bytes and the dots");
	ok(strlen(buf) + 1 <= UTF8_CUT_ROOM(16), "UTF8_CUT_ROOM holds it with its NUL");
	return done_testing();
}
