// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ECMA-335 metadata of a ReadyToRun image (partition II.24): the metadata
 * root and its streams, the #~ tables' layout (II.22), the #Strings and
 * #Blob heaps, and the names of types and methods built from them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet/r2r_int.h"

/* column kinds: fixed sizes, heap indexes, table indexes, coded indexes */
enum {
	C_U1 = 1, C_U2, C_U4, C_STR, C_GUID, C_BLOB,
	C_TDOR, C_HASCONST, C_HASCA, C_HASFM, C_HASDS, C_MRPARENT, C_HASSEM,
	C_MDOR, C_MFWD, C_IMPL, C_CATYPE, C_RESSCOPE, C_TOMD,
	C_TABLE = 0x40,		/* + table number */
};

#define TI(t) (C_TABLE + (t))
static const uint8_t schema[T_NTABLES][9] = {
	[0x00] = { C_U2, C_STR, C_GUID, C_GUID, C_GUID },
	[0x01] = { C_RESSCOPE, C_STR, C_STR },
	[0x02] = { C_U4, C_STR, C_STR, C_TDOR, TI(0x04), TI(0x06) },
	[0x03] = { TI(0x04) },
	[0x04] = { C_U2, C_STR, C_BLOB },
	[0x05] = { TI(0x06) },
	[0x06] = { C_U4, C_U2, C_U2, C_STR, C_BLOB, TI(0x08) },
	[0x07] = { TI(0x08) },
	[0x08] = { C_U2, C_U2, C_STR },
	[0x09] = { TI(0x02), C_TDOR },
	[0x0a] = { C_MRPARENT, C_STR, C_BLOB },
	[0x0b] = { C_U2, C_HASCONST, C_BLOB },
	[0x0c] = { C_HASCA, C_CATYPE, C_BLOB },
	[0x0d] = { C_HASFM, C_BLOB },
	[0x0e] = { C_U2, C_HASDS, C_BLOB },
	[0x0f] = { C_U2, C_U4, TI(0x02) },
	[0x10] = { C_U4, TI(0x04) },
	[0x11] = { C_BLOB },
	[0x12] = { TI(0x02), TI(0x14) },
	[0x13] = { TI(0x14) },
	[0x14] = { C_U2, C_STR, C_TDOR },
	[0x15] = { TI(0x02), TI(0x17) },
	[0x16] = { TI(0x17) },
	[0x17] = { C_U2, C_STR, C_BLOB },
	[0x18] = { C_U2, TI(0x06), C_HASSEM },
	[0x19] = { TI(0x02), C_MDOR, C_MDOR },
	[0x1a] = { C_STR },
	[0x1b] = { C_BLOB },
	[0x1c] = { C_U2, C_MFWD, C_STR, TI(0x1a) },
	[0x1d] = { C_U4, TI(0x04) },
	[0x1e] = { C_U4, C_U4 },
	[0x1f] = { C_U4 },
	[0x20] = { C_U4, C_U2, C_U2, C_U2, C_U2, C_U4, C_BLOB, C_STR, C_STR },
	[0x21] = { C_U4 },
	[0x22] = { C_U4, C_U4, C_U4 },
	[0x23] = { C_U2, C_U2, C_U2, C_U2, C_U4, C_BLOB, C_STR, C_STR, C_BLOB },
	[0x24] = { C_U4, TI(0x23) },
	[0x25] = { C_U4, C_U4, C_U4, TI(0x23) },
	[0x26] = { C_U4, C_STR, C_BLOB },
	[0x27] = { C_U4, C_U4, C_STR, C_STR, C_IMPL },
	[0x28] = { C_U4, C_U4, C_STR, C_IMPL },
	[0x29] = { TI(0x02), TI(0x02) },
	[0x2a] = { C_U2, C_U2, C_TOMD, C_STR },
	[0x2b] = { C_MDOR, C_BLOB },
	[0x2c] = { TI(0x2a), C_TDOR },
};

/* coded index: tag bits and the tables it may point to (0xff: unused tag) */
struct coded {
	uint8_t bits, n, tables[22];
};

static const struct coded coded[] = {
	[C_TDOR] = { 2, 3, { 0x02, 0x01, 0x1b } },
	[C_HASCONST] = { 2, 3, { 0x04, 0x08, 0x17 } },
	[C_HASCA] = { 5, 22, { 0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0a, 0x00, 0x0e, 0x17,
			       0x14, 0x11, 0x1a, 0x1b, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2a,
			       0x2c, 0x2b } },
	[C_HASFM] = { 1, 2, { 0x04, 0x08 } },
	[C_HASDS] = { 2, 3, { 0x02, 0x06, 0x20 } },
	[C_MRPARENT] = { 3, 5, { 0x02, 0x01, 0x1a, 0x06, 0x1b } },
	[C_HASSEM] = { 1, 2, { 0x14, 0x17 } },
	[C_MDOR] = { 1, 2, { 0x06, 0x0a } },
	[C_MFWD] = { 1, 2, { 0x04, 0x06 } },
	[C_IMPL] = { 2, 3, { 0x26, 0x23, 0x27 } },
	[C_CATYPE] = { 3, 5, { 0xff, 0xff, 0x06, 0x0a, 0xff } },
	[C_RESSCOPE] = { 2, 4, { 0x00, 0x1a, 0x23, 0x01 } },
	[C_TOMD] = { 1, 2, { 0x02, 0x06 } },
};

static unsigned col_size(const struct r2r_image *img, uint8_t kind, unsigned heaps)
{
	uint32_t max = 0;

	switch (kind) {
	case C_U1: return 1;
	case C_U2: return 2;
	case C_U4: return 4;
	case C_STR: return heaps & 1 ? 4 : 2;
	case C_GUID: return heaps & 2 ? 4 : 2;
	case C_BLOB: return heaps & 4 ? 4 : 2;
	}
	if (kind >= C_TABLE)
		return img->tab[kind - C_TABLE].rows > 0xffff ? 4 : 2;
	for (unsigned i = 0; i < coded[kind].n; i++) {
		uint8_t t = coded[kind].tables[i];

		if (t != 0xff && img->tab[t].rows > max)
			max = img->tab[t].rows;
	}
	return max < (1u << (16 - coded[kind].bits)) ? 2 : 4;
}

/* The metadata root at MD_RVA and its stream headers: where the tables
 * (#~, or #- uncompressed), #Strings and #Blob are. */
static int parse_streams(struct r2r_image *img, uint32_t md_rva, uint32_t md_size,
			 uint64_t *tables_off, uint64_t *tables_size, struct err *e)
{
	uint64_t root, p;
	uint32_t vlen, nstreams;

	if (!r2r_rva_range(img, md_rva, md_size, &root) || md_size < 20)
		return err__set(e, ENOEXEC, "corrupt .NET assembly: metadata outside the file");
	if (rd32(img->data + root) != META_SIGNATURE)
		return err__set(e, ENOEXEC, "corrupt .NET assembly: bad metadata signature");
	vlen = rd32(img->data + root + 12);
	p = 16 + (uint64_t)((vlen + 3) & ~3u);
	if (vlen > md_size || p + 4 > md_size)
		return err__set(e, ENOEXEC,
				"corrupt .NET assembly: metadata version string too long");
	nstreams = rd16(img->data + root + p + 2);
	p += 4;
	for (uint32_t i = 0; i < nstreams; i++) {
		uint32_t off, size;
		const char *name;
		size_t n;

		if (p + 8 >= md_size)
			goto bad_streams;
		off = rd32(img->data + root + p);
		size = rd32(img->data + root + p + 4);
		name = (const char *)img->data + root + p + 8;
		n = strnlen(name, md_size - p - 8);
		if (n == md_size - p - 8 || n > 32)
			goto bad_streams;
		p += 8 + ((n + 4) & ~3u);
		if ((uint64_t)off + size > md_size)
			goto bad_streams;
		if (strcmp(name, "#~") == 0 || strcmp(name, "#-") == 0) {
			*tables_off = root + off;
			*tables_size = size;
		} else if (strcmp(name, "#Strings") == 0) {
			img->strings_off = root + off;
			img->strings_size = size;
		} else if (strcmp(name, "#Blob") == 0) {
			img->blob_off = root + off;
			img->blob_size = size;
		}
	}
	return 0;
bad_streams:
	return err__set(e, ENOEXEC, "corrupt .NET assembly: bad metadata stream headers");
}

/* The #~ stream's header: row counts of the present tables, then each
 * table's columns sized by the heaps' and tables' sizes (II.24.2.6). */
static int parse_tables(struct r2r_image *img, uint64_t tables_off, uint64_t tables_size,
			struct err *e)
{
	uint64_t valid, p, end = tables_off + tables_size;
	uint32_t heaps;

	heaps = img->data[tables_off + 6];
	valid = (uint64_t)rd32(img->data + tables_off + 8) |
		(uint64_t)rd32(img->data + tables_off + 12) << 32;
	p = tables_off + 24;
	for (unsigned t = 0; t < 64; t++) {
		if (!(valid >> t & 1))
			continue;
		if (p + 4 > end)
			goto bad_tables;
		if (t < T_NTABLES)
			img->tab[t].rows = rd32(img->data + p);
		p += 4;
	}
	if (heaps & 0x40)	/* extra data after the row counts */
		p += 4;
	for (unsigned t = 0; t < T_NTABLES; t++) {
		struct table *tb = &img->tab[t];
		unsigned off = 0;

		if (!(valid >> t & 1))
			continue;
		for (unsigned c = 0; c < 9 && schema[t][c]; c++) {
			tb->col_off[c] = (uint8_t)off;
			tb->col_size[c] = (uint8_t)col_size(img, schema[t][c], heaps);
			off += tb->col_size[c];
		}
		tb->row_size = off;
		tb->off = p;
		if ((uint64_t)tb->rows * off > end - p)
			goto bad_tables;
		p += (uint64_t)tb->rows * off;
	}
	return 0;
bad_tables:
	return err__set(e, ENOEXEC, "corrupt .NET assembly: metadata tables run past their stream");
}

int r2r_meta_parse(struct r2r_image *img, uint32_t md_rva, uint32_t md_size, struct err *e)
{
	uint64_t tables_off = 0, tables_size = 0;
	int err;

	err = parse_streams(img, md_rva, md_size, &tables_off, &tables_size, e);
	if (err)
		return err;
	if (!tables_off || !img->strings_off || tables_size < 24)
		return err__set(e, ENOEXEC,
				"corrupt .NET assembly: no #~ or #Strings metadata stream");
	return parse_tables(img, tables_off, tables_size, e);
}

/* column COL of row RID (1-based) of table T; 0 when out of range */
uint32_t r2r_cell(const struct r2r_image *img, unsigned t, uint32_t rid, unsigned col)
{
	const struct table *tb = &img->tab[t];
	uint32_t v = 0;

	if (rid == 0 || rid > tb->rows || !tb->col_size[col])
		return 0;
	get_uint(img, tb->off + (uint64_t)(rid - 1) * tb->row_size + tb->col_off[col],
		 tb->col_size[col], &v);
	return v;
}

const char *r2r_md_string(const struct r2r_image *img, uint32_t idx)
{
	const char *s;

	if (idx >= img->strings_size)
		return "?";
	s = (const char *)img->data + img->strings_off + idx;
	if (strnlen(s, img->strings_size - idx) == img->strings_size - idx)
		return "?";
	return s;
}

/* blob at heap index IDX: *len and the file offset of its bytes */
bool r2r_md_blob(const struct r2r_image *img, uint32_t idx, uint64_t *off, uint32_t *len)
{
	uint64_t p = img->blob_off + idx;
	uint64_t end = img->blob_off + img->blob_size;
	uint8_t b;

	if (idx >= img->blob_size)
		return false;
	b = img->data[p];
	if (!(b & 0x80)) {
		*len = b;
		p += 1;
	} else if ((b & 0xc0) == 0x80 && p + 2 <= end) {
		*len = (uint32_t)(b & 0x3f) << 8 | img->data[p + 1];
		p += 2;
	} else if ((b & 0xe0) == 0xc0 && p + 4 <= end) {
		*len = (uint32_t)(b & 0x1f) << 24 | (uint32_t)img->data[p + 1] << 16 |
		       (uint32_t)img->data[p + 2] << 8 | img->data[p + 3];
		p += 4;
	} else {
		return false;
	}
	if (*len > end - p)
		return false;
	*off = p;
	return true;
}

/* "Namespace." before a top-level type's name (nothing for the global
 * namespace). */
static void sb_namespace(struct sbuf *b, const char *ns)
{
	if (*ns) {
		sb_str(b, ns);
		sb_str(b, ".");
	}
}

void r2r_typedef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth)
{
	uint32_t outer = rid <= img->tab[T_TYPEDEF].rows ? img->enclosing[rid] : 0;

	if (outer && depth < MAX_SIG_DEPTH) {
		r2r_typedef_name(img, outer, b, depth + 1);
		sb_str(b, "+");
	} else {
		sb_namespace(b, r2r_md_string(img, r2r_cell(img, T_TYPEDEF, rid, 2)));
	}
	sb_str(b, r2r_md_string(img, r2r_cell(img, T_TYPEDEF, rid, 1)));
}

void r2r_typeref_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth)
{
	uint32_t scope = r2r_cell(img, T_TYPEREF, rid, 0);

	/* ResolutionScope tag 3: TypeRef, i.e. a nested type */
	if ((scope & 3) == 3 && depth < MAX_SIG_DEPTH) {
		r2r_typeref_name(img, scope >> 2, b, depth + 1);
		sb_str(b, "+");
	} else {
		sb_namespace(b, r2r_md_string(img, r2r_cell(img, T_TYPEREF, rid, 2)));
	}
	sb_str(b, r2r_md_string(img, r2r_cell(img, T_TYPEREF, rid, 1)));
}

void r2r_methoddef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b)
{
	uint32_t owner = img->method_owner[rid];

	if (owner) {
		r2r_typedef_name(img, owner, b, 0);
		sb_str(b, ".");
	}
	sb_str(b, r2r_md_string(img, r2r_cell(img, T_METHODDEF, rid, 3)));
}

/* MethodDef rid -> owning TypeDef, TypeDef -> enclosing TypeDef */
int r2r_meta_index_types(struct r2r_image *img)
{
	uint32_t ntypes = img->tab[T_TYPEDEF].rows, nmeth = img->tab[T_METHODDEF].rows;

	img->method_owner = calloc((size_t)nmeth + 1, sizeof(uint32_t));
	img->enclosing = calloc((size_t)ntypes + 1, sizeof(uint32_t));
	if (!img->method_owner || !img->enclosing)
		return -ENOMEM;
	for (uint32_t t = 1; t <= ntypes; t++) {
		uint32_t first = r2r_cell(img, T_TYPEDEF, t, 5);
		uint32_t last = t < ntypes ? r2r_cell(img, T_TYPEDEF, t + 1, 5) : nmeth + 1;

		if (last > nmeth + 1)
			last = nmeth + 1;
		for (uint32_t m = first; m && m < last; m++)
			img->method_owner[m] = t;
	}
	for (uint32_t i = 1; i <= img->tab[T_NESTEDCLASS].rows; i++) {
		uint32_t nested = r2r_cell(img, T_NESTEDCLASS, i, 0);
		uint32_t outer = r2r_cell(img, T_NESTEDCLASS, i, 1);

		if (nested && nested <= ntypes && outer <= ntypes && outer != nested)
			img->enclosing[nested] = outer;
	}
	return 0;
}
