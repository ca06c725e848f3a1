// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Probe specs for Go code: registers by name and Go strings (pointer and
 * length, or a string header in memory), and their errors' columns. */
#include <errno.h>
#include <string.h>

#include "uprobe/probespec.h"
#include "uprobe/upfmt.h"
#include "tap.h"

static struct up_event ev;

/* A Go string's bytes, NULs and control characters included, formatted as
 * text and JSON: escaped like str(), the length counted. */
static void test_format(void)
{
	struct probe_spec *ps;
	struct upfmt *f, *j;
	const char *line, *p;
	struct err err;
	size_t len, size;

	ps = probespec__parse("p:/x:echo \"[%s]\", gostr(reg(bx), reg(cx))", &err);
	if (!ok(ps != NULL, "spec parses"))
		return;
	probespec__finish(ps, 8, &err);
	f = upfmt__new(&ps, 1, false, 0);
	j = upfmt__new(&ps, 1, true, 0);
	memset(&ev, 0, sizeof(ev));
	ev.hdr.pid = 1;
	ev.hdr.tid = 1;
	ev.hdr.nslots = 1;
	memcpy(ev.hdr.comm, "go", 2);
	ev.hdr.vals[0].value = 0x4000;
	ev.hdr.vals[0].len = 4;
	ev.hdr.vals[0].count = 4;
	memcpy(ev.data, "a\0b\x1b", 4);
	size = sizeof(ev.hdr) + 4;
	ev.hdr.size = (uint32_t)size;
	line = f ? upfmt__line(f, &ev, size, &len) : NULL;
	p = line ? strstr(line, "echo ") : NULL;
	is_str(p ? p + 5 : "", "[a\\x00b\\x1b]\n", "text: a NUL inside a Go string kept, escaped");
	line = j ? upfmt__line(j, &ev, size, &len) : NULL;
	ok(line && strstr(line, "\"type\":\"gostr\"") && strstr(line, "\"length\":4") &&
	   strstr(line, "\"value\":\"a\\u0000b\\u001b\""), "json: type, length, value escaped");
	if (line && !strstr(line, "\"length\":4"))
		diag("%s", line);
	/* an empty string: length 0, no pointer needed */
	ev.hdr.vals[0].value = 0;
	ev.hdr.vals[0].len = 0;
	ev.hdr.vals[0].count = 0;
	ev.hdr.size = (uint32_t)sizeof(ev.hdr);
	line = f ? upfmt__line(f, &ev, sizeof(ev.hdr), &len) : NULL;
	p = line ? strstr(line, "echo ") : NULL;
	is_str(p ? p + 5 : "", "[]\n", "text: an empty Go string");
	upfmt__free(f);
	upfmt__free(j);
	probespec__free(ps);
}

static struct probe_spec *parse_ok(const char *text)
{
	struct err err;
	struct probe_spec *ps = probespec__parse(text, &err);

	if (!ok(ps != NULL, "parses: %s", text))
		diag("column %d: %s", err.col, err.msg);
	return ps;
}

/* Every register name, bpftrace's and the r-prefixed one. */
static const struct { const char *name; int base; } regs[] = {
	{ "ax", UP_BASE_AX }, { "rax", UP_BASE_AX }, { "bx", UP_BASE_BX },
	{ "rbx", UP_BASE_BX }, { "cx", UP_BASE_CX }, { "dx", UP_BASE_DX },
	{ "si", UP_BASE_SI }, { "rsi", UP_BASE_SI }, { "di", UP_BASE_DI },
	{ "bp", UP_BASE_BP }, { "sp", UP_BASE_SP }, { "rsp", UP_BASE_SP },
	{ "r8", UP_BASE_R8 }, { "r9", UP_BASE_R9 }, { "r10", UP_BASE_R10 },
	{ "r11", UP_BASE_R11 }, { "r12", UP_BASE_R12 }, { "r13", UP_BASE_R13 },
	{ "r14", UP_BASE_R14 }, { "r15", UP_BASE_R15 }, { "ip", UP_BASE_IP },
	{ "rip", UP_BASE_IP },
};

struct bad {
	const char *text;
	int col;
	const char *msg;	/* substring of the message */
};

static const struct bad bads[] = {
	{ "p:/a:f \"%d\", reg(zz)", 18, "unknown register 'zz'" },
	{ "p:/a:f \"%d\", reg(r16)", 18, "unknown register 'r16'" },
	{ "p:/a:f \"%d\", reg(eax)", 18, "unknown register 'eax'" },
	{ "p:/a:f (reg(foo) == 1)", 13, "unknown register 'foo'" },
	{ "p:/a:f \"%d\", reg()", 18, "expected a register name" },
	{ "p:/a:f \"%d\", reg ax", 18, "expected '(' after 'reg'" },
	{ "p:/a:f \"%d\", reg(ax", 20, "expected ')' after the register" },
	{ "p:/a:f \"%d\", gostr(reg(ax))", 1, "does not fit %d" },
	{ "p:/a:f \"%s\", gostr(reg(ax), reg(bx), 99999)", 38, "MAX must be" },
	{ "p:/a:f \"%s\", gostr(*(u64*)*(u64*)*(u64*)*(u64*)reg(ax))", 20,
	  "too many dereferences" },
	{ "p:/a:f \"%s\", gostr reg(ax)", 20, "expected '(' after 'gostr'" },
};

int main(void)
{
	struct probe_spec *ps;
	struct err err;
	size_t i;
	char text[128];

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		snprintf(text, sizeof(text), "p:/a:f \"%%d\", reg(%s)", regs[i].name);
		ps = parse_ok(text);
		if (ps) {
			is_int(ps->recipe.slots[0].val.base, regs[i].base, "reg(%s) reads its register",
			       regs[i].name);
			probespec__free(ps);
		}
	}

	/* in expressions, dereferences and filters like argN */
	ps = parse_ok("p:/a:main.f (reg(ax) == 42 && reg( r9 ) > 1) \"%d %d\", "
		      "*(s32*)(reg(sp) + 16), reg(bx) + 3");
	if (ps) {
		const struct up_expr *e = &ps->recipe.slots[0].val;

		is_str(ps->symbol, "main.f", "a filter after the name is no signature");
		ok(ps->has_filter, "filter");
		is_int(e->base, UP_BASE_SP, "deref from sp");
		ok(e->nsteps == 1 && e->steps[0].add == 16 && e->steps[0].size == 4 &&
		   e->steps[0].sign, "*(s32*)(sp + 16)");
		is_int(ps->recipe.slots[1].val.base, UP_BASE_BX, "bx");
		is_int(ps->recipe.slots[1].val.final_add, 3, "+ 3");
		is_int(ps->recipe.nslots, 4, "two arguments, two filter operands");
		is_int(ps->recipe.slots[2].val.base, UP_BASE_AX, "filter operand ax");
		is_int(ps->recipe.slots[3].val.base, UP_BASE_R9, "filter operand r9");
		probespec__free(ps);
	}
	/* a Go method name keeps its receiver */
	ps = parse_ok("p:/a:main.(*T).Get \"%d\", reg(ax)");
	if (ps) {
		is_str(ps->symbol, "main.(*T).Get", "method name with a receiver");
		probespec__free(ps);
	}
	ps = parse_ok("r:/a:main.f \"%d %d\", retval, reg(bx)");
	if (ps) {
		is_int(ps->recipe.slots[0].val.base, UP_BASE_RET, "retval in r:");
		is_int(ps->recipe.slots[1].val.base, UP_BASE_BX, "reg() in r:");
		probespec__free(ps);
	}

	/* gostr(PTR, LEN[, MAX]) */
	ps = parse_ok("p:/a:f \"%s|%s\", gostr(reg(bx), reg(cx)), gostr(reg(di), 3 + 1, 9)");
	if (ps) {
		const struct up_slot *a = &ps->recipe.slots[0], *b = &ps->recipe.slots[1];

		is_int(ps->args[0].kind, UP_KIND_GOSTR, "gostr kind");
		is_int(a->kind, UP_KIND_GOSTR, "slot kind");
		is_int(a->val.base, UP_BASE_BX, "pointer from bx");
		is_int(a->val.nsteps, 0, "pointer is the register");
		is_int(a->len.base, UP_BASE_CX, "length from cx");
		is_int(ps->args[0].max_units, 0, "no MAX: --max-str");
		is_int(b->len.base, UP_BASE_CONST, "constant length");
		is_int(b->len.final_add, 4, "length 4");
		is_int(ps->args[1].max_units, 9, "MAX 9");
		is_int(probespec__finish(ps, 64, &err), 0, "finish");
		is_int(a->max_units, 64, "--max-str applied");
		is_int(b->max_units, 9, "MAX kept");
		probespec__free(ps);
	}
	/* gostr(HDR): pointer at HDR, length at HDR+8 */
	ps = parse_ok("p:/a:f \"%s\", gostr(reg(sp) + 24)");
	if (ps) {
		const struct up_slot *a = &ps->recipe.slots[0];

		ok(a->val.base == UP_BASE_SP && a->val.nsteps == 1 && a->val.steps[0].add == 24 &&
		   a->val.steps[0].size == 8 && a->val.final_add == 0, "pointer: *(u64*)(sp + 24)");
		ok(a->len.base == UP_BASE_SP && a->len.nsteps == 1 && a->len.steps[0].add == 32 &&
		   a->len.steps[0].size == 8 && a->len.steps[0].sign && a->len.final_add == 0,
		   "length: *(s64*)(sp + 32)");
		probespec__free(ps);
	}
	ps = parse_ok("p:/a:f \"%s\", gostr(*(u64*)(reg(ax) + 8))");
	if (ps) {
		const struct up_slot *a = &ps->recipe.slots[0];

		ok(a->val.nsteps == 2 && a->val.steps[0].add == 8 && a->val.steps[1].add == 0,
		   "header behind a pointer: two dereferences");
		ok(a->len.nsteps == 2 && a->len.steps[1].add == 8, "its length at +8");
		probespec__free(ps);
	}

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		ps = probespec__parse(bads[i].text, &err);
		ok(ps == NULL, "refused: %s", bads[i].text);
		if (!ok(strstr(err.msg, bads[i].msg) != NULL, "message: %s", bads[i].msg))
			diag("got: %s", err.msg);
		is_int(err.col, bads[i].col, "column for: %s", bads[i].text);
		probespec__free(ps);
	}
	test_format();
	return done_testing();
}
