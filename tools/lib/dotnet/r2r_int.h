/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the parts of the ReadyToRun reader share (not for use outside
 * tools/lib/dotnet/): the image, bounds-checked reads, the name buffer, and
 * one entry point per part.
 *
 *   r2r_pe.c      PE headers, section table, RVA <-> file offset
 *   r2r_meta.c    ECMA-335 metadata: streams, tables, heaps, type names
 *   r2r_sig.c     signatures: types and parameter lists as text, the
 *                 signatures of InstanceEntryPoints entries
 *   r2r_native.c  NativeFormat integers, NativeArray, NativeHashtable, the
 *                 ReadyToRun header and sections: the method table
 *   r2r_lookup.c  methods by index, name, RVA and file offset
 *   r2r.c         opening a file, the cache, the profiler's and uprobe's hooks
 *
 * The file's bytes (img->data) are read into memory by r2r__open; every
 * read of them goes through in_file/get_uint or an explicit bound. */
#ifndef SIDESCOPE_R2R_INT_H
#define SIDESCOPE_R2R_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/err.h"
#include "dotnet/r2r.h"

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
	const uint8_t *data;	/* the file, NULL after r2r__release_file */
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
	struct meth *meths;	/* sorted by runtime function */
	size_t nmeths;
	char *arena;		/* every name and signature, NUL-terminated */
	size_t arena_len, arena_cap;
};

/* ---- bounds-checked reads --------------------------------------------- */

static inline bool in_file(const struct r2r_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* read a little-endian value of 1, 2 or 4 bytes at file offset OFF */
static inline bool get_uint(const struct r2r_image *img, uint64_t off, unsigned len,
			    uint32_t *v)
{
	if (!in_file(img, off, len))
		return false;
	*v = len == 1 ? img->data[off] : len == 2 ? rd16(img->data + off) : rd32(img->data + off);
	return true;
}

/* begin and end RVA of runtime function I (copied out of the file) */
static inline uint32_t rf_begin(const struct r2r_image *img, uint32_t i)
{
	return img->rf_b[i];
}

static inline uint32_t rf_end(const struct r2r_image *img, uint32_t i)
{
	return img->rf_e[i];
}

/* ---- names under construction ----------------------------------------- */

/* A name or signature being written: cut (overflow set) at 1023 bytes,
 * always NUL-terminated. */
struct sbuf {
	char buf[1024];
	size_t len;
	bool overflow;
};

static inline void sb_puts(struct sbuf *b, const char *s, size_t n)
{
	if (n > sizeof(b->buf) - 1 - b->len) {
		n = sizeof(b->buf) - 1 - b->len;
		b->overflow = true;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static inline void sb_str(struct sbuf *b, const char *s)
{
	sb_puts(b, s, strlen(s));
}

/* A signature being decoded: file offsets [p, end). */
struct sig {
	const struct r2r_image *img;
	uint64_t p, end;
	bool foreign;		/* tokens refer to another module */
};

/* ---- r2r_pe.c ----------------------------------------------------------- */

/* The PE headers and section table into img->machine, img->sec; the CLI
 * header's RVA and size out. 0, -ENOEXEC (why in E) or -ENOMEM. */
int r2r_pe_parse(struct r2r_image *img, uint32_t *cli_rva, uint32_t *cli_size, struct err *e);
/* The COFF machine without the target OS xor-ed in (0x8664, 0xaa64); other
 * machines unchanged. */
unsigned r2r_pe_arch(unsigned machine);
/* File offset of RVA through the section table: 0, or -ENOENT (outside
 * every section, or in its zero fill). */
int r2r_rva_to_off(const struct r2r_image *img, uint32_t rva, uint64_t *off);
/* Whether all of [rva, rva + len) is in the file; *off its file offset. */
bool r2r_rva_range(const struct r2r_image *img, uint32_t rva, uint64_t len, uint64_t *off);

/* ---- r2r_meta.c --------------------------------------------------------- */

/* The metadata root at MD_RVA: the #~, #Strings and #Blob streams and the
 * table layout into img. 0 or -ENOEXEC (why in E). */
int r2r_meta_parse(struct r2r_image *img, uint32_t md_rva, uint32_t md_size, struct err *e);
/* img->method_owner and img->enclosing from the TypeDef, MethodDef and
 * NestedClass tables. 0 or -ENOMEM. */
int r2r_meta_index_types(struct r2r_image *img);
/* Column COL of row RID (1-based) of table T; 0 when out of range. */
uint32_t r2r_cell(const struct r2r_image *img, unsigned t, uint32_t rid, unsigned col);
/* #Strings entry IDX, "?" when it is not a string inside the heap; points
 * into the file. */
const char *r2r_md_string(const struct r2r_image *img, uint32_t idx);
/* #Blob entry IDX: *len and the file offset *off of its bytes; false when
 * it does not fit in the heap. */
bool r2r_md_blob(const struct r2r_image *img, uint32_t idx, uint64_t *off, uint32_t *len);
/* Type names into B: "Namespace.Outer+Inner" (TypeDef), the same from a
 * TypeRef's resolution scopes; DEPTH bounds the nesting walked. */
void r2r_typedef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth);
void r2r_typeref_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b, int depth);
/* "Namespace.Type.Method" of MethodDef RID into B. */
void r2r_methoddef_name(const struct r2r_image *img, uint32_t rid, struct sbuf *b);

/* ---- r2r_sig.c ---------------------------------------------------------- */

/* ECMA-335 II.23.2 compressed unsigned integer; false past s->end. */
bool r2r_sig_uint(struct sig *s, uint32_t *v);
/* One type as text into B ("System.Int32", "List`1[System.String]"). */
bool r2r_sig_type(struct sig *s, struct sbuf *b, int depth);
/* A TypeDefOrRef coded token's name into B ("?" when it names nothing). */
void r2r_typedeforref_name(struct sig *s, uint32_t coded_tok, struct sbuf *b, int depth);
/* The parameter list "(T1,T2)" of MethodDef RID into B ("(?)" when its
 * signature cannot be read). */
void r2r_methoddef_sig(const struct r2r_image *img, uint32_t rid, struct sbuf *b);
/* Name one InstanceEntryPoints entry from the method signature at file
 * offset OFF: NAME with its instantiation, PSIG with the generic parameters
 * substituted, *token its MethodDef (0 if none); *after gets the offset just
 * past the signature, where the entry point is. false when it cannot be
 * decoded. */
bool r2r_instance_name(struct r2r_image *img, uint64_t off, struct sbuf *name,
		       struct sbuf *psig, uint32_t *token, uint64_t *after);

/* ---- r2r_native.c ------------------------------------------------------- */

/* The ReadyToRun header at HDR_RVA and its sections: runtime functions,
 * the method table (img->meths, sorted), their owners. img->machine must
 * already be normalised (r2r_pe_arch). 0, -ENOEXEC or -EFBIG (why in E),
 * or -ENOMEM (nothing said). */
int r2r_native_parse(struct r2r_image *img, uint32_t hdr_rva, uint32_t hdr_size, struct err *e);

#endif
