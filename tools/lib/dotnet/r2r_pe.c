// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* PE headers of a ReadyToRun image: the COFF header, the optional header's
 * CLI data directory and the section table (ECMA-335 partition II.25), and
 * the mapping between RVAs and file offsets through the sections. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet/r2r_int.h"

int r2r_rva_to_off(const struct r2r_image *img, uint32_t rva, uint64_t *off)
{
	for (unsigned i = 0; i < img->nsec; i++) {
		const struct section *s = &img->sec[i];
		uint32_t span = s->vsize > s->raw_size ? s->vsize : s->raw_size;

		if (rva >= s->va && rva - s->va < span) {
			if (rva - s->va >= s->raw_size)
				return -ENOENT;	/* zero-fill, not in the file */
			*off = (uint64_t)s->raw_off + (rva - s->va);
			return 0;
		}
	}
	return -ENOENT;
}

bool r2r_rva_range(const struct r2r_image *img, uint32_t rva, uint64_t len, uint64_t *off)
{
	return r2r_rva_to_off(img, rva, off) == 0 && in_file(img, *off, len);
}

int r2r__file_offset_from_rva(const struct r2r_image *img, uint32_t rva, uint64_t *off)
{
	return r2r_rva_to_off(img, rva, off);
}

int r2r__rva_from_file_offset(const struct r2r_image *img, uint64_t off, uint32_t *rva)
{
	for (unsigned i = 0; i < img->nsec; i++) {
		const struct section *s = &img->sec[i];

		if (off >= s->raw_off && off - s->raw_off < s->raw_size) {
			*rva = s->va + (uint32_t)(off - s->raw_off);
			return 0;
		}
	}
	return -ENOENT;
}

/* The NSEC 40-byte section headers at SEC_OFF, each section's bytes in the
 * file. */
static int read_sections(struct r2r_image *img, uint64_t sec_off, uint32_t nsec,
			 struct err *e)
{
	if (nsec == 0 || !in_file(img, sec_off, (uint64_t)nsec * 40))
		return err__set(e, ENOEXEC, "truncated PE file: section table cut short");
	img->sec = calloc(nsec, sizeof(*img->sec));
	if (!img->sec)
		return err__set(e, ENOMEM, "out of memory");
	img->nsec = nsec;
	for (unsigned i = 0; i < nsec; i++) {
		const uint8_t *h = img->data + sec_off + i * 40;
		struct section *s = &img->sec[i];

		s->vsize = rd32(h + 8);
		s->va = rd32(h + 12);
		s->raw_size = rd32(h + 16);
		s->raw_off = rd32(h + 20);
		/* a truncated file keeps the headers of sections it lost */
		if (!in_file(img, s->raw_off, s->raw_size))
			return err__set(e, ENOEXEC, "truncated PE file: section %u needs bytes up "
					"to 0x%llx, file has 0x%zx", i,
					(unsigned long long)s->raw_off + s->raw_size, img->size);
	}
	return 0;
}

int r2r_pe_parse(struct r2r_image *img, uint32_t *cli_rva, uint32_t *cli_size, struct err *e)
{
	uint32_t pe, nsec, optsz, magic, ndirs, dir_off;
	int err;

	if (img->size < 0x40 || img->data[0] != 'M' || img->data[1] != 'Z')
		return err__set(e, ENOEXEC, "not a PE file (no MZ header)");
	pe = rd32(img->data + 0x3c);
	if (!in_file(img, pe, 24) || memcmp(img->data + pe, "PE\0\0", 4) != 0)
		return err__set(e, ENOEXEC, "not a PE file (no PE signature at 0x%x)", pe);
	img->machine = rd16(img->data + pe + 4);
	nsec = rd16(img->data + pe + 6);
	optsz = rd16(img->data + pe + 20);
	if (!in_file(img, (uint64_t)pe + 24, optsz) || optsz < 2)
		return err__set(e, ENOEXEC, "truncated PE file: optional header cut short");
	magic = rd16(img->data + pe + 24);
	if (magic == 0x10b)
		dir_off = 96;
	else if (magic == 0x20b)
		dir_off = 112;
	else
		return err__set(e, ENOEXEC, "corrupt PE file: unknown optional header magic 0x%x",
				magic);
	if (optsz < dir_off)
		return err__set(e, ENOEXEC, "corrupt PE file: optional header too small (%u bytes)",
				optsz);
	ndirs = rd32(img->data + pe + 24 + dir_off - 4);
	if (ndirs < 15 || optsz < dir_off + 15 * 8)
		return err__set(e, ENOEXEC, "not a .NET assembly: PE file without a CLI header");
	/* data directory 14: the CLI header */
	*cli_rva = rd32(img->data + pe + 24 + dir_off + 14 * 8);
	*cli_size = rd32(img->data + pe + 24 + dir_off + 14 * 8 + 4);

	err = read_sections(img, (uint64_t)pe + 24 + optsz, nsec, e);
	if (err)
		return err;
	if (*cli_rva == 0 || *cli_size < 72)
		return err__set(e, ENOEXEC, "not a .NET assembly: PE file without a CLI header");
	return 0;
}

unsigned r2r_pe_arch(unsigned machine)
{
	/* the OS values crossgen2 xors into the machine: Apple, FreeBSD,
	 * Linux, NetBSD (none: Windows) */
	static const unsigned os[] = { 0x4644, 0xadc4, 0x7b79, 0x1993, 0 };

	for (unsigned i = 0; i < sizeof(os) / sizeof(os[0]); i++) {
		if ((machine ^ 0x8664) == os[i])
			return 0x8664;
	}
	for (unsigned i = 0; i < sizeof(os) / sizeof(os[0]); i++) {
		if ((machine ^ 0xaa64) == os[i])
			return 0xaa64;
	}
	return machine;
}
