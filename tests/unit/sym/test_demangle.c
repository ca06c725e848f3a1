// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* demangle__name over a table of names as compilers write them: C++, Rust's
 * legacy and v0 manglings (taken from a rustc 1.95 binary), D, versioned
 * .symtab names, C names that look close, and malformed or oversized
 * input, which must come back as NULL (the name is then shown as is). */
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "tap.h"

static const struct {
	const char *in, *want;	/* want NULL: left as it is */
} cases[] = {
	/* C++: parameters and qualifiers kept, as perf shows them */
	{ "_Z1fv", "f()" },
	{ "_ZNKSt5ctypeIcE8do_widenEc", "std::ctype<char>::do_widen(char) const" },
	{ "_ZNSt9exceptionD1Ev@@GLIBCXX_3.4", "std::exception::~exception()@@GLIBCXX_3.4" },
	/* Rust, legacy: the hash dropped, escapes decoded */
	{ "_ZN3hot4work4work17hd36c3e95ac8e1ac6E", "hot::work::work" },
	{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h8c507c98f25de309E",
	  "std::rt::lang_start::{{closure}}" },
	/* Rust, v0: crate disambiguators dropped, generics shown */
	{ "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal" },
	{ "_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
	  "<str>::trim_start_matches::<&str>" },
	{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
	/* D */
	{ "_D3std5stdio7writelnFAyaZv", "std.stdio.writeln(immutable(char)[])" },
	{ "_D3foo3barFZv", "foo.bar()" },
	/* C names, some close to a mangling */
	{ "main", NULL },
	{ "_DYNAMIC", NULL },
	{ "_start", NULL },
	{ "", NULL },
	{ "_", NULL },
	/* malformed */
	{ "_Z", NULL },
	{ "_R", NULL },
	{ "_D1", NULL },
	{ "_Zgarbage!", NULL },
	{ "_RNvCs1234_7mycrate30foo", NULL },
	{ "@@GLIBC_2.34", NULL },
};

int main(void)
{
	size_t i;
	char *big;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = demangle__name(cases[i].in);

		if (cases[i].want)
			is_str(d, cases[i].want, "%s", cases[i].in);
		else
			ok(d == NULL, "'%s' is left as it is (got %s)", cases[i].in, d ? d : "NULL");
		free(d);
	}

	ok(demangle__maybe("_ZN1a1bE") && demangle__maybe("_RNv") && demangle__maybe("_D3foo"),
	   "C++, Rust v0 and D prefixes are recognised");
	ok(!demangle__maybe("_DYNAMIC") && !demangle__maybe("main") && !demangle__maybe("_"),
	   "C names are not");

	/* a long valid name is demangled; one past the cap is not */
	big = malloc(DEMANGLE_MAX + 64);	/* "_Z", the length, the name, "v" */
	if (!big)
		return 1;
	{
		/* _Z<len><identifier>v: one long function name, "xx...x()" */
		size_t id = 1000, n;
		char *d;

		n = (size_t)sprintf(big, "_Z%zu", id);
		memset(big + n, 'x', id);
		n += id;
		big[n++] = 'v';
		big[n] = '\0';
		d = demangle__name(big);
		ok(d && strlen(d) == id + 2 && strcmp(d + id, "()") == 0,
		   "a name of %zu bytes is demangled", n);
		free(d);
		id = DEMANGLE_MAX;
		n = (size_t)sprintf(big, "_Z%zu", id);
		memset(big + n, 'x', id);
		n += id;
		big[n++] = 'v';
		big[n] = '\0';
		ok(n > DEMANGLE_MAX && demangle__name(big) == NULL,
		   "a name of %zu bytes is left as it is", n);
	}
	free(big);
	return done_testing();
}
