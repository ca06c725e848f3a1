// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ELF files made to cost the symbolizer memory or time: twenty thousand
 * symbols sharing one 1 MiB name, a section count in the millions, a 1.5 GiB
 * symbol table in a sparse file, a FIFO. Each must load (or fail) at once
 * and within a few MiB. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/elfsym.h"
#include "tap.h"

static char dir[PATH_MAX];

/* Resident set in MiB. */
static long rss_mib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

static const char shstr[] = "\0.strtab\0.symtab\0.text\0.shstrtab";

/* An ELF file: header, .text, .strtab (one name of NAMELEN bytes), .symtab
 * (NSYMS functions all named by it, or a symtab claiming SYMTAB_SIZE
 * bytes), .shstrtab, the section headers; FSIZE > 0 extends it sparsely. */
static int write_elf(const char *path, size_t namelen, size_t nsyms, uint64_t symtab_size,
		     off_t fsize)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[5] = { { 0 } };
	uint64_t off = sizeof(eh);
	char *name;
	int fd, err = -1;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;
	/* .text */
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_PROGBITS, .sh_offset = off,
			      .sh_size = 16, .sh_addr = 0x1000, .sh_flags = SHF_ALLOC | SHF_EXECINSTR };
	off += 16;
	/* .strtab: "\0" + the name + "\0" */
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = off,
			      .sh_size = namelen + 2 };
	name = malloc(namelen + 2);
	if (!name)
		goto out;
	name[0] = '\0';
	memset(name + 1, 'N', namelen);
	name[namelen + 1] = '\0';
	if (pwrite(fd, name, namelen + 2, (off_t)off) != (ssize_t)(namelen + 2))
		goto out;
	off += namelen + 2;
	/* .symtab */
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_SYMTAB, .sh_offset = off,
			      .sh_entsize = sizeof(Elf64_Sym), .sh_link = 1,
			      .sh_size = symtab_size ? symtab_size : (nsyms + 1) * sizeof(Elf64_Sym) };
	for (size_t i = 1; i <= nsyms; i++) {
		Elf64_Sym s = { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 3, .st_value = 0x1000 + i * 16, .st_size = 16 };

		if (pwrite(fd, &s, sizeof(s), (off_t)(off + i * sizeof(s))) != sizeof(s))
			goto out;
	}
	off += symtab_size ? 0 : (nsyms + 1) * sizeof(Elf64_Sym);
	/* .shstrtab */
	sh[4] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = off,
			      .sh_size = sizeof(shstr) };
	if (pwrite(fd, shstr, sizeof(shstr), (off_t)off) != sizeof(shstr))
		goto out;
	off += sizeof(shstr);
	off = (off + 7) & ~7ull;
	eh.e_shoff = off;
	if (pwrite(fd, sh, sizeof(sh), (off_t)off) != sizeof(sh) ||
	    pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	if (fsize && ftruncate(fd, fsize))
		goto out;
	err = 0;
out:
	free(name);
	close(fd);
	return err;
}

static void test_shared_name(void)
{
	char path[PATH_MAX + 32];
	const struct elf_sym_info *si;
	struct elf_syms *s;
	long before, after;

	snprintf(path, sizeof(path), "%s/shared-name.so", dir);
	if (!ok(write_elf(path, 1 << 20, 20000, 0, 0) == 0, "20000 symbols sharing a 1 MiB name"))
		return;
	before = rss_mib();
	s = elfsym__load(path, "");
	after = rss_mib();
	ok(s != NULL, "it loads");
	if (!s)
		return;
	is_int(elfsym__count(s), 20000, "every symbol is kept");
	si = elfsym__lookup_addr(s, 0x1000 + 77 * 16 + 4, NULL);
	ok(si && strlen(si->name) == 1 << 20, "names are whole");
	/* one copy of the name, not 20000 (20 GiB) */
	ok(after - before < 64, "resident set grew by %ld MiB (under 64)", after - before);
	elfsym__free(s);
}

static void test_section_count(void)
{
	char path[PATH_MAX + 32];
	Elf64_Ehdr eh;
	Elf64_Shdr sh0 = { .sh_size = 16u << 20 };	/* extended count: 16M sections */
	int fd;

	snprintf(path, sizeof(path), "%s/sections.so", dir);
	if (!ok(write_elf(path, 8, 1, 0, 0) == 0, "an ELF file"))
		return;
	fd = open(path, O_RDWR);
	/* e_shnum 0: the count is in section 0; the file is sparse and large
	 * enough to hold that many headers */
	ok(fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == sizeof(eh), "its header");
	eh.e_shnum = 0;
	eh.e_shoff = 4096;
	ok(pwrite(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	   pwrite(fd, &sh0, sizeof(sh0), 4096) == sizeof(sh0) && ftruncate(fd, 2ll << 30) == 0,
	   "claims 16 million sections");
	close(fd);
	ok(elfsym__load(path, "") == NULL && errno == ENOEXEC, "refused before allocating: ENOEXEC");
}

static void test_huge_symtab(void)
{
	char path[PATH_MAX + 32];
	struct elf_syms *s;
	long before, after;

	snprintf(path, sizeof(path), "%s/huge-symtab.so", dir);
	/* the .symtab claims 1.5 GiB of a 2 GiB sparse file */
	if (!ok(write_elf(path, 8, 0, 3ull << 29, 2ll << 30) == 0, "a 1.5 GiB symbol table"))
		return;
	before = rss_mib();
	s = elfsym__load(path, "");
	after = rss_mib();
	ok(s != NULL && elfsym__count(s) == 0, "loads with no symbols (the table is skipped)");
	ok(after - before < 64, "resident set grew by %ld MiB (under 64)", after - before);
	elfsym__free(s);
}

static void test_fifo(void)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/fifo.so", dir);
	ok(mkfifo(path, 0644) == 0, "a FIFO");
	alarm(10);	/* a blocking open fails the test */
	ok(elfsym__load(path, "") == NULL && errno == ENOEXEC, "a FIFO is not an ELF file");
	alarm(0);
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	const char *b = getenv("SIDESCOPE_BUILD");

	snprintf(dir, sizeof(dir), "%s/tmp", b ? b : ".");
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/tmp/hostile-elf.XXXXXX", b ? b : ".");
	if (!mkdtemp(dir)) {
		printf("1..1\nnot ok 1 - cannot make %s: %s\n", dir, strerror(errno));
		return 1;
	}
	test_shared_name();
	test_section_count();
	test_huge_symtab();
	test_fifo();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("cannot remove %s", dir);
	return done_testing();
}
