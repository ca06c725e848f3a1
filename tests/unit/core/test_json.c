// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The JSON writer: commas at every level, keys, nesting, numbers written
 * by the caller, strings escaped; the output is compact and parses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "tap.h"

/* What F wrote (a memstream), NUL-terminated; freed by the caller. */
static char *drain(FILE *f, char **buf)
{
	fclose(f);
	return *buf;
}

int main(void)
{
	struct json j;
	char *buf = NULL, *out;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	json__init(&j, f);
	json__obj(&j);
	json__key(&j, "pid");
	json__u64(&j, 7);
	json__key(&j, "names");
	json__arr(&j);
	json__str(&j, "a");
	json__str(&j, "b\"c");
	json__end(&j);
	json__key(&j, "delta");
	json__i64(&j, -3);
	json__key(&j, "ok");
	json__bool(&j, true);
	json__key(&j, "none");
	json__null(&j);
	json__key(&j, "rate");
	json__num(&j, "%.3f", 1.5);
	json__key(&j, "empty");
	json__obj(&j);
	json__end(&j);
	json__key(&j, "nested");
	json__arr(&j);
	json__arr(&j);
	json__u64(&j, 1);
	json__end(&j);
	json__arr(&j);
	json__end(&j);
	json__end(&j);
	json__end(&j);
	out = drain(f, &buf);
	is_str(out, "{\"pid\":7,\"names\":[\"a\",\"b\\\"c\"],\"delta\":-3,\"ok\":true,"
		    "\"none\":null,\"rate\":1.500,\"empty\":{},\"nested\":[[1],[]]}",
	       "an object with every kind of value, commas where they belong");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	json__init(&j, f);
	json__arr(&j);
	for (int i = 0; i < 3; i++) {
		json__obj(&j);
		json__key(&j, "i");
		json__u64(&j, (unsigned)i);
		json__end(&j);
	}
	json__end(&j);
	json__end(&j);	/* one too many: ignored */
	out = drain(f, &buf);
	is_str(out, "[{\"i\":0},{\"i\":1},{\"i\":2}]", "an array of objects; a stray end writes nothing");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	json__init(&j, f);
	json__obj(&j);
	json__key(&j, "k\n\x1b");
	json__strn(&j, "x\0\xff\xc2\x9b", 5);
	json__end(&j);
	out = drain(f, &buf);
	is_str(out, "{\"k\\n\\u001b\":\"x\\u0000\\ufffd\\u009b\"}",
	       "keys and values escaped: controls, NUL, invalid UTF-8, C1");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	json__init(&j, f);
	for (int i = 0; i < JSON_MAX_DEPTH + 4; i++)
		json__arr(&j);
	for (int i = 0; i < JSON_MAX_DEPTH + 4; i++)
		json__end(&j);
	out = drain(f, &buf);
	ok(strlen(out) == 2 * (JSON_MAX_DEPTH + 4) && out[0] == '[' &&
	   out[strlen(out) - 1] == ']', "nesting past JSON_MAX_DEPTH still balanced");
	free(buf);
	return done_testing();
}
