// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables over this test's own executable: functions written in
 * assembly here with known CFI (a frame-pointer prologue and epilogue, a
 * frameless function, a PLT-like CFA expression, another expression, an
 * outermost frame, a signal frame) must come out as the rows they say;
 * then the C library's table is looked at as a whole, and hostile inputs
 * are refused. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/cfitab.h"
#include "sym/elfsym.h"
#include "tap.h"

/* push rbp (1 byte); mov rsp,rbp (3); sub $32,rsp (4); nop (1); leave (1); ret */
__asm__(".text\n"
	".globl cfit_fp\n.type cfit_fp,@function\ncfit_fp:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"sub $32, %rsp\n"
	"nop\n"
	"leave\n"
	".cfi_def_cfa %rsp, 8\n.cfi_restore %rbp\n"
	"ret\n"
	".cfi_endproc\n.size cfit_fp, .-cfit_fp\n"
	/* frameless: sub $40,rsp (4); nop; add $40,rsp (4); ret */
	".globl cfit_nofp\n.type cfit_nofp,@function\ncfit_nofp:\n"
	".cfi_startproc\n"
	"sub $40, %rsp\n"
	".cfi_def_cfa_offset 48\n"
	"nop\n"
	"add $40, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	".cfi_endproc\n.size cfit_nofp, .-cfit_nofp\n"
	/* the PLT's expression: rsp + 8 + ((rip & 15) >= 11) << 3 */
	".globl cfit_plt\n.type cfit_plt,@function\ncfit_plt:\n"
	".cfi_startproc\n"
	".cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"nop\nnop\nret\n"
	".cfi_endproc\n.size cfit_plt, .-cfit_plt\n"
	/* another expression: rsp + 8 + rax */
	".globl cfit_expr\n.type cfit_expr,@function\ncfit_expr:\n"
	".cfi_startproc\n"
	".cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x70, 0x00, 0x22\n"
	"nop\nret\n"
	".cfi_endproc\n.size cfit_expr, .-cfit_expr\n"
	/* the outermost frame: no return address */
	".globl cfit_end\n.type cfit_end,@function\ncfit_end:\n"
	".cfi_startproc\n"
	".cfi_undefined %rip\n"
	"nop\nret\n"
	".cfi_endproc\n.size cfit_end, .-cfit_end\n"
	/* a signal frame */
	".globl cfit_sig\n.type cfit_sig,@function\ncfit_sig:\n"
	".cfi_startproc\n.cfi_signal_frame\n"
	"nop\nret\n"
	".cfi_endproc\n.size cfit_sig, .-cfit_sig\n"
	/* the return address popped into RDI, as glibc's vfork does */
	".globl cfit_radi\n.type cfit_radi,@function\ncfit_radi:\n"
	".cfi_startproc\n"
	"popq %rdi\n.cfi_adjust_cfa_offset -8\n.cfi_register %rip, %rdi\n"
	"nop\npushq %rdi\n.cfi_adjust_cfa_offset 8\n.cfi_rel_offset %rip, 0\n"
	"ret\n"
	".cfi_endproc\n.size cfit_radi, .-cfit_radi\n");

void cfit_fp(void);
void cfit_nofp(void);
void cfit_plt(void);
void cfit_expr(void);
void cfit_end(void);
void cfit_sig(void);
void cfit_radi(void);

static uint64_t bias;

/* no memory: a step that needs none still goes */
static int read_none(uint64_t addr, uint64_t *out, void *ctx)
{
	(void)addr;
	(void)out;
	(void)ctx;
	return -1;
}


static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	bias = info->dlpi_addr;	/* the first object: the executable */
	return 1;
}

/* The row at FN + OFF (FN a function of this program) as "cfa fp": e.g.
 * "sp+16 at-16". */
static const char *row_at(const struct cfi_table *t, void (*fn)(void), unsigned off)
{
	static char out[64];
	char cfa[32];
	const struct cfi_row *r = cfitab__find(t, (uint64_t)(uintptr_t)fn - bias + off);

	if (!r)
		return "(none)";
	cfitab__cfa_str(r, cfa, sizeof(cfa));
	if (r->cfa == CFI_CFA_PLT)
		snprintf(out, sizeof(out), "%s+%d>=%d", cfa, r->cfa_off, r->fp_off);
	else if (r->fp == CFI_FP_AT)
		snprintf(out, sizeof(out), "%s at%+d", cfa, r->fp_off);
	else
		snprintf(out, sizeof(out), "%s %s", cfa, r->fp == CFI_FP_SAME ? "same" : "unknown");
	return out;
}

static int build_path(const char *path, struct cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = cfitab__build_fd(fd, t);
	close(fd);
	return err;
}

/* ---- a walk of this process's own stack, by the tables alone ------------ */

#define MAX_OBJS 16
struct obj {
	uint64_t lo, hi, bias;	/* executable segments' span, load bias */
	char path[4096];
	struct cfi_table t;
	int built;
	struct elf_syms *syms;
};
static struct obj objs[MAX_OBJS];
static int nobjs;

static int add_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj *o;
	int i;

	if (nobjs == MAX_OBJS)
		return 1;
	o = &objs[nobjs];
	memset(o, 0, sizeof(*o));
	o->lo = UINT64_MAX;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < o->lo)
			o->lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > o->hi)
			o->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	o->bias = info->dlpi_addr;
	if (!info->dlpi_name[0])
		snprintf(o->path, sizeof(o->path), "%s", (const char *)arg);
	else
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	if (o->lo < o->hi && o->path[0] == '/')
		nobjs++;
	return 0;
}

static struct obj *obj_of(uint64_t pc)
{
	int i;

	for (i = 0; i < nobjs; i++) {
		if (pc < objs[i].lo || pc >= objs[i].hi)
			continue;
		if (!objs[i].built) {
			objs[i].built = build_path(objs[i].path, &objs[i].t) == 0 ? 1 : -1;
			objs[i].syms = elfsym__load(objs[i].path, NULL);
		}
		return &objs[i];
	}
	return NULL;
}

static int read_self(uint64_t addr, uint64_t *out, void *ctx)
{
	memcpy(out, (const void *)(uintptr_t)addr, sizeof(*out));
	return 0;
}

static char walked[64][64];
static int nwalked, walk_end;

/* Walk from REGS, naming each frame. */
static __attribute__((noinline)) void walk_from(struct cfi_regs regs)
{
	int i;

	for (i = 0; i < 64; i++) {
		struct obj *o = obj_of(regs.ip);
		const struct cfi_row *r = NULL;
		const struct elf_sym_info *si = NULL;
		uint64_t delta, look = regs.ip - (i ? 1 : 0);
		int st;

		if (o && o->built > 0)
			r = cfitab__find(&o->t, look - o->bias);
		if (o && o->syms)
			si = elfsym__lookup_addr(o->syms, look - o->bias, &delta);
		snprintf(walked[nwalked++], sizeof(walked[0]), "%s", si ? si->name : "?");
		st = cfitab__step(r, &regs, read_self, NULL);
		if (st) {
			walk_end = st;
			return;
		}
	}
}

/* The registers here: one asm statement, so that RSP is the one of the row
 * of the captured RIP. */
#define CAPTURE(regs) __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" \
				       : "=r"((regs).ip), "=r"((regs).sp), "=r"((regs).bp))

static volatile int walk_once;

/* GCC can leave the frame pointer out of single functions; clang cannot
 * (its builds then keep it, and the walk still goes by the tables) */
#if defined(__clang__)
#define NO_FP
#else
#define NO_FP __attribute__((optimize("omit-frame-pointer")))
#endif

__attribute__((noinline)) NO_FP int walk_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!walk_once) {
		struct cfi_regs regs = { .bp_known = 1 };

		walk_once = 1;
		CAPTURE(regs);
		walk_from(regs);
	}
	return (x > y) - (x < y);
}

__attribute__((noinline)) NO_FP void walk_sort(int n)
{
	volatile int pad[16];
	int v[8] = { 5, 3, 7, 1, 8, 2, 6, 4 };

	pad[n & 15] = n;
	qsort(v, 8, sizeof(v[0]), walk_cmp);
	pad[0] += v[0];
}

__attribute__((noinline)) NO_FP void walk_chain(int n)
{
	volatile char pad[40];

	pad[n % 40] = (char)n;
	walk_sort(n + 1);
	pad[1] += 1;
}

static int walked_has(const char *name)
{
	int i;

	for (i = 0; i < nwalked; i++)
		if (!strcmp(walked[i], name))
			return i;
	return -1;
}

/* A copy of this program with the LEN bytes at OFF of the file replaced
 * by BYTE; its descriptor. */
static int corrupt_copy(const char *self, long off, size_t len, int byte)
{
	char path[] = "/tmp/test_cfitab.XXXXXX";
	int in = open(self, O_RDONLY), out = mkstemp(path);
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	unlink(path);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	memset(buf, byte, len < sizeof(buf) ? len : sizeof(buf));
	if (pwrite(out, buf, len < sizeof(buf) ? len : sizeof(buf), off) < 0)
		return -1;
	return out;
}

/* The file offset and size of section NAME of PATH, from its headers. */
static int section_of(const char *path, const char *name, long *off, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str;
	char nm[32];
	int i;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pread(fd, &str, sizeof(str), (off_t)(eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(sh))) !=
		    sizeof(str))
		return -1;
	for (i = 0; i < eh.e_shnum; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) != sizeof(sh))
			break;
		memset(nm, 0, sizeof(nm));
		if (pread(fd, nm, sizeof(nm) - 1, (off_t)(str.sh_offset + sh.sh_name)) < 0)
			break;
		if (!strcmp(nm, name)) {
			*off = (long)sh.sh_offset;
			*size = sh.sh_size;
			close(fd);
			return 0;
		}
	}
	close(fd);
	return -1;
}

/* The row index: a search from a pc's block finds the row a search of the
 * whole table finds, at every row's pc, just before and after it, at the
 * edges of blocks, and outside the table; thin tables get none. */
static void test_index(const struct cfi_table *t)
{
	uint32_t block0 = 0, nblocks = cfitab__index_blocks(t, &block0), *e;
	size_t i, bad = 0, n = 0, widest = 0;
	uint64_t a, lim;
	struct cfi_row thin[8];
	struct cfi_table tt = { 0 };

	ok(nblocks > 0, "libc: an index of %u blocks from block %u", nblocks, block0);
	e = calloc(nblocks + 1, sizeof(*e));
	if (!nblocks || !e) {
		free(e);
		return;
	}
	cfitab__index(t, nblocks, block0, e);
	is_int(e[nblocks], (long)t->n, "its last entry counts every row");
	for (i = 0; i < nblocks; i++)
		if (e[i + 1] - e[i] > widest)
			widest = e[i + 1] - e[i];
	diag("libc: at most %zu rows a block of 4 KB (of %zu)", widest, t->n);
	for (i = 0; i < t->n; i++) {
		for (a = t->rows[i].pc ? t->rows[i].pc - 1 : 0; a <= (uint64_t)t->rows[i].pc + 1; a++, n++)
			bad += cfitab__find_indexed(t, e, nblocks, block0, a + t->base) !=
			       cfitab__find(t, a + t->base);
	}
	lim = ((uint64_t)(block0 + nblocks + 2)) << CFITAB_BLOCK_SHIFT;
	for (a = 0; a < lim; a += 4093, n++)	/* block edges, before and after */
		bad += cfitab__find_indexed(t, e, nblocks, block0, a + t->base) !=
		       cfitab__find(t, a + t->base);
	is_int(bad, 0, "libc: the indexed search finds the same row at %zu addresses", n);
	free(e);

	/* eight rows 4 GB apart, as a hostile file may make: no index */
	for (i = 0; i < 8; i++)
		thin[i] = (struct cfi_row){ .pc = (uint32_t)(i * 0x1fffffffu), .cfa = CFI_CFA_SP };
	tt.rows = thin;
	tt.n = 8;
	is_int(cfitab__index_blocks(&tt, &block0), 0, "rows spread thinly: no index");
	tt.n = 7;
	is_int(cfitab__index_blocks(&tt, &block0), 0, "under 8 rows: no index");
}

int main(void)
{
	struct cfi_table t, libc;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t i, sorted = 1;
	long off;
	size_t size;
	int fd, err;

	if (n <= 0)
		return printf("Bail out! no /proc/self/exe\n"), 1;
	self[n] = '\0';
	dl_iterate_phdr(main_bias, NULL);

	err = build_path(self, &t);
	is_int(err, 0, "this program's table is built");
	ok(t.n > 10, "with rows (%zu)", t.n);
	diag("%zu rows, %zu FDEs, %zu bad, %zu unsupported, base %#llx", t.n, t.st.fdes,
	     t.st.bad_fdes, t.st.unsupported, (unsigned long long)t.base);

	is_str(row_at(&t, cfit_fp, 0), "sp+8 same", "entry: CFA = RSP + 8");
	is_str(row_at(&t, cfit_fp, 1), "sp+16 at-16", "after push rbp: RSP + 16, RBP saved at CFA - 16");
	is_str(row_at(&t, cfit_fp, 3), "sp+16 at-16", "inside mov rsp,rbp still");
	is_str(row_at(&t, cfit_fp, 4), "fp+16 at-16", "after mov rsp,rbp: CFA = RBP + 16");
	is_str(row_at(&t, cfit_fp, 9), "fp+16 at-16", "up to leave");
	is_str(row_at(&t, cfit_fp, 10), "sp+8 same", "after leave: RSP + 8, RBP restored");

	is_str(row_at(&t, cfit_nofp, 0), "sp+8 same", "frameless: entry");
	is_str(row_at(&t, cfit_nofp, 4), "sp+48 same", "frameless: RSP + 48 in the body");
	is_str(row_at(&t, cfit_nofp, 9), "sp+8 same", "frameless: after add");

	is_str(row_at(&t, cfit_plt, 0), "plt+8>=11", "the PLT expression is recognized");
	is_str(row_at(&t, cfit_expr, 0), "unsupported same", "another CFA expression is not followed");
	is_str(row_at(&t, cfit_end, 1), "end same", "an undefined return address ends the stack");
	is_str(row_at(&t, cfit_sig, 0), "unsupported same", "a signal frame is not followed");
	is_str(row_at(&t, cfit_radi, 1), "sp+0,ra=rdi same", "the return address in RDI (vfork)");
	is_str(row_at(&t, cfit_radi, 3), "sp+8 same", "after its push: at CFA - 8 again");
	{
		const struct cfi_row *r =
			cfitab__find(&t, (uint64_t)(uintptr_t)cfit_radi - bias + 1);
		struct cfi_regs regs = { .ip = 1, .sp = 0x1000, .bp = 0x2000, .di = 0x4242,
					 .bp_known = 1, .di_known = 1 };

		ok(r && cfitab__step(r, &regs, read_none, NULL) == 0 && regs.ip == 0x4242 &&
			   regs.sp == 0x1000 && !regs.di_known,
		   "a first frame with the return address in RDI steps to RDI's address");
		regs.di_known = 0;
		ok(r && cfitab__step(r, &regs, read_none, NULL) == -1,
		   "above the first frame, RDI is not known: the walk stops");
	}

	for (i = 1; i < t.n; i++)
		if (t.rows[i].pc <= t.rows[i - 1].pc)
			sorted = 0;
	ok(sorted, "rows strictly sorted");
	ok(cfitab__find(&t, t.base + t.rows[0].pc - 1) == NULL || t.rows[0].pc == 0,
	   "nothing before the first row");
	ok(t.rows[t.n - 1].cfa == CFI_CFA_NONE, "the last row ends the covered code");
	cfitab__free(&t);

	/* the C library: one of the objects every process has */
	err = build_path("/lib/x86_64-linux-gnu/libc.so.6", &libc);
	is_int(err, 0, "libc's table is built");
	{
		size_t sp = 0, fp = 0, plt = 0, other = 0;

		for (i = 0; i < libc.n; i++) {
			if (libc.rows[i].cfa == CFI_CFA_SP)
				sp++;
			else if (libc.rows[i].cfa == CFI_CFA_FP)
				fp++;
			else if (libc.rows[i].cfa == CFI_CFA_PLT)
				plt++;
			else
				other++;
		}
		diag("libc: %zu rows (%zu sp, %zu fp, %zu plt, %zu other), %zu FDEs, %zu unsupported, "
		     "%zu KB", libc.n, sp, fp, plt, other, libc.st.fdes, libc.st.unsupported,
		     libc.n * sizeof(struct cfi_row) / 1024);
		ok(libc.n > 10000 && sp > libc.n / 2, "libc: most rows are RSP-based");
		ok(plt >= 1, "libc: its .plt has the PLT rule");
		ok(libc.st.unsupported * 100 < libc.n, "libc: under 1%% of rows unsupported");
	}
	test_index(&libc);
	cfitab__free(&libc);

	/* this very stack: walk_cmp <- libc's qsort <- walk_sort <- walk_chain
	 * <- main, none of them keeping frame pointers */
	dl_iterate_phdr(add_obj, self);
	walk_chain(3);
	{
		char all[1024] = "";
		int i, c, q, w, m;

		for (i = 0; i < nwalked; i++)
			snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", i ? " <- " : "",
				 walked[i]);
		diag("walked: %s (%s)", all, walk_end == 1 ? "the outermost frame" : "cut");
		c = walked_has("walk_cmp");
		q = walked_has("walk_sort");
		w = walked_has("walk_chain");
		m = walked_has("main");
		ok(c == 0, "the walk starts in walk_cmp");
		ok(q > c + 1, "goes through libc's qsort frames to walk_sort");
		ok(w == q + 1 && m == w + 1, "then walk_chain and main");
		is_int(walk_end, 1, "and ends at the outermost frame (_start's undefined return address)");
	}
	for (i = 0; i < (size_t)nobjs; i++) {
		if (objs[i].built > 0)
			cfitab__free(&objs[i].t);
		if (objs[i].syms)
			elfsym__free(objs[i].syms);
	}

	/* hostile files */
	fd = open("/proc/self/status", O_RDONLY);
	is_int(cfitab__build_fd(fd, &t), -ENOEXEC, "not ELF: -ENOEXEC");
	close(fd);
	if (section_of(self, ".eh_frame", &off, &size) == 0) {
		fd = corrupt_copy(self, off, size, 0xff);
		err = cfitab__build_fd(fd, &t);
		ok(err == 0 || err == -ENOENT || err == -ENOEXEC,
		   ".eh_frame overwritten with 0xff: refused or read, no crash (%d)", err);
		cfitab__free(&t);
		close(fd);
		fd = corrupt_copy(self, off + 64, size > 128 ? size - 128 : 1, 0x41);
		err = cfitab__build_fd(fd, &t);
		ok(err == 0 || err == -ENOENT || err == -ENOEXEC,
		   ".eh_frame filled with garbage after its first entries: no crash (%d)", err);
		if (!err)
			ok(t.n < CFITAB_MAX_ROWS, "and bounded (%zu rows)", t.n);
		cfitab__free(&t);
		close(fd);
	} else {
		ok(0, "this program has an .eh_frame section");
	}
	return done_testing();
}
