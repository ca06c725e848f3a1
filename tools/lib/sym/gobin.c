// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Go program detection (gobin.h). */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>

#include "sym/elfsym.h"
#include "sym/gobin.h"

#define NOTE_MAX	(64u << 10)	/* a note section larger than this is skipped */

/* Whether the note section SCN (of SIZE bytes) holds a note named "Go". */
static bool has_go_note(Elf_Scn *scn, uint64_t size)
{
	Elf_Data *d;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	if (size > NOTE_MAX)
		return false;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return false;
	while (off < d->d_size) {
		size_t next = gelf_getnote(d, off, &nh, &name_off, &desc_off);

		if (next == 0 || next <= off)
			break;
		if (nh.n_namesz == 3 && name_off + 3 <= d->d_size &&
		    memcmp((const char *)d->d_buf + name_off, "Go", 3) == 0)
			return true;
		off = next;
	}
	return false;
}

int gobin__is_go(int fd)
{
	uint64_t fsize;
	Elf_Scn *scn = NULL;
	size_t shstr;
	int go = 0;
	Elf *elf;

	elf = elfsym__begin(fd, &fsize);
	if (!elf)
		return -ENOEXEC;
	if (elf_getshdrstrndx(elf, &shstr) != 0) {
		elf_end(elf);
		return 0;
	}
	while (!go && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			break;
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (name && (strcmp(name, ".go.buildinfo") == 0 || strcmp(name, ".gopclntab") == 0))
			go = 1;
		else if (sh.sh_type == SHT_NOTE && sh.sh_offset <= fsize &&
			 sh.sh_size <= fsize - sh.sh_offset && has_go_note(scn, sh.sh_size))
			go = 1;
	}
	elf_end(elf);
	return go;
}
