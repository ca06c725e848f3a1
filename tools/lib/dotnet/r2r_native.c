// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The native layout of a ReadyToRun image, as the runtime's format
 * description has it: the READYTORUN_HEADER and its section list, the
 * RuntimeFunctions table, NativeFormat integers, the NativeArray of
 * MethodDefEntryPoints, the NativeHashtable of InstanceEntryPoints and the
 * HotColdMap. Together they make the method table: every method with code,
 * its name and signature in a string arena, the runtime functions it owns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet/r2r_int.h"

#ifndef R2R_ARENA_MAX	/* a test builds this file with a small one */
#define R2R_ARENA_MAX	(256ull << 20)
#endif

/* Copy [s, s + n) and a NUL into the arena; *off its offset. 0, -EFBIG
 * (past R2R_ARENA_MAX, why in E) or -ENOMEM. */
static int arena_add(struct r2r_image *img, const char *s, size_t n, uint32_t *off,
		     struct err *e)
{
	if (img->arena_len + n + 1 > img->arena_cap) {
		size_t cap = img->arena_cap ? img->arena_cap * 2 : 65536;
		char *p;

		while (cap < img->arena_len + n + 1)
			cap *= 2;
		/* the names of every method of a real assembly take a few MiB;
		 * a hostile one must not make us hold gigabytes */
		if (cap > R2R_ARENA_MAX)
			return err__set(e, EFBIG, "more method names than %u MiB: not a real assembly",
					(unsigned)(R2R_ARENA_MAX >> 20));
		p = realloc(img->arena, cap);
		if (!p)
			return -ENOMEM;
		img->arena = p;
		img->arena_cap = cap;
	}
	memcpy(img->arena + img->arena_len, s, n);
	img->arena[img->arena_len + n] = '\0';
	*off = (uint32_t)img->arena_len;
	img->arena_len += n + 1;
	return 0;
}

/* ---- ReadyToRun native format ------------------------------------------ */

/* NativeFormat variable-length integers: the count of low one bits of the
 * first byte says how many bytes follow; the value is in the remaining
 * bits, little-endian. *bits is the value's width (7, 14, 21, 28 or 32),
 * for sign extension. */
static bool nat_decode(const struct r2r_image *img, uint64_t *off, uint32_t *v,
		       unsigned int *bits)
{
	const uint8_t *d = img->data + *off;
	unsigned int n, k;
	uint32_t x;

	if (!in_file(img, *off, 1))
		return false;
	for (n = 0; n < 5 && (d[0] >> n & 1); n++)
		;
	if (n == 5 || !in_file(img, *off, n + 1))
		return false;
	if (n == 4) {
		*v = rd32(d + 1);
		*bits = 32;
	} else {
		x = (uint32_t)d[0] >> (n + 1);
		for (k = 1; k <= n; k++)
			x |= (uint32_t)d[k] << (8 * k - n - 1);
		*v = x;
		*bits = 7 * (n + 1);
	}
	*off += n + 1;
	return true;
}

static bool nat_uint(const struct r2r_image *img, uint64_t *off, uint32_t *v)
{
	unsigned int bits;

	return nat_decode(img, off, v, &bits);
}

static bool nat_int(const struct r2r_image *img, uint64_t *off, int32_t *v)
{
	unsigned int bits;
	uint32_t u;

	if (!nat_decode(img, off, &u, &bits))
		return false;
	if (bits < 32 && (u >> (bits - 1) & 1))
		u |= ~0U << bits;
	*v = (int32_t)u;
	return true;
}

/* A method entry: runtime function index, with an optional fixup list
 * (which we skip). */
static bool entry_point(const struct r2r_image *img, uint64_t off, uint32_t *rf)
{
	uint32_t id;

	if (!nat_uint(img, &off, &id))
		return false;
	*rf = id & 1 ? id >> 2 : id >> 1;
	return *rf < img->nrf;
}

struct nat_array {
	uint64_t base;
	uint32_t count;
	unsigned index_size;
};

#define NAT_BLOCK 16

/* NativeArray element INDEX: offset of its data, false when absent */
static bool nat_array_get(const struct r2r_image *img, const struct nat_array *a,
			  uint32_t index, uint64_t *out)
{
	uint32_t v;
	uint64_t off;

	if (index >= a->count ||
	    !get_uint(img, a->base + (uint64_t)a->index_size * (index / NAT_BLOCK),
		      a->index_size, &v))
		return false;
	off = a->base + v;
	for (uint32_t bit = NAT_BLOCK >> 1; bit; bit >>= 1) {
		uint64_t next = off;
		uint32_t val;

		if (!nat_uint(img, &next, &val))
			return false;
		if (index & bit) {
			if (val & 2) {
				if ((val >> 2) == 0)
					return false;	/* no progress: corrupt */
				off += val >> 2;
				continue;
			}
		} else if (val & 1) {
			off = next;
			continue;
		}
		/* a leaf holding one element, or nothing */
		if ((val & 3) == 0 && (val >> 2) == (index & (NAT_BLOCK - 1))) {
			off = next;
			break;
		}
		return false;
	}
	*out = off;
	return true;
}

/* ---- building the method table ----------------------------------------- */

static int add_method(struct r2r_image *img, size_t *cap, uint32_t rf, uint32_t token,
		      const struct sbuf *name, const struct sbuf *sig, bool inst, struct err *e)
{
	struct meth *m;
	int err;

	if (img->nmeths == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct meth *p = realloc(img->meths, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		img->meths = p;
		*cap = ncap;
	}
	m = &img->meths[img->nmeths];
	memset(m, 0, sizeof(*m));
	m->rf = rf;
	m->token = token;
	m->inst = inst;
	err = arena_add(img, name->buf, name->len, &m->name, e);
	if (!err)
		err = arena_add(img, sig->buf, sig->len, &m->sig, e);
	if (err)
		return err;
	img->nmeths++;
	return 0;
}

/* MethodDefEntryPoints: a NativeArray indexed by MethodDef rid - 1. */
static int load_methoddef_entries(struct r2r_image *img, uint32_t rva, uint32_t size,
				  size_t *cap, struct err *e)
{
	struct nat_array a;
	uint64_t off;
	uint32_t hdr;
	int err;

	if (!r2r_rva_range(img, rva, size, &off) || !nat_uint(img, &off, &hdr))
		return err__set(e, ENOEXEC,
				"corrupt ReadyToRun image: bad MethodDefEntryPoints section");
	a.base = off;
	a.count = hdr >> 2;
	a.index_size = 1u << (hdr & 3);
	if ((hdr & 3) == 3)
		return err__set(e, ENOEXEC,
				"corrupt ReadyToRun image: bad MethodDefEntryPoints header");
	for (uint32_t i = 0; i < a.count && i < img->tab[T_METHODDEF].rows; i++) {
		struct sbuf name = { .len = 0 }, sig = { .len = 0 };
		uint64_t entry;
		uint32_t rf;

		if (!nat_array_get(img, &a, i, &entry) || !entry_point(img, entry, &rf))
			continue;
		r2r_methoddef_name(img, i + 1, &name);
		r2r_methoddef_sig(img, i + 1, &sig);
		err = add_method(img, cap, rf, 0x06000000u | (i + 1), &name, &sig, false, e);
		if (err)
			return err;
	}
	return 0;
}

/* InstanceEntryPoints: a NativeHashtable whose entries are an instance
 * method signature followed by its entry point. */
static int load_instance_entries(struct r2r_image *img, uint32_t rva, uint32_t size,
				 size_t *cap, struct err *e)
{
	uint64_t base, end;
	uint32_t header, nbuckets, isz;
	int err;

	if (!r2r_rva_range(img, rva, size, &base) || size < 1)
		return err__set(e, ENOEXEC,
				"corrupt ReadyToRun image: bad InstanceEntryPoints section");
	end = base + size;
	header = img->data[base++];
	if ((header & 3) == 3 || (header >> 2) > 24)
		return err__set(e, ENOEXEC,
				"corrupt ReadyToRun image: bad InstanceEntryPoints header");
	isz = 1u << (header & 3);
	nbuckets = 1u << (header >> 2);
	for (uint32_t bkt = 0; bkt < nbuckets; bkt++) {
		uint32_t first, last;
		uint64_t p, stop;

		if (!get_uint(img, base + (uint64_t)bkt * isz, isz, &first) ||
		    !get_uint(img, base + (uint64_t)(bkt + 1) * isz, isz, &last))
			break;
		p = base + first;
		stop = base + last;
		if (stop > end)
			stop = end;
		while (p < stop) {
			struct sbuf name = { .len = 0 }, sig = { .len = 0 };
			uint64_t here, entry, after;
			uint32_t rf, token;
			int32_t delta;

			p++;	/* low byte of the hash code */
			here = p;
			if (!nat_int(img, &p, &delta))
				break;
			entry = here + (int64_t)delta;
			if (entry >= img->size)
				continue;
			if (!r2r_instance_name(img, entry, &name, &sig, &token, &after) ||
			    !entry_point(img, after, &rf))
				continue;
			err = add_method(img, cap, rf, token, &name, &sig, true, e);
			if (err)
				return err;
		}
	}
	return 0;
}

static int cmp_meth(const void *a, const void *b)
{
	const struct meth *x = a, *y = b;

	if (x->rf != y->rf)
		return x->rf < y->rf ? -1 : 1;
	/* the MethodDef entry before instantiations sharing its code */
	if (x->inst != y->inst)
		return x->inst ? 1 : -1;
	return x->token < y->token ? -1 : x->token > y->token;
}

/* The runtime functions' ranges, copied out of the file: lookups need no
 * file data (r2r__release_file). */
static int load_runtime_functions(struct r2r_image *img)
{
	img->rf_b = malloc((img->nrf ? img->nrf : 1) * sizeof(uint32_t));
	img->rf_e = malloc((img->nrf ? img->nrf : 1) * sizeof(uint32_t));
	if (!img->rf_b || !img->rf_e)
		return -ENOMEM;
	for (uint32_t i = 0; i < img->nrf; i++)
		img->rf_b[i] = rd32(img->data + img->rf_off + (uint64_t)i * img->rf_entry);
	for (uint32_t i = 0; i < img->nrf; i++) {
		if (img->rf_entry == 12)
			img->rf_e[i] = rd32(img->data + img->rf_off + (uint64_t)i * 12 + 4);
		else	/* no end address (arm64): up to the next function */
			img->rf_e[i] = i + 1 < img->nrf ? img->rf_b[i + 1] : img->rf_b[i] + 4;
	}
	return 0;
}

/* Every runtime function belongs to the nearest method entry at or before
 * it: funclets follow their method's main body (the runtime itself walks
 * back the same way); cold parts map to their hot part through HotColdMap. */
static int assign_owners(struct r2r_image *img, uint32_t hc_rva, uint32_t hc_size)
{
	uint32_t cur = NO_METHOD, k = 0;

	img->rf_owner = malloc((img->nrf ? img->nrf : 1) * sizeof(uint32_t));
	if (!img->rf_owner)
		return -ENOMEM;
	for (uint32_t i = 0; i < img->nrf; i++) {
		while (k < img->nmeths && img->meths[k].rf <= i) {
			if (k == 0 || img->meths[k].rf != img->meths[k - 1].rf)
				cur = k;
			k++;
		}
		img->rf_owner[i] = cur;
		if (cur != NO_METHOD)
			img->meths[cur].nbodies++;
	}
	if (hc_size >= 8) {
		uint64_t off;
		uint32_t npairs = hc_size / 8;

		if (!r2r_rva_range(img, hc_rva, hc_size, &off))
			return 0;
		for (uint32_t j = 0; j < npairs; j++) {
			uint32_t cold = rd32(img->data + off + j * 8);
			uint32_t hot = rd32(img->data + off + j * 8 + 4);
			uint32_t cold_end = j + 1 < npairs ? rd32(img->data + off + j * 8 + 8)
							   : img->nrf;

			if (cold >= img->nrf || hot >= img->nrf || cold_end > img->nrf)
				continue;
			for (uint32_t i = cold; i < cold_end; i++) {
				if (img->rf_owner[i] != NO_METHOD)
					img->meths[img->rf_owner[i]].nbodies--;
				img->rf_owner[i] = img->rf_owner[hot];
				if (img->rf_owner[i] != NO_METHOD)
					img->meths[img->rf_owner[i]].nbodies++;
			}
		}
	}
	return 0;
}

/* Where the sections the reader uses are (size 0: absent). */
struct rtr_sections {
	uint32_t rf_rva, rf_size, md_rva, md_size, inst_rva, inst_size, hc_rva, hc_size;
};

/* The READYTORUN_HEADER at HDR_RVA: its version into img, its section list
 * into *S. */
static int read_header(struct r2r_image *img, uint32_t hdr_rva, struct rtr_sections *s,
		       struct err *e)
{
	uint32_t nsections;
	uint64_t off;

	if (!r2r_rva_range(img, hdr_rva, 16, &off))
		return err__set(e, ENOEXEC, "corrupt ReadyToRun image: header outside the file");
	if (rd32(img->data + off) != RTR_SIGNATURE)
		return err__set(e, ENOEXEC,
				"not a ReadyToRun image: bad ReadyToRun header signature");
	img->major = rd16(img->data + off + 4);
	img->minor = rd16(img->data + off + 6);
	nsections = rd32(img->data + off + 12);
	if (nsections > 1024 || !in_file(img, off + 16, (uint64_t)nsections * 12))
		return err__set(e, ENOEXEC, "corrupt ReadyToRun image: section list cut short");
	for (uint32_t i = 0; i < nsections; i++) {
		const uint8_t *h = img->data + off + 16 + i * 12;
		uint32_t type = rd32(h), rva = rd32(h + 4), size = rd32(h + 8);

		switch (type) {
		case RTR_RUNTIME_FUNCTIONS:
			s->rf_rva = rva, s->rf_size = size;
			break;
		case RTR_METHODDEF_ENTRY_POINTS:
			s->md_rva = rva, s->md_size = size;
			break;
		case RTR_INSTANCE_ENTRY_POINTS:
			s->inst_rva = rva, s->inst_size = size;
			break;
		case RTR_HOT_COLD_MAP:
			s->hc_rva = rva, s->hc_size = size;
			break;
		case RTR_OWNER_COMPOSITE:
			return err__set(e, ENOEXEC, "ReadyToRun component of a composite image: its "
					"code is in the composite file (not supported)");
		}
	}
	return 0;
}

int r2r_native_parse(struct r2r_image *img, uint32_t hdr_rva, uint32_t hdr_size, struct err *e)
{
	struct rtr_sections s = { 0 };
	size_t cap = 0;
	int err;

	err = read_header(img, hdr_rva, &s, e);
	if (err)
		return err;
	img->rf_entry = img->machine == 0x8664 ? 12 : 8;
	if (!s.rf_size || !r2r_rva_range(img, s.rf_rva, s.rf_size, &img->rf_off))
		return err__set(e, ENOEXEC, "corrupt ReadyToRun image: no RuntimeFunctions section");
	img->nrf = s.rf_size / img->rf_entry;
	if (load_runtime_functions(img))
		return -ENOMEM;
	for (uint32_t i = 1; i < img->nrf; i++) {
		if (rf_begin(img, i) < rf_begin(img, i - 1))
			return err__set(e, ENOEXEC,
					"corrupt ReadyToRun image: runtime functions not sorted");
	}
	if (s.md_size) {
		err = load_methoddef_entries(img, s.md_rva, s.md_size, &cap, e);
		if (err)
			return err;
	}
	if (s.inst_size) {
		err = load_instance_entries(img, s.inst_rva, s.inst_size, &cap, e);
		if (err)
			return err;
	}
	if (img->nmeths)
		qsort(img->meths, img->nmeths, sizeof(*img->meths), cmp_meth);
	return assign_owners(img, s.hc_rva, s.hc_size);
}
