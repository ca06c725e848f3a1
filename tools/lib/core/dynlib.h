/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Libraries loaded when a command first needs them, not at every start.
 * Linked, Capstone (uprobe's disassembler), liblttng-ctl (timeline
 * --lttng, with libxml2 and ICU behind it) and libbabeltrace2 cost every
 * run of every command about 10 ms of CPU in the dynamic loader, a
 * quarter of a short CPU profile's.
 *
 * A user declares the functions it calls, once, in the file that calls
 * them, and names each call through the table:
 *
 *   #define CS_FUNCS(X) X(cs_open) X(cs_close)
 *   DYNLIB_DEFINE(cs, "libcapstone.so.4", CS_FUNCS);
 *   #define cs_open (cs.cs_open)            (after the library's header)
 *   ...
 *   if (dynlib__load(&cs_lib, e)) ...       before the first call
 *
 * The table's pointers have the functions' own types (from the library's
 * header), so every call is still checked by the compiler. Not for use
 * from several threads at once (sidescope has one). */
#ifndef SIDESCOPE_DYNLIB_H
#define SIDESCOPE_DYNLIB_H

#include <stddef.h>

#include "core/err.h"

struct dynlib {
	const char *soname;
	const char *const *names;	/* of the functions, in table order */
	size_t n;
	void **table;			/* N function pointers */
	int state;			/* 0 not tried, 1 loaded, -errno failed */
	char why[256];			/* the failure, once tried */
};

#define DYNLIB_FIELD_(f) __typeof__(f) *f;
#define DYNLIB_NAME_(f) #f,

/* NAME: a static table of FUNCS's pointers; NAME##_lib: its loader */
#define DYNLIB_DEFINE(NAME, SONAME, FUNCS)						\
	static struct { FUNCS(DYNLIB_FIELD_) } NAME;					\
	static const char *const NAME##_names_[] = { FUNCS(DYNLIB_NAME_) };		\
	_Static_assert(sizeof(NAME) == sizeof(NAME##_names_) / sizeof(char *) *	\
			       sizeof(void *), "a table of function pointers");	\
	static struct dynlib NAME##_lib = { SONAME, NAME##_names_,			\
					    sizeof(NAME##_names_) / sizeof(char *),	\
					    (void **)&NAME, 0, "" }

/* One table for several files: DYNLIB_DECLARE in a header (the table NAME
 * and its loader NAME##_lib, extern), DYNLIB_DEFINE_SHARED in one file.
 * The header's defines naming calls through the table come after it. */
#define DYNLIB_DECLARE(NAME, FUNCS)							\
	struct NAME##_table { FUNCS(DYNLIB_FIELD_) };					\
	extern struct NAME##_table NAME;						\
	extern struct dynlib NAME##_lib

#define DYNLIB_DEFINE_SHARED(NAME, SONAME, FUNCS)					\
	struct NAME##_table NAME;							\
	static const char *const NAME##_names_[] = { FUNCS(DYNLIB_NAME_) };		\
	_Static_assert(sizeof(NAME) == sizeof(NAME##_names_) / sizeof(char *) *	\
			       sizeof(void *), "a table of function pointers");	\
	struct dynlib NAME##_lib = { SONAME, NAME##_names_,				\
				     sizeof(NAME##_names_) / sizeof(char *),		\
				     (void **)&NAME, 0, "" }

/* Load LIB and every function of its table, the first time; later calls
 * give the first outcome again. 0, or -ELIBACC with why in E (also in
 * LIB->why): the library missing, or a function it lacks. */
int dynlib__load(struct dynlib *lib, struct err *e);

#endif
