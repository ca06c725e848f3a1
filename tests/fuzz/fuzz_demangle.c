// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the demangler. Symbol names are the application's (its
 * ELF files, debug files and perf maps), so every byte is hostile; names
 * are fed as they come (cut at the first NUL, as a string table does) and
 * with each prefix the demangler knows, so that the fuzzer reaches C++,
 * Rust v0 and D from any input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

static void one(const char *prefix, const uint8_t *data, size_t size)
{
	size_t plen = strlen(prefix);
	char *name = malloc(plen + size + 1), *d;

	if (!name)
		return;
	memcpy(name, prefix, plen);
	memcpy(name + plen, data, size);
	name[plen + size] = '\0';
	d = demangle__name(name);
	if (d && strlen(d) == (size_t)-1)
		abort();	/* never: keeps the result read */
	free(d);
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one("", data, size);
	one("_Z", data, size);
	one("_R", data, size);
	one("_D", data, size);
	return 0;
}
