// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables from call frame information; see cfitab.h. */
#include "sym/cfitab.h"
#include "sym/elfsym.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DW_REG_DI 5
#define DW_REG_FP 6
#define DW_REG_SP 7
#define DW_REG_RA 16

/* The PC range of one FDE and the CFI that describes it. */
struct fde_range {
	uint64_t lo, hi;
	Dwarf_CFI *cfi;
	int debug;	/* from .debug_frame */
};

struct builder {
	struct fde_range *r;
	size_t n, cap;
	struct cfi_table *t;
	size_t cap_rows;
};

/* ---- FDE address ranges: the CIE's pointer encoding ---------------------- */

/* Read an encoded value (DW_EH_PE_* format FMT & 0x0f) at *P, before END.
 * 0 with *P advanced, or -1. */
static int read_encoded(const uint8_t **p, const uint8_t *end, unsigned fmt, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned shift = 0, n;

	switch (fmt & 0x0f) {
	case 0x00: n = 8; break;	/* absptr, ELF64 */
	case 0x02: case 0x0a: n = 2; break;
	case 0x03: case 0x0b: n = 4; break;
	case 0x04: case 0x0c: n = 8; break;
	case 0x01: case 0x09:		/* uleb128, sleb128 */
		for (;;) {
			if (q >= end || shift > 63)
				return -1;
			v |= (uint64_t)(*q & 0x7f) << shift;
			shift += 7;
			if (!(*q++ & 0x80))
				break;
		}
		if ((fmt & 0x0f) == 0x09 && shift < 64 && (q[-1] & 0x40))
			v |= ~0ull << shift;
		*p = q;
		*out = v;
		return 0;
	default:
		return -1;
	}
	if ((size_t)(end - q) < n)
		return -1;
	memcpy(&v, q, n);	/* little-endian, checked at the start */
	if ((fmt & 0x08) && n < 8 && (v >> (n * 8 - 1)) & 1)
		v |= ~0ull << (n * 8);
	*p = q + n;
	*out = v;
	return 0;
}

/* The FDE pointer encoding of CIE (the 'R' of a "z..." augmentation), or
 * -1 when the augmentation cannot be read. 0 (absptr) when there is none. */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data, *end;
	uint64_t skip;

	if (!a || !*a)
		return 0x00;
	if (*a != 'z' || !d)
		return -1;
	end = d + cie->augmentation_data_size;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (d >= end)
				return -1;
			return *d;
		case 'L':
			if (d >= end)
				return -1;
			d++;
			break;
		case 'P': {
			unsigned enc;

			if (d >= end)
				return -1;
			enc = *d++;
			if (read_encoded(&d, end, enc, &skip))
				return -1;
			break;
		}
		case 'S': case 'B': case 'G':	/* signal frame: dwarf_frame_info says */
			break;
		default:
			return -1;
		}
	}
	return 0x00;
}

static int add_range(struct builder *b, uint64_t lo, uint64_t hi, Dwarf_CFI *cfi, int debug)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct fde_range *r;

		if (cap > CFITAB_MAX_ROWS)
			return -EFBIG;
		r = realloc(b->r, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->r = r;
		b->cap = cap;
	}
	b->r[b->n++] = (struct fde_range){ .lo = lo, .hi = hi, .cfi = cfi, .debug = debug };
	return 0;
}

/* List the FDEs of section SCN (.eh_frame when EH) with their ranges. */
static int scan_fdes(struct builder *b, Elf *elf, Elf_Scn *scn, bool eh, Dwarf_CFI *cfi)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Data *data = elf_getdata(scn, NULL);
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	int enc = 0, err;
	GElf_Shdr sh;
	size_t guard;

	if (!data || !data->d_buf || !gelf_getshdr(scn, &sh))
		return 0;
	guard = data->d_size / 4 + 1;	/* an entry takes at least 4 bytes */
	while (guard--) {
		Dwarf_CFI_Entry e;
		const uint8_t *p, *end;
		uint64_t lo, len, field;
		int r = dwarf_next_cfi(ident, data, eh, off, &next, &e);

		if (r != 0)
			break;	/* 1: the end; -1: corrupt from here on */
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		b->t->st.fdes++;
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_CFI_Entry c;
			Dwarf_Off cn;

			cie_off = e.fde.CIE_pointer;
			if (dwarf_next_cfi(ident, data, eh, cie_off, &cn, &c) != 0 ||
			    !dwarf_cfi_cie_p(&c)) {
				enc = -1;
			} else {
				enc = eh ? cie_fde_encoding(&c.cie) : 0x00;
			}
		}
		p = e.fde.start;
		end = e.fde.end;
		if (enc < 0 || (enc & 0x80) || ((enc & 0x70) != 0x00 && (enc & 0x70) != 0x10) ||
		    p < (const uint8_t *)data->d_buf || end > (const uint8_t *)data->d_buf + data->d_size) {
			b->t->st.bad_fdes++;
			continue;
		}
		field = sh.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
		if (read_encoded(&p, end, (unsigned)enc, &lo) ||
		    read_encoded(&p, end, (unsigned)enc & 0x0f, &len)) {
			b->t->st.bad_fdes++;
			continue;
		}
		if ((enc & 0x70) == 0x10)
			lo += field;
		if (!len)
			continue;	/* an empty FDE (a discarded function) */
		if (lo + len < lo) {
			b->t->st.bad_fdes++;
			continue;
		}
		err = add_range(b, lo, lo + len, cfi, !eh);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->debug - y->debug;	/* .eh_frame first */
}

/* ---- rows ------------------------------------------------------------------ */

static bool is_cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* The PLT's CFA: RSP + N, plus 8 when (RIP & 15) >= K. */
static bool is_plt_cfa(const Dwarf_Op *o, size_t n, int64_t *off, int *k)
{
	if (n != 9 || o[0].atom != DW_OP_breg7 || o[1].atom != DW_OP_breg16 || o[1].number ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and || o[4].atom < DW_OP_lit0 ||
	    o[4].atom > DW_OP_lit15 || o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 ||
	    o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	*off = (int64_t)o[0].number;
	*k = o[4].atom - DW_OP_lit0;
	return true;
}

/* Whether OPS says "the value is in register REG" (a register rule). */
static bool is_reg(const Dwarf_Op *o, size_t n, uint64_t reg)
{
	if (n != 1)
		return false;
	if (o[0].atom == DW_OP_regx || o[0].atom == DW_OP_bregx)
		return o[0].number == reg && (o[0].atom == DW_OP_regx || o[0].number2 == 0);
	return o[0].atom == DW_OP_reg0 + reg;
}

static void frame_row(Dwarf_Frame *f, int ra, bool signal, struct cfi_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;
	int k;

	memset(row, 0, sizeof(*row));
	row->cfa = CFI_CFA_UNSUPPORTED;
	if (signal || ra != DW_REG_RA || dwarf_frame_cfa(f, &ops, &n) || !ops)
		return;
	if (n == 1 && (ops[0].atom == DW_OP_bregx ||
		       (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		uint64_t reg = ops[0].atom == DW_OP_bregx ? ops[0].number
							  : (uint64_t)(ops[0].atom - DW_OP_breg0);

		off = (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number);
		if ((reg != DW_REG_SP && reg != DW_REG_FP) || off < INT32_MIN || off > INT32_MAX)
			return;
		row->cfa = reg == DW_REG_SP ? CFI_CFA_SP : CFI_CFA_FP;
		row->cfa_off = (int32_t)off;
	} else if (is_plt_cfa(ops, n, &off, &k) && off >= 0 && off <= INT32_MAX) {
		row->cfa = CFI_CFA_PLT;
		row->cfa_off = (int32_t)off;
		row->fp_off = (int16_t)k;
	} else {
		return;
	}
	/* the return address: at CFA - 8, or undefined in the outermost frame */
	if (dwarf_frame_register(f, DW_REG_RA, mem, &ops, &n)) {
		row->cfa = CFI_CFA_UNSUPPORTED;
		goto clean;
	}
	if (n == 0) {
		row->cfa = ops ? CFI_CFA_END : CFI_CFA_UNSUPPORTED;
		goto clean;
	}
	if (row->cfa == CFI_CFA_SP && is_reg(ops, n, DW_REG_DI)) {
		row->cfa = CFI_CFA_SP_RA_DI;
	} else if (!is_cfa_plus(ops, n, &off) || off != -8) {
		row->cfa = CFI_CFA_UNSUPPORTED;
		goto clean;
	}
	if (row->cfa == CFI_CFA_PLT)
		return;
	/* the caller's frame pointer */
	if (dwarf_frame_register(f, DW_REG_FP, mem, &ops, &n)) {
		row->fp = CFI_FP_UNKNOWN;
	} else if (n == 0) {
		row->fp = ops ? CFI_FP_UNKNOWN : CFI_FP_SAME;
	} else if (is_cfa_plus(ops, n, &off) && off >= INT16_MIN && off <= INT16_MAX) {
		row->fp = CFI_FP_AT;
		row->fp_off = (int16_t)off;
	} else {
		row->fp = CFI_FP_UNKNOWN;
	}
	return;
clean:
	row->cfa_off = 0;
	row->fp_off = 0;
	row->fp = CFI_FP_SAME;
}

static bool same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->fp == b->fp &&
	       a->fp_off == b->fp_off;
}

/* Append ROW for the object address PC, unless the last row says the same. */
static int put_row(struct builder *b, uint64_t pc, const struct cfi_row *row)
{
	struct cfi_table *t = b->t;
	struct cfi_row *last = t->n ? &t->rows[t->n - 1] : NULL;

	if (last && same_rule(last, row))
		return 0;
	if (last && last->pc == (uint32_t)(pc - t->base)) {
		*last = *row;	/* an empty row (zero length) gives way */
		last->pc = (uint32_t)(pc - t->base);
		if (t->n > 1 && same_rule(&t->rows[t->n - 2], last))
			t->n--;
		return 0;
	}
	if (t->n == b->cap_rows) {
		size_t cap = b->cap_rows ? b->cap_rows * 2 : 1024;
		struct cfi_row *r;

		if (t->n >= CFITAB_MAX_ROWS)
			return -EFBIG;
		if (cap > CFITAB_MAX_ROWS)
			cap = CFITAB_MAX_ROWS;
		r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		t->rows = r;
		b->cap_rows = cap;
	}
	t->rows[t->n] = *row;
	t->rows[t->n].pc = (uint32_t)(pc - t->base);
	if (row->cfa == CFI_CFA_UNSUPPORTED)
		t->st.unsupported++;
	else if (row->fp == CFI_FP_UNKNOWN && row->cfa != CFI_CFA_END)
		t->st.fp_unknown++;
	t->n++;
	return 0;
}

/* The rows of one FDE's range R. */
static int range_rows(struct builder *b, const struct fde_range *r, size_t *budget)
{
	uint64_t pc = r->lo;

	while (pc < r->hi) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr start, end;
		struct cfi_row row;
		bool signal = false;
		int ra, err;

		if (!(*budget)--)
			return -EFBIG;
		if (dwarf_cfi_addrframe(r->cfi, pc, &f) || !f) {
			memset(&row, 0, sizeof(row));
			row.cfa = CFI_CFA_UNSUPPORTED;
			err = put_row(b, pc, &row);
			free(f);
			return err;
		}
		ra = dwarf_frame_info(f, &start, &end, &signal);
		frame_row(f, ra, signal, &row);
		free(f);
		err = put_row(b, pc, &row);
		if (err)
			return err;
		if (end <= pc || end > r->hi)
			end = r->hi;
		pc = end;
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

void cfitab__free(struct cfi_table *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->rows);
	memset(t, 0, sizeof(*t));
}

int cfitab__build_elf(Elf *elf, uint64_t fsize, struct cfi_table *t)
{
	struct builder b = { .t = t };
	Dwarf_CFI *eh = NULL, *dbg_cfi = NULL;
	Dwarf *dbg = NULL;
	Elf_Scn *scn;
	GElf_Ehdr eh_hdr;
	uint64_t hi = 0;
	size_t i, kept = 0, budget = (size_t)CFITAB_MAX_ROWS * 4;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh_hdr))
		return -ENOEXEC;
	if (eh_hdr.e_machine != EM_X86_64 || eh_hdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh_hdr.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	(void)fsize;	/* elfsym__begin checked the headers against it */
	scn = find_section(elf, ".eh_frame");
	if (scn) {
		eh = dwarf_getcfi_elf(elf);
		if (eh)
			err = scan_fdes(&b, elf, scn, true, eh);
	}
	scn = find_section(elf, ".debug_frame");
	if (!err && scn) {
		dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		dbg_cfi = dbg ? dwarf_getcfi(dbg) : NULL;
		if (dbg_cfi) {
			t->st.debug_frame = 1;
			err = scan_fdes(&b, elf, scn, false, dbg_cfi);
		}
	}
	if (err)
		goto out;
	if (!b.n) {
		err = -ENOENT;
		goto out;
	}
	qsort(b.r, b.n, sizeof(*b.r), cmp_range);
	/* drop overlaps: a .debug_frame FDE .eh_frame also has silently */
	for (i = 0; i < b.n; i++) {
		if (kept && b.r[i].lo < b.r[kept - 1].hi) {
			if (!b.r[i].debug)
				t->st.bad_fdes++;
			continue;
		}
		b.r[kept++] = b.r[i];
	}
	b.n = kept;
	for (i = 0; i < b.n; i++)
		if (b.r[i].hi > hi)
			hi = b.r[i].hi;
	t->base = hi <= UINT32_MAX ? 0 : b.r[0].lo;
	if (hi - t->base > UINT32_MAX) {
		err = -EFBIG;
		goto out;
	}
	for (i = 0; i < b.n && !err; i++) {
		err = range_rows(&b, &b.r[i], &budget);
		/* the gap after it, when the next FDE does not start there */
		if (!err && (i + 1 == b.n || b.r[i + 1].lo > b.r[i].hi)) {
			struct cfi_row none = { .cfa = CFI_CFA_NONE };

			err = put_row(&b, b.r[i].hi, &none);
		}
	}
out:
	free(b.r);
	if (eh)
		dwarf_cfi_end(eh);
	if (dbg)
		dwarf_end(dbg);
	if (err)
		cfitab__free(t);
	return err;
}

int cfitab__build_fd(int fd, struct cfi_table *t)
{
	uint64_t fsize;
	Elf *elf = elfsym__begin(fd, &fsize);
	int err;

	memset(t, 0, sizeof(*t));
	if (!elf)
		return -ENOEXEC;
	err = cfitab__build_elf(elf, fsize, t);
	elf_end(elf);
	return err;
}

const struct cfi_row *cfitab__find(const struct cfi_table *t, uint64_t addr)
{
	return cfitab__find_indexed(t, NULL, 0, 0, addr);
}

uint32_t cfitab__index_blocks(const struct cfi_table *t, uint32_t *block0)
{
	uint64_t n;

	*block0 = 0;
	if (t->n < 8)
		return 0;
	*block0 = t->rows[0].pc >> CFITAB_BLOCK_SHIFT;
	n = (uint64_t)(t->rows[t->n - 1].pc >> CFITAB_BLOCK_SHIFT) - *block0 + 1;
	/* (n + 1) entries, four to a 16-byte row slot */
	return (n + 1 + 3) / 4 > t->n / 2 ? 0 : (uint32_t)n;
}

void cfitab__index(const struct cfi_table *t, uint32_t nblocks, uint32_t block0, uint32_t *e)
{
	size_t j = 0;
	uint32_t k;

	for (k = 0; k <= nblocks; k++) {
		uint64_t at = (uint64_t)(block0 + k) << CFITAB_BLOCK_SHIFT;

		while (j < t->n && t->rows[j].pc <= at)
			j++;
		e[k] = (uint32_t)j;
	}
}

const struct cfi_row *cfitab__find_indexed(const struct cfi_table *t, const uint32_t *e,
					   uint32_t nblocks, uint32_t block0, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	uint32_t k;
	uint64_t pc;

	if (!t->n || addr < t->base || addr - t->base > UINT32_MAX)
		return NULL;
	pc = addr - t->base;
	/* below the first block, k wraps around: the whole table */
	k = (uint32_t)(pc >> CFITAB_BLOCK_SHIFT) - block0;
	if (e && k < nblocks && e[k] <= e[k + 1] && e[k + 1] <= t->n) {
		lo = e[k];	/* rows at or below the block's start */
		hi = e[k + 1];	/* and at or below the next one's */
	}
	while (lo < hi) {	/* the first row after pc */
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

const char *cfitab__cfa_str(const struct cfi_row *r, char *buf, size_t len)
{
	switch (r->cfa) {
	case CFI_CFA_SP:
		snprintf(buf, len, "sp%+d", r->cfa_off);
		break;
	case CFI_CFA_FP:
		snprintf(buf, len, "fp%+d", r->cfa_off);
		break;
	case CFI_CFA_PLT:
		snprintf(buf, len, "plt");
		break;
	case CFI_CFA_END:
		snprintf(buf, len, "end");
		break;
	case CFI_CFA_NONE:
		snprintf(buf, len, "none");
		break;
	case CFI_CFA_SP_RA_DI:
		snprintf(buf, len, "sp%+d,ra=rdi", r->cfa_off);
		break;
	default:
		snprintf(buf, len, "unsupported");
		break;
	}
	return buf;
}

int cfitab__step(const struct cfi_row *r, struct cfi_regs *regs, cfi_read_fn rd, void *ctx)
{
	uint64_t cfa, ra, bp = regs->bp;
	int bp_known = regs->bp_known;

	if (!r || r->cfa == CFI_CFA_NONE) {
		/* frame pointers: [RBP] the caller's RBP, [RBP + 8] the return address */
		if (!regs->bp_known || !regs->bp || regs->bp < regs->sp)
			return -1;
		cfa = regs->bp + 16;
		if (rd(regs->bp, &bp, ctx))
			return -1;
		bp_known = 1;
	} else {
		switch (r->cfa) {
		case CFI_CFA_SP:
			cfa = regs->sp + (uint64_t)(int64_t)r->cfa_off;
			break;
		case CFI_CFA_FP:
			if (!regs->bp_known)
				return -1;
			cfa = regs->bp + (uint64_t)(int64_t)r->cfa_off;
			break;
		case CFI_CFA_PLT:
			cfa = regs->sp + (uint64_t)(int64_t)r->cfa_off +
			      ((regs->ip & 15) >= (uint64_t)r->fp_off ? 8 : 0);
			break;
		case CFI_CFA_END:
			return 1;
		case CFI_CFA_SP_RA_DI:
			if (!regs->di_known)
				return -1;
			cfa = regs->sp + (uint64_t)(int64_t)r->cfa_off;
			break;
		default:
			return -1;
		}
		if (r->cfa != CFI_CFA_PLT && r->fp == CFI_FP_AT) {
			if (rd(cfa + (uint64_t)(int64_t)r->fp_off, &bp, ctx))
				return -1;
			bp_known = 1;
		} else if (r->fp == CFI_FP_UNKNOWN) {
			bp_known = 0;
		}
	}
	if (r && r->cfa == CFI_CFA_SP_RA_DI) {
		if (cfa < regs->sp)
			return -1;
		ra = regs->di;
	} else if (cfa <= regs->sp || rd(cfa - 8, &ra, ctx)) {
		return -1;
	}
	if (!ra)
		return 1;
	regs->ip = ra;
	regs->sp = cfa;
	regs->bp = bp;
	regs->bp_known = bp_known;
	regs->di_known = 0;
	return 0;
}
