// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Recursive-descent parser for probe specs; see probespec.h for the
 * grammar. Expressions compile to struct up_expr (a base register, a chain
 * of dereferences, a constant), filters to a postfix program over slots. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "uprobe/argkind.h"
#include "uprobe/probespec.h"

struct parser {
	const char *text;
	const char *p;
	struct err *err;
	struct probe_spec *ps;
	bool failed;
};

static void fail_at(struct parser *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct parser *ps, const char *at, const char *fmt, ...)
{
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	ps->err->col = (int)(at - ps->text) + 1;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
	va_end(ap);
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static bool eat(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(ps);
	if (strncmp(ps->p, tok, n) != 0)
		return false;
	ps->p += n;
	return true;
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A keyword: the word and not a longer identifier. */
static bool eat_word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	skip_ws(ps);
	if (strncmp(ps->p, w, n) != 0 || is_ident(ps->p[n]))
		return false;
	ps->p += n;
	return true;
}

static bool parse_number(struct parser *ps, int64_t *out)
{
	const char *start = ps->p;
	unsigned long long v;
	char *end;

	skip_ws(ps);
	start = ps->p;
	if (!isdigit((unsigned char)*ps->p))
		return false;
	errno = 0;
	v = strtoull(ps->p, &end, 0);
	if (errno || is_ident(*end)) {
		fail_at(ps, start, "invalid number");
		return false;
	}
	ps->p = end;
	*out = (int64_t)v;
	return true;
}

static bool expr_is_const(const struct up_expr *e)
{
	return e->base == UP_BASE_CONST && e->nsteps == 0;
}

static bool parse_expr(struct parser *ps, struct up_expr *e);

static bool parse_type(struct parser *ps, __u8 *size, __u8 *sign)
{
	static const struct { const char *name; __u8 size, sign; } types[] = {
		{ "u8", 1, 0 }, { "u16", 2, 0 }, { "u32", 4, 0 }, { "u64", 8, 0 },
		{ "s8", 1, 1 }, { "s16", 2, 1 }, { "s32", 4, 1 }, { "s64", 8, 1 },
	};
	size_t i;

	skip_ws(ps);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (eat_word(ps, types[i].name)) {
			*size = types[i].size;
			*sign = types[i].sign;
			return true;
		}
	}
	fail_at(ps, ps->p, "expected a type: u8 u16 u32 u64 s8 s16 s32 s64");
	return false;
}

/* reg(NAME): the x86-64 registers by bpftrace's names, the r-prefixed
 * ones accepted too ("rax", "rip"). */
static const struct { const char *name; __u8 base; } regs[] = {
	{ "ax", UP_BASE_AX }, { "bx", UP_BASE_BX }, { "cx", UP_BASE_CX },
	{ "dx", UP_BASE_DX }, { "si", UP_BASE_SI }, { "di", UP_BASE_DI },
	{ "bp", UP_BASE_BP }, { "sp", UP_BASE_SP }, { "r8", UP_BASE_R8 },
	{ "r9", UP_BASE_R9 }, { "r10", UP_BASE_R10 }, { "r11", UP_BASE_R11 },
	{ "r12", UP_BASE_R12 }, { "r13", UP_BASE_R13 }, { "r14", UP_BASE_R14 },
	{ "r15", UP_BASE_R15 }, { "ip", UP_BASE_IP },
};

_Static_assert(UP_NBASES <= UP_MAX_BASES, "the BPF program reads UP_MAX_BASES registers");

static int reg_by_name(const char *name, size_t n)
{
	size_t i;

	/* "rax" is "ax", but "r8" is itself */
	if (n == 3 && name[0] == 'r' && !isdigit((unsigned char)name[1])) {
		name++;
		n--;
	}
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (strlen(regs[i].name) == n && strncmp(regs[i].name, name, n) == 0)
			return regs[i].base;
	return -1;
}

/* The rest of reg(NAME) after "reg". */
static bool parse_reg(struct parser *ps, struct up_expr *e)
{
	const char *name, *end;
	int base;

	if (!eat(ps, "(")) {
		fail_at(ps, ps->p, "expected '(' after 'reg': write reg(ax)");
		return false;
	}
	skip_ws(ps);
	name = ps->p;
	for (end = name; is_ident(*end); end++)
		;
	base = reg_by_name(name, (size_t)(end - name));
	if (base < 0) {
		fail_at(ps, name, end > name ?
			"unknown register '%.*s' (expected ax bx cx dx si di bp sp r8..r15 ip)" :
			"expected a register name%.*s: ax bx cx dx si di bp sp r8..r15 ip",
			(int)(end - name), name);
		return false;
	}
	ps->p = end;
	if (!eat(ps, ")")) {
		fail_at(ps, ps->p, "expected ')' after the register name");
		return false;
	}
	e->base = (__u8)base;
	return true;
}

/* primary: NUMBER | argN | reg(NAME) | retval | ( expr ) | *(TYPE*) primary */
static bool parse_primary(struct parser *ps, struct up_expr *e)
{
	const char *at;
	int64_t v;

	skip_ws(ps);
	at = ps->p;
	memset(e, 0, sizeof(*e));
	if (parse_number(ps, &v)) {
		e->final_add = v;
		return true;
	}
	if (ps->failed)
		return false;
	if (eat(ps, "-")) {
		if (!parse_primary(ps, e))
			return false;
		if (!expr_is_const(e)) {
			fail_at(ps, at, "only constants can be negated");
			return false;
		}
		e->final_add = -e->final_add;
		return true;
	}
	if (eat_word(ps, "retval")) {
		if (!ps->ps->is_ret) {
			fail_at(ps, at, "retval is only available in r: probes");
			return false;
		}
		e->base = UP_BASE_RET;
		return true;
	}
	if (eat_word(ps, "reg"))
		return parse_reg(ps, e);
	if (strncmp(ps->p, "arg", 3) == 0 && ps->p[3] >= '1' && ps->p[3] <= '6' &&
	    !is_ident(ps->p[4])) {
		e->base = UP_BASE_ARG1 + (ps->p[3] - '1');
		ps->p += 4;
		return true;
	}
	if (eat(ps, "(")) {
		if (!parse_expr(ps, e))
			return false;
		if (!eat(ps, ")")) {
			fail_at(ps, ps->p, "expected ')'");
			return false;
		}
		return true;
	}
	if (eat(ps, "*")) {
		__u8 size, sign;
		struct up_step *st;

		if (!eat(ps, "(")) {
			fail_at(ps, ps->p, "expected '(' after '*': write *(TYPE*)(EXPR)");
			return false;
		}
		if (!parse_type(ps, &size, &sign))
			return false;
		if (!eat(ps, "*") || !eat(ps, ")")) {
			fail_at(ps, ps->p, "expected '*)' after the type");
			return false;
		}
		if (!parse_primary(ps, e))
			return false;
		if (e->nsteps >= UP_MAX_STEPS) {
			fail_at(ps, at, "too many dereferences (at most %d)", UP_MAX_STEPS);
			return false;
		}
		st = &e->steps[e->nsteps++];
		st->add = e->final_add;
		st->size = size;
		st->sign = sign;
		e->final_add = 0;
		return true;
	}
	if (is_ident(*ps->p)) {
		const char *end = ps->p;

		while (is_ident(*end))
			end++;
		fail_at(ps, at, "unknown name '%.*s' (expected arg1..arg6, reg(NAME), retval, a number or *(TYPE*))",
			(int)(end - ps->p), ps->p);
		return false;
	}
	fail_at(ps, at, *at ? "expected an expression" : "expected an expression, got the end");
	return false;
}

/* expr: primary (('+'|'-') primary)*, at most one term not constant and
 * never subtracted */
static bool parse_expr(struct parser *ps, struct up_expr *e)
{
	if (!parse_primary(ps, e))
		return false;
	for (;;) {
		struct up_expr r;
		const char *at;
		bool minus;

		skip_ws(ps);
		if (*ps->p != '+' && *ps->p != '-')
			return true;
		minus = *ps->p == '-';
		ps->p++;
		skip_ws(ps);
		at = ps->p;
		if (!parse_primary(ps, &r))
			return false;
		if (expr_is_const(&r)) {
			e->final_add += minus ? -r.final_add : r.final_add;
		} else if (expr_is_const(e) && !minus) {
			r.final_add += e->final_add;
			*e = r;
		} else {
			fail_at(ps, at, "only constants can be added to or subtracted from a value");
			return false;
		}
	}
}

static int add_slot(struct parser *ps, const char *at, enum up_kind kind)
{
	struct up_recipe *r = &ps->ps->recipe;

	if (r->nslots >= UP_MAX_SLOTS) {
		fail_at(ps, at, "too many values to fetch (at most %d, filter operands included)",
			UP_MAX_SLOTS);
		return -1;
	}
	memset(&r->slots[r->nslots], 0, sizeof(r->slots[0]));
	r->slots[r->nslots].kind = kind;
	return (int)r->nslots++;
}

static bool emit(struct parser *ps, const char *at, __u8 op, __u8 slot, __s64 imm)
{
	struct up_recipe *r = &ps->ps->recipe;

	if (r->nfops >= UP_MAX_FOPS) {
		fail_at(ps, at, "filter too long (at most %d operations)", UP_MAX_FOPS);
		return false;
	}
	r->fops[r->nfops].op = op;
	r->fops[r->nfops].slot = slot;
	r->fops[r->nfops].imm = imm;
	r->nfops++;
	return true;
}

static bool emit_operand(struct parser *ps, const char *at, const struct up_expr *e)
{
	int slot;

	if (expr_is_const(e))
		return emit(ps, at, UP_FOP_IMM, 0, e->final_add);
	slot = add_slot(ps, at, UP_KIND_INT);
	if (slot < 0)
		return false;
	ps->ps->recipe.slots[slot].val = *e;
	return emit(ps, at, UP_FOP_SLOT, (__u8)slot, 0);
}

static bool parse_or(struct parser *ps);

/* cmp: expr [relop expr]; a bare expr means expr != 0 */
static bool parse_cmp(struct parser *ps)
{
	static const struct { const char *tok; __u8 op; } ops[] = {
		{ "==", UP_FOP_EQ }, { "!=", UP_FOP_NE }, { "<=", UP_FOP_LE },
		{ ">=", UP_FOP_GE }, { "<", UP_FOP_LT }, { ">", UP_FOP_GT },
	};
	struct up_expr a, b;
	const char *at;
	size_t i;

	skip_ws(ps);
	at = ps->p;
	if (!parse_expr(ps, &a))
		return false;
	if (!emit_operand(ps, at, &a))
		return false;
	skip_ws(ps);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *opat = ps->p;

		if (!eat(ps, ops[i].tok))
			continue;
		skip_ws(ps);
		at = ps->p;
		if (!parse_expr(ps, &b) || !emit_operand(ps, at, &b))
			return false;
		return emit(ps, opat, ops[i].op, 0, 0);
	}
	if (*ps->p == '=' ) {
		fail_at(ps, ps->p, "use '==' to compare");
		return false;
	}
	return emit(ps, at, UP_FOP_IMM, 0, 0) && emit(ps, at, UP_FOP_NE, 0, 0);
}

/* not: '!' not | '(' or ')' | cmp. A parenthesis may open a condition or an
 * arithmetic expression: try the condition first, fall back to cmp. */
static bool parse_not(struct parser *ps)
{
	const char *at;

	skip_ws(ps);
	at = ps->p;
	if (*ps->p == '!' && ps->p[1] != '=') {
		ps->p++;
		if (!parse_not(ps))
			return false;
		return emit(ps, at, UP_FOP_NOT, 0, 0);
	}
	if (*ps->p == '(') {
		struct up_recipe saved = ps->ps->recipe;
		struct err saved_err = *ps->err;
		const char *after;

		ps->p++;
		if (parse_or(ps) && eat(ps, ")")) {
			skip_ws(ps);
			after = ps->p;
			if (!strchr("+-<>=!", *after) || (after[0] == '!' && after[1] != '='))
				return true;
		}
		/* not a condition: an arithmetic operand in parentheses */
		ps->ps->recipe = saved;
		*ps->err = saved_err;
		ps->failed = false;
		ps->p = at;
	}
	return parse_cmp(ps);
}

static bool parse_and(struct parser *ps)
{
	if (!parse_not(ps))
		return false;
	for (;;) {
		const char *at;

		skip_ws(ps);
		at = ps->p;
		if (!eat(ps, "&&"))
			return true;
		if (!parse_not(ps) || !emit(ps, at, UP_FOP_AND, 0, 0))
			return false;
	}
}

static bool parse_or(struct parser *ps)
{
	if (!parse_and(ps))
		return false;
	for (;;) {
		const char *at;

		skip_ws(ps);
		at = ps->p;
		if (!eat(ps, "||"))
			return true;
		if (!parse_and(ps) || !emit(ps, at, UP_FOP_OR, 0, 0))
			return false;
	}
}

static bool parse_max(struct parser *ps, int *out)
{
	const char *at;
	struct up_expr e;

	skip_ws(ps);
	at = ps->p;
	if (!parse_expr(ps, &e))
		return false;
	if (!expr_is_const(&e) || e.final_add < 0 || e.final_add > UP_MAX_UNITS) {
		fail_at(ps, at, "MAX must be a number from 0 to %d", UP_MAX_UNITS);
		return false;
	}
	*out = (int)e.final_add;
	return true;
}

/* The optional second argument of a string kind, after the ','. */
static bool parse_second(struct parser *ps, const struct argkind *ak, struct ps_arg *a,
			 struct up_slot *sl)
{
	const char *lat;
	struct up_expr l;

	skip_ws(ps);
	lat = ps->p;
	switch (ak->second) {
	case AK_LEN:
		return parse_expr(ps, &sl->len);
	case AK_MAX_OR_LEN:
		if (!parse_expr(ps, &l))
			return false;
		if (expr_is_const(&l)) {
			ps->p = lat;
			return parse_max(ps, &a->max_units);
		}
		/* str16(E, LEN) with LEN a value: counted */
		a->kind = UP_KIND_STR16N;
		sl->len = l;
		return true;
	case AK_GO:
		/* gostr(PTR, LEN[, MAX]) */
		if (!parse_expr(ps, &sl->len))
			return false;
		return !eat(ps, ",") || parse_max(ps, &a->max_units);
	default:
		return parse_max(ps, &a->max_units);
	}
}

/* gostr(HDR): a Go string header in memory, the pointer at HDR and the
 * length (int) at HDR+8: the value and the length are dereferences of HDR. */
static bool go_header(struct parser *ps, const char *at, struct up_slot *sl)
{
	struct up_expr *v = &sl->val, *l = &sl->len;

	if (v->nsteps >= UP_MAX_STEPS) {
		fail_at(ps, at, "too many dereferences (at most %d, gostr(HDR) takes one)",
			UP_MAX_STEPS);
		return false;
	}
	*l = *v;
	l->steps[l->nsteps].add = l->final_add + 8;
	l->steps[l->nsteps].size = 8;
	l->steps[l->nsteps].sign = 1;
	l->nsteps++;
	l->final_add = 0;
	v->steps[v->nsteps].add = v->final_add;
	v->steps[v->nsteps].size = 8;
	v->nsteps++;
	v->final_add = 0;
	return true;
}

/* KIND(E[, SECOND]) of a string kind, its name already read. */
static bool parse_string_arg(struct parser *ps, const char *name, size_t n, struct ps_arg *a,
			     struct up_slot *sl)
{
	const struct argkind *ak = argkind__get(a->kind);
	const char *at;

	if (!eat(ps, "(")) {
		fail_at(ps, ps->p, "expected '(' after '%.*s'", (int)n, name);
		return false;
	}
	skip_ws(ps);
	at = ps->p;
	if (!parse_expr(ps, &sl->val))
		return false;
	if (eat(ps, ",")) {
		if (!parse_second(ps, ak, a, sl))
			return false;
	} else if (ak->second == AK_GO) {
		if (!go_header(ps, at, sl))
			return false;
	} else if (ak->second == AK_LEN) {
		fail_at(ps, ps->p, "%s needs a length: %s(EXPR, LEN)", ak->name, ak->name);
		return false;
	}
	if (!eat(ps, ")")) {
		fail_at(ps, ps->p, "expected ')'");
		return false;
	}
	sl->kind = a->kind;
	return true;
}

/* One value into A and SLOT: a string kind's call (argkind.h) or an
 * integer expression. */
static bool parse_value(struct parser *ps, struct ps_arg *a, int slot)
{
	struct probe_spec *spec = ps->ps;
	const char *at, *end;
	int kind;

	skip_ws(ps);
	at = ps->p;
	for (end = at; is_ident(*end); end++)
		;
	kind = argkind__by_name(at, (size_t)(end - at));
	if (kind >= 0) {
		ps->p = end;
		a->kind = (enum up_kind)kind;
		if (!parse_string_arg(ps, at, (size_t)(end - at), a, &spec->recipe.slots[slot]))
			return false;
	} else {
		a->kind = UP_KIND_INT;
		if (!parse_expr(ps, &spec->recipe.slots[slot].val))
			return false;
	}
	a->text = strndup(at, (size_t)(ps->p - at));
	if (!a->text) {
		fail_at(ps, at, "out of memory");
		return false;
	}
	return true;
}

/* One ARG of the format. */
static bool parse_arg(struct parser *ps)
{
	struct probe_spec *spec = ps->ps;
	int slot;

	skip_ws(ps);
	if (spec->nargs >= PS_MAX_ARGS) {
		fail_at(ps, ps->p, "too many arguments (at most %d)", PS_MAX_ARGS);
		return false;
	}
	slot = add_slot(ps, ps->p, UP_KIND_INT);
	if (slot < 0 || !parse_value(ps, &spec->args[spec->nargs], slot))
		return false;
	spec->nargs++;
	return true;
}

static bool add_lit(struct parser *ps, const char *at, const char *s, size_t n)
{
	struct probe_spec *spec = ps->ps;
	struct ps_piece *pc;

	if (n == 0)
		return true;
	if (spec->npieces >= PS_MAX_PIECES) {
		fail_at(ps, at, "format too long");
		return false;
	}
	pc = &spec->pieces[spec->npieces++];
	pc->lit = strndup(s, n);
	if (!pc->lit) {
		fail_at(ps, at, "out of memory");
		return false;
	}
	return true;
}

/* The character the escape at ps->p (a backslash) of the format stands
 * for into *OUT, ps->p past it: true, or false after saying it is none. */
static bool format_escape(struct parser *ps, char *out)
{
	const char *at = ps->p;
	char e = ps->p[1];

	ps->p += 2;
	switch (e) {
	case 'n': *out = '\n'; return true;
	case 't': *out = '\t'; return true;
	case '\\': *out = '\\'; return true;
	case '"': *out = '"'; return true;
	}
	fail_at(ps, at, "unknown escape in the format (use \\n \\t \\\\ \\\")");
	return false;
}

/* The conversion at ps->p (a '%' not doubled),
 * %[-0 +#]*[width][hh|h|l|ll|z]conv, as a piece after the literal text
 * before it (N bytes at LIT, from LAT in the spec), ps->p past it. */
static bool format_conv(struct parser *ps, const char *lat, const char *lit, size_t n,
			int *nconv)
{
	struct probe_spec *spec = ps->ps;
	const char *at = ps->p, *q = at + 1, *flags = q;
	struct ps_piece *pc;
	char lmod = 0;
	int width = 0;
	size_t fl;

	while (*q && strchr("-0 +#", *q))
		q++;
	fl = (size_t)(q - flags);
	while (isdigit((unsigned char)*q) && width < 1000)
		width = width * 10 + (*q++ - '0');
	if (isdigit((unsigned char)*q)) {
		fail_at(ps, at, "field width too large");
		return false;
	}
	if (q[0] == 'h' && q[1] == 'h')
		lmod = 'H', q += 2;
	else if (q[0] == 'l' && q[1] == 'l')
		lmod = 'l', q += 2;
	else if (*q == 'h' || *q == 'l' || *q == 'z')
		lmod = *q++;
	if (!*q || !strchr("diuxXopcs", *q)) {
		fail_at(ps, at, "unknown conversion (use %%d %%u %%x %%lx %%p %%c %%s %%%%)");
		return false;
	}
	if (!add_lit(ps, lat, lit, n))
		return false;
	if (spec->npieces >= PS_MAX_PIECES) {
		fail_at(ps, at, "format too long");
		return false;
	}
	pc = &spec->pieces[spec->npieces++];
	pc->conv = *q;
	pc->lmod = lmod;
	pc->arg = (*nconv)++;
	pc->width = memchr(flags, '-', fl) ? -width : width;
	if (*q != 's' && *q != 'c') {
		/* the formatter casts as the length asks, then prints 64 bits */
		char w[16] = "";

		if (width)
			snprintf(w, sizeof(w), "%d", width);
		snprintf(pc->cfmt, sizeof(pc->cfmt), "%s%%%.*s%sll%c",
			 *q == 'p' ? "0x" : "", (int)fl, flags, w, *q == 'p' ? 'x' : *q);
	}
	ps->p = q + 1;
	return true;
}

/* FORMAT: between double quotes, with \n \t \\ \" escapes and printf-like
 * conversions. */
static bool parse_format(struct parser *ps, int *nconv)
{
	char lit[1024];
	size_t n = 0;
	const char *lat, *qstart = ps->p;

	*nconv = 0;
	ps->p++;	/* the opening quote */
	lat = ps->p;
	for (;;) {
		char c = *ps->p;

		if (c == '\0') {
			fail_at(ps, qstart, "unterminated format string");
			return false;
		}
		if (n >= sizeof(lit) - 1) {
			fail_at(ps, ps->p, "format too long");
			return false;
		}
		if (c == '"') {
			ps->p++;
			return add_lit(ps, lat, lit, n);
		}
		if (c == '\\') {
			if (!format_escape(ps, &lit[n++]))
				return false;
		} else if (c != '%') {
			lit[n++] = c;
			ps->p++;
		} else if (ps->p[1] == '%') {
			lit[n++] = '%';
			ps->p += 2;
		} else {
			if (!format_conv(ps, lat, lit, n, nconv))
				return false;
			n = 0;
			lat = ps->p;
		}
	}
}

static char *dup_range(const char *a, const char *b)
{
	return strndup(a, (size_t)(b - a));
}

bool probespec__is_short_name(const char *binary)
{
	return binary[0] && !strchr(binary, '/');
}

/* "p:" or "r:", then BINARY up to the next ':'. Return 0, -EINVAL or -ENOMEM. */
static int parse_head(struct parser *P)
{
	struct probe_spec *spec = P->ps;
	const char *bin, *end;

	skip_ws(P);
	if ((P->p[0] != 'p' && P->p[0] != 'r') || P->p[1] != ':') {
		fail_at(P, P->p, "a probe starts with 'p:' (entry) or 'r:' (return)");
		return -EINVAL;
	}
	spec->is_ret = P->p[0] == 'r';
	spec->recipe.is_ret = spec->is_ret;
	bin = P->p + 2;
	end = strchr(bin, ':');
	if (!end || end == bin) {
		fail_at(P, bin, end ? "missing binary before ':'" :
			"expected BINARY:SYMBOL after the probe type");
		return -EINVAL;
	}
	spec->binary = dup_range(bin, end);
	if (!spec->binary)
		return -ENOMEM;
	P->p = end + 1;
	return 0;
}

static void skip_name(struct parser *P)
{
	while (*P->p && *P->p != ' ' && *P->p != '\t' && *P->p != '"' && *P->p != '(')
		P->p++;
}

/* A C++ or .NET name may carry a signature: "(...)" right after the name,
 * with no blank before it and no argN/retval inside, belongs to the symbol;
 * otherwise it is a filter. Return 0 or -ENOMEM. */
static int skip_signature(struct parser *P, const char *sym)
{
	const char *q = P->p;
	int depth = 0;
	char *grp;

	if (*P->p != '(' || P->p == sym)
		return 0;
	for (; *q; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0)
			break;
	}
	if (*q != ')')
		return 0;
	grp = dup_range(P->p, q + 1);
	if (!grp)
		return -ENOMEM;
	if (!strstr(grp, "arg") && !strstr(grp, "retval") && !strstr(grp, "reg(") &&
	    !strpbrk(grp, "<>=!&|"))
		P->p = q + 1;
	free(grp);
	skip_name(P);
	return 0;
}

/* SYMBOL[+OFFSET] or 0xFILEOFFSET, and the label. Return 0, -EINVAL or
 * -ENOMEM. */
static int parse_target(struct parser *P)
{
	struct probe_spec *spec = P->ps;
	const char *sym = P->p, *plus = NULL, *q;
	char *e;

	skip_name(P);
	if (skip_signature(P, sym))
		return -ENOMEM;
	if (P->p == sym) {
		fail_at(P, sym, "missing symbol or 0xOFFSET after the binary");
		return -EINVAL;
	}
	if (sym[0] == '0' && (sym[1] == 'x' || sym[1] == 'X')) {
		errno = 0;
		spec->offset = strtoull(sym, &e, 16);
		if (errno || e != P->p || e == sym + 2) {
			fail_at(P, sym, "invalid file offset (expected 0xHEX)");
			return -EINVAL;
		}
		spec->label = dup_range(sym, P->p);
		return spec->label ? 0 : -ENOMEM;
	}
	for (q = sym; q < P->p; q++)
		if (*q == '+')
			plus = q;
	spec->label = dup_range(sym, P->p);
	if (!spec->label)
		return -ENOMEM;
	if (plus && plus + 1 < P->p && isdigit((unsigned char)plus[1])) {
		errno = 0;
		spec->offset = strtoull(plus + 1, &e, 0);
		if (errno || e != P->p) {
			fail_at(P, plus + 1, "invalid offset after '+'");
			return -EINVAL;
		}
		spec->symbol = dup_range(sym, plus);
	} else {
		spec->symbol = dup_range(sym, P->p);
	}
	return spec->symbol ? 0 : -ENOMEM;
}

/* An optional (FILTER). Return 0, -EINVAL or -ENOMEM. */
static int parse_filter(struct parser *P)
{
	struct probe_spec *spec = P->ps;
	const char *fstart;

	skip_ws(P);
	if (*P->p != '(')
		return 0;
	fstart = P->p;
	P->p++;
	if (!parse_or(P))
		return -EINVAL;
	if (!eat(P, ")")) {
		fail_at(P, P->p, "expected ')' to end the filter");
		return -EINVAL;
	}
	spec->has_filter = true;
	spec->filter_text = dup_range(fstart + 1, P->p - 1);
	if (!spec->filter_text)
		return -ENOMEM;
	skip_ws(P);
	return 0;
}

/* Arguments take slots 0..nargs-1: move the filter's operands (FR, NF
 * slots) after them. Return 0 or -EINVAL. */
static int place_filter_slots(struct parser *P, const struct up_recipe *fr, __u32 nf)
{
	struct up_recipe *r = &P->ps->recipe;
	int i;

	if (r->nslots + nf > UP_MAX_SLOTS) {
		fail_at(P, P->text, "too many values to fetch (at most %d, filter operands included)",
			UP_MAX_SLOTS);
		return -EINVAL;
	}
	for (i = 0; i < (int)nf; i++)
		r->slots[r->nslots + i] = fr->slots[i];
	for (i = 0; i < (int)fr->nfops; i++)
		if (r->fops[i].op == UP_FOP_SLOT)
			r->fops[i].slot += r->nslots;
	r->nslots += nf;
	return 0;
}

/* Every conversion fits its argument: %s a string, the others an integer. */
static int check_conversions(struct parser *P)
{
	struct probe_spec *spec = P->ps;
	int i;

	for (i = 0; i < spec->npieces; i++) {
		struct ps_piece *pc = &spec->pieces[i];

		if (pc->lit)
			continue;
		if ((pc->conv == 's') != argkind__is_string(spec->args[pc->arg].kind)) {
			fail_at(P, P->text, "argument %d (%s) does not fit %%%c: %s", pc->arg + 1,
				spec->args[pc->arg].text, pc->conv,
				pc->conv == 's' ? "%s needs str(), str16(), dotnet_string() or gostr()" :
				"strings print with %s");
			return -EINVAL;
		}
	}
	return 0;
}

/* An optional "FORMAT"[, ARG...] up to the end. Return 0 or -EINVAL. */
static int parse_output(struct parser *P)
{
	struct probe_spec *spec = P->ps;
	struct up_recipe fr = spec->recipe;
	int nconv = 0;

	if (*P->p != '"') {
		if (!*P->p)
			return 0;
		fail_at(P, P->p, *P->p == ',' ? "arguments need a \"FORMAT\" first" :
			"unexpected text (expected (FILTER) or \"FORMAT\")");
		return -EINVAL;
	}
	spec->recipe.nslots = 0;
	spec->has_format = true;
	if (!parse_format(P, &nconv))
		return -EINVAL;
	while (eat(P, ","))
		if (!parse_arg(P))
			return -EINVAL;
	if (P->failed)
		return -EINVAL;
	skip_ws(P);
	if (*P->p) {
		fail_at(P, P->p, "unexpected text after the arguments (missing ','?)");
		return -EINVAL;
	}
	if (nconv != spec->nargs) {
		fail_at(P, P->p, "the format has %d conversion%s but %d argument%s follow%s",
			nconv, nconv == 1 ? "" : "s", spec->nargs,
			spec->nargs == 1 ? "" : "s", spec->nargs == 1 ? "s" : "");
		return -EINVAL;
	}
	if (place_filter_slots(P, &fr, fr.nslots))
		return -EINVAL;
	return check_conversions(P);
}

struct probe_spec *probespec__parse(const char *text, struct err *err)
{
	struct err scratch;
	struct parser P = { .text = text, .p = text, .err = err ? err : &scratch };
	struct probe_spec *spec;
	int r;

	err__clear(P.err);
	spec = calloc(1, sizeof(*spec));
	if (!spec) {
		errno = ENOMEM;
		return NULL;
	}
	P.ps = spec;
	spec->recipe.by_slot = UP_NO_SLOT;
	spec->recipe.hist_slot = UP_NO_SLOT;
	spec->text = strdup(text);
	r = spec->text ? 0 : -ENOMEM;
	if (!r)
		r = parse_head(&P);
	if (!r)
		r = parse_target(&P);
	if (!r)
		r = parse_filter(&P);
	if (!r)
		r = parse_output(&P);
	if (!r)
		return spec;
	if (r == -EINVAL && !P.failed)
		fail_at(&P, P.p, "invalid probe");
	probespec__free(spec);
	errno = -r;
	return NULL;
}

int probespec__finish(struct probe_spec *ps, unsigned int max_units, struct err *err)
{
	unsigned int total = 0;
	int i;

	for (i = 0; i < ps->nargs; i++) {
		struct up_slot *sl = &ps->recipe.slots[i];
		unsigned int units;

		if (!argkind__is_string(ps->args[i].kind))
			continue;
		units = ps->args[i].max_units ? (unsigned)ps->args[i].max_units : max_units;
		if (units > UP_MAX_UNITS)
			units = UP_MAX_UNITS;
		sl->max_units = (__u16)units;
		total += argkind__data_bytes(ps->args[i].kind, units);
	}
	if (total > UP_DATA_MAX)
		return err__set_at(err, 1, E2BIG,
				   "the strings of one event need %u bytes, more than %d (lower --max-str)",
				   total, UP_DATA_MAX);
	return 0;
}

/* The most code units of KIND whose bytes fit a --by key (UP_BY_BYTES): a
 * NUL-terminated UTF-16 string is read one unit past its limit. */
static unsigned int by_units(enum up_kind kind)
{
	const struct argkind *ak = argkind__get(kind);

	if (!(ak->flags & AK_UTF16))
		/* str() reads its limit and two more bytes to tell the end */
		return kind == UP_KIND_STR ? UP_BY_BYTES - 1 : UP_BY_BYTES;
	return ak->flags & AK_NUL ? UP_BY_BYTES / 2 - 1 : UP_BY_BYTES / 2;
}

int probespec__add_value(struct probe_spec *ps, enum ps_role role, const char *text,
			 struct err *err)
{
	struct err scratch;
	struct parser P = { .text = text, .p = text, .err = err ? err : &scratch, .ps = ps };
	struct ps_arg *a = role == PS_ROLE_BY ? &ps->by : &ps->hist;
	struct up_slot *sl;
	int slot;

	err__clear(P.err);
	if (a->text)
		return err__set_at(P.err, 1, EINVAL, "given twice");
	slot = add_slot(&P, text, UP_KIND_INT);
	if (slot < 0 || !parse_value(&P, a, slot))
		return -(errno = EINVAL);
	skip_ws(&P);
	if (*P.p) {
		fail_at(&P, P.p, "unexpected text after the expression");
		return -(errno = EINVAL);
	}
	sl = &ps->recipe.slots[slot];
	if (role == PS_ROLE_HIST) {
		if (a->kind != UP_KIND_INT) {
			fail_at(&P, text, "a histogram needs a number, not a string");
			return -(errno = EINVAL);
		}
		ps->recipe.hist_slot = (__u8)slot;
		return 0;
	}
	if (a->kind != UP_KIND_INT) {
		unsigned int cap = by_units(a->kind);

		sl->max_units = (__u16)(a->max_units && (unsigned)a->max_units < cap ?
					(unsigned)a->max_units : cap);
	}
	ps->recipe.by_slot = (__u8)slot;
	return 0;
}

void probespec__free(struct probe_spec *ps)
{
	int i;

	if (!ps)
		return;
	free(ps->by.text);
	free(ps->hist.text);
	for (i = 0; i < ps->nargs; i++)
		free(ps->args[i].text);
	for (i = 0; i < ps->npieces; i++)
		free(ps->pieces[i].lit);
	free(ps->text);
	free(ps->binary);
	free(ps->symbol);
	free(ps->label);
	free(ps->filter_text);
	free(ps);
}

int probespec__parse_say(const char *text, unsigned int max_units, struct probe_spec **out)
{
	struct err e = { 0 };

	*out = probespec__parse(text, &e);
	if (!*out) {
		if (errno == ENOMEM) {
			p_err("out of memory");
			return 1;
		}
		probespec__print_error(text, &e);
		return 2;
	}
	if (probespec__finish(*out, max_units, &e)) {
		p_err("%s: %s", text, e.msg);
		return 2;
	}
	return 0;
}

void probespec__print_error(const char *text, const struct err *err)
{
	int col = err->col > 0 ? err->col : 1;
	int len = (int)strlen(text);

	if (col > len + 1)
		col = len + 1;
	p_err("bad probe spec at column %d: %s", col, err->msg);
	fprintf(stderr, "  %s\n  %*s^\n", text, col - 1, "");
}
