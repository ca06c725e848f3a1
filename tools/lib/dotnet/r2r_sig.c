// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Signatures (ECMA-335 II.23.2, with the ReadyToRun extensions): types and
 * method parameter lists decoded to text, "(System.String,System.Int32)",
 * and the method signatures that key InstanceEntryPoints, which name a
 * generic instantiation: "List`1[System.__Canon].Add". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "dotnet/r2r_int.h"

static bool sig_u8(struct sig *s, uint8_t *v)
{
	if (s->p >= s->end)
		return false;
	*v = s->img->data[s->p++];
	return true;
}

/* ECMA-335 II.23.2 compressed unsigned integer */
bool r2r_sig_uint(struct sig *s, uint32_t *v)
{
	const uint8_t *d = s->img->data;
	uint8_t b;

	if (!sig_u8(s, &b))
		return false;
	if (!(b & 0x80)) {
		*v = b;
	} else if ((b & 0xc0) == 0x80) {
		if (s->p + 1 > s->end)
			return false;
		*v = (uint32_t)(b & 0x3f) << 8 | d[s->p];
		s->p += 1;
	} else if ((b & 0xe0) == 0xc0) {
		if (s->p + 3 > s->end)
			return false;
		*v = (uint32_t)(b & 0x1f) << 24 | (uint32_t)d[s->p] << 16 |
		     (uint32_t)d[s->p + 1] << 8 | d[s->p + 2];
		s->p += 3;
	} else {
		return false;
	}
	return true;
}

static const char *const prim_names[] = {
	[0x01] = "System.Void", [0x02] = "System.Boolean", [0x03] = "System.Char",
	[0x04] = "System.SByte", [0x05] = "System.Byte", [0x06] = "System.Int16",
	[0x07] = "System.UInt16", [0x08] = "System.Int32", [0x09] = "System.UInt32",
	[0x0a] = "System.Int64", [0x0b] = "System.UInt64", [0x0c] = "System.Single",
	[0x0d] = "System.Double", [0x0e] = "System.String",
	[0x16] = "System.TypedReference", [0x18] = "System.IntPtr",
	[0x19] = "System.UIntPtr", [0x1c] = "System.Object",
};

static bool sig_method(struct sig *s, struct sbuf *params, int depth);

/* N types, comma separated, between OPEN and CLOSE. */
static bool sig_type_list(struct sig *s, uint32_t n, const char *open, const char *close,
			  struct sbuf *b, int depth)
{
	sb_str(b, open);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			sb_str(b, ",");
		if (!r2r_sig_type(s, b, depth + 1))
			return false;
	}
	sb_str(b, close);
	return true;
}

/* one type (ECMA-335 II.23.2.12 plus the ReadyToRun extensions) */
bool r2r_sig_type(struct sig *s, struct sbuf *b, int depth)
{
	uint8_t et;
	uint32_t v, n;
	char num[32];

	if (depth > MAX_SIG_DEPTH || !sig_u8(s, &et))
		return false;
	if (et < ARRAY_SIZE(prim_names) && prim_names[et]) {
		sb_str(b, prim_names[et]);
		return true;
	}
	switch (et) {
	case 0x11:	/* VALUETYPE */
	case 0x12:	/* CLASS */
		if (!r2r_sig_uint(s, &v))
			return false;
		r2r_typedeforref_name(s, v, b, depth);
		return true;
	case 0x15:	/* GENERICINST */
		if (!r2r_sig_type(s, b, depth + 1) || !r2r_sig_uint(s, &n) || n > 64)
			return false;
		return sig_type_list(s, n, "[", "]", b, depth);
	case 0x1d:	/* SZARRAY */
		if (!r2r_sig_type(s, b, depth + 1))
			return false;
		sb_str(b, "[]");
		return true;
	case 0x14: {	/* ARRAY: type rank nsizes sizes nlo lo */
		uint32_t rank, k;

		if (!r2r_sig_type(s, b, depth + 1) || !r2r_sig_uint(s, &rank) || !r2r_sig_uint(s, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!r2r_sig_uint(s, &k))
				return false;
		if (!r2r_sig_uint(s, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!r2r_sig_uint(s, &k))
				return false;
		sb_str(b, "[");
		for (uint32_t i = 1; i < rank && i < 32; i++)
			sb_str(b, ",");
		sb_str(b, "]");
		return true;
	}
	case 0x0f:	/* PTR */
	case 0x10:	/* BYREF */
		if (!r2r_sig_type(s, b, depth + 1))
			return false;
		sb_str(b, et == 0x0f ? "*" : "&");
		return true;
	case 0x13:	/* VAR */
	case 0x1e:	/* MVAR */
		if (!r2r_sig_uint(s, &v))
			return false;
		snprintf(num, sizeof(num), "%s%u", et == 0x13 ? "!" : "!!", v);
		sb_str(b, num);
		return true;
	case 0x1b: {	/* FNPTR */
		struct sbuf tmp = { .len = 0 };

		if (!sig_method(s, &tmp, depth + 1))
			return false;
		sb_str(b, "fnptr");
		return true;
	}
	case 0x1f:	/* CMOD_REQD */
	case 0x20:	/* CMOD_OPT */
		if (!r2r_sig_uint(s, &v))
			return false;
		return r2r_sig_type(s, b, depth + 1);
	case 0x41:	/* SENTINEL */
	case 0x45:	/* PINNED */
		return r2r_sig_type(s, b, depth + 1);
	case 0x3e:	/* ReadyToRun: CANON_ZAPSIG, the shared-code placeholder */
		sb_str(b, "System.__Canon");
		return true;
	case 0x3d:	/* ReadyToRun: NATIVE_VALUETYPE_ZAPSIG */
		return r2r_sig_type(s, b, depth + 1);
	case 0x3f: {	/* ReadyToRun: MODULE_ZAPSIG module-index type */
		bool saved = s->foreign;
		bool ok;

		if (!r2r_sig_uint(s, &v))
			return false;
		s->foreign = v != 0;
		ok = r2r_sig_type(s, b, depth + 1);
		s->foreign = saved;
		return ok;
	}
	}
	return false;
}

void r2r_typedeforref_name(struct sig *s, uint32_t coded_tok, struct sbuf *b, int depth)
{
	uint32_t rid = coded_tok >> 2;

	if (s->foreign) {
		sb_str(b, "[other module]");
		return;
	}
	switch (coded_tok & 3) {
	case 0:
		if (rid && rid <= s->img->tab[T_TYPEDEF].rows)
			r2r_typedef_name(s->img, rid, b, 0);
		else
			sb_str(b, "?");
		return;
	case 1:
		if (rid && rid <= s->img->tab[T_TYPEREF].rows)
			r2r_typeref_name(s->img, rid, b, 0);
		else
			sb_str(b, "?");
		return;
	case 2: {	/* TypeSpec: a type signature in the blob heap */
		struct sig ts = { .img = s->img };
		uint32_t len;

		if (depth < MAX_SIG_DEPTH &&
		    r2r_md_blob(s->img, r2r_cell(s->img, T_TYPESPEC, rid, 0), &ts.p, &len)) {
			ts.end = ts.p + len;
			if (r2r_sig_type(&ts, b, depth + 1))
				return;
		}
		sb_str(b, "?");
		return;
	}
	}
	sb_str(b, "?");
}

/* MethodDefSig/MethodRefSig: the parameter list "(T1,T2)" into PARAMS */
static bool sig_method(struct sig *s, struct sbuf *params, int depth)
{
	uint8_t cc;
	uint32_t n, gen;
	struct sbuf ret = { .len = 0 };

	if (!sig_u8(s, &cc))
		return false;
	if ((cc & 0x10) && !r2r_sig_uint(s, &gen))
		return false;
	if (!r2r_sig_uint(s, &n) || n > 1024 || !r2r_sig_type(s, &ret, depth + 1))
		return false;
	return sig_type_list(s, n, "(", ")", params, depth);
}

void r2r_methoddef_sig(const struct r2r_image *img, uint32_t rid, struct sbuf *b)
{
	struct sig s = { .img = img };
	uint32_t len;

	if (r2r_md_blob(img, r2r_cell(img, T_METHODDEF, rid, 4), &s.p, &len)) {
		s.end = s.p + len;
		if (sig_method(&s, b, 0))
			return;
	}
	b->len = 0;
	sb_str(b, "(?)");
}

/* READYTORUN_METHOD_SIG_* flags of an instance entry's signature */
enum {
	MSIG_UNBOXING = 0x01, MSIG_INSTANTIATING = 0x02, MSIG_METHOD_INST = 0x04,
	MSIG_SLOT = 0x08, MSIG_MEMBERREF = 0x10, MSIG_CONSTRAINED = 0x20,
	MSIG_OWNER_TYPE = 0x40, MSIG_UPDATE_CONTEXT = 0x80,
};

/* Generic arguments of an instantiated name: the comma-separated list in
 * the brackets that end S (nested brackets kept whole). */
struct gen_args {
	const char *arg[32];
	size_t len[32];
	unsigned n;
};

static void split_args(const char *s, size_t n, struct gen_args *g)
{
	size_t open = 0, start;
	int depth = 0;

	g->n = 0;
	if (n < 2 || s[n - 1] != ']')
		return;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ']')
			depth++;
		else if (s[i] == '[' && --depth == 0) {
			open = i;
			break;
		}
	}
	if (depth != 0)
		return;
	start = open + 1;
	for (size_t i = open + 1; i < n && g->n < 32; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && depth > 0)
			depth--;
		else if ((s[i] == ',' && depth == 0) || i == n - 1) {
			g->arg[g->n] = s + start;
			g->len[g->n++] = i - start;
			start = i + 1;
		}
	}
}

/* Replace "!N" (type) and "!!N" (method) generic parameters in SIG with
 * the arguments of the instantiation. */
static void subst_generics(struct sbuf *sig, const struct gen_args *t, const struct gen_args *m)
{
	struct sbuf out = { .len = 0 };

	for (size_t i = 0; i < sig->len;) {
		const struct gen_args *g = t;
		size_t j = i + 1;
		unsigned v = 0;

		if (sig->buf[i] != '!') {
			sb_puts(&out, sig->buf + i, 1);
			i++;
			continue;
		}
		if (j < sig->len && sig->buf[j] == '!') {
			g = m;
			j++;
		}
		if (j >= sig->len || sig->buf[j] < '0' || sig->buf[j] > '9') {
			sb_puts(&out, sig->buf + i, j - i);
			i = j;
			continue;
		}
		for (; j < sig->len && sig->buf[j] >= '0' && sig->buf[j] <= '9' && v < 1000; j++)
			v = v * 10 + (unsigned)(sig->buf[j] - '0');
		if (v < g->n)
			sb_puts(&out, g->arg[v], g->len[v]);
		else
			sb_puts(&out, sig->buf + i, j - i);
		i = j;
	}
	if (!out.overflow)
		*sig = out;
}

/* The method an instance entry's signature names by token TOK (FLAGS
 * says which table), with OWNER its owning type if the signature spelt it
 * out: its name into NAME, its parameter list into PSIG. */
static bool instance_method(const struct sig *s, uint32_t flags, uint32_t tok,
			    const struct sbuf *owner, struct sbuf *name, struct sbuf *psig,
			    uint32_t *token)
{
	const struct r2r_image *img = s->img;

	if (s->foreign) {
		sb_str(name, owner->len ? owner->buf : "[other module]");
		sb_str(name, ".[method]");
		sb_str(psig, "(?)");
	} else if (flags & MSIG_MEMBERREF) {
		uint32_t parent = r2r_cell(img, T_MEMBERREF, tok, 0);
		struct sig ms = { .img = img };
		uint32_t len;

		if (owner->len) {
			sb_str(name, owner->buf);
		} else {
			struct sig ps = { .img = img };

			/* MemberRefParent: TypeDef 0, TypeRef 1, TypeSpec 4 */
			if ((parent & 7) == 0 || (parent & 7) == 1)
				r2r_typedeforref_name(&ps, (parent >> 3) << 2 | (parent & 7), name, 0);
			else if ((parent & 7) == 4)
				r2r_typedeforref_name(&ps, (parent >> 3) << 2 | 2, name, 0);
			else
				sb_str(name, "?");
		}
		sb_str(name, ".");
		sb_str(name, r2r_md_string(img, r2r_cell(img, T_MEMBERREF, tok, 1)));
		if (r2r_md_blob(img, r2r_cell(img, T_MEMBERREF, tok, 2), &ms.p, &len)) {
			ms.end = ms.p + len;
			if (!sig_method(&ms, psig, 0)) {
				psig->len = 0;
				sb_str(psig, "(?)");
			}
		}
	} else {
		if (tok == 0 || tok > img->tab[T_METHODDEF].rows)
			return false;
		*token = 0x06000000u | tok;
		if (owner->len) {
			sb_str(name, owner->buf);
			sb_str(name, ".");
			sb_str(name, r2r_md_string(img, r2r_cell(img, T_METHODDEF, tok, 3)));
		} else {
			r2r_methoddef_name(img, tok, name);
		}
		r2r_methoddef_sig(img, tok, psig);
	}
	return true;
}

bool r2r_instance_name(struct r2r_image *img, uint64_t off, struct sbuf *name,
		       struct sbuf *psig, uint32_t *token, uint64_t *after)
{
	struct sig s = { .img = img, .p = off, .end = img->size };
	struct sbuf owner = { .len = 0 };
	uint32_t flags, tok, module, n;
	struct gen_args targs, margs;
	size_t name_len;

	*token = 0;
	if (!r2r_sig_uint(&s, &flags))
		return false;
	if (flags & MSIG_UPDATE_CONTEXT) {
		if (!r2r_sig_uint(&s, &module))
			return false;
		s.foreign = module != 0;
	}
	if ((flags & MSIG_OWNER_TYPE) && !r2r_sig_type(&s, &owner, 0))
		return false;
	if (flags & MSIG_SLOT)
		return false;	/* not used for entry points */
	if (!r2r_sig_uint(&s, &tok) || !instance_method(&s, flags, tok, &owner, name, psig, token))
		return false;
	name_len = name->len;
	if (flags & MSIG_METHOD_INST) {
		if (!r2r_sig_uint(&s, &n) || n > 64)
			return false;
		sb_str(name, "[");
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				sb_str(name, ",");
			if (!r2r_sig_type(&s, name, 0))
				return false;
		}
		sb_str(name, "]");
	}
	if (flags & MSIG_CONSTRAINED) {
		struct sbuf tmp = { .len = 0 };

		if (!r2r_sig_type(&s, &tmp, 0))
			return false;
	}
	split_args(owner.buf, owner.len, &targs);
	split_args(name->buf, name->len, &margs);
	if (name->len == name_len)
		margs.n = 0;
	subst_generics(psig, &targs, &margs);
	if (flags & MSIG_UNBOXING)
		sb_str(name, " [unboxing]");
	if (flags & MSIG_INSTANTIATING)
		sb_str(name, " [instantiating]");
	*after = s.p;
	return true;
}
