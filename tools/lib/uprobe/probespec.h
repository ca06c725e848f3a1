/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Probe specs for sidescope uprobe, in the spirit of bcc's trace:
 *
 *   p:BINARY:SYMBOL[+OFFSET] [(FILTER)] ["FORMAT"[, ARG...]]
 *   r:BINARY:SYMBOL ...            (on return; retval available)
 *   p:BINARY:0xFILEOFFSET ...      (raw file offset)
 *
 * ARG and FILTER operands: arg1..arg6, reg(NAME) (x86-64: ax bx cx dx si
 * di bp sp r8..r15 ip, or rax...), retval, integer literals, + and -
 * with constants, *(TYPE*)(EXPR) with TYPE u8..u64/s8..s64; filters add
 * == != < <= > >= && || ! and parentheses. String arguments: str(E[, MAX]),
 * str16(E[, MAX]) (NUL-terminated UTF-16LE), str16(E, LEN) with LEN not a
 * constant or str16n(E, LEN) (LEN code units), dotnet_string(E[, MAX]),
 * gostr(PTR, LEN[, MAX]) (LEN bytes) and gostr(HDR) (a Go string header:
 * pointer at HDR, length at HDR+8).
 * The parser compiles a spec straight into the BPF fetch recipe. */
#ifndef SIDESCOPE_PROBESPEC_H
#define SIDESCOPE_PROBESPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "core/err.h"
#include "uprobe.h"

#define PS_MAX_ARGS	6
#define PS_MAX_PIECES	(2 * PS_MAX_ARGS + 1)

/* One piece of the format: literal text, or a conversion of one argument. */
struct ps_piece {
	char *lit;		/* literal text (escapes resolved), or NULL */
	char conv;		/* d i u x X o p c s */
	char lmod;		/* 0, 'h' (hh: 'H'), 'l' (ll too), 'z' */
	char cfmt[24];		/* printf directive for numbers, e.g. "%-8lld" */
	int width;		/* for %s: minimum width (negative: left-aligned) */
	int arg;		/* argument index for conversions */
};

struct ps_arg {
	enum up_kind kind;
	char *text;		/* as written, for JSON and messages */
	int max_units;		/* explicit MAX, 0: --max-str */
};

struct probe_spec {
	char *text;		/* the spec as given */
	bool is_ret;
	char *binary;		/* as written */
	char *symbol;		/* NULL for a raw file offset */
	uint64_t offset;	/* +OFFSET, or the raw file offset */
	char *label;		/* short name for output: SYMBOL[+OFF] or 0xOFF */
	int nargs;
	struct ps_arg args[PS_MAX_ARGS];
	int npieces;
	struct ps_piece pieces[PS_MAX_PIECES];
	bool has_format;
	bool has_filter;
	char *filter_text;
	struct ps_arg by;	/* --by EXPR (text NULL: none) */
	struct ps_arg hist;	/* --hist EXPR */
	/* slots [0, nargs) are the arguments; filter operands follow */
	struct up_recipe recipe;
};

/* Parse TEXT. Return a new spec (caller frees with probespec__free), or NULL
 * with errno = EINVAL and ERR (may be NULL) saying where (col, 1-based) and
 * why, or errno = ENOMEM. */
struct probe_spec *probespec__parse(const char *text, struct err *err);
void probespec__free(struct probe_spec *ps);

/* Fill in the string limits: every string argument without an explicit MAX
 * gets max_units. Return 0, or -E2BIG when the strings of one event would
 * not fit the event's data area (message in ERR, col 1). */
int probespec__finish(struct probe_spec *ps, unsigned int max_units, struct err *err);

/* What a value added after parsing is for. */
enum ps_role {
	PS_ROLE_BY,		/* hits counted per distinct value (--by) */
	PS_ROLE_HIST,		/* a log2 histogram of the value (--hist) */
};

/* Compile TEXT, an ARG (an integer expression or a string function), in
 * the context of PS (retval only in r: probes) into one more slot, for
 * ROLE. A --by string keeps its first UP_BY_BYTES bytes; a histogram needs
 * an integer. Return 0, or a negative errno with ERR (col in TEXT). */
int probespec__add_value(struct probe_spec *ps, enum ps_role role, const char *text,
			 struct err *err);

/* Whether a name is a library short name ("c", "ssl") rather than a path. */
bool probespec__is_short_name(const char *binary);

/* Print the error, the spec, and a caret under the failing column. */
void probespec__print_error(const char *text, const struct err *err);

/* TEXT parsed and finished for strings of MAX_UNITS, as a command takes
 * it: 0 with the spec in *OUT; 2 when it is no probe (said, with the
 * column), with *OUT the spec when only finishing it failed (the caller
 * frees it), else NULL; 1 when memory ran out (said). */
int probespec__parse_say(const char *text, unsigned int max_units, struct probe_spec **out);

#endif
