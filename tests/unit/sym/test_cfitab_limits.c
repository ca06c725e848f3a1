// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables from hostile files: ELF images made here, their .eh_frame
 * written byte by byte. One FDE of a million rows is built in one pass
 * (the old builder replayed the FDE for every row: half an hour); a build
 * gives up at its row limit, at its deadline and when asked to stop, even
 * in libdw's quadratic reference; sections too large (or too large once
 * uncompressed) are refused unread; CFI that libdw reads one way (set_loc,
 * odd advances, invalid programs, a CIE that moves the location) gives the
 * rows libdw gives; remember_state nested past CFITAB_MAX_STATES is
 * invalid, not a stack without end. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "sym/cfitab.h"
#include "tap.h"

#define EH_ADDR 0x1000ull	/* where the .eh_frame section says it is */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void u8(struct buf *b, unsigned v)
{
	uint8_t c = (uint8_t)v;

	put(b, &c, 1);
}

static void u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void uleb(struct buf *b, uint64_t v)
{
	do {
		u8(b, (v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void set32(struct buf *b, size_t at, uint32_t v)
{
	memcpy(b->p + at, &v, 4);
}

/* Pad the entry that began at START (its length field) to 4 bytes with
 * DW_CFA_nop, and write its length. */
static void close_entry(struct buf *b, size_t start)
{
	while ((b->n - start) % 4)
		u8(b, 0);
	set32(b, start, (uint32_t)(b->n - start - 4));
}

/* A CIE ("zR", code alignment 1, data alignment -8, return address in 16,
 * FDE pointers pc-relative sdata4) with INS as its initial instructions:
 * its offset. */
static size_t cie(struct buf *b, const uint8_t *ins, size_t n)
{
	size_t start = b->n;

	u32(b, 0);	/* length, below */
	u32(b, 0);	/* a CIE */
	u8(b, 1);
	put(b, "zR", 3);
	u8(b, 1);	/* code alignment */
	u8(b, 0x78);	/* data alignment -8 */
	u8(b, 16);	/* return address column */
	u8(b, 1);	/* augmentation data: 1 byte */
	u8(b, 0x1b);	/* pcrel | sdata4 */
	put(b, ins, n);
	close_entry(b, start);
	return start;
}

/* An FDE of CIE at CIE_OFF for [LO, LO + LEN) with program INS. */
static void fde(struct buf *b, size_t cie_off, uint32_t lo, uint32_t len, const uint8_t *ins,
		size_t n)
{
	size_t start = b->n;

	u32(b, 0);
	u32(b, (uint32_t)(b->n - cie_off));	/* back to the CIE */
	u32(b, (uint32_t)(lo - (EH_ADDR + b->n)));	/* pc-relative */
	u32(b, len);
	u8(b, 0);	/* no augmentation data */
	put(b, ins, n);
	close_entry(b, start);
}

/* The usual CIE: CFA = RSP + 8, the return address at CFA - 8 */
static const uint8_t std_cie[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };

/* An x86-64 ELF file (a memfd) whose .eh_frame (at EH_ADDR) holds EH;
 * FLAGS and CHDR for a compressed one; its size SIZE at least (sparse).
 * Its descriptor. */
static int elf_file(const struct buf *eh, const char *name, uint64_t flags, const Elf64_Chdr *chdr,
		    uint64_t sh_size, uint64_t size)
{
	static const char strtab[] = "\0.shstrtab\0";
	Elf64_Ehdr h = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				      EV_CURRENT } };
	Elf64_Shdr sh[3];
	size_t names = 1 + strlen(".shstrtab") + 1, data_off = sizeof(h);
	size_t body = (chdr ? sizeof(*chdr) : 0) + eh->n;
	size_t str_off = data_off + body, sh_off = (str_off + names + strlen(name) + 1 + 7) & ~7ul;
	int fd = memfd_create("cfitab-limits", MFD_CLOEXEC);

	h.e_type = ET_DYN;
	h.e_machine = EM_X86_64;
	h.e_version = EV_CURRENT;
	h.e_ehsize = sizeof(h);
	h.e_shoff = sh_off;
	h.e_shentsize = sizeof(Elf64_Shdr);
	h.e_shnum = 3;
	h.e_shstrndx = 2;
	memset(sh, 0, sizeof(sh));
	sh[1].sh_name = (uint32_t)names;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = flags;
	sh[1].sh_addr = EH_ADDR;
	sh[1].sh_offset = data_off;
	sh[1].sh_size = sh_size ? sh_size : body;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 1;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = names + strlen(name) + 1;
	sh[2].sh_addralign = 1;
	if (fd < 0 || pwrite(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    (chdr && pwrite(fd, chdr, sizeof(*chdr), (off_t)data_off) != sizeof(*chdr)) ||
	    pwrite(fd, eh->p, eh->n, (off_t)(data_off + (chdr ? sizeof(*chdr) : 0))) != (ssize_t)eh->n ||
	    pwrite(fd, strtab, names, (off_t)str_off) != (ssize_t)names ||
	    pwrite(fd, name, strlen(name) + 1, (off_t)(str_off + names)) != (ssize_t)strlen(name) + 1 ||
	    pwrite(fd, sh, sizeof(sh), (off_t)sh_off) != sizeof(sh) ||
	    (size && ftruncate(fd, (off_t)size)))
		abort();
	return fd;
}

static int eh_file(struct buf *eh)
{
	u32(eh, 0);	/* the terminator */
	return elf_file(eh, ".eh_frame", SHF_ALLOC, NULL, 0, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	return (uint64_t)(now_s() * 1e9);
}

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	stop = sig;
}

/* Build FD within LIM: the error, and the time in *SECS */
static int build(int fd, const struct cfitab_limits *lim, struct cfi_table *t, double *secs)
{
	double t0 = now_s();
	int err = cfitab__build_fd_within(fd, lim, t);

	*secs = now_s() - t0;
	return err;
}

/* Whether FD's rows by the interpreter are libdw's */
static int same_as_libdw(int fd, size_t *n)
{
	struct cfitab_limits ref = { .libdw = 1 };
	struct cfi_table a, b;
	int ea = cfitab__build_fd_within(fd, &ref, &a), eb = cfitab__build_fd_within(fd, NULL, &b);
	int same = ea == eb && (ea || (a.n == b.n && !memcmp(a.rows, b.rows, a.n * sizeof(*a.rows)) &&
				      !memcmp(&a.st, &b.st, sizeof(a.st))));
	size_t i;

	*n = eb ? 0 : b.n;
	if (!same && !ea && !eb)
		for (i = 0; i < a.n && i < b.n; i++)
			if (memcmp(&a.rows[i], &b.rows[i], sizeof(a.rows[i]))) {
				diag("row %zu: pc %#x cfa %d%+d (libdw), pc %#x cfa %d%+d", i,
				     a.rows[i].pc, a.rows[i].cfa, a.rows[i].cfa_off, b.rows[i].pc,
				     b.rows[i].cfa, b.rows[i].cfa_off);
				break;
			}
	if (!same)
		diag("libdw %d (%zu rows), interpreter %d (%zu rows)", ea, ea ? 0 : a.n, eb,
		     eb ? 0 : b.n);
	if (!ea)
		cfitab__free(&a);
	if (!eb)
		cfitab__free(&b);
	return same;
}

/* One FDE at 0x10000 of ROWS rows: RSP + 16 and RSP + 8 in turn, a byte each */
static int long_fde_file(size_t rows)
{
	struct buf eh = { 0 }, ins = { 0 };
	size_t c, i;
	int fd;

	c = cie(&eh, std_cie, sizeof(std_cie));
	for (i = 1; i < rows; i++) {
		u8(&ins, 0x41);			/* advance_loc 1 */
		u8(&ins, 0x0e);			/* def_cfa_offset */
		u8(&ins, i % 2 ? 16 : 8);
	}
	fde(&eh, c, 0x10000, (uint32_t)rows, ins.p, ins.n);
	fd = eh_file(&eh);
	free(eh.p);
	free(ins.p);
	return fd;
}

static void test_long_fde(void)
{
	struct cfitab_limits lim = { 0 };
	struct cfi_table t;
	struct itimerval it = { .it_value = { .tv_usec = 100000 } };
	double secs;
	int fd = long_fde_file(1000000), err;
	char cfa[32];

	err = build(fd, NULL, &t, &secs);
	is_int(err, 0, "an FDE of 1,000,000 rows is built");
	diag("1,000,000 rows in %.3f s", secs);
	ok(secs < 5, "in one pass (%.3f s; replaying it for each row: half an hour)", secs);
	is_int(t.n, 1000001, "a row each, and the end's");
	if (!err && t.n == 1000001) {
		is_str(cfitab__cfa_str(&t.rows[0], cfa, sizeof(cfa)), "sp+8", "the first row: RSP + 8");
		is_str(cfitab__cfa_str(&t.rows[1], cfa, sizeof(cfa)), "sp+16", "the second: RSP + 16");
		is_str(cfitab__cfa_str(&t.rows[999999], cfa, sizeof(cfa)), "sp+16", "the last: RSP + 16");
		is_int(t.rows[999999].pc, 0x10000 + 999999, "at its byte");
		is_str(cfitab__cfa_str(&t.rows[1000000], cfa, sizeof(cfa)), "none",
		       "then the end of the covered code");
	}
	cfitab__free(&t);

	lim.max_rows = 1000;
	is_int(build(fd, &lim, &t, &secs), -ENOSPC, "a limit of 1,000 rows: -ENOSPC");
	lim.max_rows = 0;
	lim.deadline_ns = now_ns() - 1;
	is_int(build(fd, &lim, &t, &secs), -ETIMEDOUT, "a deadline passed: -ETIMEDOUT");
	stop = SIGTERM;
	lim.deadline_ns = 0;
	lim.stop = &stop;
	is_int(build(fd, &lim, &t, &secs), -EINTR, "asked to stop: -EINTR");
	close(fd);

	/* libdw's reference, quadratic: 200,000 rows would take two minutes */
	fd = long_fde_file(200000);
	lim.libdw = 1;
	lim.stop = NULL;
	lim.deadline_ns = now_ns() + 100000000ull;
	err = build(fd, &lim, &t, &secs);
	is_int(err, -ETIMEDOUT, "libdw's reference stops at its deadline");
	ok(secs < 2, "100 ms after it began (%.3f s)", secs);
	stop = 0;
	lim.deadline_ns = 0;
	lim.stop = &stop;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	err = build(fd, &lim, &t, &secs);
	is_int(err, -EINTR, "and when a signal asks it to stop");
	ok(secs < 2, "100 ms after it began (%.3f s)", secs);
	close(fd);
}

static void test_sections(void)
{
	struct buf eh = { 0 };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = 1ull << 30, .ch_addralign = 8 };
	struct cfi_table t;
	double secs;
	int fd;

	cie(&eh, std_cie, sizeof(std_cie));
	u32(&eh, 0);
	/* 300 MB of section, sparse */
	fd = elf_file(&eh, ".eh_frame", SHF_ALLOC, NULL, 300u << 20, (300u << 20) + 4096);
	is_int(build(fd, NULL, &t, &secs), -EFBIG, "an .eh_frame of 300 MB: -EFBIG, unread (%.3f s)",
	       secs);
	close(fd);
	/* a .debug_frame that says it is 1 GB once uncompressed */
	fd = elf_file(&eh, ".debug_frame", SHF_COMPRESSED, &ch, 0, 0);
	is_int(build(fd, NULL, &t, &secs), -EFBIG, "a .debug_frame of 1 GB uncompressed: -EFBIG");
	close(fd);
	free(eh.p);
}

/* Programs libdw reads its own way: the interpreter must read them alike */
static void test_like_libdw(void)
{
	static const struct {
		const char *what;
		uint8_t ins[40];
		size_t n;
		size_t rows;	/* rows expected, with the end's */
	} progs[] = {
		/* set_loc, pc-relative sdata4 (the CIE's encoding), to 0x2004
		 * from its field at (section + offset): patched below */
		{ "set_loc forward", { 0x0e, 0x10, 0x01, 0, 0, 0, 0, 0x0e, 0x08 }, 9, 3 },
		{ "advance past the FDE's end", { 0x0e, 0x10, 0x04, 0, 0, 1, 0, 0x0e, 0x18 }, 9, 2 },
		{ "advance_loc1/2/4 and the MIPS one", { 0x0e, 0x10, 0x02, 2, 0x0e, 0x18, 0x03, 2, 0,
			0x0e, 0x20, 0x04, 2, 0, 0, 0, 0x0e, 0x28, 0x1d, 2, 0, 0, 0, 0, 0, 0, 0,
			0x0e, 0x30 }, 29, 6 },
		{ "a zero advance: the later rule", { 0x41, 0x0e, 0x10, 0x40, 0x0e, 0x18 }, 6, 3 },
		/* 7 bytes: the FDE ends with them, no DW_CFA_nop after */
		{ "an instruction cut short", { 0x41, 0x0e, 0x10, 0x41, 0x0e, 0x18, 0x0c }, 7, 4 },
		{ "restore_state with nothing remembered", { 0x41, 0x0b, 0x41, 0x0e, 0x10 }, 5, 3 },
		{ "an unknown instruction", { 0x41, 0x0e, 0x10, 0x41, 0x3f, 0x41, 0x0e, 0x08 }, 8, 4 },
		{ "def_cfa_register with no CFA register", { 0x41, 0x0f, 0x01, 0x96, 0x41, 0x0d, 0x06 },
		  7, 3 },
		{ "restore of a register", { 0x41, 0x86, 0x02, 0x41, 0xc6, 0x41, 0x07, 0x10, 0x41,
			0xd0 }, 10, 6 },
		{ "a CFA of RBP + n from an expression", { 0x41, 0x0f, 0x02, 0x76, 0x10, 0x41, 0x0f, 0x03,
			0x92, 0x06, 0x20 }, 11, 4 },
	};
	size_t i, n;
	int fd;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct buf eh = { 0 };
		uint8_t ins[40];
		size_t c;

		memcpy(ins, progs[i].ins, sizeof(ins));
		c = cie(&eh, std_cie, sizeof(std_cie));
		if (i == 0) {
			/* the set_loc operand's field: after the FDE's 4+4+4+4+1
			 * bytes of header and the 3 bytes before it */
			uint32_t field = (uint32_t)(EH_ADDR + eh.n + 17 + 3);
			uint32_t v = 0x2004 - field;

			memcpy(ins + 3, &v, 4);
		}
		fde(&eh, c, 0x2000, 16, ins, progs[i].n);
		fd = eh_file(&eh);
		ok(same_as_libdw(fd, &n), "%s: libdw's rows", progs[i].what);
		is_int(n, progs[i].rows, "%s: %zu rows", progs[i].what, progs[i].rows);
		close(fd);
		free(eh.p);
	}

	/* a CIE whose initial instructions move the location: invalid */
	{
		static const uint8_t bad_cie[] = { 0x0c, 0x07, 0x08, 0x90, 0x01, 0x41 };
		static const uint8_t ins[] = { 0x41, 0x0e, 0x10 };
		struct buf eh = { 0 };
		struct cfi_table t;

		fde(&eh, cie(&eh, bad_cie, sizeof(bad_cie)), 0x2000, 16, ins, sizeof(ins));
		fd = eh_file(&eh);
		ok(same_as_libdw(fd, &n), "a CIE that moves the location: libdw's rows");
		if (!cfitab__build_fd(fd, &t)) {
			ok(t.n == 2 && t.rows[0].cfa == CFI_CFA_UNSUPPORTED, "its FDE unsupported whole");
			cfitab__free(&t);
		}
		close(fd);
		free(eh.p);
	}
}

static void test_states(void)
{
	struct buf eh = { 0 }, ins = { 0 };
	struct cfi_table t;
	size_t c, i;
	int fd, err;

	/* 40 remember_state (one more than CFITAB_MAX_STATES allows at the
	 * 33rd), a row each: RSP + 16 from the 33rd byte on is never reached */
	for (i = 0; i < 40; i++) {
		u8(&ins, 0x0a);	/* remember_state */
		u8(&ins, 0x41);
		u8(&ins, 0x0e);
		uleb(&ins, 16 + 8 * i);
	}
	c = cie(&eh, std_cie, sizeof(std_cie));
	fde(&eh, c, 0x3000, 64, ins.p, ins.n);
	fd = eh_file(&eh);
	err = cfitab__build_fd(fd, &t);
	is_int(err, 0, "remember_state 40 deep: built");
	if (!err) {
		char cfa[32];
		const struct cfi_row *r = cfitab__find(&t, 0x3000 + CFITAB_MAX_STATES);

		ok(r && r->cfa == CFI_CFA_UNSUPPORTED, "unsupported from remember_state number %d on (%s)",
		   CFITAB_MAX_STATES + 1, r ? cfitab__cfa_str(r, cfa, sizeof(cfa)) : "none");
		r = cfitab__find(&t, 0x3000 + CFITAB_MAX_STATES - 1);
		ok(r && r->cfa == CFI_CFA_SP && r->cfa_off == 16 + 8 * (CFITAB_MAX_STATES - 2),
		   "the rows before it as they say");
		cfitab__free(&t);
	}
	close(fd);
	free(eh.p);
	free(ins.p);
}

int main(void)
{
	test_long_fde();
	test_sections();
	test_like_libdw();
	test_states();
	return done_testing();
}
