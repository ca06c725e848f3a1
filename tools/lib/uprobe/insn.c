// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* x86-64 decoding with Capstone (insn.h). One instruction at a time with
 * cs_disasm_iter: no array of every instruction of a large function. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <capstone/capstone.h>

#include "core/dynlib.h"
#include "uprobe/insn.h"

/* Capstone, loaded when a probe first needs it (core/dynlib.h) */
#define CS_FUNCS(X) X(cs_open) X(cs_option) X(cs_close) X(cs_malloc) X(cs_disasm_iter) \
	X(cs_insn_group) X(cs_free)
DYNLIB_DEFINE(capstone, "libcapstone.so.4", CS_FUNCS);
#define cs_open (capstone.cs_open)
#define cs_option (capstone.cs_option)
#define cs_close (capstone.cs_close)
#define cs_malloc (capstone.cs_malloc)
#define cs_disasm_iter (capstone.cs_disasm_iter)
#define cs_insn_group (capstone.cs_insn_group)
#define cs_free (capstone.cs_free)

static struct err load_err;	/* why Capstone's library did not load */

const char *insn__why(void)
{
	return load_err.msg[0] ? load_err.msg : "Capstone cannot start";
}

/* A Capstone handle for x86-64; DETAIL: with groups and operands. */
static int open_cs(csh *h, bool detail)
{
	if (dynlib__load(&capstone_lib, &load_err) || cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -ENOSYS;
	if (detail && cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(h);
		return -ENOSYS;
	}
	return 0;
}

static int push(struct insn_scan *sc, size_t *cap, uint64_t at)
{
	if (sc->nrets == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		uint64_t *n = realloc(sc->rets, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sc->rets = n;
		*cap = ncap;
	}
	sc->rets[sc->nrets++] = at;
	return 0;
}

/* A direct JMP (not a conditional one: those stay in Go functions) with a
 * target outside [base, base + len). */
static bool jumps_out(const cs_insn *in, uint64_t base, size_t len)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t t;

	if (in->id != X86_INS_JMP || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	t = (uint64_t)x->operands[0].imm;
	return t < base || t - base >= len;
}

int insn__scan(const uint8_t *code, size_t len, uint64_t base, struct insn_scan *sc)
{
	const uint8_t *p = code;
	size_t left = len, cap = 0;
	uint64_t addr = base;
	cs_insn *in = NULL;
	csh h;
	int err;

	sc->rets = NULL;
	sc->nrets = 0;
	sc->njumps_out = 0;
	sc->bad_at = 0;
	if (len > INSN_MAX_CODE)
		return -E2BIG;
	err = open_cs(&h, true);
	if (err)
		return err;
	in = cs_malloc(h);
	if (!in) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (left > 0) {
		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			sc->bad_at = addr;
			err = -ENOEXEC;
			goto cleanup;
		}
		if (cs_insn_group(h, in, CS_GRP_RET)) {
			err = push(sc, &cap, in->address);
			if (err)
				goto cleanup;
		} else if (jumps_out(in, base, len)) {
			sc->njumps_out++;
		}
	}
	err = 0;
cleanup:
	if (err) {
		free(sc->rets);
		sc->rets = NULL;
		sc->nrets = 0;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	return err;
}

int insn__is_boundary(const uint8_t *code, size_t len, uint64_t off, uint64_t *prev,
		      uint64_t *next)
{
	const uint8_t *p = code;
	size_t left = len;
	uint64_t addr = 0, last = 0;
	cs_insn *in;
	csh h;
	int err;

	if (len > INSN_MAX_CODE)
		return -E2BIG;
	if (off == 0)
		return 1;
	err = open_cs(&h, false);
	if (err)
		return err;
	in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		return -ENOMEM;
	}
	err = -ENOEXEC;
	while (left > 0 && addr < off) {
		last = addr;
		if (!cs_disasm_iter(h, &p, &left, &addr, in))
			break;
		if (addr == off) {
			err = 1;
			break;
		}
		if (addr > off) {
			if (prev)
				*prev = last;
			if (next)
				*next = addr;
			err = 0;
			break;
		}
	}
	cs_free(in, 1);
	cs_close(&h);
	return err;
}
