// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The unwind table interpreter against libdw: cfitab runs each FDE's CFI
 * program once; libdw (dwarf_cfi_addrframe, the reference kept behind
 * cfitab_limits' libdw) answers row by row. Both must give the same rows
 * and counts for: functions written here with every CFI instruction the
 * interpreter knows (state stacks, register and expression rules, the
 * _sf forms, GNU extensions, odd advances, invalid CFI mid-FDE), this
 * program, the vDSO and the system's core libraries; and, given paths as
 * arguments, for each of those files:
 *
 *   build/tests/unit/sym/test_cfitab_libdw.t /usr/lib/x86_64-linux-gnu/lib*.so*
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "sym/cfitab.h"
#include "sym/elfsym.h"
#include "tap.h"

/* Never called: their CFI is what is read. Each .cfi_escape is one
 * instruction gas does not spell (DW_CFA_* in comments), for the byte
 * after the nop before it. */
__asm__(".text\n"
	/* remember/restore state, nested; restore of a register */
	".globl cfix_state\n.type cfix_state,@function\ncfix_state:\n"
	".cfi_startproc\n"
	"push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
	".cfi_remember_state\n"
	"nop\n.cfi_def_cfa_offset 32\n"
	".cfi_remember_state\n"
	"nop\n.cfi_def_cfa_offset 48\n.cfi_restore %rbp\n"
	"nop\n.cfi_restore_state\n"
	"nop\n.cfi_restore_state\n"
	"nop\npop %rbp\n.cfi_def_cfa_offset 8\n.cfi_restore %rbp\n"
	"ret\n.cfi_endproc\n"
	/* register rules: same, undefined, in a register, val_offset */
	".globl cfix_regs\n.type cfix_regs,@function\ncfix_regs:\n"
	".cfi_startproc\n"
	"nop\n.cfi_same_value %rbp\n"
	"nop\n.cfi_undefined %rbp\n"
	"nop\n.cfi_register %rbp, %rbx\n"
	"nop\n.cfi_escape 0x14, 0x06, 0x02\n"		/* val_offset rbp, -16 */
	"nop\n.cfi_rel_offset %rbp, 0\n"
	"nop\n.cfi_register %rip, %rdi\n"		/* with an RSP CFA: ra=rdi */
	"nop\n.cfi_def_cfa %rbp, 16\n"			/* with an RBP CFA: unsupported */
	"nop\n.cfi_def_cfa %rsp, 8\n.cfi_register %rip, %rax\n"
	"nop\n.cfi_offset %rip, -8\n"
	"nop\n.cfi_escape 0x14, 0x10, 0x01\n"		/* val_offset rip */
	"nop\n.cfi_offset %rip, -8\n"
	"nop\n.cfi_escape 0x2d\n"			/* GNU_window_save */
	"nop\n.cfi_offset %rip, -8\n"
	"nop\n.cfi_escape 0x07, 0xc8, 0x01\n"		/* undefined r200 */
	"ret\n.cfi_endproc\n"
	/* expression rules */
	".globl cfix_expr\n.type cfix_expr,@function\ncfix_expr:\n"
	".cfi_startproc\n"
	"nop\n.cfi_escape 0x10, 0x06, 0x02, 0x23, 0x10\n"	/* rbp: plus_uconst 16 */
	"nop\n.cfi_escape 0x10, 0x06, 0x00\n"		/* rbp: empty */
	"nop\n.cfi_escape 0x16, 0x06, 0x00\n"		/* rbp: val, empty */
	"nop\n.cfi_escape 0x10, 0x06, 0x02, 0x77, 0x10\n"	/* rbp: breg7 16 */
	"nop\n.cfi_escape 0x16, 0x06, 0x02, 0x23, 0x10\n"	/* rbp: val, plus_uconst */
	"nop\n.cfi_escape 0x10, 0x10, 0x0b, 0x23, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, "
	"0xff, 0xff, 0x01\n"				/* rip: plus_uconst -8 */
	"nop\n.cfi_escape 0x10, 0x10, 0x00\n"		/* rip: empty */
	"nop\n.cfi_escape 0x16, 0x10, 0x02, 0x23, 0x08\n"	/* rip: val */
	"nop\n.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x00\n"	/* rip: breg7 0 */
	"nop\n.cfi_offset %rip, -8\n"
	"nop\n.cfi_escape 0x0f, 0x02, 0x77, 0x10\n"	/* CFA: breg7 16 */
	"nop\n.cfi_def_cfa_offset 16\n"			/* after an expression: invalid */
	"nop\n.cfi_def_cfa_register %rbp\n"
	"nop\n.cfi_def_cfa %rsp, 8\n"
	"nop\n.cfi_escape 0x0f, 0x00\n"			/* CFA: empty expression */
	"nop\n.cfi_def_cfa %rsp, 8\n"
	"ret\n.cfi_endproc\n"
	/* the _sf forms, GNU extensions, odd advances */
	".globl cfix_sf\n.type cfix_sf,@function\ncfix_sf:\n"
	".cfi_startproc\n"
	"nop\n.cfi_escape 0x12, 0x07, 0x7e\n"		/* def_cfa_sf rsp, -2 (* -8) */
	"nop\n.cfi_escape 0x13, 0x7d\n"			/* def_cfa_offset_sf -3 */
	"nop\n.cfi_escape 0x11, 0x06, 0x02\n"		/* offset_extended_sf rbp, 2 */
	"nop\n.cfi_escape 0x2f, 0x06, 0x03\n"		/* GNU_negative_offset_extended */
	"nop\n.cfi_escape 0x05, 0x06, 0x03\n"		/* offset_extended rbp, 3 */
	"nop\n.cfi_escape 0x06, 0x06\n"			/* restore_extended rbp */
	"nop\n.cfi_escape 0x2e, 0x10\n"			/* GNU_args_size */
	/* from here on each row a byte later than gas thinks */
	"nop\n.cfi_escape 0x0e, 0x18, 0x02, 0x01\n"	/* def_cfa_offset; advance_loc1 */
	"nop\n.cfi_escape 0x0e, 0x20, 0x03, 0x01, 0x00\n"	/* advance_loc2 */
	"nop\n.cfi_escape 0x0e, 0x28, 0x04, 0x01, 0x00, 0x00, 0x00\n"	/* advance_loc4 */
	"nop\n.cfi_escape 0x0e, 0x30, 0x1d, 0x01, 0, 0, 0, 0, 0, 0, 0\n"	/* MIPS_advance_loc8 */
	"nop\n.cfi_escape 0x0e, 0x38, 0x40, 0x0e, 0x40\n"	/* a zero advance */
	"nop\nnop\nnop\nnop\nnop\nnop\nnop\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n.cfi_endproc\n"
	/* (an unknown instruction: test_cfitab_limits, ld refuses it here) */
	/* restore_state with nothing remembered */
	".globl cfix_bad2\n.type cfix_bad2,@function\ncfix_bad2:\n"
	".cfi_startproc\n"
	"nop\n.cfi_def_cfa_offset 16\n"
	"nop\n.cfi_escape 0x0b\n"
	"ret\n.cfi_endproc\n"
	/* a register number libdw refuses */
	".globl cfix_bad3\n.type cfix_bad3,@function\ncfix_bad3:\n"
	".cfi_startproc\n"
	"nop\n.cfi_def_cfa_offset 16\n"
	"nop\n.cfi_escape 0x07, 0xff, 0xff, 0xff, 0xff, 0x0f\n"
	"ret\n.cfi_endproc\n"
	/* another return column (its own CIE) */
	".globl cfix_col\n.type cfix_col,@function\ncfix_col:\n"
	".cfi_startproc\n.cfi_return_column %rax\n"
	"nop\n.cfi_def_cfa_offset 16\n"
	"ret\n.cfi_endproc\n"
	/* personality and LSDA: augmentation data in the CIE and FDE */
	".globl cfix_pers\n.type cfix_pers,@function\ncfix_pers:\n"
	".cfi_startproc\n.cfi_personality 0x1b, cfix_state\n.cfi_lsda 0x1b, cfix_regs\n"
	"push %rbx\n.cfi_def_cfa_offset 16\n.cfi_offset %rbx, -16\n"
	"pop %rbx\n.cfi_def_cfa_offset 8\n"
	"ret\n.cfi_endproc\n");

/* Both builds of one object, compared: 1 when the same (or both refused
 * alike), 0 with the first differences said. */
static int same_both(const char *name, Elf *elf, uint64_t fsize, int fd, size_t *nrows)
{
	struct cfitab_limits ref = { .libdw = 1 };
	struct cfi_table a, b;
	int ea, eb, same = 1;
	size_t i, said = 0;

	ea = elf ? cfitab__build_elf_within(elf, fsize, &ref, &a) : cfitab__build_fd_within(fd, &ref, &a);
	eb = elf ? cfitab__build_elf_within(elf, fsize, NULL, &b) : cfitab__build_fd_within(fd, NULL, &b);
	*nrows = 0;
	if (ea || eb) {
		if (ea != eb)
			diag("%s: libdw %d, interpreter %d", name, ea, eb);
		return ea == eb;
	}
	*nrows = a.n;
	if (a.n != b.n || a.base != b.base || memcmp(&a.st, &b.st, sizeof(a.st))) {
		diag("%s: %zu rows, base %#llx, %zu/%zu/%zu/%zu (libdw); %zu rows, base %#llx, "
		     "%zu/%zu/%zu/%zu", name, a.n, (unsigned long long)a.base, a.st.fdes,
		     a.st.bad_fdes, a.st.unsupported, a.st.fp_unknown, b.n,
		     (unsigned long long)b.base, b.st.fdes, b.st.bad_fdes, b.st.unsupported,
		     b.st.fp_unknown);
		same = 0;
	}
	for (i = 0; i < a.n && i < b.n; i++) {
		const struct cfi_row *x = &a.rows[i], *y = &b.rows[i];

		if (!memcmp(x, y, sizeof(*x)))
			continue;
		same = 0;
		if (said++ < 4)
			diag("%s: row %zu: pc %#x %d%+d fp %d%+d (libdw), pc %#x %d%+d fp %d%+d",
			     name, i, x->pc, x->cfa, x->cfa_off, x->fp, x->fp_off, y->pc, y->cfa,
			     y->cfa_off, y->fp, y->fp_off);
	}
	cfitab__free(&a);
	cfitab__free(&b);
	return same;
}

static int same_path(const char *path, size_t *nrows)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), same;

	if (fd < 0) {
		diag("%s: %s", path, strerror(errno));
		return 0;
	}
	same = same_both(path, NULL, 0, fd, nrows);
	close(fd);
	return same;
}

/* The rows of the function FN of this program (its table T), as text */
static void rows_of(const struct cfi_table *t, uint64_t bias, void (*fn)(void), size_t len,
		    char *out, size_t outlen)
{
	uint64_t lo = (uint64_t)(uintptr_t)fn - bias, a;
	const struct cfi_row *last = NULL;

	out[0] = '\0';
	for (a = lo; a < lo + len; a++) {
		const struct cfi_row *r = cfitab__find(t, a);
		char cfa[32];

		if (!r || r == last)
			continue;
		last = r;
		cfitab__cfa_str(r, cfa, sizeof(cfa));
		snprintf(out + strlen(out), outlen - strlen(out), "%s%u:%s%s", out[0] ? " " : "",
			 (unsigned)(a - lo), cfa,
			 r->fp == CFI_FP_AT ? "/at" : r->fp == CFI_FP_UNKNOWN ? "/?" : "");
		if (r->fp == CFI_FP_AT)
			snprintf(out + strlen(out), outlen - strlen(out), "%+d", r->fp_off);
	}
}

void cfix_state(void);
void cfix_regs(void);
void cfix_expr(void);
void cfix_sf(void);
void cfix_bad2(void);
void cfix_bad3(void);
void cfix_col(void);
void cfix_pers(void);

static uint64_t self_bias(void)
{
	extern char __executable_start[];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	uint64_t fsize, bias = 0;
	Elf *elf = fd >= 0 ? elfsym__begin(fd, &fsize) : NULL;
	GElf_Phdr ph;
	size_t i, n;

	/* the link-time address of the first PT_LOAD is where the image starts */
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n; i++) {
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				bias = (uint64_t)(uintptr_t)__executable_start - (ph.p_vaddr & ~0xfffull);
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return bias;
}

int main(int argc, char **argv)
{
	static const char *const libs[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
		"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libgcc_s.so.1",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libz.so.1",
	};
	struct cfi_table t;
	size_t i, rows = 0, files = 0, all = 0;
	int fd, err, same, differ = 0;

	if (argc > 1) {
		for (i = 1; i < (size_t)argc; i++) {
			if (same_path(argv[i], &rows)) {
				files++;
				all += rows;
			} else {
				differ++;
			}
		}
		ok(!differ, "%zu objects, %zu rows: the interpreter's rows are libdw's (%d differ)",
		   files, all, differ);
		return done_testing();
	}

	/* the functions above, one by one */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	err = cfitab__build_fd(fd, &t);
	close(fd);
	is_int(err, 0, "this program's table");
	if (!err) {
		uint64_t bias = self_bias();
		char out[1024];

		rows_of(&t, bias, cfix_state, 8, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+16/at-16 2:sp+32/at-16 3:sp+48 4:sp+32/at-16 "
			    "5:sp+16/at-16 7:sp+8", "remember and restore state, nested");
		rows_of(&t, bias, cfix_regs, 15, out, sizeof(out));
		is_str(out, "0:sp+8 2:sp+8/? 5:sp+8/at-8 6:sp+8,ra=rdi/at-8 7:unsupported "
			    "9:sp+8/at-8 10:unsupported 11:sp+8/at-8 12:unsupported 13:sp+8/at-8",
		       "register rules");
		rows_of(&t, bias, cfix_expr, 17, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+8/at+16 2:sp+8/? 7:end 8:unsupported 10:sp+8/? "
			    "11:sp+16/? 12:unsupported 14:sp+8/? 15:unsupported 16:sp+8/?",
		       "expression rules");
		rows_of(&t, bias, cfix_sf, 20, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+16 2:sp+24 3:sp+24/at-16 4:sp+24/at+24 5:sp+24/at-24 "
			    "6:sp+24 10:sp+32 12:sp+40 14:sp+48 16:sp+64",
		       "the _sf forms, GNU extensions, longer advances");
		rows_of(&t, bias, cfix_bad2, 3, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+16 2:unsupported", "restore_state with nothing remembered");
		rows_of(&t, bias, cfix_bad3, 3, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+16 2:unsupported", "a register number out of libdw's range");
		rows_of(&t, bias, cfix_col, 2, out, sizeof(out));
		is_str(out, "0:unsupported", "another return column");
		rows_of(&t, bias, cfix_pers, 3, out, sizeof(out));
		is_str(out, "0:sp+8 1:sp+16 2:sp+8", "an FDE with augmentation data (personality, LSDA)");
		cfitab__free(&t);
	}
	same = same_path("/proc/self/exe", &rows);
	ok(same, "this program: the same rows as libdw's (%zu)", rows);

	/* the vDSO, from memory */
	{
		const void *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
		const Elf64_Ehdr *eh = vdso;
		size_t len = eh ? eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize : 0;
		char *copy = len ? malloc(len) : NULL;
		Elf *elf = NULL;

		if (copy && elf_version(EV_CURRENT) != EV_NONE) {
			memcpy(copy, vdso, len);
			elf = elf_memory(copy, len);
		}
		same = elf && same_both("[vdso]", elf, len, -1, &rows);
		ok(same, "the vDSO: the same rows (%zu)", rows);
		if (elf)
			elf_end(elf);
		free(copy);
	}
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (access(libs[i], R_OK) && i > 0)
			continue;	/* the C library at least */
		same = same_path(libs[i], &rows);
		ok(same, "%s: the same rows (%zu)", libs[i], rows);
	}
	return done_testing();
}
