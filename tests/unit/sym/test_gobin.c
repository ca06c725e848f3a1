// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Go program detection over small ELF files written here: the sections and
 * the note a Go toolchain leaves, their look-alikes, and files that are no
 * ELF or lie about their size. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/gobin.h"
#include "tap.h"

static char dir[PATH_MAX];

static void bail(const char *fmt, const char *arg)
{
	printf("Bail out! ");
	printf(fmt, arg);
	printf("\n");
	exit(1);
}

/* An ELF file with one section NAME of TYPE holding DATA (LEN bytes) and
 * .shstrtab; a SHOFF_LIE moves the section headers past the end. Return an
 * open descriptor. */
static int make_elf(const char *tag, const char *name, unsigned int type, const void *data,
		    size_t len, int shoff_lie)
{
	unsigned char buf[4096];
	char shstr[64], path[PATH_MAX + 32];
	size_t nlen = strlen(name), shstr_len, off, data_off, str_off;
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[3];
	int fd;

	memset(buf, 0, sizeof(buf));
	memset(sh, 0, sizeof(sh));
	/* "\0NAME\0.shstrtab\0" */
	shstr[0] = '\0';
	memcpy(shstr + 1, name, nlen + 1);
	memcpy(shstr + 2 + nlen, ".shstrtab", 10);
	shstr_len = 2 + nlen + 10;
	data_off = sizeof(eh);
	memcpy(buf + data_off, data, len);
	str_off = data_off + len;
	memcpy(buf + str_off, shstr, shstr_len);
	off = (str_off + shstr_len + 7) & ~7ul;
	sh[1].sh_name = 1;
	sh[1].sh_type = type;
	sh[1].sh_offset = data_off;
	sh[1].sh_size = len;
	sh[1].sh_addralign = 4;
	sh[2].sh_name = (Elf64_Word)(2 + nlen);
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = shstr_len;
	sh[2].sh_addralign = 1;
	memcpy(buf + off, sh, sizeof(sh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	eh.e_shoff = shoff_lie ? 1u << 30 : off;
	memcpy(buf, &eh, sizeof(eh));
	snprintf(path, sizeof(path), "%s/%s", dir, tag);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, off + sizeof(sh)) != (ssize_t)(off + sizeof(sh)))
		bail("cannot write %s", path);
	return fd;
}

/* A note: namesz, descsz, type, name (padded to 4), desc (padded to 4). */
static size_t note(unsigned char *out, const char *name, const char *desc, unsigned int type)
{
	uint32_t nsz = (uint32_t)strlen(name) + 1, dsz = (uint32_t)strlen(desc);
	size_t n = 12;

	memcpy(out, &nsz, 4);
	memcpy(out + 4, &dsz, 4);
	memcpy(out + 8, &type, 4);
	memset(out + 12, 0, 64);
	memcpy(out + n, name, nsz);
	n += (nsz + 3) & ~3u;
	memcpy(out + n, desc, dsz);
	n += (dsz + 3) & ~3u;
	return n;
}

static void check(const char *tag, const char *name, unsigned int type, const void *data,
		  size_t len, int want, const char *what)
{
	int fd = make_elf(tag, name, type, data, len, 0);

	is_int(gobin__is_go(fd), want, "%s", what);
	close(fd);
}

int main(void)
{
	static const char buildinfo[] = "\xff Go buildinf:\x08\x02";
	unsigned char notes[256];
	size_t n;
	int fd;

	snprintf(dir, sizeof(dir), "%s/sidescope-gobin.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(dir))
		bail("mkdtemp in %s", dir);

	check("buildinfo", ".go.buildinfo", SHT_PROGBITS, buildinfo, sizeof(buildinfo), 1,
	      ".go.buildinfo: Go");
	check("pclntab", ".gopclntab", SHT_PROGBITS, "\xf1\xff\xff\xff", 4, 1, ".gopclntab: Go");
	n = note(notes, "Go", "abcdefgh/ijkl", 4);
	check("gonote", ".note.go.buildid", SHT_NOTE, notes, n, 1, "a note named Go: Go");
	n = note(notes, "Go", "x", 4);
	check("gonote2", ".note.other", SHT_NOTE, notes, n, 1, "the note counts, not its section name");
	n = note(notes, "GNU", "0123456789abcdef0123", NT_GNU_BUILD_ID);
	n += note(notes + n, "Gox", "y", 1);
	check("gnunote", ".note.gnu.build-id", SHT_NOTE, notes, n, 0, "GNU and Gox notes: not Go");
	check("plain", ".text", SHT_PROGBITS, "\xc3", 1, 0, "plain ELF: not Go");
	check("lookalike", ".go.buildinfox", SHT_PROGBITS, "x", 1, 0, "a longer name: not Go");
	/* a note whose size runs past the section */
	{
		uint32_t huge = 0xfffffff0u;

		n = note(notes, "Go", "z", 4);
		memcpy(notes, &huge, 4);
		check("badnote", ".note.bad", SHT_NOTE, notes, n, 0, "a note claiming 4 GiB of name");
	}

	fd = make_elf("lie", ".go.buildinfo", SHT_PROGBITS, "x", 1, 1);
	is_int(gobin__is_go(fd), -ENOEXEC, "section headers past the end: refused");
	close(fd);
	{
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/text", dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, "#!/bin/sh\n", 10) != 10)
			bail("cannot write %s", path);
		is_int(gobin__is_go(fd), -ENOEXEC, "a script is no ELF file");
		close(fd);
	}
	fd = open("/proc/self/exe", O_RDONLY);
	is_int(gobin__is_go(fd), 0, "this C test program is not Go");
	close(fd);

	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("cannot remove %s", dir);
	}
	return done_testing();
}
