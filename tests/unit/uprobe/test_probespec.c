// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Probe spec parser: heads, expressions, filters, formats, and errors that
 * point at the right column. */
#include <errno.h>
#include <string.h>

#include "uprobe/probespec.h"
#include "tap.h"

static struct probe_spec *parse_ok(const char *text)
{
	struct err err;
	struct probe_spec *ps = probespec__parse(text, &err);

	if (!ok(ps != NULL, "parses: %s", text))
		diag("column %d: %s", err.col, err.msg);
	return ps;
}

struct bad {
	const char *text;
	int col;
	const char *msg;	/* substring of the message */
};

static const struct bad bads[] = {
	{ "x:/bin/true:main", 1, "starts with 'p:'" },
	{ "p:/bin/true", 3, "BINARY:SYMBOL" },
	{ "p::main", 3, "missing binary" },
	{ "p:/bin/true:", 13, "missing symbol" },
	{ "p:/bin/true:0xZZ", 13, "invalid file offset" },
	{ "p:c:malloc (arg1 > 1 \"%d\", arg1", 22, "expected ')'" },
	{ "p:c:malloc (arg7 > 1)", 13, "unknown name 'arg7'" },
	{ "p:c:malloc (arg1 = 1)", 18, "use '=='" },
	{ "p:c:malloc \"%d\"", 16, "1 conversion but 0 arguments" },
	{ "p:c:malloc \"%d %d\", arg1", 25, "2 conversions but 1 argument" },
	{ "p:c:malloc \"%q\", arg1", 13, "unknown conversion" },
	{ "p:c:malloc \"%d\", retval", 18, "only available in r: probes" },
	{ "p:c:malloc \"%d\", arg1 arg2", 23, "unexpected text" },
	{ "p:c:malloc \"%d\", *(u33*)arg1", 20, "expected a type" },
	{ "p:c:malloc \"%d\", *(u32)arg1", 23, "expected '*)'" },
	{ "p:c:malloc \"%d\", arg1 - arg2", 25, "only constants" },
	{ "p:c:malloc \"%d\", -arg1", 18, "only constants can be negated" },
	{ "p:c:malloc \"%s\", arg1", 1, "does not fit %s" },
	{ "p:c:malloc \"%d\", str(arg1)", 1, "does not fit %d" },
	{ "p:c:malloc \"%s\", str16n(arg1)", 29, "needs a length" },
	{ "p:c:malloc \"%s\", str(arg1, 99999)", 28, "MAX must be" },
	{ "p:c:malloc \"abc", 12, "unterminated" },
	{ "p:c:malloc \"\\q\"", 13, "unknown escape" },
	{ "p:c:malloc , arg1", 12, "need a \"FORMAT\"" },
	{ "p:c:malloc \"%d\", *(u8*)*(u8*)*(u8*)*(u8*)*(u8*)arg1", 18, "too many dereferences" },
	{ "p:c:malloc (arg1==arg2 && arg3==arg4 && arg5==arg6 && arg1==arg2 && arg3==arg4)", 69, "too many values" },
};

int main(void)
{
	struct probe_spec *ps;
	struct err err;
	size_t i;

	ps = parse_ok("p:/usr/bin/app:main");
	if (ps) {
		ok(!ps->is_ret, "entry probe");
		is_str(ps->binary, "/usr/bin/app", "binary");
		is_str(ps->symbol, "main", "symbol");
		is_int(ps->offset, 0, "no offset");
		is_int(ps->nargs, 0, "no args");
		is_int(ps->recipe.nfops, 0, "no filter");
		probespec__free(ps);
	}

	ps = parse_ok("r:c:malloc+0x10");
	if (ps) {
		ok(ps->is_ret && ps->recipe.is_ret, "return probe");
		is_str(ps->binary, "c", "short name");
		ok(probespec__is_short_name(ps->binary), "short name detected");
		is_str(ps->symbol, "malloc", "symbol before +");
		is_int(ps->offset, 16, "+OFFSET");
		is_str(ps->label, "malloc+0x10", "label");
		probespec__free(ps);
	}

	ps = parse_ok("p:/lib/x.so:0x1a2b \"%d\", arg2");
	if (ps) {
		ok(ps->symbol == NULL, "raw offset has no symbol");
		is_int(ps->offset, 0x1a2b, "raw offset");
		is_int(ps->recipe.slots[0].val.base, UP_BASE_ARG1 + 1, "arg2 register");
		probespec__free(ps);
	}

	/* a .NET method name with dots, and a C++ signature */
	ps = parse_ok("p:/app/SampleApp.dll:SampleApp.EchoProvider.Echo \"%s\", dotnet_string(arg1)");
	if (ps) {
		is_str(ps->symbol, "SampleApp.EchoProvider.Echo", ".NET method name");
		is_int(ps->recipe.slots[0].kind, UP_KIND_DOTNET, "dotnet_string kind");
		probespec__free(ps);
	}
	ps = parse_ok("p:/bin/x:ns::f(int, char*) \"%d\", arg1");
	ok(ps == NULL || strcmp(ps->symbol, "ns::f(int,") != 0, "no crash on C++ names with blanks");
	probespec__free(ps);
	ps = parse_ok("p:/bin/x:ns::f(int) (arg1 > 0)");
	if (ps) {
		is_str(ps->symbol, "ns::f(int)", "signature kept in the symbol");
		ok(ps->has_filter, "filter after a signature");
		probespec__free(ps);
	}

	/* expressions */
	ps = parse_ok("p:c:f \"%d %u %lx\", *(s32*)(arg1 + 8), *(u64*)(*(u64*)(arg2+16)-4) + 3, 42");
	if (ps) {
		const struct up_expr *e = &ps->recipe.slots[0].val;

		is_int(ps->nargs, 3, "three args");
		is_int(e->base, UP_BASE_ARG1, "deref base");
		is_int(e->nsteps, 1, "one deref");
		is_int(e->steps[0].add, 8, "deref offset");
		is_int(e->steps[0].size, 4, "deref size");
		is_int(e->steps[0].sign, 1, "deref signed");
		e = &ps->recipe.slots[1].val;
		is_int(e->base, UP_BASE_ARG1 + 1, "chain base");
		is_int(e->nsteps, 2, "chain of two");
		is_int(e->steps[0].add, 16, "first step offset");
		is_int(e->steps[1].add, -4, "second step offset");
		is_int(e->steps[1].size, 8, "second step size");
		is_int(e->final_add, 3, "final constant");
		e = &ps->recipe.slots[2].val;
		is_int(e->base, UP_BASE_CONST, "literal");
		is_int(e->final_add, 42, "literal value");
		is_int(ps->npieces, 5, "pieces: conv lit conv lit conv");
		is_str(ps->pieces[4].cfmt, "%llx", "%lx prints 64-bit hex");
		is_int(ps->pieces[4].lmod, 'l', "%lx length");
		is_str(ps->pieces[0].cfmt, "%lld", "%d prints after a cast");
		probespec__free(ps);
	}
	ps = parse_ok("p:c:f \"%-8s|%5d|%p|%c%%\\n\", str(arg1, 32), arg2, arg3, arg4");
	if (ps) {
		is_int(ps->pieces[0].width, -8, "%-8s width");
		is_str(ps->pieces[2].cfmt, "%5lld", "%5d");
		is_str(ps->pieces[4].cfmt, "0x%llx", "%p");
		is_int(ps->args[0].max_units, 32, "str MAX");
		is_str(ps->args[0].text, "str(arg1, 32)", "arg text kept");
		is_str(ps->pieces[ps->npieces - 1].lit, "%\n", "%% and \\n in literal");
		probespec__free(ps);
	}
	ps = parse_ok("p:c:f \"%s %s %s\", str16(arg1), str16(arg1, 10), str16(arg1, arg2)");
	if (ps) {
		is_int(ps->args[0].kind, UP_KIND_STR16Z, "str16: NUL-terminated");
		is_int(ps->args[1].kind, UP_KIND_STR16Z, "str16 with constant: MAX");
		is_int(ps->args[1].max_units, 10, "str16 MAX");
		is_int(ps->args[2].kind, UP_KIND_STR16N, "str16 with a value: counted");
		is_int(ps->recipe.slots[2].len.base, UP_BASE_ARG1 + 1, "count from arg2");
		probespec__free(ps);
	}
	ps = parse_ok("p:c:f \"%s\", str16n(arg1, 5)");
	if (ps) {
		is_int(ps->args[0].kind, UP_KIND_STR16N, "str16n counted");
		is_int(ps->recipe.slots[0].len.final_add, 5, "constant count");
		probespec__free(ps);
	}

	/* filters: postfix program, filter operands after the args */
	ps = parse_ok("p:c:f (arg1 == 3 && (arg2 < -1 || !*(u8*)arg3)) \"%d\", arg1");
	if (ps) {
		static const __u8 want[] = { UP_FOP_SLOT, UP_FOP_IMM, UP_FOP_EQ, UP_FOP_SLOT,
					     UP_FOP_IMM, UP_FOP_LT, UP_FOP_SLOT, UP_FOP_IMM,
					     UP_FOP_NE, UP_FOP_NOT, UP_FOP_OR, UP_FOP_AND };
		int good = ps->recipe.nfops == sizeof(want);

		for (i = 0; good && i < sizeof(want); i++)
			good = ps->recipe.fops[i].op == want[i];
		ok(good, "filter program");
		is_int(ps->recipe.nslots, 4, "one arg and three filter operands");
		is_int(ps->recipe.fops[0].slot, 1, "first filter operand after the arg");
		is_int(ps->recipe.fops[4].imm, -1, "negative literal");
		is_str(ps->filter_text, "arg1 == 3 && (arg2 < -1 || !*(u8*)arg3)", "filter text");
		probespec__free(ps);
	}
	ps = parse_ok("r:c:f ((retval + 1) > 2) \"%ld\", retval");
	if (ps) {
		is_int(ps->recipe.fops[0].op, UP_FOP_SLOT, "parenthesised arithmetic operand");
		is_int(ps->recipe.slots[1].val.final_add, 1, "operand constant");
		is_int(ps->recipe.fops[2].op, UP_FOP_GT, "comparison");
		probespec__free(ps);
	}

	/* limits applied by finish */
	ps = parse_ok("p:c:f \"%s %s\", str(arg1), dotnet_string(arg2, 7)");
	if (ps) {
		is_int(probespec__finish(ps, 256, &err), 0, "finish");
		is_int(ps->recipe.slots[0].max_units, 256, "default limit");
		is_int(ps->recipe.slots[1].max_units, 7, "explicit limit kept");
		probespec__free(ps);
	}
	ps = parse_ok("p:c:f \"%s%s%s%s%s%s\", str16(arg1), str16(arg1), str16(arg1), str16(arg1), "
		      "str16(arg1), str16(arg1)");
	if (ps) {
		ok(probespec__finish(ps, 2000, &err) == -E2BIG, "too much string data refused");
		ok(strstr(err.msg, "--max-str") != NULL, "hint names --max-str");
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
	return done_testing();
}
