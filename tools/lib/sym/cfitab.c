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
#include <time.h>
#include <unistd.h>

#define DW_REG_DI 5
#define DW_REG_FP 6
#define DW_REG_SP 7
#define DW_REG_RA 16

/* libdw refuses register numbers from INT32_MAX / 8 on (its register
 * table's entries are 8 bytes): the CFI is invalid there */
#define REG_LIMIT (INT32_MAX / 8)

/* The limits are looked at every this many instructions and FDEs (a
 * clock read each time: ~20 ns for ~4,000 instructions) */
#define TICKS_MASK 4095u

/* ---- the state of a CFI program ---------------------------------------------
 * Only what a row needs is kept: the CFA rule, and the rules of the return
 * address and of RBP, each as the question libdw's answer was asked:
 * dwarf_frame_register gives "undefined" (no location, but not "same"),
 * "same value", "at CFA + n" (an offset rule, or an expression that is
 * exactly DW_OP_plus_uconst n), "in register n", or something else. */

enum cfa_kind { CFA_UNDEF, CFA_OFF, CFA_EXPR, CFA_INVALID };
enum reg_kind { REG_UNDEF, REG_SAME, REG_AT, REG_IN, REG_OTHER };

struct cfi_state {
	uint64_t cfa_reg, cfa_off;	/* CFA_OFF: register + offset */
	const uint8_t *expr;		/* CFA_EXPR: its bytes */
	uint64_t expr_len;
	int64_t ra_v, fp_v;		/* REG_AT: the offset; REG_IN: the register */
	uint8_t cfa, ra, fp;		/* enum cfa_kind, enum reg_kind */
};

/* One CFI section (.eh_frame or .debug_frame) as read */
struct cfi_sec {
	const uint8_t *buf;
	size_t size;
	uint64_t addr;		/* where pc-relative pointers count from */
	bool eh;
	Dwarf_CFI *cfi;		/* libdw's, for the reference (limits' libdw) */
};

/* A CIE, as its FDEs need it */
struct cie {
	uint64_t key;		/* its offset * 2, + 1 in .debug_frame */
	uint64_t code_align, ra;
	int64_t data_align;
	const uint8_t *ins, *ins_end;	/* its initial instructions */
	int enc;		/* its FDEs' pointer encoding; -1: not usable */
	bool sized;		/* 'z': FDEs say how long their augmentation is */
	bool odd;		/* another augmentation: FDEs' instructions not found */
	bool signal;		/* 'S' */
	int8_t init;		/* 0: STATE not yet run; 1: run; -1: invalid CFI */
	struct cfi_state state;	/* after the initial instructions */
};

#define NO_CIE UINT32_MAX

/* The PC range of one FDE and where its instructions are */
struct fde_range {
	uint64_t lo, hi;
	uint32_t ins, len;	/* offset in its section, and length */
	uint32_t cie;		/* index in the builder's cies; NO_CIE: the
				 * instructions cannot be found */
	uint8_t sec;		/* 0: .eh_frame, 1: .debug_frame */
};

struct builder {
	struct fde_range *r;
	size_t n, cap;
	struct cie *cies;
	size_t ncies, cap_cies;
	uint32_t *cie_slot;	/* open addressing by key: index + 1, 0 free */
	size_t cap_slots;
	struct cfi_sec sec[2];
	struct cfi_table *t;
	size_t cap_rows, max_rows;
	size_t budget;		/* rows looked up, at most */
	const struct cfitab_limits *lim;
	unsigned ticks;
};

/* Whether the build must give up: 0, -EINTR (asked to stop) or
 * -ETIMEDOUT (past the deadline). */
static int limits_check(const struct builder *b)
{
	struct timespec ts;

	if (!b->lim)
		return 0;
	if (b->lim->stop && *b->lim->stop)
		return -EINTR;
	if (b->lim->deadline_ns) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec >= b->lim->deadline_ns)
			return -ETIMEDOUT;
	}
	return 0;
}

/* limits_check, every TICKS_MASK + 1 calls */
static inline int tick(struct builder *b)
{
	return ++b->ticks & TICKS_MASK ? 0 : limits_check(b);
}

/* ---- reading ------------------------------------------------------------ */

/* LEB128 at *P, before END: 0 with *P past it, or -1 (cut short, or more
 * than 64 bits) */
static int rd_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (q >= end || shift > 63)
			return -1;
		v |= (uint64_t)(*q & 0x7f) << shift;
		shift += 7;
		if (!(*q++ & 0x80))
			break;
	}
	*p = q;
	*out = v;
	return 0;
}

static int rd_sleb(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v;

	if (rd_uleb(p, end, &v))
		return -1;
	if ((size_t)(*p - q) * 7 < 64 && ((*p)[-1] & 0x40))
		v |= ~0ull << ((*p - q) * 7);
	*out = (int64_t)v;
	return 0;
}

/* Read an encoded value (DW_EH_PE_* format FMT & 0x0f) at *P, before END.
 * 0 with *P advanced, or -1. */
static int read_encoded(const uint8_t **p, const uint8_t *end, unsigned fmt, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned n;

	switch (fmt & 0x0f) {
	case 0x00: n = 8; break;	/* absptr, ELF64 */
	case 0x02: case 0x0a: n = 2; break;
	case 0x03: case 0x0b: n = 4; break;
	case 0x04: case 0x0c: n = 8; break;
	case 0x01:
		return rd_uleb(p, end, out);
	case 0x09:
		return rd_sleb(p, end, (int64_t *)out);
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

/* The FDE pointer encoding of an .eh_frame CIE (the 'R' of a "z..."
 * augmentation), or -1 when the augmentation cannot be read. 0 (absptr)
 * when there is none. */
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
		case 'S': case 'B': case 'G':	/* signal frame: the CIE's flag */
			break;
		default:
			return -1;
		}
	}
	return 0x00;
}

/* ---- CIEs ------------------------------------------------------------------ */

static size_t cie_hash(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* Distinct CIEs an object may have (linkers merge .eh_frame's: libLLVM
 * has one; .debug_frame has one a compilation unit) */
#define MAX_CIES (1u << 20)

/* The index of the CIE at offset OFF of section SEC (read now if not yet),
 * or -ENOMEM, or -EFBIG (more than MAX_CIES). A CIE that cannot be used is
 * kept too, with enc -1: its FDEs are bad. */
static long cie_at(struct builder *b, Elf *elf, unsigned sec, Dwarf_Off off)
{
	const struct cfi_sec *cs = &b->sec[sec];
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	uint64_t key = (uint64_t)off * 2 + sec;
	Elf_Data data = { .d_buf = (void *)cs->buf, .d_size = cs->size, .d_type = ELF_T_BYTE };
	Dwarf_CFI_Entry c;
	Dwarf_Off next;
	struct cie *e;
	size_t h;

	if (b->cap_slots) {
		for (h = cie_hash(key, b->cap_slots); b->cie_slot[h]; h = (h + 1) & (b->cap_slots - 1))
			if (b->cies[b->cie_slot[h] - 1].key == key)
				return (long)b->cie_slot[h] - 1;
	}
	if (b->ncies == MAX_CIES)
		return -EFBIG;
	if (b->ncies == b->cap_cies) {
		size_t cap = b->cap_cies ? b->cap_cies * 2 : 8;
		struct cie *n = realloc(b->cies, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->cies = n;
		b->cap_cies = cap;
	}
	if ((b->ncies + 1) * 2 > b->cap_slots) {
		size_t cap = b->cap_slots ? b->cap_slots * 2 : 16, i;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < b->ncies; i++) {
			for (h = cie_hash(b->cies[i].key, cap); slots[h]; h = (h + 1) & (cap - 1))
				;
			slots[h] = (uint32_t)i + 1;
		}
		free(b->cie_slot);
		b->cie_slot = slots;
		b->cap_slots = cap;
	}
	e = &b->cies[b->ncies];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->enc = -1;
	if (dwarf_next_cfi(ident, &data, cs->eh, off, &next, &c) == 0 && dwarf_cfi_cie_p(&c)) {
		const char *a = c.cie.augmentation;

		e->enc = cs->eh ? cie_fde_encoding(&c.cie) : 0x00;
		e->code_align = c.cie.code_alignment_factor;
		e->data_align = c.cie.data_alignment_factor;
		e->ra = c.cie.return_address_register;
		e->ins = c.cie.initial_instructions;
		e->ins_end = c.cie.initial_instructions_end;
		/* as libdw reads the augmentation: with 'z' every letter is
		 * known or skipped; without, none is (its data not sized) */
		e->sized = a && a[0] == 'z';
		e->signal = e->sized && strchr(a, 'S');
		e->odd = a && a[0] && !e->sized;
		if (e->ins > e->ins_end || e->ins < cs->buf || e->ins_end > cs->buf + cs->size)
			e->enc = -1;
	}
	for (h = cie_hash(key, b->cap_slots); b->cie_slot[h]; h = (h + 1) & (b->cap_slots - 1))
		;
	b->cie_slot[h] = (uint32_t)b->ncies + 1;
	return (long)b->ncies++;
}

/* ---- FDEs ------------------------------------------------------------------ */

static int add_range(struct builder *b, const struct fde_range *r)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct fde_range *n;

		if (cap > CFITAB_MAX_ROWS)
			return -EFBIG;
		n = realloc(b->r, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->r = n;
		b->cap = cap;
	}
	b->r[b->n++] = *r;
	return 0;
}

/* List the FDEs of section SEC with their ranges and instructions. */
static int scan_fdes(struct builder *b, Elf *elf, unsigned sec)
{
	const struct cfi_sec *cs = &b->sec[sec];
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	const uint8_t *base = cs->buf;
	Elf_Data data = { .d_buf = (void *)cs->buf, .d_size = cs->size, .d_type = ELF_T_BYTE };
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	long ci = -1;
	size_t guard = cs->size / 4 + 1;	/* an entry takes at least 4 bytes */
	int err;

	while (guard--) {
		Dwarf_CFI_Entry e;
		const uint8_t *p, *end;
		uint64_t lo, len, field, alen;
		struct fde_range r = { .sec = (uint8_t)sec };
		const struct cie *c;
		int rc = dwarf_next_cfi(ident, &data, cs->eh, off, &next, &e);

		if (rc != 0)
			break;	/* 1: the end; -1: corrupt from here on */
		off = next;
		if ((err = tick(b)))
			return err;
		if (dwarf_cfi_cie_p(&e))
			continue;
		b->t->st.fdes++;
		if (e.fde.CIE_pointer != cie_off) {
			cie_off = e.fde.CIE_pointer;
			ci = cie_at(b, elf, sec, cie_off);
			if (ci < 0)
				return (int)ci;
		}
		c = &b->cies[ci];
		p = e.fde.start;
		end = e.fde.end;
		if (c->enc < 0 || (c->enc & 0x80) || ((c->enc & 0x70) != 0x00 && (c->enc & 0x70) != 0x10) ||
		    p < base || end > base + cs->size || p > end) {
			b->t->st.bad_fdes++;
			continue;
		}
		field = cs->addr + (uint64_t)(p - base);
		if (read_encoded(&p, end, (unsigned)c->enc, &lo) ||
		    read_encoded(&p, end, (unsigned)c->enc & 0x0f, &len)) {
			b->t->st.bad_fdes++;
			continue;
		}
		if ((c->enc & 0x70) == 0x10)
			lo += field;
		if (!len)
			continue;	/* an empty FDE (a discarded function) */
		if (lo + len < lo) {
			b->t->st.bad_fdes++;
			continue;
		}
		r.lo = lo;
		r.hi = lo + len;
		r.cie = (uint32_t)ci;
		/* its augmentation data, then its instructions (as libdw's
		 * intern_fde finds them) */
		if (c->odd) {
			r.cie = NO_CIE;
		} else if (c->sized) {
			if (rd_uleb(&p, end, &alen) || alen > (uint64_t)(end - p))
				r.cie = NO_CIE;
			else
				p += alen;
		}
		r.ins = (uint32_t)(p - base);	/* a section is under 4 GB */
		r.len = (uint32_t)(end - p);
		err = add_range(b, &r);
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
	return (int)x->sec - (int)y->sec;	/* .eh_frame first */
}

/* ---- rows ------------------------------------------------------------------ */

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

		if (t->n >= b->max_rows)
			return b->max_rows < CFITAB_MAX_ROWS ? -ENOSPC : -EFBIG;
		if (cap > b->max_rows)
			cap = b->max_rows;
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

/* The PLT's CFA expression, RSP + N, plus 8 when (RIP & 15) >= K: its
 * bytes exactly (DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
 * DW_OP_litK; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus) */
static bool is_plt_expr(const uint8_t *p, uint64_t len, int64_t *off, int *k)
{
	static const uint8_t tail[] = { DW_OP_lit15, DW_OP_and, 0, DW_OP_ge, DW_OP_lit3,
					DW_OP_shl, DW_OP_plus };
	const uint8_t *end = p + len;
	int64_t n, zero;
	size_t i;

	if (!len || *p++ != DW_OP_breg7 || rd_sleb(&p, end, &n) || p >= end ||
	    *p++ != DW_OP_breg16 || rd_sleb(&p, end, &zero) || zero ||
	    (size_t)(end - p) != sizeof(tail))
		return false;
	for (i = 0; i < sizeof(tail); i++)
		if (i == 2 ? p[i] < DW_OP_lit0 || p[i] > DW_OP_lit15 : p[i] != tail[i])
			return false;
	*off = n;
	*k = p[2] - DW_OP_lit0;
	return true;
}

/* Whether the CFA expression of LEN bytes at P is one DW_OP_bregN (or
 * DW_OP_bregx) and nothing else: register *REG plus *OFF. */
static bool is_breg_expr(const uint8_t *p, uint64_t len, uint64_t *reg, int64_t *off)
{
	const uint8_t *end = p + len;
	uint8_t op;

	if (!len)
		return false;
	op = *p++;
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		*reg = (uint64_t)(op - DW_OP_breg0);
	else if (op != DW_OP_bregx || rd_uleb(&p, end, reg))
		return false;
	return !rd_sleb(&p, end, off) && p == end;
}

/* The rules of a row both readers share (state_row, ours; frame_row_libdw,
 * the reference's). The CFA as register REG plus OFF into ROW: false when
 * a table row cannot say it (not RSP or RBP, or an offset past 32 bits). */
static bool row_cfa_reg(struct cfi_row *row, uint64_t reg, int64_t off)
{
	if ((reg != DW_REG_SP && reg != DW_REG_FP) || off < INT32_MIN || off > INT32_MAX)
		return false;
	row->cfa = reg == DW_REG_SP ? CFI_CFA_SP : CFI_CFA_FP;
	row->cfa_off = (int32_t)off;
	return true;
}

/* The PLT's CFA (RSP + OFF, plus 8 when (RIP & 15) >= K) into ROW: false
 * when OFF does not fit. */
static bool row_cfa_plt(struct cfi_row *row, int64_t off, int k)
{
	if (off < 0 || off > INT32_MAX)
		return false;
	row->cfa = CFI_CFA_PLT;
	row->cfa_off = (int32_t)off;
	row->fp_off = (int16_t)k;
	return true;
}

/* ROW as CFA kind CFA alone: the end of the stack, or a row the table
 * cannot say. */
static void row_only(struct cfi_row *row, uint8_t cfa)
{
	row->cfa = cfa;
	row->cfa_off = 0;
	row->fp_off = 0;
	row->fp = CFI_FP_SAME;
}

/* The row state S says, CIE C's: libdw's answers as frame_row_libdw reads
 * them, from the state directly. */
static void state_row(const struct cie *c, const struct cfi_state *s, struct cfi_row *row)
{
	uint64_t reg;
	int64_t off;
	int k;

	memset(row, 0, sizeof(*row));
	row->cfa = CFI_CFA_UNSUPPORTED;
	if (c->signal || c->ra != DW_REG_RA)
		return;
	if (s->cfa == CFA_OFF) {
		if (!row_cfa_reg(row, s->cfa_reg, (int64_t)s->cfa_off))
			return;
	} else if (s->cfa == CFA_EXPR && is_breg_expr(s->expr, s->expr_len, &reg, &off)) {
		/* an expression that is a register plus an offset */
		if (!row_cfa_reg(row, reg, off))
			return;
	} else if (s->cfa != CFA_EXPR || !is_plt_expr(s->expr, s->expr_len, &off, &k) ||
		   !row_cfa_plt(row, off, k)) {
		return;
	}
	/* the return address: at CFA - 8, or undefined in the outermost frame */
	if (s->ra == REG_UNDEF) {
		row_only(row, CFI_CFA_END);
		return;
	}
	if (row->cfa == CFI_CFA_SP && s->ra == REG_IN && s->ra_v == DW_REG_DI) {
		row->cfa = CFI_CFA_SP_RA_DI;
	} else if (s->ra != REG_AT || s->ra_v != -8) {
		row_only(row, CFI_CFA_UNSUPPORTED);
		return;
	}
	if (row->cfa == CFI_CFA_PLT)
		return;
	/* the caller's frame pointer */
	if (s->fp == REG_SAME) {
		row->fp = CFI_FP_SAME;
	} else if (s->fp == REG_AT && s->fp_v >= INT16_MIN && s->fp_v <= INT16_MAX) {
		row->fp = CFI_FP_AT;
		row->fp_off = (int16_t)s->fp_v;
	} else {
		row->fp = CFI_FP_UNKNOWN;
	}
}

/* The row of PC from state S (the budget of rows looked up allowing) */
static int fde_row(struct builder *b, uint64_t pc, const struct cie *c, const struct cfi_state *s)
{
	struct cfi_row row;

	if (!b->budget--)
		return -EFBIG;
	if (s) {
		state_row(c, s, &row);
	} else {
		memset(&row, 0, sizeof(row));
		row.cfa = CFI_CFA_UNSUPPORTED;	/* invalid CFI */
	}
	return put_row(b, pc, &row);
}

/* libdw keeps a register's value in 61 bits */
static int64_t val61(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

/* Set register REG's rule in S (only the return address's and RBP's are
 * kept): 0, or -1 (a register number libdw refuses) */
static int set_reg(struct cfi_state *s, uint64_t reg, enum reg_kind kind, int64_t v)
{
	if (reg >= REG_LIMIT)
		return -1;
	if (reg == DW_REG_RA) {
		s->ra = (uint8_t)kind;
		s->ra_v = v;
	} else if (reg == DW_REG_FP) {
		s->fp = (uint8_t)kind;
		s->fp_v = v;
	}
	return 0;
}

/* The rule of an expression (VALUE: val_expression) of LEN bytes at P, as
 * dwarf_frame_register gives it: an empty one no location at all, exactly
 * DW_OP_plus_uconst N the CFA plus N; anything else no rule followed. */
static enum reg_kind expr_rule(const uint8_t *p, uint64_t len, bool value, int64_t *v)
{
	const uint8_t *end = p + len;
	uint64_t n;

	*v = 0;
	if (!len)
		return REG_UNDEF;
	if (!value && *p++ == DW_OP_plus_uconst && !rd_uleb(&p, end, &n) && p == end) {
		*v = (int64_t)n;
		return REG_AT;
	}
	return REG_OTHER;
}

/* One run of a CFI program (run_cfi): where it is in the program, and the
 * states DW_CFA_remember_state saved. */
struct cfi_run {
	struct builder *b;
	const struct cie *c;
	const struct fde_range *r;	/* NULL: the CIE's initial instructions */
	struct cfi_state *s;
	const uint8_t *p, *end;
	struct cfi_state saved[CFITAB_MAX_STATES];
	unsigned depth;
};

/* The N-byte little-endian delta of a DW_CFA_advance_locN into *DELTA:
 * 0, or -1 when the program ends first. */
static int rd_delta(struct cfi_run *x, unsigned n, uint64_t *delta)
{
	unsigned i;

	if ((size_t)(x->end - x->p) < n)
		return -1;
	*delta = 0;
	for (i = 0; i < n; i++)
		*delta |= (uint64_t)x->p[i] << (8 * i);
	x->p += n;
	return 0;
}

/* DW_CFA_set_loc's address into *LOC: absptr, or relative to where it is
 * (the FDE's own encoding). 0, or -1: invalid (as in a CIE). */
static int set_loc(struct cfi_run *x, uint64_t *loc)
{
	const struct cfi_sec *cs = &x->b->sec[x->r ? x->r->sec : 0];
	uint64_t at = x->c->enc < 0 ? 0 : (uint64_t)x->c->enc, field, u;

	if ((at & 0x70) != 0x00 && (at & 0x70) != 0x10)
		return -1;
	field = cs->addr + (uint64_t)(x->p - cs->buf);
	if (read_encoded(&x->p, x->end, (unsigned)at & 0x0f, &u))
		return -1;
	if ((at & 0x70) == 0x10)
		u += field;
	if (!x->r)
		return -1;
	*loc = u;
	return 0;
}

/* Instruction OP if it moves the location, *LOC moved: 1; 0 when OP is
 * another; -1: invalid CFI. */
static int move_loc(struct cfi_run *x, uint8_t op, uint64_t *loc)
{
	uint64_t delta;

	if ((op & 0xc0) == DW_CFA_advance_loc)
		delta = op & 0x3f;
	else if (op & 0xc0)
		return 0;
	else if (op == DW_CFA_set_loc)
		return set_loc(x, loc) ? -1 : 1;
	else if (op == DW_CFA_advance_loc1 || op == DW_CFA_advance_loc2 ||
		 op == DW_CFA_advance_loc4) {
		if (rd_delta(x, op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4,
			     &delta))
			return -1;
	} else if (op == DW_CFA_MIPS_advance_loc8) {
		if (rd_delta(x, 8, &delta))
			return -1;
	} else {
		return 0;
	}
	*loc += delta * x->c->code_align;
	return 1;
}

/* A rule of the CFA (DW_CFA_def_cfa*): a register plus an offset, a change
 * to one of them (which leaves a CFA given by an expression invalid), or an
 * expression. 0, or -1: invalid CFI. */
static int cfa_rule(struct cfi_run *x, uint8_t op)
{
	struct cfi_state *s = x->s;
	bool whole = op == DW_CFA_def_cfa || op == DW_CFA_def_cfa_sf;
	bool sf = op == DW_CFA_def_cfa_sf || op == DW_CFA_def_cfa_offset_sf;
	uint64_t reg = s->cfa_reg, off = s->cfa_off, u;
	int64_t sv;

	if (op == DW_CFA_def_cfa_expression) {
		if (rd_uleb(&x->p, x->end, &u) || u > (uint64_t)(x->end - x->p))
			return -1;
		s->cfa = CFA_EXPR;
		s->expr = x->p;
		s->expr_len = u;
		x->p += u;
		return 0;
	}
	if ((whole || op == DW_CFA_def_cfa_register) && rd_uleb(&x->p, x->end, &reg))
		return -1;
	if (op != DW_CFA_def_cfa_register) {
		if (sf ? rd_sleb(&x->p, x->end, &sv) : rd_uleb(&x->p, x->end, &u))
			return -1;
		off = sf ? (uint64_t)sv * (uint64_t)x->c->data_align : u;
	}
	if (whole)
		s->cfa = CFA_OFF;
	else if (s->cfa != CFA_OFF)
		s->cfa = CFA_INVALID;
	s->cfa_reg = reg;
	s->cfa_off = off;
	return 0;
}

/* A rule of a register: DW_CFA_offset and its extended, _sf and negative
 * forms, val_offset(_sf), undefined, same_value, register, and the
 * (val_)expressions. 0, or -1: invalid CFI. */
static int reg_rule(struct cfi_run *x, uint8_t op)
{
	uint64_t da = (uint64_t)x->c->data_align, reg, u = 0;
	enum reg_kind kind;
	int64_t sv, v;

	if ((op & 0xc0) == DW_CFA_offset) {
		reg = op & 0x3f;
		op = DW_CFA_offset_extended;	/* the same, its register in OP */
	} else if (rd_uleb(&x->p, x->end, &reg)) {
		return -1;
	}
	switch (op) {
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		if (rd_sleb(&x->p, x->end, &sv))
			return -1;
		u = (uint64_t)sv;
		break;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		break;
	default:
		if (rd_uleb(&x->p, x->end, &u))
			return -1;
	}
	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
		return set_reg(x->s, reg, REG_AT, val61(u * da));
	case DW_CFA_GNU_negative_offset_extended:
		return set_reg(x->s, reg, REG_AT, val61((0 - u) * da));
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		return set_reg(x->s, reg, REG_OTHER, 0);
	case DW_CFA_undefined:
		return set_reg(x->s, reg, REG_UNDEF, 0);
	case DW_CFA_same_value:
		return set_reg(x->s, reg, REG_SAME, 0);
	case DW_CFA_register:
		return set_reg(x->s, reg, REG_IN, val61(u));
	default:	/* DW_CFA_expression, DW_CFA_val_expression */
		if (u > (uint64_t)(x->end - x->p))
			return -1;
		kind = expr_rule(x->p, u, op == DW_CFA_val_expression, &v);
		x->p += u;
		return set_reg(x->s, reg, kind, v);
	}
}

/* DW_CFA_restore(_extended) of REG: the CIE's rule for it; not in the
 * CIE's own instructions. 0, or -1: invalid CFI. */
static int restore_reg(struct cfi_run *x, uint64_t reg)
{
	if (!x->r || reg >= REG_LIMIT)
		return -1;
	if (reg == DW_REG_RA) {
		x->s->ra = x->c->state.ra;
		x->s->ra_v = x->c->state.ra_v;
	} else if (reg == DW_REG_FP) {
		x->s->fp = x->c->state.fp;
		x->s->fp_v = x->c->state.fp_v;
	}
	return 0;
}

/* Instruction OP, one that does not move the location, on X's state. 0,
 * or -1: invalid CFI (an instruction not known included). */
static int exec_insn(struct cfi_run *x, uint8_t op)
{
	uint64_t u;

	if ((op & 0xc0) == DW_CFA_offset)
		return reg_rule(x, op);
	if ((op & 0xc0) == DW_CFA_restore)
		return restore_reg(x, op & 0x3f);
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_GNU_negative_offset_extended:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_register:
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		return reg_rule(x, op);
	case DW_CFA_restore_extended:
		return rd_uleb(&x->p, x->end, &u) ? -1 : restore_reg(x, u);
	case DW_CFA_remember_state:
		if (x->depth == CFITAB_MAX_STATES)
			return -1;
		x->saved[x->depth++] = *x->s;
		return 0;
	case DW_CFA_restore_state:
		if (!x->depth)
			return -1;
		*x->s = x->saved[--x->depth];
		return 0;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_def_cfa_expression:
		return cfa_rule(x, op);
	case DW_CFA_GNU_args_size:
		return rd_uleb(&x->p, x->end, &u) ? -1 : 0;
	case DW_CFA_GNU_window_save:
		/* SPARC's shorthand, for x86-64 too: registers 16 to 31
		 * saved at CFA + 8 * (n - 16), the return address at CFA */
		x->s->ra = REG_AT;
		x->s->ra_v = 0;
		return 0;
	default:
		return -1;
	}
}

/* Run the CFI program [P, END) of CIE C over state S, as libdw's
 * execute_cfi does, but once: for an FDE's range R, the row of each
 * location is put when the program first moves past it (the state then is
 * what dwarf_cfi_addrframe would answer for it, having run the program
 * from its start up to there). R NULL: the CIE's initial instructions,
 * where the location may not move. 0; 1: invalid CFI (the row where it
 * was met put unsupported, for an FDE); or a negative errno. */
static int run_cfi(struct builder *b, const struct cie *c, struct cfi_state *s, const uint8_t *p,
		   const uint8_t *end, const struct fde_range *r)
{
	struct cfi_run x;	/* not zeroed: saved[] is written before it is read */
	uint64_t loc = r ? r->lo : 0, pc = loc;
	int err, moved;

	x.b = b;
	x.c = c;
	x.r = r;
	x.s = s;
	x.p = p;
	x.end = end;
	x.depth = 0;
	while (x.p < x.end) {
		uint8_t op = *x.p++;

		if ((err = tick(b)))
			return err;
		moved = move_loc(&x, op, &loc);
		if (moved < 0 || (!moved && exec_insn(&x, op)))
			goto invalid;
		if (!moved)
			continue;
		if (!r)
			goto invalid;	/* a row in a CIE */
		if (loc > pc) {
			/* past the row of PC: its state is complete */
			err = fde_row(b, pc, c, s);
			if (err || loc >= r->hi)
				return err;
			pc = loc;
		}
	}
	/* the end of the program: the last row runs to the end of the range */
	return r ? fde_row(b, pc, c, s) : 0;
invalid:
	if (!r)
		return 1;
	err = fde_row(b, pc, c, NULL);
	return err ? err : 1;
}

/* The rows of one FDE's range R, its program run once */
static int range_rows(struct builder *b, const struct fde_range *r)
{
	const struct cfi_sec *cs = &b->sec[r->sec];
	struct cie *c = r->cie == NO_CIE ? NULL : &b->cies[r->cie];
	struct cfi_state s;
	int err;

	if (c && !c->init) {
		/* the ABI's initial rules (libdw's x86-64 backend): the CFA
		 * undefined, the return address and RBP the same value */
		memset(&c->state, 0, sizeof(c->state));
		c->state.cfa = CFA_UNDEF;
		c->state.ra = REG_SAME;
		c->state.fp = REG_SAME;
		err = run_cfi(b, c, &c->state, c->ins, c->ins_end, NULL);
		if (err < 0)
			return err;
		c->init = err ? -1 : 1;
	}
	if (!c || c->init < 0) {
		err = fde_row(b, r->lo, c, NULL);
		return err;
	}
	s = c->state;
	err = run_cfi(b, c, &s, cs->buf + r->ins, cs->buf + r->ins + r->len, r);
	return err < 0 ? err : 0;
}

/* ---- rows by libdw: the reference ------------------------------------------ */

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

static void frame_row_libdw(Dwarf_Frame *f, int ra, bool signal, struct cfi_row *row)
{
	Dwarf_Op mem[3], *ops = NULL;
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
		if (!row_cfa_reg(row, reg, off))
			return;
	} else if (!is_plt_cfa(ops, n, &off, &k) || !row_cfa_plt(row, off, k)) {
		return;
	}
	if (dwarf_frame_register(f, DW_REG_RA, mem, &ops, &n)) {
		row_only(row, CFI_CFA_UNSUPPORTED);
		return;
	}
	if (n == 0) {
		row_only(row, ops ? CFI_CFA_END : CFI_CFA_UNSUPPORTED);
		return;
	}
	if (row->cfa == CFI_CFA_SP && is_reg(ops, n, DW_REG_DI)) {
		row->cfa = CFI_CFA_SP_RA_DI;
	} else if (!is_cfa_plus(ops, n, &off) || off != -8) {
		row_only(row, CFI_CFA_UNSUPPORTED);
		return;
	}
	if (row->cfa == CFI_CFA_PLT)
		return;
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
}

/* The rows of R, one dwarf_cfi_addrframe each (which runs the FDE's
 * program from its start to the row) */
static int range_rows_libdw(struct builder *b, const struct fde_range *r)
{
	Dwarf_CFI *cfi = b->sec[r->sec].cfi;
	uint64_t pc = r->lo;
	int err;

	while (pc < r->hi) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr start, end;
		struct cfi_row row;
		bool signal = false;
		int ra;

		if ((err = limits_check(b)))
			return err;
		if (!b->budget--)
			return -EFBIG;
		if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) || !f) {
			memset(&row, 0, sizeof(row));
			row.cfa = CFI_CFA_UNSUPPORTED;
			err = put_row(b, pc, &row);
			free(f);
			return err;
		}
		ra = dwarf_frame_info(f, &start, &end, &signal);
		frame_row_libdw(f, ra, signal, &row);
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

/* ---- the table ------------------------------------------------------------- */

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

/* Section SCN's bytes into CS (a compressed one uncompressed, within
 * CFITAB_MAX_SECTION): 0, 1 (nothing to read), or -EFBIG. */
static int read_section(Elf_Scn *scn, struct cfi_sec *cs)
{
	Elf_Data *data;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return 1;
	if (sh.sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch))
			return 1;
		if (ch.ch_size > CFITAB_MAX_SECTION)
			return -EFBIG;
		if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh))
			return 1;
	}
	if (sh.sh_size > CFITAB_MAX_SECTION)
		return -EFBIG;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size || data->d_size > CFITAB_MAX_SECTION)
		return 1;
	cs->buf = data->d_buf;
	cs->size = data->d_size;
	cs->addr = sh.sh_addr;
	return 0;
}

void cfitab__free(struct cfi_table *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->rows);
	memset(t, 0, sizeof(*t));
}

int cfitab__build_elf_within(Elf *elf, uint64_t fsize, const struct cfitab_limits *lim,
			     struct cfi_table *t)
{
	struct builder b = { .t = t, .lim = lim, .budget = (size_t)CFITAB_MAX_ROWS * 4 };
	bool libdw = lim && lim->libdw;
	Dwarf *dbg = NULL;
	Elf_Scn *scn;
	GElf_Ehdr eh_hdr;
	uint64_t hi = 0;
	size_t i, kept = 0;
	int err = 0, rc;

	memset(t, 0, sizeof(*t));
	b.max_rows = lim && lim->max_rows && lim->max_rows < CFITAB_MAX_ROWS ? lim->max_rows
									: CFITAB_MAX_ROWS;
	if (!gelf_getehdr(elf, &eh_hdr))
		return -ENOEXEC;
	if (eh_hdr.e_machine != EM_X86_64 || eh_hdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh_hdr.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	(void)fsize;	/* elfsym__begin checked the headers against it */
	if ((err = limits_check(&b)))
		return err;
	b.sec[0].eh = true;
	scn = find_section(elf, ".eh_frame");
	if (scn) {
		rc = read_section(scn, &b.sec[0]);
		if (rc < 0) {
			err = rc;
			goto out;
		}
		if (libdw && !rc)
			b.sec[0].cfi = dwarf_getcfi_elf(elf);
		if (!rc && (!libdw || b.sec[0].cfi))
			err = scan_fdes(&b, elf, 0);
	}
	scn = find_section(elf, ".debug_frame");
	if (!err && scn) {
		if (libdw) {
			/* libdw's own reading (it uncompresses the section) */
			dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
			b.sec[1].cfi = dbg ? dwarf_getcfi(dbg) : NULL;
		}
		rc = read_section(scn, &b.sec[1]);
		if (rc < 0)
			err = rc;
		else if (!rc && (!libdw || b.sec[1].cfi)) {
			t->st.debug_frame = 1;
			err = scan_fdes(&b, elf, 1);
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
			if (!b.r[i].sec)
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
		err = libdw ? range_rows_libdw(&b, &b.r[i]) : range_rows(&b, &b.r[i]);
		/* the gap after it, when the next FDE does not start there */
		if (!err && (i + 1 == b.n || b.r[i + 1].lo > b.r[i].hi)) {
			struct cfi_row none = { .cfa = CFI_CFA_NONE };

			err = put_row(&b, b.r[i].hi, &none);
		}
		if (!err)
			err = tick(&b);
	}
out:
	free(b.r);
	free(b.cies);
	free(b.cie_slot);
	if (b.sec[0].cfi)
		dwarf_cfi_end(b.sec[0].cfi);
	if (dbg)
		dwarf_end(dbg);
	if (err)
		cfitab__free(t);
	return err;
}

int cfitab__build_elf(Elf *elf, uint64_t fsize, struct cfi_table *t)
{
	return cfitab__build_elf_within(elf, fsize, NULL, t);
}

int cfitab__build_fd_within(int fd, const struct cfitab_limits *lim, struct cfi_table *t)
{
	uint64_t fsize;
	Elf *elf = elfsym__begin(fd, &fsize);
	int err;

	memset(t, 0, sizeof(*t));
	if (!elf)
		return -ENOEXEC;
	err = cfitab__build_elf_within(elf, fsize, lim, t);
	elf_end(elf);
	return err;
}

int cfitab__build_fd(int fd, struct cfi_table *t)
{
	return cfitab__build_fd_within(fd, NULL, t);
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
