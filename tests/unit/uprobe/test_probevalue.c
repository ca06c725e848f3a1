// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Values added to a parsed probe for --by and --hist: slots after the
 * arguments and the filter's operands, string limits that fit a --by key,
 * and the refusals with their columns; and how a --by key is shown. */
#include <errno.h>
#include <string.h>

#include "uprobe/probespec.h"
#include "uprobe/upfmt.h"
#include "tap.h"

static struct probe_spec *spec(const char *text)
{
	struct err err;
	struct probe_spec *ps = probespec__parse(text, &err);

	if (!ok(ps != NULL, "parses: %s", text))
		diag("column %d: %s", err.col, err.msg);
	return ps;
}

static void refused(const char *text, enum ps_role role, const char *expr, int col,
		    const char *msg)
{
	struct probe_spec *ps = spec(text);
	struct err err = { 0 };

	if (!ps)
		return;
	is_int(probespec__add_value(ps, role, expr, &err), -EINVAL, "refused: %s", expr);
	is_int(err.col, col, "%s: column", expr);
	if (!ok(strstr(err.msg, msg) != NULL, "%s: says '%s'", expr, msg))
		diag("got: %s", err.msg);
	probespec__free(ps);
}

static void show(struct upfmt *f, struct probe_spec *ps, const struct up_bykey *k,
		 const char *want, const char *what)
{
	size_t len;
	const char *got = upfmt__by_value(f, ps, k, &len);

	is_str(got, want, "%s", what);
}

int main(void)
{
	struct probe_spec *ps;
	struct err err;
	struct upfmt *f, *fj;
	struct up_bykey k;

	ps = spec("p:c:f (arg3 > 1) \"%d\", arg1");
	if (ps) {
		is_int(ps->recipe.by_slot, UP_NO_SLOT, "no --by: no slot");
		is_int(ps->recipe.hist_slot, UP_NO_SLOT, "no --hist: no slot");
		is_int(probespec__add_value(ps, PS_ROLE_BY, "str16(arg2)", &err), 0, "--by str16()");
		is_int(ps->recipe.by_slot, 2, "after the argument and the filter's operand");
		is_int(ps->recipe.slots[2].kind, UP_KIND_STR16Z, "a UTF-16 slot");
		is_int(ps->recipe.slots[2].max_units, UP_BY_BYTES / 2 - 1,
		       "limit: one unit read past it still fits the key");
		is_int(probespec__add_value(ps, PS_ROLE_HIST, "*(u32*)(arg4 + 8)", &err), 0,
		       "--hist of a dereference");
		is_int(ps->recipe.hist_slot, 3, "the next slot");
		is_int(ps->recipe.nslots, 4, "four slots in all");
		is_int(ps->recipe.slots[0].kind, UP_KIND_INT, "the argument is untouched");
		is_int(probespec__add_value(ps, PS_ROLE_BY, "arg1", &err), -EINVAL, "--by twice");
		probespec__free(ps);
	}
	ps = spec("p:c:f");
	if (ps) {
		is_int(probespec__add_value(ps, PS_ROLE_BY, "str(arg1, 20)", &err), 0, "--by str(E, 20)");
		is_int(ps->recipe.slots[0].max_units, 20, "an explicit smaller limit is kept");
		probespec__free(ps);
	}
	ps = spec("p:c:f");
	if (ps) {
		is_int(probespec__add_value(ps, PS_ROLE_BY, "str(arg1, 2000)", &err), 0, "--by str(E, 2000)");
		is_int(ps->recipe.slots[0].max_units, UP_BY_BYTES - 1, "a larger one: the key's");
		probespec__free(ps);
	}
	ps = spec("r:c:f");
	if (ps) {
		is_int(probespec__add_value(ps, PS_ROLE_HIST, "retval", &err), 0, "--hist retval on r:");
		is_int(ps->recipe.slots[0].val.base, UP_BASE_RET, "the return register");
		probespec__free(ps);
	}

	refused("p:c:f", PS_ROLE_HIST, "str(arg1)", 1, "needs a number");
	refused("p:c:f", PS_ROLE_BY, "retval", 1, "only available in r: probes");
	refused("p:c:f", PS_ROLE_BY, "arg1 arg2", 6, "unexpected text");
	refused("p:c:f", PS_ROLE_BY, "arg9", 1, "unknown name");
	refused("p:c:f (arg1==arg2 && arg3==arg4 && arg5==arg6 && arg1==arg2)", PS_ROLE_BY,
		"arg1", 1, "too many values");

	/* how the values are shown */
	ps = spec("p:c:f");
	f = upfmt__new(&ps, 1, false, 0);
	fj = upfmt__new(&ps, 1, true, 0);
	if (ps && f && fj) {
		probespec__add_value(ps, PS_ROLE_BY, "str16(arg1)", &err);
		memset(&k, 0, sizeof(k));
		memcpy(k.data, "h\0\xe9\0l\0\n\0", 8);
		k.len = 8;
		show(f, ps, &k, "\"h\xc3\xa9l\\n\"", "UTF-16 decoded, a newline escaped, quoted");
		show(fj, ps, &k, "\"value\":\"h\xc3\xa9l\\n\"", "JSON: a string member");
		k.flags = UP_VF_CUT;
		show(f, ps, &k, "\"h\xc3\xa9l\\n\xe2\x80\xa6\"", "cut: an ellipsis");
		show(fj, ps, &k, "\"value\":\"h\xc3\xa9l\\n\",\"truncated\":true", "JSON: truncated");
		k.flags = UP_VF_NULL;
		show(f, ps, &k, "(null)", "NULL pointer");
		k.flags = UP_VF_FAULT;
		show(f, ps, &k, "<fault>", "unreadable");
	}
	upfmt__free(f);
	upfmt__free(fj);
	probespec__free(ps);

	ps = spec("p:c:f");
	f = upfmt__new(&ps, 1, false, 0);
	if (ps && f) {
		probespec__add_value(ps, PS_ROLE_BY, "arg1", &err);
		memset(&k, 0, sizeof(k));
		k.value = (__u64)-5;
		show(f, ps, &k, "-5", "a number, signed");
	}
	upfmt__free(f);
	probespec__free(ps);
	return done_testing();
}
