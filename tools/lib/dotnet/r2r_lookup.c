// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Method lookup in an indexed ReadyToRun image: by index, by name (with
 * the same leniency as 'sidescope uprobe' names), by RVA or file offset
 * (binary search over the runtime functions), and the metadata's own
 * methods for those without code. */
#include <errno.h>
#include <string.h>

#include "dotnet/r2r_int.h"

void r2r__version(const struct r2r_image *img, unsigned *major, unsigned *minor)
{
	*major = img->major;
	*minor = img->minor;
}

unsigned r2r__machine(const struct r2r_image *img)
{
	return img->machine;
}

size_t r2r__method_count(const struct r2r_image *img)
{
	return img->nmeths;
}

static void fill_info(const struct r2r_image *img, const struct meth *m,
		      struct r2r_method_info *out)
{
	uint64_t off = 0;

	out->name = img->arena + m->name;
	out->signature = img->arena + m->sig;
	out->token = m->token;
	out->rva = rf_begin(img, m->rf);
	out->size = rf_end(img, m->rf) - out->rva;
	r2r_rva_to_off(img, out->rva, &off);
	out->file_offset = off;
	out->nbodies = m->nbodies;
	out->instantiation = m->inst;
	/* MethodDef flag Static (0x0010): no 'this' in the first argument */
	out->is_static = m->token && (r2r_cell(img, T_METHODDEF, m->token & 0xffffff, 2) & 0x10);
}

int r2r__method_at(const struct r2r_image *img, size_t i, struct r2r_method_info *out)
{
	if (i >= img->nmeths)
		return -ERANGE;
	fill_info(img, &img->meths[i], out);
	return 0;
}

/* Past a generic arity "`N" at NAME[I] (the backquote). */
static size_t skip_arity(const char *name, size_t i, size_t nlen)
{
	for (i++; i < nlen && name[i] >= '0' && name[i] <= '9'; i++)
		;
	return i;
}

/* Past an instantiation "[...]" at NAME[I] (the opening bracket), nested
 * brackets included. */
static size_t skip_inst(const char *name, size_t i, size_t nlen)
{
	int depth = 0;

	for (; i < nlen; i++) {
		if (name[i] == '[')
			depth++;
		else if (name[i] == ']' && --depth == 0)
			break;
	}
	return i + 1;
}

/* Compare a method name with a wanted name: '+' and '.' are the same, a
 * generic instantiation "[...]" directly after the method name or a type
 * name may be left out of WANT, and WANT may end with a parameter list that
 * must equal SIG. Return true on a match of all of NAME. */
static bool name_matches(const char *name, const char *sig, const char *want, size_t wlen)
{
	const char *paren = memchr(want, '(', wlen);
	size_t i = 0, j = 0, nlen = strlen(name);

	if (paren) {
		size_t plen = wlen - (size_t)(paren - want);

		if (strlen(sig) != plen || memcmp(sig, paren, plen) != 0)
			return false;
		wlen = (size_t)(paren - want);
	}
	while (i < nlen && j < wlen) {
		char a = name[i] == '+' ? '.' : name[i];
		char b = want[j] == '+' ? '.' : want[j];

		if (a == b)
			i++, j++;
		else if (name[i] == '`')	/* generic arity ("List`1") WANT may leave out */
			i = skip_arity(name, i, nlen);
		else if (name[i] == '[')	/* the instantiation WANT does not spell out */
			i = skip_inst(name, i, nlen);
		else
			return false;
	}
	if (j < wlen)
		return false;
	if (i < nlen && name[i] == '`')
		i = skip_arity(name, i, nlen);
	if (i < nlen && name[i] == '[')
		i = skip_inst(name, i, nlen);
	/* instantiating/unboxing stubs are named "X [stub]": also match */
	return i >= nlen || name[i] == ' ';
}

size_t r2r__find_method(const struct r2r_image *img, const char *name,
			struct r2r_method_info *out, size_t max)
{
	size_t n = 0, wlen = strlen(name);

	for (int pass = 0; pass < 2 && n == 0; pass++) {
		for (size_t i = 0; i < img->nmeths; i++) {
			const struct meth *m = &img->meths[i];
			const char *mn = img->arena + m->name;
			bool hit;

			if (pass == 0) {
				hit = name_matches(mn, img->arena + m->sig, name, wlen);
			} else {
				/* suffix at a '.' or '+' boundary */
				hit = false;
				for (const char *p = mn; *p && !hit; p++)
					if (*p == '.' || *p == '+')
						hit = name_matches(p + 1, img->arena + m->sig,
								   name, wlen);
			}
			if (!hit)
				continue;
			if (n < max)
				fill_info(img, m, &out[n]);
			n++;
		}
	}
	return n;
}

int r2r__lookup_rva(const struct r2r_image *img, uint32_t rva, const char **name,
		    uint32_t *start, uint32_t *size)
{
	uint32_t lo = 0, hi = img->nrf, i, b, e;

	/* last runtime function beginning at or before rva */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rf_begin(img, mid) <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	i = lo - 1;
	b = rf_begin(img, i);
	e = rf_end(img, i);
	if (rva >= e || img->rf_owner[i] == NO_METHOD)
		return -ENOENT;
	if (name)
		*name = img->arena + img->meths[img->rf_owner[i]].name;
	if (start)
		*start = b;
	if (size)
		*size = e - b;
	return 0;
}

size_t r2r__code_range_count(const struct r2r_image *img)
{
	return img->nrf;
}

int r2r__code_range_at(const struct r2r_image *img, size_t i, uint32_t *begin, uint32_t *end)
{
	if (i >= img->nrf)
		return -ERANGE;
	*begin = rf_begin(img, (uint32_t)i);
	*end = rf_end(img, (uint32_t)i);
	return 0;
}

int r2r__lookup_file_offset(const struct r2r_image *img, uint64_t off, const char **name,
			    uint32_t *start, uint32_t *size)
{
	uint32_t rva;

	if (r2r__rva_from_file_offset(img, off, &rva))
		return -ENOENT;
	return r2r__lookup_rva(img, rva, name, start, size);
}

bool r2r__in_metadata(const struct r2r_image *img, const char *want)
{
	size_t wlen = strlen(want);

	for (uint32_t rid = 1; rid <= img->tab[T_METHODDEF].rows; rid++) {
		struct sbuf name = { .len = 0 }, sig = { .len = 0 };

		r2r_methoddef_name(img, rid, &name);
		if (strchr(want, '('))
			r2r_methoddef_sig(img, rid, &sig);
		if (name_matches(name.buf, sig.buf, want, wlen))
			return true;
		for (const char *p = name.buf; *p; p++)
			if ((*p == '.' || *p == '+') && name_matches(p + 1, sig.buf, want, wlen))
				return true;
	}
	return false;
}
