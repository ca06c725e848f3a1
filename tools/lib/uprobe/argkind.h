/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The argument kinds of probe specs, one table for the parser
 * (probespec.c), the BPF recipe (bpf/uprobe.bpf.c through enum up_kind) and
 * the formatter (upfmt.c). The rows are UP_ARG_KINDS in bpf/uprobe.h: a new
 * kind is one row there, its fetch in bpf/uprobe.bpf.c's fetch_string(),
 * and its decoding here when it is neither bytes nor UTF-16. */
#ifndef SIDESCOPE_ARGKIND_H
#define SIDESCOPE_ARGKIND_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>
#include "uprobe.h"

/* What the optional second argument of KIND(E, SECOND) is. */
enum argkind_second {
	AK_NONE,		/* no call syntax (INT) */
	AK_MAX,			/* MAX: a constant limit in units */
	AK_LEN,			/* LEN: an expression, required */
	AK_MAX_OR_LEN,		/* a constant is MAX; a value makes it STR16N */
	AK_GO,			/* (HDR) a string header, or (PTR, LEN[, MAX]) */
};

/* Flags of a kind. */
#define AK_CALL		0x1	/* written NAME(E[, SECOND]) in a spec */
#define AK_UTF16	0x2	/* UTF-16LE units, decoded to UTF-8 */
#define AK_NUL		0x4	/* stops at a NUL unit */
#define AK_COUNTED	0x8	/* carries its length (up_val.count, JSON "length") */

struct argkind {
	const char *name;	/* the spec's function, the JSON "type" */
	unsigned int unit;	/* bytes per unit; 0: not a string */
	enum argkind_second second;
	unsigned int flags;
};

/* The row of KIND; an unknown kind gets the INT row. */
const struct argkind *argkind__get(enum up_kind kind);

/* The kind whose AK_CALL name is the N bytes at NAME, or -1. */
int argkind__by_name(const char *name, size_t n);

/* Whether KIND fetches a string (every kind but INT). */
bool argkind__is_string(enum up_kind kind);

/* Bytes of the event's data area one argument of KIND takes with a limit
 * of UNITS: the units and one more (the cut marker), in bytes. */
unsigned int argkind__data_bytes(enum up_kind kind, unsigned int units);

#endif
