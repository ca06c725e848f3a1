/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Symbol names as a person reads them: C++ (Itanium ABI), Rust (legacy and
 * v0) and D, all through libiberty's demangler (the one binutils, gdb and
 * perf use), linked statically. The names are the application's: bounded in
 * length before the demangler sees them, and fuzzed (tests/fuzz/
 * fuzz_demangle.c). */
#ifndef SIDESCOPE_DEMANGLE_H
#define SIDESCOPE_DEMANGLE_H

#include <stdbool.h>

/* Longer names are left as they are without being read through (libiberty
 * itself refuses those past about 1 KB). */
#define DEMANGLE_MAX 4096

/* Whether NAME starts the way a name of one of those languages does (cheap:
 * no demangling). */
bool demangle__maybe(const char *name);

/* NAME demangled into a malloc'd string (the caller frees it), or NULL
 * when it is not such a name, is malformed or too long, or memory ran out.
 * C++ keeps its parameter list ("ns::f(int) const"); Rust drops the hash
 * ("crate::module::function"), as perf shows them. A symbol version after
 * '@' ("_ZN...@@GLIBCXX_3.4") is kept after the demangled name. */
char *demangle__name(const char *name);

#endif
