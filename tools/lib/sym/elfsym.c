// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ELF function symbols through libelf. The symbols are copied out and the
 * file closed, so a loaded table holds no descriptor and survives the file
 * being replaced or deleted. The files are the application's: opened with
 * appfile (no link out of its root, regular files only), read with pread
 * (ELF_C_READ: a file truncated under us is a read error, not SIGBUS), and
 * every size a header claims is checked against the file and a cap before
 * anything is allocated for it. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/appfile.h"
#include "sym/budget.h"
#include "sym/debuginfod.h"
#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "core/util.h"

struct seg {
	uint64_t vaddr, filesz, offset;
};

struct elf_syms {
	struct elf_sym_info *syms;	/* sorted by addr */
	size_t n;
	char *names;			/* pool the syms' names point into */
	size_t names_len;
	struct seg *segs;
	size_t nsegs;
	bool dyn;
	bool have_symtab;		/* .symtab, not just .dynsym */
	char build_id[2 * 64 + 1];
	char *debuglink;		/* .gnu_debuglink's name, or NULL */
	uint32_t link_crc;		/* the CRC-32 it gives of its debug file */
	bool has_crc;
	int debug_err;			/* -ETIME, -EFBIG: its debug file's table left out */
};

struct sym_tmp {
	uint64_t addr, size;
	size_t name_off;
	int bind_rank;			/* global before weak before local */
};

/* Caps on what a hostile file can make us allocate: sections (a linked
 * binary has tens, the ELF format allows 2^32), one section's data, and the
 * string tables kept for the names. */
#define ELF_MAX_SECTIONS	65536
#define ELF_SECTION_MAX		(512ull << 20)
#define ELF_NAMES_MAX		(512ull << 20)
/* What is read to find the build id and the debug link, at most: a note
 * section (a build id's is 36 bytes), all the note sections together, the
 * .gnu_debuglink section (a file name and a CRC) and the section names. */
#define NOTE_SECTION_MAX	(64u << 10)
#define NOTES_MAX		(1u << 20)
#define DEBUGLINK_MAX		(PATH_MAX + 8)
#define SECTION_NAMES_MAX	(4u << 20)
/* the symbols read between two looks at the time budget */
#define TIME_STEP		4096

/* The data of SCN if its header fits the file (FSIZE bytes) and the cap. */
static Elf_Data *section_data(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t fsize)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_size > ELF_SECTION_MAX ||
	    sh->sh_offset > fsize || sh->sh_size > fsize - sh->sh_offset)
		return NULL;
	return elf_getdata(scn, NULL);
}

static uint64_t rd(const unsigned char *p, int n, bool be)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = be ? v << 8 | p[i] : v | (uint64_t)p[i] << (8 * i);
	return v;
}

/* Where an ELF image comes from: a file read with pread, or memory. */
struct elf_src {
	int fd;				/* -1: MEM */
	const unsigned char *mem;
	uint64_t len;
};

static ssize_t src_read(const struct elf_src *src, void *buf, size_t n, uint64_t off)
{
	if (src->fd >= 0)
		return pread(src->fd, buf, n, (off_t)off);
	if (off >= src->len)
		return 0;
	if (n > src->len - off)
		n = (size_t)(src->len - off);
	memcpy(buf, src->mem + off, n);
	return (ssize_t)n;
}

/* Check the section and program header tables an ELF header claims against
 * the image's size before libelf allocates one record per claimed entry. */
static int check_headers(const struct elf_src *src, uint64_t fsize)
{
	unsigned char h[64], sh0[64];
	uint64_t shoff, phoff, shnum, phnum, shent, phent;
	bool is64, be;

	if (src_read(src, h, sizeof(h), 0) < 52 || memcmp(h, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	is64 = h[EI_CLASS] == ELFCLASS64;
	be = h[EI_DATA] == ELFDATA2MSB;
	if (is64) {
		phoff = rd(h + 32, 8, be);
		shoff = rd(h + 40, 8, be);
		phent = rd(h + 54, 2, be);
		phnum = rd(h + 56, 2, be);
		shent = rd(h + 58, 2, be);
		shnum = rd(h + 60, 2, be);
	} else {
		phoff = rd(h + 28, 4, be);
		shoff = rd(h + 32, 4, be);
		phent = rd(h + 42, 2, be);
		phnum = rd(h + 44, 2, be);
		shent = rd(h + 46, 2, be);
		shnum = rd(h + 48, 2, be);
	}
	if (shoff && (shnum == 0 || phnum == 0xffff)) {
		/* extended numbering: the counts are in section 0 */
		if (shent < (is64 ? 64u : 40u) || shoff > fsize ||
		    src_read(src, sh0, shent > sizeof(sh0) ? sizeof(sh0) : shent, shoff) <
		    (is64 ? 64 : 40))
			return -ENOEXEC;
		if (shnum == 0)
			shnum = is64 ? rd(sh0 + 32, 8, be) : rd(sh0 + 20, 4, be);
		if (phnum == 0xffff)
			phnum = is64 ? rd(sh0 + 44, 4, be) : rd(sh0 + 28, 4, be);
	}
	if (shnum > ELF_MAX_SECTIONS || phnum > ELF_MAX_SECTIONS)
		return -ENOEXEC;
	if (shoff && (shoff > fsize || shnum * shent > fsize - shoff))
		return -ENOEXEC;
	if (phoff && (phoff > fsize || phnum * phent > fsize - phoff))
		return -ENOEXEC;
	return 0;
}

static int read_build_id(Elf *elf, uint64_t fsize, char *out, size_t outsz)
{
	Elf_Scn *scn = NULL;
	uint64_t notes = 0;
	GElf_Shdr sh;

	out[0] = '\0';
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		/* libelf keeps what it read until elf_end: a file of many or
		 * large note sections is read only so far */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > NOTE_SECTION_MAX || notes + sh.sh_size > NOTES_MAX)
			continue;
		notes += sh.sh_size;
		data = section_data(scn, &sh, fsize);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    desc_off + nh.n_descsz <= data->d_size &&
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0) {
				const unsigned char *d = (unsigned char *)data->d_buf + desc_off;
				size_t i, n = nh.n_descsz;

				if (n * 2 + 1 > outsz)
					n = (outsz - 1) / 2;
				for (i = 0; i < n; i++)
					sprintf(out + 2 * i, "%02x", d[i]);
				return 0;
			}
		}
	}
	return -ENOENT;
}

int elfsym__elf_build_id(Elf *elf, uint64_t fsize, char *out, size_t outsz)
{
	return read_build_id(elf, fsize, out, outsz);
}

/* The name in .gnu_debuglink, or NULL; *CRC the CRC-32 of the debug file
 * it gives after the name (*HAS_CRC false when the section has none). */
static const char *read_debuglink(Elf *elf, uint64_t fsize, uint32_t *crc, bool *has_crc)
{
	Elf_Scn *scn = NULL, *strs;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	size_t shstrndx;

	*has_crc = false;
	if (elf_getshdrstrndx(elf, &shstrndx) || !gelf_getehdr(elf, &eh))
		return NULL;
	/* elf_strptr reads the section names' table whole: check it first */
	strs = elf_getscn(elf, shstrndx);
	if (!strs || !gelf_getshdr(strs, &sh) || sh.sh_size > SECTION_NAMES_MAX ||
	    !section_data(strs, &sh, fsize))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const unsigned char *b;
		const char *name;
		Elf_Data *data;
		size_t len, at;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink"))
			continue;
		data = sh.sh_size <= DEBUGLINK_MAX ? section_data(scn, &sh, fsize) : NULL;
		if (!data || data->d_size < 2 || !memchr(data->d_buf, '\0', data->d_size))
			return NULL;
		/* the name, NULs up to a multiple of 4, the CRC */
		b = data->d_buf;
		len = strlen(data->d_buf);
		at = (len + 1 + 3) & ~(size_t)3;
		if (at + 4 <= data->d_size) {
			*crc = (uint32_t)rd(b + at, 4, eh.e_ident[EI_DATA] == ELFDATA2MSB);
			*has_crc = true;
		}
		return data->d_buf;
	}
	return NULL;
}

static int cmp_tmp(const void *a, const void *b)
{
	const struct sym_tmp *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address prefer a sized symbol, then the stronger binding */
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	return x->bind_rank - y->bind_rank;
}

/* What the table built from the symbol sections of TYPE would hold at
 * most, from their headers alone (nothing read): a record per entry and
 * a copy of each string table. */
static uint64_t table_bytes(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	uint64_t bytes = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
			continue;
		/* what no read would take (section_data refuses it) is not
		 * counted; the rest is below 2^40 a section: no sum wraps */
		if (sh.sh_size > ELF_SECTION_MAX || strsh.sh_size > ELF_NAMES_MAX)
			continue;
		bytes += (sh.sh_size / sh.sh_entsize) * sizeof(struct elf_sym_info) +
			 strsh.sh_size + 1;
		if (bytes > ELF_NAMES_MAX * 4)
			break;
	}
	return bytes;
}

/* Collect the function symbols of one symbol table section type. Names
 * point into copies of their string tables appended to *POOL: a table is
 * copied once however many symbols share its strings. LIM: what the table
 * may hold (-EFBIG, seen from the headers before anything is read) and how
 * long it may take (-ETIME). */
static int collect(Elf *elf, uint64_t fsize, Elf64_Word type, struct sym_tmp **out,
		   size_t *nout, char **pool, size_t *pool_len, const struct elfsym_limits *lim)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t cap = 0, n = 0, plen = *pool_len;
	struct sym_tmp *arr = NULL;
	char *p = *pool;
	int err = 0;

	if (lim && lim->max_bytes && table_bytes(elf, type) > lim->max_bytes)
		return -EFBIG;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data, *strd;
		Elf_Scn *strscn;
		GElf_Shdr strsh;
		size_t count, i, base, slen;
		char *np;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
			continue;
		data = section_data(scn, &sh, fsize);
		strscn = elf_getscn(elf, sh.sh_link);
		if (!data || !strscn || !gelf_getshdr(strscn, &strsh) ||
		    strsh.sh_type != SHT_STRTAB)
			continue;
		strd = section_data(strscn, &strsh, fsize);
		if (!strd || !strd->d_buf || strd->d_size == 0)
			continue;
		slen = strd->d_size;
		if (plen + slen + 1 > ELF_NAMES_MAX) {
			err = -EFBIG;
			goto cleanup;
		}
		np = realloc(p, plen + slen + 1);
		if (!np) {
			err = -ENOMEM;
			goto cleanup;
		}
		p = np;
		base = plen;
		memcpy(p + base, strd->d_buf, slen);
		/* a table that does not end in NUL ends here */
		p[base + slen] = '\0';
		plen += slen + 1;
		count = data->d_size / sh.sh_entsize;
		for (i = 0; i < count; i++) {
			GElf_Sym sym;
			int st;

			if (i % TIME_STEP == TIME_STEP - 1 && lim && budget__over(lim->time)) {
				err = -ETIME;
				goto cleanup;
			}
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			st = GELF_ST_TYPE(sym.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_value == 0 || sym.st_name >= slen || p[base + sym.st_name] == '\0')
				continue;
			if (n == cap) {
				struct sym_tmp *tmp;

				cap = cap ? cap * 2 : 256;
				tmp = realloc(arr, cap * sizeof(*arr));
				if (!tmp) {
					err = -ENOMEM;
					goto cleanup;
				}
				arr = tmp;
			}
			arr[n].addr = sym.st_value;
			arr[n].size = sym.st_size;
			arr[n].name_off = base + sym.st_name;
			arr[n].bind_rank = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 0 :
					   GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1 : 2;
			n++;
		}
	}
cleanup:
	*pool = p;
	*pool_len = plen;
	if (err) {
		free(arr);
		return err;
	}
	*out = arr;
	*nout = n;
	return 0;
}

/* libelf over FD (not mapped), after check_headers. *FSIZE gets the size. */
Elf *elfsym__begin(int fd, uint64_t *fsize)
{
	struct elf_src src = { .fd = fd };
	struct stat st;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || check_headers(&src, (uint64_t)st.st_size)) {
		errno = ENOEXEC;
		return NULL;
	}
	*fsize = (uint64_t)st.st_size;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) == ELFCLASSNONE) {
		if (elf)
			elf_end(elf);
		errno = ENOEXEC;
		return NULL;
	}
	return elf;
}

#define begin_elf elfsym__begin

/* Load symbols from ELF into s (replacing any), within LIM (or NULL). */
static int load_symbols(struct elf_syms *s, Elf *elf, uint64_t fsize,
			const struct elfsym_limits *lim)
{
	struct sym_tmp *tmp = NULL;
	char *pool = NULL;
	size_t n = 0, pool_len = 0, i, k;
	int err;

	err = collect(elf, fsize, SHT_SYMTAB, &tmp, &n, &pool, &pool_len, lim);
	s->have_symtab = !err && n > 0;
	if (!err && n == 0) {
		free(tmp);
		tmp = NULL;
		err = collect(elf, fsize, SHT_DYNSYM, &tmp, &n, &pool, &pool_len, lim);
	}
	if (err)
		goto fail;
	if (n)
		qsort(tmp, n, sizeof(*tmp), cmp_tmp);
	free(s->syms);
	free(s->names);
	s->syms = calloc(n ? n : 1, sizeof(*s->syms));
	if (!s->syms) {
		err = -ENOMEM;
		goto fail;
	}
	/* aliases (malloc/__libc_malloc) are all kept for lookups by name; the
	 * preferred one comes first at its address, for lookups by address */
	for (i = 0, k = 0; i < n; i++) {
		s->syms[k].addr = tmp[i].addr;
		s->syms[k].size = tmp[i].size;
		s->syms[k].name = (const char *)(uintptr_t)tmp[i].name_off;
		k++;
	}
	s->n = k;
	s->names = pool;
	s->names_len = pool_len;
	for (i = 0; i < k; i++) {
		s->syms[i].name = pool + (uintptr_t)s->syms[i].name;
		if (elfsym__addr_to_offset(s, s->syms[i].addr, &s->syms[i].file_offset))
			s->syms[i].file_offset = 0;
	}
	free(tmp);
	return 0;
fail:
	free(tmp);
	free(pool);
	return err;
}

static int load_segments(struct elf_syms *s, Elf *elf)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	s->segs = calloc(phnum ? phnum : 1, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s->segs[s->nsegs].vaddr = ph.p_vaddr;
		s->segs[s->nsegs].filesz = ph.p_filesz;
		s->segs[s->nsegs].offset = ph.p_offset;
		s->nsegs++;
	}
	return 0;
}

/* The CRC-32 of the file at FD (FSIZE bytes), as .gnu_debuglink gives its
 * debug file's: 0, -ETIME when TIME ran out first, or -EIO. */
static int file_crc32(int fd, uint64_t fsize, const struct budget *time, uint32_t *out)
{
	enum { CHUNK = 1 << 18 };
	unsigned char *buf = malloc(CHUNK);
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	ssize_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (off < fsize) {
		if (budget__over(time)) {
			err = -ETIME;
			break;
		}
		n = pread(fd, buf, fsize - off < CHUNK ? (size_t)(fsize - off) : CHUNK, (off_t)off);
		if (n <= 0) {
			err = -EIO;	/* shorter than it was: not the file linked */
			break;
		}
		crc = crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
	}
	free(buf);
	*out = (uint32_t)crc;
	return err;
}

/* Open REL inside ROOTFD as a candidate debug file of S: an ELF file with
 * S's build id, or, S having none, the CRC-32 its debug link gives (a file
 * nothing ties to S is never taken). Call FN on it; 0 from FN keeps it open
 * and returns its descriptor. -ETIME when TIME ran out. */
static int try_debug_file(int rootfd, const char *rel, const struct elf_syms *s,
			  elfsym_debug_fn fn, void *ctx, const struct budget *time)
{
	char id[2 * 64 + 1];
	uint32_t crc = 0;
	uint64_t fsize;
	Elf *elf;
	int fd, err = -ENOENT;

	if (budget__over(time))
		return -ETIME;
	fd = appfile__open_in_root(rootfd, rel, 0, NULL);
	if (fd < 0)
		return fd;
	elf = begin_elf(fd, &fsize);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	/* a debug file for another build would name the wrong functions */
	if (s->build_id[0]) {
		if (read_build_id(elf, fsize, id, sizeof(id)) || strcmp(id, s->build_id))
			goto cleanup;
	} else if (!s->has_crc) {
		goto cleanup;
	} else {
		err = file_crc32(fd, fsize, time, &crc);
		if (err)
			goto cleanup;	/* -ETIME, or not read whole: not taken */
		err = -ENOENT;
		if (crc != s->link_crc)
			goto cleanup;
	}
	err = fn(fd, elf, fsize, rel, ctx);
cleanup:
	elf_end(elf);
	if (err) {
		close(fd);
		return err < 0 ? err : -ENOENT;
	}
	return fd;
}

static struct debuginfod *debuginfod;

void elfsym__set_debuginfod(struct debuginfod *d)
{
	debuginfod = d;
}

struct try_ctx {
	const struct elf_syms *s;
	elfsym_debug_fn fn;
	void *ctx;
	const struct budget *time;
};

/* debuginfod_try_fn: a fetched file, judged as one found in a root */
static int try_fetched(int dirfd, const char *rel, void *ctx)
{
	struct try_ctx *t = ctx;

	return try_debug_file(dirfd, rel, t->s, t->fn, t->ctx, t->time);
}

/* elfsym__find_debug_in inside the root alone */
static int find_local(int rootfd, const char *rel, const struct elf_syms *s,
		      elfsym_debug_fn fn, void *ctx, const struct budget *time)
{
	char buf[2 * PATH_MAX + 64], dir[PATH_MAX];
	const char *slash, *link = s->debuglink;
	int fd;

	if (rootfd < 0)
		return -ENOENT;
	if (strlen(s->build_id) > 2) {
		snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%.2s/%s.debug", s->build_id,
			 s->build_id + 2);
		fd = try_debug_file(rootfd, buf, s, fn, ctx, time);
		if (fd >= 0 || fd == -ETIME)
			return fd;
	}
	if (!link || !link[0] || strchr(link, '/') || !rel)
		return -ENOENT;
	/* beside the file, in .debug/ there, under /usr/lib/debug/DIR: as
	 * the process names the file, inside its root */
	slash = strrchr(rel, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 0, rel);
	snprintf(buf, sizeof(buf), "%s/%s", dir, link);
	if (strcmp(buf, rel) && ((fd = try_debug_file(rootfd, buf, s, fn, ctx, time)) >= 0 ||
				 fd == -ETIME))
		return fd;
	snprintf(buf, sizeof(buf), "%s/.debug/%s", dir, link);
	if ((fd = try_debug_file(rootfd, buf, s, fn, ctx, time)) >= 0 || fd == -ETIME)
		return fd;
	snprintf(buf, sizeof(buf), "/usr/lib/debug%s%s/%s", dir[0] == '/' ? "" : "/", dir, link);
	fd = try_debug_file(rootfd, buf, s, fn, ctx, time);
	return fd >= 0 || fd == -ETIME ? fd : -ENOENT;
}

int elfsym__find_debug_in(int rootfd, const char *rel, const struct elf_syms *s,
			  elfsym_debug_fn fn, void *ctx, const struct budget *time)
{
	struct try_ctx t = { s, fn, ctx, time };
	int fd = find_local(rootfd, rel, s, fn, ctx, time);

	/* a file of the app's own root first; the servers' by build id
	 * only, never by a debug link's name */
	if (fd != -ENOENT || !debuginfod || !s->build_id[0])
		return fd;
	return debuginfod__find(debuginfod, s->build_id, try_fetched, &t, time);
}

struct take_ctx {
	struct elf_syms *s;
	const struct elfsym_limits *lim;
	int err;		/* why the last candidate was not taken */
};

/* elfsym_debug_fn: a debug file with a symbol table replaces the symbols;
 * one without leaves them as they are. */
static int take_symbols(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx)
{
	struct take_ctx *tc = ctx;
	struct elf_syms *s = tc->s, t = *s;
	int err;

	t.syms = NULL;
	t.names = NULL;
	t.n = 0;
	err = load_symbols(&t, elf, fsize, tc->lim);
	if (err) {
		tc->err = err;
		return err;
	}
	if (!t.n) {
		free(t.syms);
		free(t.names);
		return -ENOENT;
	}
	free(s->syms);
	free(s->names);
	s->syms = t.syms;
	s->names = t.names;
	s->names_len = t.names_len;
	s->n = t.n;
	s->have_symtab = t.have_symtab;
	return 0;
}

struct elf_syms *elfsym__load_in(int fd, int rootfd, const char *rel,
				 const struct elfsym_limits *lim)
{
	struct take_ctx tc = { 0 };
	struct elf_syms *s = NULL;
	const char *link;
	uint64_t fsize;
	GElf_Ehdr eh;
	Elf *elf;
	int err, dfd;

	elf = begin_elf(fd, &fsize);
	if (!elf)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	if (!gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto fail;
	}
	s->dyn = eh.e_type == ET_DYN;
	err = load_segments(s, elf);
	if (err)
		goto fail;
	read_build_id(elf, fsize, s->build_id, sizeof(s->build_id));
	err = load_symbols(s, elf, fsize, lim);
	if (err)
		goto fail;
	link = read_debuglink(elf, fsize, &s->link_crc, &s->has_crc);
	if (link && !(s->debuglink = strdup(link))) {
		err = -ENOMEM;
		goto fail;
	}
	elf_end(elf);
	elf = NULL;
	/* stripped (no .symtab): a separate debug file has the full table */
	if (!s->have_symtab && rootfd >= 0) {
		tc.s = s;
		tc.lim = lim;
		dfd = elfsym__find_debug_in(rootfd, rel, s, take_symbols, &tc,
					    lim ? lim->time : NULL);
		if (dfd >= 0)
			close(dfd);
		/* over a limit: the file's own symbols, and why no more */
		s->debug_err = dfd == -ETIME ? -ETIME :
			       tc.err == -EFBIG || tc.err == -ETIME ? tc.err : 0;
	}
	return s;
fail:
	if (elf)
		elf_end(elf);
	elfsym__free(s);
	errno = -err;
	return NULL;
}

/* ROOT as a directory to look for debug files in ("" or NULL: "/"), and
 * PATH (a path through it, or not) as that root names it. */
static int open_root(const char *root, const char *path, const char **rel)
{
	size_t len = root ? strlen(root) : 0;

	*rel = path;
	if (len && strncmp(path, root, len) == 0 && path[len] == '/')
		*rel = path + len;
	return open(len ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

struct elf_syms *elfsym__load_fd(int fd, const char *path, const char *debug_root)
{
	struct elf_syms *s;
	const char *rel;
	int rootfd = open_root(debug_root, path, &rel), err;

	s = elfsym__load_in(fd, rootfd, rel, NULL);
	err = errno;
	if (rootfd >= 0)
		close(rootfd);
	errno = err;
	return s;
}

struct elf_syms *elfsym__load_mem(const void *image, size_t len)
{
	struct elf_src src = { .fd = -1, .mem = image, .len = len };
	struct elf_syms *s = NULL;
	char *copy = NULL;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int err = -ENOEXEC;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	if (len > ELF_SECTION_MAX || check_headers(&src, len))
		goto fail;
	/* libelf may write to what it is given; the image may be read-only */
	copy = malloc(len ? len : 1);
	if (!copy) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(copy, image, len);
	elf = elf_memory(copy, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) == ELFCLASSNONE ||
	    !gelf_getehdr(elf, &eh))
		goto fail;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto fail;
	}
	s->dyn = eh.e_type == ET_DYN;
	err = load_segments(s, elf);
	if (!err) {
		read_build_id(elf, len, s->build_id, sizeof(s->build_id));
		err = load_symbols(s, elf, len, NULL);
	}
	if (err)
		goto fail;
	elf_end(elf);
	free(copy);
	return s;
fail:
	if (elf)
		elf_end(elf);
	free(copy);
	elfsym__free(s);
	errno = -err;
	return NULL;
}

struct elf_syms *elfsym__load(const char *path, const char *debug_root)
{
	struct elf_syms *s;
	int fd = appfile__open(path, 0, NULL), err;

	if (fd < 0) {
		/* a path that is not a file is not an ELF file */
		errno = fd == -APPFILE_ENOTREG ? ENOEXEC : -fd;
		return NULL;
	}
	s = elfsym__load_fd(fd, path, debug_root);
	err = errno;
	close(fd);
	errno = err;
	return s;
}

/* The packed form (elfsym__pack): a header, the segments, the symbols
 * (addresses, sizes and name offsets), then their names, each ending in
 * NUL. Native byte order: it is kept on this machine only. */
#define PACK_MAGIC "sssyms\0\2"
#define PACK_SYMTAB 0x1u	/* a full table (elfsym__complete) */
#define PACK_CRC 0x2u		/* the debug link gives a CRC */
#define PACK_MAX_SYMS (16u << 20)

struct pack_head {
	char magic[8];
	uint32_t n, nsegs;
	uint64_t names_len;
	uint32_t dyn;
	uint32_t flags;		/* PACK_SYMTAB, PACK_CRC */
	uint32_t debuglink;	/* offset into the names + 1, 0: none */
	uint32_t link_crc;	/* with PACK_CRC */
	char build_id[2 * 64 + 8];
};

struct pack_sym {
	uint64_t addr, size;
	uint64_t name;		/* offset into the names */
};

int elfsym__pack(const struct elf_syms *s, void **buf, size_t *len)
{
	struct pack_head h;
	struct pack_sym *ps;
	size_t names = 0, i, at, total, link = s->debuglink ? strlen(s->debuglink) + 1 : 0;
	char *b, *np;

	*buf = NULL;
	*len = 0;
	for (i = 0; i < s->n; i++)
		names += strlen(s->syms[i].name) + 1;
	names += link;
	total = sizeof(h) + s->nsegs * sizeof(*s->segs) + s->n * sizeof(*ps) + names;
	b = malloc(total);
	if (!b)
		return -ENOMEM;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PACK_MAGIC, sizeof(h.magic));
	h.n = (uint32_t)s->n;
	h.nsegs = (uint32_t)s->nsegs;
	h.names_len = names;
	h.dyn = s->dyn;
	h.flags = (s->have_symtab ? PACK_SYMTAB : 0) | (s->has_crc ? PACK_CRC : 0);
	h.link_crc = s->link_crc;
	memcpy(h.build_id, s->build_id, sizeof(s->build_id));
	memcpy(b, &h, sizeof(h));
	at = sizeof(h);
	memcpy(b + at, s->segs, s->nsegs * sizeof(*s->segs));
	at += s->nsegs * sizeof(*s->segs);
	ps = (struct pack_sym *)(b + at);
	np = b + at + s->n * sizeof(*ps);
	for (i = 0, at = 0; i < s->n; i++) {
		size_t l = strlen(s->syms[i].name) + 1;

		ps[i].addr = s->syms[i].addr;
		ps[i].size = s->syms[i].size;
		ps[i].name = at;
		memcpy(np + at, s->syms[i].name, l);
		at += l;
	}
	if (link) {
		memcpy(np + at, s->debuglink, link);
		((struct pack_head *)b)->debuglink = (uint32_t)at + 1;
	}
	*buf = b;
	*len = total;
	return 0;
}

struct elf_syms *elfsym__unpack(const void *buf, size_t len)
{
	const char *b = buf, *np;
	const struct pack_sym *ps;
	struct elf_syms *s;
	struct pack_head h;
	size_t i, fixed;

	if (len < sizeof(h))
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (memcmp(h.magic, PACK_MAGIC, sizeof(h.magic)) || h.n > PACK_MAX_SYMS ||
	    h.nsegs > ELF_MAX_SECTIONS || h.names_len == 0 || h.names_len > ELF_NAMES_MAX ||
	    (h.flags & ~(PACK_SYMTAB | PACK_CRC)) ||
	    memchr(h.build_id, '\0', sizeof(h.build_id)) == NULL ||
	    strlen(h.build_id) >= sizeof(((struct elf_syms *)0)->build_id))
		goto bad;
	fixed = sizeof(h) + (size_t)h.nsegs * sizeof(struct seg) + (size_t)h.n * sizeof(*ps);
	if (len != fixed + h.names_len)
		goto bad;
	np = b + fixed;
	ps = (const void *)(b + sizeof(h) + (size_t)h.nsegs * sizeof(struct seg));
	if (np[h.names_len - 1] != '\0' || (h.debuglink && h.debuglink > h.names_len))
		goto bad;
	for (i = 0; i < h.n; i++)
		if (ps[i].name >= h.names_len || (i && ps[i].addr < ps[i - 1].addr))
			goto bad;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->segs = malloc(h.nsegs ? h.nsegs * sizeof(*s->segs) : 1);
	s->syms = calloc(h.n ? h.n : 1, sizeof(*s->syms));
	s->names = malloc(h.names_len);
	if (!s->segs || !s->syms || !s->names ||
	    (h.debuglink && !(s->debuglink = strdup(np + h.debuglink - 1)))) {
		elfsym__free(s);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(s->segs, b + sizeof(h), h.nsegs * sizeof(*s->segs));
	s->nsegs = h.nsegs;
	memcpy(s->names, np, h.names_len);
	s->names_len = h.names_len;
	s->n = h.n;
	for (i = 0; i < h.n; i++) {
		s->syms[i].addr = ps[i].addr;
		s->syms[i].size = ps[i].size;
		s->syms[i].name = s->names + ps[i].name;
		if (elfsym__addr_to_offset(s, s->syms[i].addr, &s->syms[i].file_offset))
			s->syms[i].file_offset = 0;
	}
	s->dyn = h.dyn != 0;
	s->have_symtab = (h.flags & PACK_SYMTAB) != 0;
	s->has_crc = (h.flags & PACK_CRC) != 0;
	s->link_crc = h.link_crc;
	strcpy(s->build_id, h.build_id);
	return s;
bad:
	errno = EINVAL;
	return NULL;
}

bool elfsym__complete(const struct elf_syms *s)
{
	return s->have_symtab;
}

int elfsym__debug_left_out(const struct elf_syms *s)
{
	return s->debug_err;
}

size_t elfsym__bytes(const struct elf_syms *s)
{
	return sizeof(*s) + s->n * sizeof(*s->syms) + s->names_len + s->nsegs * sizeof(*s->segs) +
	       (s->debuglink ? strlen(s->debuglink) + 1 : 0);
}

void elfsym__free(struct elf_syms *s)
{
	if (!s)
		return;
	free(s->syms);
	free(s->names);
	free(s->segs);
	free(s->debuglink);
	free(s);
}

const char *elfsym__debuglink(const struct elf_syms *s)
{
	return s->debuglink;
}

const char *elfsym__build_id(const struct elf_syms *s)
{
	return s->build_id;
}

size_t elfsym__count(const struct elf_syms *s)
{
	return s->n;
}

bool elfsym__is_dyn(const struct elf_syms *s)
{
	return s->dyn;
}

int elfsym__offset_to_addr(const struct elf_syms *s, uint64_t off, uint64_t *addr)
{
	size_t i;

	for (i = 0; i < s->nsegs; i++) {
		const struct seg *g = &s->segs[i];

		if (off >= g->offset && off < g->offset + g->filesz) {
			*addr = off - g->offset + g->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int elfsym__addr_to_offset(const struct elf_syms *s, uint64_t addr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < s->nsegs; i++) {
		const struct seg *g = &s->segs[i];

		if (addr >= g->vaddr && addr < g->vaddr + g->filesz) {
			*off = addr - g->vaddr + g->offset;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_sym_info *elfsym__lookup_addr(const struct elf_syms *s, uint64_t addr,
					       uint64_t *delta)
{
	size_t lo = 0, hi = s->n;
	const struct elf_sym_info *e;

	/* last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	lo--;
	while (lo > 0 && s->syms[lo - 1].addr == s->syms[lo].addr)
		lo--;
	e = &s->syms[lo];
	if (e->size && addr >= e->addr + e->size)
		return NULL;
	if (delta)
		*delta = addr - e->addr;
	return e;
}

/* "ns::f(int) const" -> length of "ns::f" (up to the parameter list). */
static size_t without_params(const char *d)
{
	size_t i, len = strlen(d);
	int depth = 0;

	if (len == 0 || (d[len - 1] != ')' && !strstr(d, ") ")))
		return len;
	/* the parameter list is the last top-level '(' */
	for (i = len; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0)
			return i;
	}
	return len;
}

size_t elfsym__lookup_name(const struct elf_syms *s, const char *name,
			   const struct elf_sym_info **out, size_t max)
{
	size_t i, found = 0, nlen = strlen(name);

	for (i = 0; i < s->n; i++) {
		const struct elf_sym_info *e = &s->syms[i];
		bool match = strcmp(e->name, name) == 0;

		if (!match && demangle__maybe(e->name)) {
			char *d = demangle__name(e->name);

			if (d)
				match = strcmp(d, name) == 0 ||
					(without_params(d) == nlen && strncmp(d, name, nlen) == 0);
			free(d);
		}
		if (!match)
			continue;
		if (found < max)
			out[found] = e;
		found++;
	}
	return found;
}
