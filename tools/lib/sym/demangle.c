// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One demangler for every mangling sidescope reads, libiberty's
 * cplus_demangle: GNU v3 (C++, and Rust's legacy names, which it tells
 * apart by their trailing hash), Rust v0 and D. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "sym/demangle.h"

bool demangle__maybe(const char *name)
{
	if (name[0] != '_')
		return false;
	/* _Z: C++ and legacy Rust; _R: Rust v0; _D and a digit: D
	 * (_DYNAMIC and other C names that start with _D are not) */
	return name[1] == 'Z' || name[1] == 'R' || (name[1] == 'D' && isdigit((unsigned char)name[2]));
}

/* The demangler's options for NAME's mangling (checked by demangle__maybe). */
static int style_of(const char *name)
{
	/* parameters and cv-qualifiers, as perf shows C++ functions; no
	 * DMGL_VERBOSE, which would keep Rust's hashes and disambiguators.
	 * libiberty's recursion limit stays on: without it a Rust v0 name of
	 * 48 bytes whose back-references nest overflowed the stack (found by
	 * fuzz_demangle); with it, names past about 1 KB are left mangled, as
	 * libstdc++'s __cxa_demangle and perf leave them. */
	int opts = DMGL_PARAMS | DMGL_ANSI;

	if (name[1] == 'D')
		return opts | DMGL_DLANG;
	if (name[1] == 'R')
		return opts | DMGL_RUST;
	/* _Z: Rust's legacy names first (they are valid C++ names too), then
	 * C++, as the auto style does */
	return opts | DMGL_AUTO;
}

char *demangle__name(const char *name)
{
	size_t len = strnlen(name, DEMANGLE_MAX + 1);
	const char *at;
	char *d, *head, *out;

	if (len > DEMANGLE_MAX || !demangle__maybe(name))
		return NULL;
	at = memchr(name, '@', len);
	if (!at)
		return cplus_demangle(name, style_of(name));
	/* a versioned name from a .symtab: the name before the version */
	head = strndup(name, (size_t)(at - name));
	if (!head)
		return NULL;
	d = demangle__maybe(head) ? cplus_demangle(head, style_of(head)) : NULL;
	free(head);
	if (!d)
		return NULL;
	out = malloc(strlen(d) + strlen(at) + 1);
	if (out) {
		strcpy(out, d);
		strcat(out, at);
	}
	free(d);
	return out;
}
