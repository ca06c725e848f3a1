// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sym_lookalike: the app's look-alike of another process's library, for
 * the test that one process's files never name another's frames. It copies
 * SRC (an ELF shared object, e.g. libm) to DST with every name in its
 * .dynstr that starts with OLD made to start with NEW instead (as long as
 * OLD), everything else kept (its build id too), maps DST readable and
 * executable as a library would be, writes its PID to PIDFILE and waits to
 * be killed. A DST whose name starts with "libc.so" is read by a profiler
 * as soon as the process is seen.
 *   sym_lookalike SRC DST OLD NEW [-r PIDFILE] */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rename in the .dynstr of the ELF64 image BUF (LEN bytes); return how
 * many names changed, or -1 when BUF is not such an image. */
static int rename_dynstr(unsigned char *buf, size_t len, const char *old, const char *new)
{
	const Elf64_Ehdr *eh = (const void *)buf;
	const Elf64_Shdr *sh, *names;
	size_t olen = strlen(old), i, k;
	int changed = 0;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff > len ||
	    eh->e_shnum * (size_t)sizeof(*sh) > len - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum)
		return -1;
	sh = (const void *)(buf + eh->e_shoff);
	names = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		unsigned char *s;

		if (sh[i].sh_type != SHT_STRTAB || sh[i].sh_name >= names->sh_size ||
		    strcmp((const char *)buf + names->sh_offset + sh[i].sh_name, ".dynstr") ||
		    sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)
			continue;
		s = buf + sh[i].sh_offset;
		/* each name starts after a NUL */
		for (k = 1; k + olen <= sh[i].sh_size; k++)
			if (s[k - 1] == '\0' && memcmp(s + k, old, olen) == 0) {
				memcpy(s + k, new, olen);
				changed++;
			}
	}
	return changed;
}

int main(int argc, char **argv)
{
	const char *pidfile = NULL;
	unsigned char *buf;
	struct stat sb;
	void *map;
	int fd, c, n;
	FILE *f;

	if (argc < 5 || strlen(argv[3]) != strlen(argv[4]) || !argv[3][0]) {
		fprintf(stderr, "USAGE: sym_lookalike SRC DST OLD NEW [-r PIDFILE] "
			"(OLD and NEW of one length)\n");
		return 2;
	}
	optind = 5;
	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r')
			return 2;
		pidfile = optarg;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) || !(buf = malloc((size_t)sb.st_size)) ||
	    read(fd, buf, (size_t)sb.st_size) != sb.st_size) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	n = rename_dynstr(buf, (size_t)sb.st_size, argv[3], argv[4]);
	if (n <= 0) {
		fprintf(stderr, "sym_lookalike: no name starting with %s in the .dynstr of %s\n",
			argv[3], argv[1]);
		return 1;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, buf, (size_t)sb.st_size) != sb.st_size) {
		perror(argv[2]);
		return 1;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	close(fd);
	if (pidfile) {
		f = fopen(pidfile, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 1;
	}
	for (;;)
		pause();
}
