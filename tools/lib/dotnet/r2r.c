// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ReadyToRun reader, written from ECMA-335 (partition II: PE file format,
 * metadata tables, signatures) and the ReadyToRun format description of the
 * .NET runtime (READYTORUN_HEADER, NativeArray, NativeHashtable, method
 * entry points). The whole file is mapped read-only; every access goes
 * through bounds-checked helpers. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/log.h"
#include "dotnet/r2r.h"
#include "core/util.h"

#define RTR_SIGNATURE		0x00525452u	/* "RTR" */
#define META_SIGNATURE		0x424a5342u	/* "BSJB" */

enum rtr_section {
	RTR_RUNTIME_FUNCTIONS = 102,
	RTR_METHODDEF_ENTRY_POINTS = 103,
	RTR_INSTANCE_ENTRY_POINTS = 109,
	RTR_OWNER_COMPOSITE = 116,
	RTR_HOT_COLD_MAP = 120,
};

/* metadata tables that name methods */
enum {
	T_MODULE = 0x00, T_TYPEREF = 0x01, T_TYPEDEF = 0x02, T_FIELD = 0x04,
	T_METHODDEF = 0x06, T_PARAM = 0x08, T_MEMBERREF = 0x0a,
	T_TYPESPEC = 0x1b, T_NESTEDCLASS = 0x29, T_NTABLES = 0x2d,
};

#define MAX_SIG_DEPTH	32
#define NO_METHOD	UINT32_MAX

struct section {
	uint32_t va, vsize, raw_off, raw_size;
};

struct table {
	uint32_t rows, row_size;
	uint64_t off;		/* file offset of row 1 */
	uint8_t col_off[9], col_size[9];
};

struct meth {
	uint32_t rf;		/* index of the main runtime function */
	uint32_t token;
	uint32_t name, sig;	/* offsets in the string arena */
	uint32_t nbodies;
	bool inst;
};

struct r2r_image {
	const uint8_t *data;
	size_t size;
	unsigned machine, major, minor;
	struct section *sec;
	unsigned nsec;
	/* metadata */
	uint64_t strings_off, strings_size, blob_off, blob_size;
	struct table tab[T_NTABLES];
	uint32_t *method_owner;	/* MethodDef rid -> TypeDef rid (0: none) */
	uint32_t *enclosing;	/* TypeDef rid -> enclosing TypeDef rid */
	/* code */
	uint64_t rf_off;
	uint32_t nrf, rf_entry;
	uint32_t *rf_b, *rf_e;	/* begin and end RVA of each runtime function */
	uint32_t *rf_owner;	/* runtime function -> index in meths */
	struct meth *meths;
	size_t nmeths;
	char *arena;
	size_t arena_len, arena_cap;
};

static __thread char last_error[256];

static void set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *r2r__error(void)
{
	return last_error;
}

/* ---- bounds-checked reads --------------------------------------------- */

static bool in_file(const struct r2r_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* read a little-endian value of 1, 2 or 4 bytes at file offset OFF */
static bool get_uint(const struct r2r_image *img, uint64_t off, unsigned len, uint32_t *v)
{
	if (!in_file(img, off, len))
		return false;
	*v = len == 1 ? img->data[off] : len == 2 ? rd16(img->data + off) : rd32(img->data + off);
	return true;
}

static int rva_to_off(const struct r2r_image *img, uint32_t rva, uint64_t *off)
{
	for (unsigned i = 0; i < img->nsec; i++) {
		const struct section *s = &img->sec[i];
		uint32_t span = s->vsize > s->raw_size ? s->vsize : s->raw_size;

		if (rva >= s->va && rva - s->va < span) {
			if (rva - s->va >= s->raw_size)
				return -ENOENT;	/* zero-fill, not in the file */
			*off = (uint64_t)s->raw_off + (rva - s->va);
			return 0;
		}
	}
	return -ENOENT;
}

/* file offset of [rva, rva + len) when all of it is in the file */
static bool rva_range(const struct r2r_image *img, uint32_t rva, uint64_t len, uint64_t *off)
{
	return rva_to_off(img, rva, off) == 0 && in_file(img, *off, len);
}

int r2r__file_offset_from_rva(const struct r2r_image *img, uint32_t rva, uint64_t *off)
{
	return rva_to_off(img, rva, off);
}

int r2r__rva_from_file_offset(const struct r2r_image *img, uint64_t off, uint32_t *rva)
{
	for (unsigned i = 0; i < img->nsec; i++) {
		const struct section *s = &img->sec[i];

		if (off >= s->raw_off && off - s->raw_off < s->raw_size) {
			*rva = s->va + (uint32_t)(off - s->raw_off);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- string arena ------------------------------------------------------ */

#ifndef R2R_ARENA_MAX	/* a test builds this file with a small one */
#define R2R_ARENA_MAX	(256ull << 20)
#endif

struct sbuf {
	char buf[1024];
	size_t len;
	bool overflow;
};

static void sb_puts(struct sbuf *b, const char *s, size_t n)
{
	if (n > sizeof(b->buf) - 1 - b->len) {
		n = sizeof(b->buf) - 1 - b->len;
		b->overflow = true;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_puts(b, s, strlen(s));
}

static int arena_add(struct r2r_image *img, const char *s, size_t n, uint32_t *off)
{
	if (img->arena_len + n + 1 > img->arena_cap) {
		size_t cap = img->arena_cap ? img->arena_cap * 2 : 65536;
		char *p;

		while (cap < img->arena_len + n + 1)
			cap *= 2;
		/* the names of every method of a real assembly take a few MiB;
		 * a hostile one must not make us hold gigabytes */
		if (cap > R2R_ARENA_MAX) {
			set_error("more method names than %u MiB: not a real assembly",
				  (unsigned)(R2R_ARENA_MAX >> 20));
			return -EFBIG;
		}
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

/* ---- PE and CLI headers ------------------------------------------------ */

static int parse_pe(struct r2r_image *img, uint32_t *cli_rva, uint32_t *cli_size)
{
	uint32_t pe, nsec, optsz, magic, ndirs, dir_off;
	uint64_t sec_off;

	if (img->size < 0x40 || img->data[0] != 'M' || img->data[1] != 'Z') {
		set_error("not a PE file (no MZ header)");
		return -ENOEXEC;
	}
	pe = rd32(img->data + 0x3c);
	if (!in_file(img, pe, 24) || memcmp(img->data + pe, "PE\0\0", 4) != 0) {
		set_error("not a PE file (no PE signature at 0x%x)", pe);
		return -ENOEXEC;
	}
	img->machine = rd16(img->data + pe + 4);
	nsec = rd16(img->data + pe + 6);
	optsz = rd16(img->data + pe + 20);
	if (!in_file(img, (uint64_t)pe + 24, optsz) || optsz < 2) {
		set_error("truncated PE file: optional header cut short");
		return -ENOEXEC;
	}
	magic = rd16(img->data + pe + 24);
	if (magic == 0x10b) {
		dir_off = 96;
	} else if (magic == 0x20b) {
		dir_off = 112;
	} else {
		set_error("corrupt PE file: unknown optional header magic 0x%x", magic);
		return -ENOEXEC;
	}
	if (optsz < dir_off) {
		set_error("corrupt PE file: optional header too small (%u bytes)", optsz);
		return -ENOEXEC;
	}
	ndirs = rd32(img->data + pe + 24 + dir_off - 4);
	if (ndirs < 15 || optsz < dir_off + 15 * 8) {
		set_error("not a .NET assembly: PE file without a CLI header");
		return -ENOEXEC;
	}
	*cli_rva = rd32(img->data + pe + 24 + dir_off + 14 * 8);
	*cli_size = rd32(img->data + pe + 24 + dir_off + 14 * 8 + 4);

	sec_off = (uint64_t)pe + 24 + optsz;
	if (nsec == 0 || !in_file(img, sec_off, (uint64_t)nsec * 40)) {
		set_error("truncated PE file: section table cut short");
		return -ENOEXEC;
	}
	img->sec = calloc(nsec, sizeof(*img->sec));
	if (!img->sec) {
		set_error("out of memory");
		return -ENOMEM;
	}
	img->nsec = nsec;
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = img->data + sec_off + i * 40;

		img->sec[i].vsize = rd32(h + 8);
		img->sec[i].va = rd32(h + 12);
		img->sec[i].raw_size = rd32(h + 16);
		img->sec[i].raw_off = rd32(h + 20);
		/* a truncated file keeps the headers of sections it lost */
		if (!in_file(img, img->sec[i].raw_off, img->sec[i].raw_size)) {
			set_error("truncated PE file: section %u needs bytes up to 0x%llx, "
				  "file has 0x%zx", i,
				  (unsigned long long)img->sec[i].raw_off + img->sec[i].raw_size,
				  img->size);
			return -ENOEXEC;
		}
	}
	if (*cli_rva == 0 || *cli_size < 72) {
		set_error("not a .NET assembly: PE file without a CLI header");
		return -ENOEXEC;
	}
	return 0;
}

/* ---- ECMA-335 metadata -------------------------------------------------- */

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

static int parse_metadata(struct r2r_image *img, uint32_t md_rva, uint32_t md_size)
{
	uint64_t root, tables_off = 0, tables_size = 0, p;
	uint32_t vlen, nstreams, heaps;
	uint64_t valid;

	if (!rva_range(img, md_rva, md_size, &root) || md_size < 20) {
		set_error("corrupt .NET assembly: metadata outside the file");
		return -ENOEXEC;
	}
	if (rd32(img->data + root) != META_SIGNATURE) {
		set_error("corrupt .NET assembly: bad metadata signature");
		return -ENOEXEC;
	}
	vlen = rd32(img->data + root + 12);
	p = 16 + (uint64_t)((vlen + 3) & ~3u);
	if (vlen > md_size || p + 4 > md_size) {
		set_error("corrupt .NET assembly: metadata version string too long");
		return -ENOEXEC;
	}
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
			tables_off = root + off;
			tables_size = size;
		} else if (strcmp(name, "#Strings") == 0) {
			img->strings_off = root + off;
			img->strings_size = size;
		} else if (strcmp(name, "#Blob") == 0) {
			img->blob_off = root + off;
			img->blob_size = size;
		}
	}
	if (!tables_off || !img->strings_off || tables_size < 24) {
		set_error("corrupt .NET assembly: no #~ or #Strings metadata stream");
		return -ENOEXEC;
	}
	heaps = img->data[tables_off + 6];
	valid = (uint64_t)rd32(img->data + tables_off + 8) |
		(uint64_t)rd32(img->data + tables_off + 12) << 32;
	p = tables_off + 24;
	for (unsigned t = 0; t < 64; t++) {
		if (!(valid >> t & 1))
			continue;
		if (p + 4 > tables_off + tables_size)
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
		if ((uint64_t)tb->rows * off > tables_off + tables_size - p)
			goto bad_tables;
		p += (uint64_t)tb->rows * off;
	}
	return 0;
bad_streams:
	set_error("corrupt .NET assembly: bad metadata stream headers");
	return -ENOEXEC;
bad_tables:
	set_error("corrupt .NET assembly: metadata tables run past their stream");
	return -ENOEXEC;
}

/* column COL of row RID (1-based) of table T; 0 when out of range */
static uint32_t cell(const struct r2r_image *img, unsigned t, uint32_t rid, unsigned col)
{
	const struct table *tb = &img->tab[t];
	uint32_t v = 0;

	if (rid == 0 || rid > tb->rows || !tb->col_size[col])
		return 0;
	get_uint(img, tb->off + (uint64_t)(rid - 1) * tb->row_size + tb->col_off[col],
		 tb->col_size[col], &v);
	return v;
}

static const char *md_string(const struct r2r_image *img, uint32_t idx)
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
static bool md_blob(const struct r2r_image *img, uint32_t idx, uint64_t *off, uint32_t *len)
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

static void typedef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth)
{
	uint32_t outer = rid <= img->tab[T_TYPEDEF].rows ? img->enclosing[rid] : 0;

	if (outer && depth < MAX_SIG_DEPTH) {
		typedef_name(img, outer, b, depth + 1);
		sb_str(b, "+");
	} else {
		sb_namespace(b, md_string(img, cell(img, T_TYPEDEF, rid, 2)));
	}
	sb_str(b, md_string(img, cell(img, T_TYPEDEF, rid, 1)));
}

static void typeref_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth)
{
	uint32_t scope = cell(img, T_TYPEREF, rid, 0);

	/* ResolutionScope tag 3: TypeRef, i.e. a nested type */
	if ((scope & 3) == 3 && depth < MAX_SIG_DEPTH) {
		typeref_name(img, scope >> 2, b, depth + 1);
		sb_str(b, "+");
	} else {
		sb_namespace(b, md_string(img, cell(img, T_TYPEREF, rid, 2)));
	}
	sb_str(b, md_string(img, cell(img, T_TYPEREF, rid, 1)));
}

/* ---- signatures --------------------------------------------------------- */

struct sig {
	const struct r2r_image *img;
	uint64_t p, end;
	bool foreign;		/* tokens refer to another module */
};

static bool sig_u8(struct sig *s, uint8_t *v)
{
	if (s->p >= s->end)
		return false;
	*v = s->img->data[s->p++];
	return true;
}

/* ECMA-335 II.23.2 compressed unsigned integer */
static bool sig_uint(struct sig *s, uint32_t *v)
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

static void typedeforref_name(struct sig *s, uint32_t coded_tok, struct sbuf *b, int depth);

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

static bool sig_type(struct sig *s, struct sbuf *b, int depth);

/* N types, comma separated, between OPEN and CLOSE. */
static bool sig_type_list(struct sig *s, uint32_t n, const char *open, const char *close,
			  struct sbuf *b, int depth)
{
	sb_str(b, open);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			sb_str(b, ",");
		if (!sig_type(s, b, depth + 1))
			return false;
	}
	sb_str(b, close);
	return true;
}

/* one type (ECMA-335 II.23.2.12 plus the ReadyToRun extensions) */
static bool sig_type(struct sig *s, struct sbuf *b, int depth)
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
		if (!sig_uint(s, &v))
			return false;
		typedeforref_name(s, v, b, depth);
		return true;
	case 0x15:	/* GENERICINST */
		if (!sig_type(s, b, depth + 1) || !sig_uint(s, &n) || n > 64)
			return false;
		return sig_type_list(s, n, "[", "]", b, depth);
	case 0x1d:	/* SZARRAY */
		if (!sig_type(s, b, depth + 1))
			return false;
		sb_str(b, "[]");
		return true;
	case 0x14: {	/* ARRAY: type rank nsizes sizes nlo lo */
		uint32_t rank, k;

		if (!sig_type(s, b, depth + 1) || !sig_uint(s, &rank) || !sig_uint(s, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!sig_uint(s, &k))
				return false;
		if (!sig_uint(s, &n))
			return false;
		for (uint32_t i = 0; i < n; i++)
			if (!sig_uint(s, &k))
				return false;
		sb_str(b, "[");
		for (uint32_t i = 1; i < rank && i < 32; i++)
			sb_str(b, ",");
		sb_str(b, "]");
		return true;
	}
	case 0x0f:	/* PTR */
	case 0x10:	/* BYREF */
		if (!sig_type(s, b, depth + 1))
			return false;
		sb_str(b, et == 0x0f ? "*" : "&");
		return true;
	case 0x13:	/* VAR */
	case 0x1e:	/* MVAR */
		if (!sig_uint(s, &v))
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
		if (!sig_uint(s, &v))
			return false;
		return sig_type(s, b, depth + 1);
	case 0x41:	/* SENTINEL */
	case 0x45:	/* PINNED */
		return sig_type(s, b, depth + 1);
	case 0x3e:	/* ReadyToRun: CANON_ZAPSIG, the shared-code placeholder */
		sb_str(b, "System.__Canon");
		return true;
	case 0x3d:	/* ReadyToRun: NATIVE_VALUETYPE_ZAPSIG */
		return sig_type(s, b, depth + 1);
	case 0x3f: {	/* ReadyToRun: MODULE_ZAPSIG module-index type */
		bool saved = s->foreign;
		bool ok;

		if (!sig_uint(s, &v))
			return false;
		s->foreign = v != 0;
		ok = sig_type(s, b, depth + 1);
		s->foreign = saved;
		return ok;
	}
	}
	return false;
}

static void typedeforref_name(struct sig *s, uint32_t coded_tok, struct sbuf *b, int depth)
{
	uint32_t rid = coded_tok >> 2;

	if (s->foreign) {
		sb_str(b, "[other module]");
		return;
	}
	switch (coded_tok & 3) {
	case 0:
		if (rid && rid <= s->img->tab[T_TYPEDEF].rows)
			typedef_name(s->img, rid, b, 0);
		else
			sb_str(b, "?");
		return;
	case 1:
		if (rid && rid <= s->img->tab[T_TYPEREF].rows)
			typeref_name(s->img, rid, b, 0);
		else
			sb_str(b, "?");
		return;
	case 2: {	/* TypeSpec: a type signature in the blob heap */
		struct sig ts = { .img = s->img };
		uint32_t len;

		if (depth < MAX_SIG_DEPTH &&
		    md_blob(s->img, cell(s->img, T_TYPESPEC, rid, 0), &ts.p, &len)) {
			ts.end = ts.p + len;
			if (sig_type(&ts, b, depth + 1))
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
	if ((cc & 0x10) && !sig_uint(s, &gen))
		return false;
	if (!sig_uint(s, &n) || n > 1024 || !sig_type(s, &ret, depth + 1))
		return false;
	return sig_type_list(s, n, "(", ")", params, depth);
}

static void methoddef_sig(const struct r2r_image *img, uint32_t rid, struct sbuf *b)
{
	struct sig s = { .img = img };
	uint32_t len;

	if (md_blob(img, cell(img, T_METHODDEF, rid, 4), &s.p, &len)) {
		s.end = s.p + len;
		if (sig_method(&s, b, 0))
			return;
	}
	b->len = 0;
	sb_str(b, "(?)");
}

static void methoddef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b)
{
	uint32_t owner = img->method_owner[rid];

	if (owner) {
		typedef_name(img, owner, b, 0);
		sb_str(b, ".");
	}
	sb_str(b, md_string(img, cell(img, T_METHODDEF, rid, 3)));
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
		      const struct sbuf *name, const struct sbuf *sig, bool inst)
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
	err = arena_add(img, name->buf, name->len, &m->name);
	if (!err)
		err = arena_add(img, sig->buf, sig->len, &m->sig);
	if (err)
		return err;
	img->nmeths++;
	return 0;
}

static int load_methoddef_entries(struct r2r_image *img, uint32_t rva, uint32_t size,
				  size_t *cap)
{
	struct nat_array a;
	uint64_t off;
	uint32_t hdr;
	int err;

	if (!rva_range(img, rva, size, &off) || !nat_uint(img, &off, &hdr)) {
		set_error("corrupt ReadyToRun image: bad MethodDefEntryPoints section");
		return -ENOEXEC;
	}
	a.base = off;
	a.count = hdr >> 2;
	a.index_size = 1u << (hdr & 3);
	if ((hdr & 3) == 3) {
		set_error("corrupt ReadyToRun image: bad MethodDefEntryPoints header");
		return -ENOEXEC;
	}
	for (uint32_t i = 0; i < a.count && i < img->tab[T_METHODDEF].rows; i++) {
		struct sbuf name = { .len = 0 }, sig = { .len = 0 };
		uint64_t e;
		uint32_t rf;

		if (!nat_array_get(img, &a, i, &e) || !entry_point(img, e, &rf))
			continue;
		methoddef_name(img, i + 1, &name);
		methoddef_sig(img, i + 1, &sig);
		err = add_method(img, cap, rf, 0x06000000u | (i + 1), &name, &sig, false);
		if (err)
			return err;
	}
	return 0;
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

/* Name one InstanceEntryPoints entry from its method signature; *after
 * gets the offset just past the signature, where the entry point is. */
static bool instance_name(struct r2r_image *img, uint64_t off, struct sbuf *name,
			  struct sbuf *psig, uint32_t *token, uint64_t *after)
{
	struct sig s = { .img = img, .p = off, .end = img->size };
	struct sbuf owner = { .len = 0 };
	uint32_t flags, tok, module, n;
	size_t name_len;

	*token = 0;
	if (!sig_uint(&s, &flags))
		return false;
	if (flags & MSIG_UPDATE_CONTEXT) {
		if (!sig_uint(&s, &module))
			return false;
		s.foreign = module != 0;
	}
	if ((flags & MSIG_OWNER_TYPE) && !sig_type(&s, &owner, 0))
		return false;
	if (flags & MSIG_SLOT)
		return false;	/* not used for entry points */
	if (!sig_uint(&s, &tok))
		return false;
	if (s.foreign) {
		sb_str(name, owner.len ? owner.buf : "[other module]");
		sb_str(name, ".[method]");
		sb_str(psig, "(?)");
	} else if (flags & MSIG_MEMBERREF) {
		uint32_t parent = cell(img, T_MEMBERREF, tok, 0);
		struct sig ms = { .img = img };
		uint32_t len;

		if (owner.len) {
			sb_str(name, owner.buf);
		} else {
			struct sig ps = { .img = img };

			/* MemberRefParent: TypeDef 0, TypeRef 1, TypeSpec 4 */
			if ((parent & 7) == 0 || (parent & 7) == 1)
				typedeforref_name(&ps, (parent >> 3) << 2 | (parent & 7), name, 0);
			else if ((parent & 7) == 4)
				typedeforref_name(&ps, (parent >> 3) << 2 | 2, name, 0);
			else
				sb_str(name, "?");
		}
		sb_str(name, ".");
		sb_str(name, md_string(img, cell(img, T_MEMBERREF, tok, 1)));
		if (md_blob(img, cell(img, T_MEMBERREF, tok, 2), &ms.p, &len)) {
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
		if (owner.len) {
			sb_str(name, owner.buf);
			sb_str(name, ".");
			sb_str(name, md_string(img, cell(img, T_METHODDEF, tok, 3)));
		} else {
			methoddef_name(img, tok, name);
		}
		methoddef_sig(img, tok, psig);
	}
	name_len = name->len;
	if (flags & MSIG_METHOD_INST) {
		if (!sig_uint(&s, &n) || n > 64)
			return false;
		sb_str(name, "[");
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				sb_str(name, ",");
			if (!sig_type(&s, name, 0))
				return false;
		}
		sb_str(name, "]");
	}
	if (flags & MSIG_CONSTRAINED) {
		struct sbuf tmp = { .len = 0 };

		if (!sig_type(&s, &tmp, 0))
			return false;
	}
	{
		struct gen_args targs, margs;

		split_args(owner.buf, owner.len, &targs);
		split_args(name->buf, name->len, &margs);
		if (name->len == name_len)
			margs.n = 0;
		subst_generics(psig, &targs, &margs);
	}
	if (flags & MSIG_UNBOXING)
		sb_str(name, " [unboxing]");
	if (flags & MSIG_INSTANTIATING)
		sb_str(name, " [instantiating]");
	*after = s.p;
	return true;
}

static int load_instance_entries(struct r2r_image *img, uint32_t rva, uint32_t size,
				 size_t *cap)
{
	uint64_t base, end;
	uint32_t header, nbuckets, isz;
	int err;

	if (!rva_range(img, rva, size, &base) || size < 1) {
		set_error("corrupt ReadyToRun image: bad InstanceEntryPoints section");
		return -ENOEXEC;
	}
	end = base + size;
	header = img->data[base++];
	if ((header & 3) == 3 || (header >> 2) > 24) {
		set_error("corrupt ReadyToRun image: bad InstanceEntryPoints header");
		return -ENOEXEC;
	}
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
			if (!instance_name(img, entry, &name, &sig, &token, &after) ||
			    !entry_point(img, after, &rf))
				continue;
			err = add_method(img, cap, rf, token, &name, &sig, true);
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

static uint32_t rf_begin(const struct r2r_image *img, uint32_t i)
{
	return img->rf_b[i];
}

static uint32_t rf_end(const struct r2r_image *img, uint32_t i)
{
	return img->rf_e[i];
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

		if (!rva_range(img, hc_rva, hc_size, &off))
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

static int parse_r2r(struct r2r_image *img, uint32_t hdr_rva, uint32_t hdr_size)
{
	uint32_t nsections, rf_rva = 0, rf_size = 0, md_rva = 0, md_size = 0;
	uint32_t inst_rva = 0, inst_size = 0, hc_rva = 0, hc_size = 0;
	uint64_t off;
	size_t cap = 0;
	int err;

	if (!rva_range(img, hdr_rva, 16, &off)) {
		set_error("corrupt ReadyToRun image: header outside the file");
		return -ENOEXEC;
	}
	if (rd32(img->data + off) != RTR_SIGNATURE) {
		set_error("not a ReadyToRun image: bad ReadyToRun header signature");
		return -ENOEXEC;
	}
	img->major = rd16(img->data + off + 4);
	img->minor = rd16(img->data + off + 6);
	nsections = rd32(img->data + off + 12);
	if (nsections > 1024 || !in_file(img, off + 16, (uint64_t)nsections * 12)) {
		set_error("corrupt ReadyToRun image: section list cut short");
		return -ENOEXEC;
	}
	for (uint32_t i = 0; i < nsections; i++) {
		const uint8_t *s = img->data + off + 16 + i * 12;
		uint32_t type = rd32(s), rva = rd32(s + 4), size = rd32(s + 8);

		switch (type) {
		case RTR_RUNTIME_FUNCTIONS:
			rf_rva = rva, rf_size = size;
			break;
		case RTR_METHODDEF_ENTRY_POINTS:
			md_rva = rva, md_size = size;
			break;
		case RTR_INSTANCE_ENTRY_POINTS:
			inst_rva = rva, inst_size = size;
			break;
		case RTR_HOT_COLD_MAP:
			hc_rva = rva, hc_size = size;
			break;
		case RTR_OWNER_COMPOSITE:
			set_error("ReadyToRun component of a composite image: its code is in "
				  "the composite file (not supported)");
			return -ENOEXEC;
		}
	}
	img->rf_entry = img->machine == 0x8664 ? 12 : 8;
	if (!rf_size || !rva_range(img, rf_rva, rf_size, &img->rf_off)) {
		set_error("corrupt ReadyToRun image: no RuntimeFunctions section");
		return -ENOEXEC;
	}
	img->nrf = rf_size / img->rf_entry;
	if (load_runtime_functions(img))
		return -ENOMEM;
	for (uint32_t i = 1; i < img->nrf; i++) {
		if (rf_begin(img, i) < rf_begin(img, i - 1)) {
			set_error("corrupt ReadyToRun image: runtime functions not sorted");
			return -ENOEXEC;
		}
	}
	if (md_size) {
		err = load_methoddef_entries(img, md_rva, md_size, &cap);
		if (err)
			return err;
	}
	if (inst_size) {
		err = load_instance_entries(img, inst_rva, inst_size, &cap);
		if (err)
			return err;
	}
	if (img->nmeths)
		qsort(img->meths, img->nmeths, sizeof(*img->meths), cmp_meth);
	return assign_owners(img, hc_rva, hc_size);
}

/* MethodDef rid -> owning TypeDef, TypeDef -> enclosing TypeDef */
static int index_types(struct r2r_image *img)
{
	uint32_t ntypes = img->tab[T_TYPEDEF].rows, nmeth = img->tab[T_METHODDEF].rows;

	img->method_owner = calloc((size_t)nmeth + 1, sizeof(uint32_t));
	img->enclosing = calloc((size_t)ntypes + 1, sizeof(uint32_t));
	if (!img->method_owner || !img->enclosing)
		return -ENOMEM;
	for (uint32_t t = 1; t <= ntypes; t++) {
		uint32_t first = cell(img, T_TYPEDEF, t, 5);
		uint32_t last = t < ntypes ? cell(img, T_TYPEDEF, t + 1, 5) : nmeth + 1;

		if (last > nmeth + 1)
			last = nmeth + 1;
		for (uint32_t m = first; m && m < last; m++)
			img->method_owner[m] = t;
	}
	for (uint32_t i = 1; i <= img->tab[T_NESTEDCLASS].rows; i++) {
		uint32_t nested = cell(img, T_NESTEDCLASS, i, 0);
		uint32_t outer = cell(img, T_NESTEDCLASS, i, 1);

		if (nested && nested <= ntypes && outer <= ntypes && outer != nested)
			img->enclosing[nested] = outer;
	}
	return 0;
}

struct r2r_image *r2r__open(const char *path)
{
	struct r2r_image *img = NULL;
	uint32_t cli_rva, cli_size, md_rva, md_size, flags, nh_rva, nh_size;
	uint64_t cli;
	struct stat st;
	int fd = -1, err;

	last_error[0] = '\0';
	img = calloc(1, sizeof(*img));
	if (!img) {
		err = -ENOMEM;
		set_error("out of memory");
		goto cleanup;
	}
	/* the app's file: opened safely, read (not mapped: truncating it
	 * must not raise SIGBUS here), bounded */
	fd = appfile__open(path, 0, &st);
	if (fd < 0) {
		err = fd == -APPFILE_ENOTREG ? -ENOEXEC : fd;
		set_error("cannot open %s: %s", path, appfile__strerror(fd));
		fd = -1;
		goto cleanup;
	}
	if (st.st_size == 0) {
		err = -ENOEXEC;
		set_error("not a PE file: empty file");
		goto cleanup;
	}
	{
		char *buf;
		size_t len;

		err = appfile__read(fd, R2R_FILE_MAX, false, &buf, &len, NULL);
		if (err) {
			set_error("cannot read %s: %s", path, err == -EFBIG ?
				  "larger than " R2R_FILE_MAX_TEXT : appfile__strerror(err));
			if (err == -EFBIG)
				err = -ENOEXEC;
			goto cleanup;
		}
		img->data = (const uint8_t *)buf;
		img->size = len;
	}

	err = parse_pe(img, &cli_rva, &cli_size);
	if (err)
		goto cleanup;
	if (!rva_range(img, cli_rva, 72, &cli)) {
		err = -ENOEXEC;
		set_error("corrupt .NET assembly: CLI header outside the file");
		goto cleanup;
	}
	md_rva = rd32(img->data + cli + 8);
	md_size = rd32(img->data + cli + 12);
	flags = rd32(img->data + cli + 16);
	nh_rva = rd32(img->data + cli + 64);
	nh_size = rd32(img->data + cli + 68);
	err = parse_metadata(img, md_rva, md_size);
	if (!err)
		err = index_types(img);
	if (err) {
		if (err == -ENOMEM)
			set_error("out of memory");
		goto cleanup;
	}
	/* COMIMAGE_FLAGS_IL_LIBRARY marks ReadyToRun code */
	if (!(flags & 4) || !nh_rva || nh_size < 16) {
		err = -ENOEXEC;
		set_error("no ReadyToRun code: IL-only assembly (publish it with "
			  "-p:PublishReadyToRun=true)");
		goto cleanup;
	}
	if ((img->machine ^ 0x8664) == 0x7b79 || (img->machine ^ 0x8664) == 0x4644 ||
	    (img->machine ^ 0x8664) == 0xadc4 || (img->machine ^ 0x8664) == 0x1993 ||
	    (img->machine ^ 0x8664) == 0)
		img->machine = 0x8664;	/* x64 with the target OS xor-ed in */
	else if ((img->machine ^ 0xaa64) == 0x7b79 || (img->machine ^ 0xaa64) == 0x4644 ||
		 (img->machine ^ 0xaa64) == 0xadc4 || (img->machine ^ 0xaa64) == 0x1993 ||
		 (img->machine ^ 0xaa64) == 0)
		img->machine = 0xaa64;
	err = parse_r2r(img, nh_rva, nh_size);
	if (err == -ENOMEM)
		set_error("out of memory");
cleanup:
	if (fd >= 0)
		close(fd);
	if (err) {
		r2r__free(img);
		errno = -err;
		return NULL;
	}
	return img;
}

void r2r__free(struct r2r_image *img)
{
	if (!img)
		return;
	free((void *)img->data);
	free(img->rf_b);
	free(img->rf_e);
	free(img->sec);
	free(img->method_owner);
	free(img->enclosing);
	free(img->rf_owner);
	free(img->meths);
	free(img->arena);
	free(img);
}

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
	rva_to_off(img, out->rva, &off);
	out->file_offset = off;
	out->nbodies = m->nbodies;
	out->instantiation = m->inst;
	/* MethodDef flag Static (0x0010): no 'this' in the first argument */
	out->is_static = m->token && (cell(img, T_METHODDEF, m->token & 0xffffff, 2) & 0x10);
}

int r2r__method_at(const struct r2r_image *img, size_t i, struct r2r_method_info *out)
{
	if (i >= img->nmeths)
		return -ERANGE;
	fill_info(img, &img->meths[i], out);
	return 0;
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

		if (a == b) {
			i++, j++;
			continue;
		}
		if (name[i] == '`') {
			/* generic arity ("List`1") WANT may leave out */
			for (i++; i < nlen && name[i] >= '0' && name[i] <= '9'; i++)
				;
			continue;
		}
		if (name[i] == '[') {
			/* skip the instantiation WANT does not spell out */
			int depth = 0;

			for (; i < nlen; i++) {
				if (name[i] == '[')
					depth++;
				else if (name[i] == ']' && --depth == 0)
					break;
			}
			i++;
			continue;
		}
		return false;
	}
	if (j < wlen)
		return false;
	if (i < nlen && name[i] == '`')
		for (i++; i < nlen && name[i] >= '0' && name[i] <= '9'; i++)
			;
	if (i < nlen && name[i] == '[') {
		int depth = 0;

		for (; i < nlen; i++) {
			if (name[i] == '[')
				depth++;
			else if (name[i] == ']' && --depth == 0)
				break;
		}
		i++;
	}
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

struct cache_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct r2r_image *img;	/* NULL: not readable as ReadyToRun */
	int err;
	char *why;
};

struct r2r_cache {
	struct cache_entry *e;
	size_t n, cap;
};

struct r2r_cache *r2r_cache__new(void)
{
	return calloc(1, sizeof(struct r2r_cache));
}

void r2r_cache__free(struct r2r_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		r2r__free(c->e[i].img);
		free(c->e[i].why);
	}
	free(c->e);
	free(c);
}

struct r2r_image *r2r_cache__get(struct r2r_cache *c, const char *path, const char **why)
{
	struct cache_entry *e;
	struct stat st;

	if (stat(path, &st) < 0) {
		if (why)
			*why = strerror(errno);
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		e = &c->e[i];
		if (e->dev == st.st_dev && e->ino == st.st_ino && e->size == st.st_size &&
		    e->mtime.tv_sec == st.st_mtim.tv_sec && e->mtime.tv_nsec == st.st_mtim.tv_nsec)
			goto found;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct cache_entry *p = realloc(c->e, cap * sizeof(*p));

		if (!p) {
			errno = ENOMEM;
			if (why)
				*why = "out of memory";
			return NULL;
		}
		c->e = p;
		c->cap = cap;
	}
	e = &c->e[c->n++];
	memset(e, 0, sizeof(*e));
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->img = r2r__open(path);
	if (!e->img) {
		e->err = errno;
		e->why = strdup(r2r__error());
	}
found:
	if (!e->img) {
		errno = e->err;
		if (why)
			*why = e->why ? e->why : "out of memory";
	}
	return e->img;
}

void r2r__release_file(struct r2r_image *img)
{
	free((void *)img->data);
	img->data = NULL;
	img->size = 0;
}

void *r2r__pe_open(const char *path)
{
	struct r2r_image *img = r2r__open(path);

	if (!img)
		p_debug("no ReadyToRun names for %s: %s", path, r2r__error());
	else
		r2r__release_file(img);	/* names by offset need no file data */
	return img;
}

int r2r__pe_lookup(void *image, uint64_t file_offset, char *name, size_t size)
{
	const char *n;

	if (!image || r2r__lookup_file_offset(image, file_offset, &n, NULL, NULL))
		return -ENOENT;
	snprintf(name, size, "%s", n);
	return 0;
}

void r2r__pe_close(void *image)
{
	r2r__free(image);
}

bool r2r__in_metadata(const struct r2r_image *img, const char *want)
{
	size_t wlen = strlen(want);

	for (uint32_t rid = 1; rid <= img->tab[T_METHODDEF].rows; rid++) {
		struct sbuf name = { .len = 0 }, sig = { .len = 0 };

		methoddef_name(img, rid, &name);
		if (strchr(want, '('))
			methoddef_sig(img, rid, &sig);
		if (name_matches(name.buf, sig.buf, want, wlen))
			return true;
		for (const char *p = name.buf; *p; p++)
			if ((*p == '.' || *p == '+') && name_matches(p + 1, sig.buf, want, wlen))
				return true;
	}
	return false;
}

int r2r__uprobe_resolve(const char *path, const char *method, uint64_t *file_offset,
			char *msg, size_t msgsize)
{
	struct r2r_method_info hits[8];
	struct r2r_image *img;
	size_t n, len;
	int err;

	img = r2r__open(path);
	if (!img) {
		err = -errno;
		snprintf(msg, msgsize, "cannot use %s: %s", path, r2r__error());
		return err;
	}
	n = r2r__find_method(img, method, hits, ARRAY_SIZE(hits));
	if (n == 0 && r2r__in_metadata(img, method)) {
		snprintf(msg, msgsize, "'%s' is in %s but has no precompiled code (crossgen2 "
			 "left it to the JIT: AggressiveOptimization, or a generic without that "
			 "instantiation); JIT code cannot take uprobes", method, path);
		err = -ENOENT;
	} else if (n == 0) {
		snprintf(msg, msgsize, "no method '%s' with precompiled code in %s (list them "
			 "with 'sidescope dotnet-methods %s')", method, path, path);
		err = -ENOENT;
	} else if (n > 1) {
		len = (size_t)snprintf(msg, msgsize, "'%s' matches %zu methods in %s; name one "
				       "with its parameter list or instantiation:", method, n, path);
		for (size_t i = 0; i < n && i < ARRAY_SIZE(hits) && len < msgsize; i++)
			len += (size_t)snprintf(msg + len, msgsize - len, "\n  %s%s (offset 0x%llx)",
						hits[i].name, hits[i].signature,
						(unsigned long long)hits[i].file_offset);
		if (n > ARRAY_SIZE(hits) && len < msgsize)
			snprintf(msg + len, msgsize - len, "\n  ...");
		err = -EEXIST;
	} else {
		*file_offset = hits[0].file_offset;
		snprintf(msg, msgsize, "%s%s: %s method at file offset 0x%llx (RVA 0x%x)",
			 hits[0].name, hits[0].signature,
			 hits[0].is_static ? "static" : "instance ('this' in arg1)",
			 (unsigned long long)hits[0].file_offset, hits[0].rva);
		err = 0;
	}
	r2r__free(img);
	return err;
}
