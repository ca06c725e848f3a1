// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Source lines through libdw, over files the application controls (see
 * dwline.h for why each step is done this way). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/appfile.h"
#include "sym/budget.h"
#include "sym/dwline.h"
#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "core/escape.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"

#define DW_FILE_MAX	(128ull << 20)	/* one file's debug sections, decompressed */
#define DW_HELD_MAX	(192ull << 20)	/* every loaded file's */
#define DW_MAX_UNITS	200000
#define DW_MAX_RANGES	(4u << 20)
#define DW_LINE_PROG_MAX (2u << 20)	/* one unit's line program */
#define DW_MAX_FDS	256		/* descriptors held by all the dwlines */
#define DW_NAME_MAX	1024		/* longer names are cut with "..." */
#define DW_ALTLINK_MAX	4096		/* .gnu_debugaltlink: a file name and an id */
#define DW_LOAD_NS	(2000ull * 1000 * 1000)	/* one file's DWARF loaded and indexed */

struct dw_range {
	uint64_t lo, hi;
	uint32_t unit;
};

struct dw_unit {
	Dwarf_Die die;
	bool skeleton;		/* split DWARF: its DIEs are in a .dwo */
	int8_t lines_ok;	/* 0: not checked yet, 1: fine, -1: too big */
};

struct dw_hit {
	uint64_t vaddr;
	struct frame_line *lines;	/* malloc'd, stable */
	uint32_t n;
	bool used;
};

struct dwline {
	int fd;				/* the file with the DWARF, -1 once released */
	int alt_fd;			/* its dwz supplementary file, found with it, or -1 */
	char *path;			/* its path inside the process's root, for messages */
	dwline_intern_fn intern;
	void *ictx;
	/* while loaded */
	Elf *elf, *alt_elf;
	Dwarf *dbg, *alt;
	Elf_Scn *line_scn;		/* .debug_line, for the units' program sizes */
	uint64_t bytes;			/* debug data held */
	struct dw_range *ranges;
	size_t nranges;
	struct dw_unit *units;
	size_t nunits;
	bool failed;			/* cannot be loaded: not tried again */
	bool warned;
	uint64_t used;			/* tick of the last lookup, for unloading */
	/* answers by address */
	struct dw_hit *hits;
	size_t nhits, hits_cap;
};

/* Every dwline, for the budget of loaded DWARF. */
static struct dwline **all;
static size_t nall, all_cap;
static uint64_t held, tick, budget = DW_HELD_MAX;
static unsigned int fds_held;
/* lookups not made: a stop was asked and its time is over */
static size_t left_out;

void dwline__set_budget(uint64_t bytes)
{
	budget = bytes ? bytes : DW_HELD_MAX;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* A section libdw reads whole when it begins (dwarf_begin_elf). */
static bool is_debug_name(const char *name)
{
	return has_prefix(name, ".debug_") || has_prefix(name, ".zdebug_") ||
	       has_prefix(name, ".gnu.debuglto_") || strcmp(name, ".gnu_debugaltlink") == 0;
}

/* The debug sections lines and inlined functions need. libdw reads every
 * debug section when it begins; the others (location lists, call frames,
 * macros, type units: often most of the bytes) are hidden from it. */
static bool is_needed(const char *name)
{
	static const char *const keep[] = {
		"info", "abbrev", "line", "line_str", "str", "str_offsets", "addr",
		"ranges", "rnglists",
	};
	size_t i;

	if (strcmp(name, ".gnu_debugaltlink") == 0)
		return true;
	name += has_prefix(name, ".zdebug_") ? 8 : has_prefix(name, ".debug_") ? 7 : 0;
	for (i = 0; i < ARRAY_SIZE(keep); i++)
		if (strcmp(name, keep[i]) == 0)
			return true;
	return false;
}

static uint64_t be64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

struct dw_scan {
	uint64_t bytes;			/* what libdw will hold */
	bool line, info;		/* .debug_line and .debug_info present */
	Elf_Scn *line_scn;
	const char *altname;		/* .gnu_debugaltlink: file name, build id */
	const unsigned char *alt_id;
	size_t alt_id_len;
};

/* The index of ELF's (FSIZE bytes) section names' table into *SHSTRNDX,
 * checked before elf_strptr reads it whole: inside the file, with bytes,
 * under DW_FILE_MAX. 0, or -ENOEXEC. */
static int section_names(Elf *elf, uint64_t fsize, size_t *shstrndx)
{
	Elf_Scn *strs;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, shstrndx))
		return -ENOEXEC;
	strs = elf_getscn(elf, *shstrndx);
	if (!strs || !gelf_getshdr(strs, &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_size > DW_FILE_MAX || sh.sh_offset > fsize || sh.sh_size > fsize - sh.sh_offset)
		return -ENOEXEC;
	return 0;
}

/* Check the debug sections of ELF (FSIZE bytes) before libdw reads them:
 * sizes inside the file and the caps, compressed sections by the size
 * their header claims, read from the very copy libelf decompresses. With
 * DEEP false, only whether there are line tables (nothing is read). */
static int scan_sections(Elf *elf, uint64_t fsize, bool deep, struct dw_scan *sc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	memset(sc, 0, sizeof(*sc));
	if (section_names(elf, fsize, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		uint64_t size;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_GROUP))
			continue;	/* libdw skips these too */
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !is_debug_name(name))
			continue;
		if (!strcmp(name, ".debug_line") || !strcmp(name, ".zdebug_line")) {
			sc->line = sh.sh_size > 0;
			sc->line_scn = scn;
		}
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			sc->info = sh.sh_size > 0;
		if (!deep)
			continue;
		if (!is_needed(name)) {
			/* what is not there is not read (in memory only) */
			sh.sh_type = SHT_NOBITS;
			if (!gelf_update_shdr(scn, &sh))
				return -ENOEXEC;
			continue;
		}
		if (sh.sh_size > DW_FILE_MAX || sh.sh_offset > fsize ||
		    sh.sh_size > fsize - sh.sh_offset)
			return -EFBIG;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return -ENOEXEC;
			size = ch.ch_size;
		} else if (has_prefix(name, ".zdebug_")) {
			data = elf_getdata(scn, NULL);
			if (!data || data->d_size < 12 || memcmp(data->d_buf, "ZLIB", 4))
				return -ENOEXEC;
			size = be64((const unsigned char *)data->d_buf + 4);
		}
		if (size > DW_FILE_MAX || sc->bytes + size > DW_FILE_MAX)
			return -EFBIG;
		sc->bytes += size;
		if (!strcmp(name, ".gnu_debugaltlink")) {
			const char *b, *nul;

			data = elf_getdata(scn, NULL);
			if (!data || !data->d_buf || !data->d_size)
				return -ENOEXEC;
			b = data->d_buf;
			nul = memchr(b, '\0', data->d_size);
			if (!nul || nul == b)
				return -ENOEXEC;
			sc->altname = b;
			sc->alt_id = (const unsigned char *)nul + 1;
			sc->alt_id_len = data->d_size - (size_t)(nul + 1 - b);
			if (sc->alt_id_len < 3 || sc->alt_id_len > 64)
				return -ENOEXEC;
		}
	}
	return 0;
}

/* What dwline__new found: the file with the DWARF (its path inside the
 * root) and the supplementary file it names, if any. */
struct dw_found {
	char path[PATH_MAX];
	char altname[PATH_MAX];		/* "" when it names none */
	char alt_id[2 * 64 + 1];	/* the supplementary file's build id, hex */
};

/* The supplementary file ELF (FSIZE bytes) names in .gnu_debugaltlink
 * into F: 0, or -ENOEXEC when that section is malformed. */
static int read_altlink(Elf *elf, uint64_t fsize, struct dw_found *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, i, len;
	const char *b, *nul;
	GElf_Shdr sh;
	Elf_Data *data;

	f->altname[0] = f->alt_id[0] = '\0';
	if (section_names(elf, fsize, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debugaltlink"))
			continue;
		if (sh.sh_size > DW_ALTLINK_MAX || sh.sh_offset > fsize ||
		    sh.sh_size > fsize - sh.sh_offset || !(data = elf_getdata(scn, NULL)) ||
		    !data->d_buf || !data->d_size)
			return -ENOEXEC;
		b = data->d_buf;
		nul = memchr(b, '\0', data->d_size);
		len = nul ? data->d_size - (size_t)(nul + 1 - b) : 0;
		if (!nul || nul == b || (size_t)(nul - b) >= sizeof(f->altname) || len < 3 ||
		    len > 64)
			return -ENOEXEC;
		memcpy(f->altname, b, (size_t)(nul - b) + 1);
		for (i = 0; i < len; i++)
			sprintf(f->alt_id + 2 * i, "%02x", (unsigned char)nul[1 + i]);
		return 0;
	}
	return 0;
}

/* Whether ELF (FSIZE bytes) has line tables; F gets what it links to. */
static bool has_dwarf(Elf *elf, uint64_t fsize, struct dw_found *f)
{
	struct dw_scan sc;

	return !scan_sections(elf, fsize, false, &sc) && sc.line && sc.info &&
	       !read_altlink(elf, fsize, f);
}

/* elfsym_debug_fn: a debug file with line tables. CTX (a dw_found) gets
 * its path and what it links to. */
static int take_dwarf(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx)
{
	struct dw_found *f = ctx;

	if (!has_dwarf(elf, fsize, f))
		return -ENOENT;
	snprintf(f->path, sizeof(f->path), "%s", path);
	return 0;
}

static bool fd_has_dwarf(int fd, struct dw_found *f)
{
	uint64_t fsize;
	Elf *elf = elfsym__begin(fd, &fsize);
	bool ok;

	if (!elf)
		return false;
	ok = has_dwarf(elf, fsize, f);
	elf_end(elf);
	return ok;
}

/* Whether the ELF file at FD has the build id ID (hex). */
static bool fd_has_build_id(int fd, const char *id)
{
	char got[2 * 64 + 1];
	uint64_t fsize;
	Elf *elf = elfsym__begin(fd, &fsize);
	bool ok;

	if (!elf)
		return false;
	ok = !elfsym__elf_build_id(elf, fsize, got, sizeof(got)) && !strcmp(got, id);
	elf_end(elf);
	return ok;
}

/* The dwz supplementary file F names, inside ROOTFD: by its build id under
 * /usr/lib/debug/.build-id, else by its name (absolute: in the root;
 * relative: beside the file that names it). Its descriptor, or -1. Found
 * now, while the process whose root this is lives: a load later looks in
 * no root. */
static int find_alt(int rootfd, const struct dw_found *f)
{
	char path[2 * PATH_MAX + 64];
	const char *slash;
	int k, fd;

	if (rootfd < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		if (k == 0) {
			snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 f->alt_id, f->alt_id + 2);
		} else if (f->altname[0] == '/') {
			snprintf(path, sizeof(path), "%s", f->altname);
		} else {
			slash = strrchr(f->path, '/');
			snprintf(path, sizeof(path), "%.*s/%s", slash ? (int)(slash - f->path) : 0,
				 f->path, f->altname);
		}
		fd = appfile__open_in_root(rootfd, path, 0, NULL);
		if (fd < 0)
			continue;
		if (fd_has_build_id(fd, f->alt_id))
			return fd;
		close(fd);
	}
	return -1;
}

struct dwline *dwline__new(int fd, int rootfd, const char *rel, const struct elf_syms *syms,
			   const struct budget *time, dwline_intern_fn intern, void *ctx)
{
	struct dw_found *f = calloc(1, sizeof(*f));
	struct dwline *d = NULL;
	int dfd = -1, alt = -1, err = -ENOMEM;

	if (!f)
		return NULL;
	if (fds_held + 2 > DW_MAX_FDS) {
		err = -EMFILE;
		goto fail;
	}
	if (fd_has_dwarf(fd, f)) {
		dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (dfd < 0) {
			err = -errno;
			goto fail;
		}
		snprintf(f->path, sizeof(f->path), "%s", rel ? rel : "");
	} else {
		dfd = elfsym__find_debug_in(rootfd, rel, syms, take_dwarf, f, time);
		if (dfd < 0) {
			err = dfd == -ETIME ? -ETIME : -ENOENT;
			goto fail;
		}
	}
	if (f->altname[0])
		alt = find_alt(rootfd, f);	/* -1: said when the lines are asked for */
	if (nall == all_cap) {
		size_t ncap = all_cap ? all_cap * 2 : 64;
		struct dwline **n = realloc(all, ncap * sizeof(*n));

		if (!n)
			goto fail;
		all = n;
		all_cap = ncap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->fd = dfd;
	d->alt_fd = alt;
	d->path = strdup(f->path);
	d->intern = intern;
	d->ictx = ctx;
	if (!d->path)
		goto fail;
	all[nall++] = d;
	fds_held += 1 + (alt >= 0);
	free(f);
	return d;
fail:
	if (d)
		free(d->path);
	free(d);
	free(f);
	if (dfd >= 0)
		close(dfd);
	if (alt >= 0)
		close(alt);
	errno = -err;
	return NULL;
}

static void unload(struct dwline *d)
{
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->alt)
		dwarf_end(d->alt);
	if (d->elf)
		elf_end(d->elf);
	if (d->alt_elf)
		elf_end(d->alt_elf);
	held -= d->bytes;
	d->dbg = d->alt = NULL;
	d->elf = d->alt_elf = NULL;
	d->line_scn = NULL;
	d->bytes = 0;
	free(d->ranges);
	free(d->units);
	d->ranges = NULL;
	d->units = NULL;
	d->nranges = d->nunits = 0;
}

void dwline__release(struct dwline *d)
{
	if (!d || d->fd < 0)
		return;
	unload(d);
	d->failed = true;
	close(d->fd);
	d->fd = -1;
	fds_held--;
	if (d->alt_fd >= 0) {
		close(d->alt_fd);
		d->alt_fd = -1;
		fds_held--;
	}
}

void dwline__free(struct dwline *d)
{
	size_t i;

	if (!d)
		return;
	dwline__release(d);
	for (i = 0; i < nall; i++)
		if (all[i] == d) {
			all[i] = all[--nall];
			break;
		}
	if (!nall) {
		free(all);
		all = NULL;
		all_cap = 0;
	}
	for (i = 0; i < d->hits_cap; i++)
		free(d->hits[i].lines);
	free(d->hits);
	free(d->path);
	free(d);
}

/* Make room for BYTES more: unload the least recently used others. */
static bool make_room(const struct dwline *self, uint64_t bytes)
{
	while (held + bytes > budget) {
		struct dwline *lru = NULL;
		size_t i;

		for (i = 0; i < nall; i++)
			if (all[i] != self && all[i]->dbg && (!lru || all[i]->used < lru->used))
				lru = all[i];
		if (!lru)
			return false;
		unload(lru);
	}
	return true;
}

/* Open one debug file for libdw: checked, read into memory, descriptor
 * done. *BYTES gets what it holds. */
static Dwarf *begin_dwarf(int fd, Elf **elfp, struct dw_scan *sc, const struct dwline *self,
			  int *err)
{
	uint64_t fsize;
	Dwarf *dbg;
	Elf *elf;

	*elfp = NULL;
	elf = elfsym__begin(fd, &fsize);
	if (!elf) {
		*err = -ENOEXEC;
		return NULL;
	}
	*err = scan_sections(elf, fsize, true, sc);
	if (!*err && !make_room(self, sc->bytes))
		*err = -EFBIG;
	if (*err) {
		elf_end(elf);
		return NULL;
	}
	dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dbg) {
		elf_end(elf);
		*err = -ENOEXEC;
		return NULL;
	}
	/* libdw has read every debug section: nothing more from the file */
	elf_cntl(elf, ELF_C_FDDONE);
	*elfp = elf;
	return dbg;
}

/* The dwz supplementary file SC names, found the safe way (dwline.h). */
static int load_alt(struct dwline *d, const struct dw_scan *sc)
{
	char id[2 * 64 + 1];
	struct dw_scan asc;
	size_t i;
	int err = -ENOENT;

	for (i = 0; i < sc->alt_id_len; i++)
		sprintf(id + 2 * i, "%02x", sc->alt_id[i]);
	/* the file found with the DWARF file, if it still is the one named */
	if (d->alt_fd < 0 || !fd_has_build_id(d->alt_fd, id))
		return -ENOENT;
	d->alt = begin_dwarf(d->alt_fd, &d->alt_elf, &asc, d, &err);
	if (d->alt && asc.altname) {
		/* a supplementary file of its own: libdw would look */
		dwarf_end(d->alt);
		elf_end(d->alt_elf);
		d->alt = NULL;
		d->alt_elf = NULL;
		err = -ENOEXEC;
	}
	if (!d->alt)
		return err;
	d->bytes += asc.bytes;
	held += asc.bytes;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct dw_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The units with code and their address ranges, within the time TIME
 * gives (-ETIME). */
static int index_units(struct dwline *d, const struct budget *time)
{
	Dwarf_CU *cu = NULL, *next;
	size_t ucap = 0, rcap = 0;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;

	while (dwarf_get_units(d->dbg, cu, &next, &version, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (d->nunits % 256 == 255 && budget__over(time))
			return -ETIME;
		cu = next;
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		if (d->nunits >= DW_MAX_UNITS)
			break;
		if (d->nunits == ucap) {
			size_t ncap = ucap ? ucap * 2 : 64;
			struct dw_unit *n = realloc(d->units, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			d->units = n;
			ucap = ncap;
		}
		d->units[d->nunits] = (struct dw_unit){ .die = cudie,
							 .skeleton = type == DW_UT_skeleton };
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0 &&
		       d->nranges < DW_MAX_RANGES) {
			if (hi <= lo)
				continue;
			if (d->nranges == rcap) {
				size_t ncap = rcap ? rcap * 2 : 256;
				struct dw_range *n = realloc(d->ranges, ncap * sizeof(*n));

				if (!n)
					return -ENOMEM;
				d->ranges = n;
				rcap = ncap;
			}
			d->ranges[d->nranges++] = (struct dw_range){ lo, hi, (uint32_t)d->nunits };
		}
		d->nunits++;
	}
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_range);
	return 0;
}

static int load(struct dwline *d)
{
	struct dw_scan sc = { 0 };
	char *path = NULL, *alt = NULL;
	struct budget time;
	int err;

	budget__start(&time, DW_LOAD_NS);
	d->dbg = begin_dwarf(d->fd, &d->elf, &sc, d, &err);
	if (!d->dbg)
		goto fail;
	d->bytes = sc.bytes;
	held += sc.bytes;
	d->line_scn = sc.line_scn;
	if (sc.altname) {
		/* the name lives in the section data unload frees */
		alt = escape__dup(sc.altname, strlen(sc.altname), 0);
		err = load_alt(d, &sc);
		if (err)
			goto fail;
		dwarf_setalt(d->dbg, d->alt);
	}
	err = index_units(d, &time);
	if (err)
		goto fail;
	free(alt);
	return 0;
fail:
	unload(d);
	d->failed = true;
	if (!d->warned) {
		/* the paths are the app's: escaped for the terminal */
		d->warned = true;
		path = escape__dup(d->path, strlen(d->path), 0);
		if (err == -EFBIG)
			p_warn("no source lines from %s: its DWARF is over %llu MiB, or all loaded "
			       "DWARF would be over %llu MiB", path ? path : "?",
			       (unsigned long long)(DW_FILE_MAX >> 20),
			       (unsigned long long)(budget >> 20));
		else if (alt && err == -ENOENT)
			p_warn("no source lines from %s: its supplementary debug file %s (dwz) was "
			       "not found", path ? path : "?", alt);
		else if (err == -ETIME)
			p_warn("no source lines from %s: its DWARF took over %llu s to index%s",
			       path ? path : "?", (unsigned long long)(DW_LOAD_NS / 1000000000ull),
			       run__stop ? " (or the time left after the stop signal)" : "");
		else
			p_debug("no source lines from %s: %s", path ? path : "?", strerror(-err));
		free(path);
	}
	free(alt);
	return err == -ENOMEM ? err : 0;
}

/* The unit whose ranges hold VADDR, or NULL. */
static struct dw_unit *find_unit(const struct dwline *d, uint64_t vaddr)
{
	size_t lo = 0, hi = d->nranges, i, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest or overlap: look back a little */
	for (i = lo, k = 0; i-- > 0 && k < 16; k++)
		if (vaddr < d->ranges[i].hi)
			return &d->units[d->ranges[i].unit];
	return NULL;
}

/* Whether the unit's line program is small enough to be read. */
static bool lines_fit(struct dwline *d, struct dw_unit *u)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	Elf_Data *data;
	uint64_t len;
	const unsigned char *p;

	if (u->lines_ok)
		return u->lines_ok > 0;
	u->lines_ok = -1;
	if (!d->line_scn || !dwarf_attr(&u->die, DW_AT_stmt_list, &a) ||
	    dwarf_formudata(&a, &off))
		return false;
	data = elf_getdata(d->line_scn, NULL);
	if (!data || !data->d_buf || off > data->d_size || data->d_size - off < 4)
		return false;
	p = (const unsigned char *)data->d_buf + off;
	len = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
	if (len == 0xffffffffu) {
		if (data->d_size - off < 12)
			return false;
		len = 0;
		for (int i = 11; i >= 4; i--)
			len = len << 8 | p[i];
	}
	if (len > DW_LINE_PROG_MAX) {
		p_debug("a unit's line program of %llu bytes is over %u: left out",
			(unsigned long long)len, DW_LINE_PROG_MAX);
		return false;
	}
	u->lines_ok = 1;
	return true;
}

/* Intern S, cut to DW_NAME_MAX bytes at a character boundary. */
static const char *keep(struct dwline *d, const char *s)
{
	char cut[UTF8_CUT_ROOM(DW_NAME_MAX)];

	return d->intern(d->ictx, utf8_cut(s ? s : "", DW_NAME_MAX, cut));
}

/* The name of an inlined function: its demangled linkage name, else its
 * name. NULL when out of memory. */
static const char *func_name(struct dwline *d, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *ln, *name;
	char *dm;

	ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!ln)
		ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (ln && (dm = demangle__name(ln))) {
		name = keep(d, dm);
		free(dm);
		return name;
	}
	if (!ln)
		ln = dwarf_diename(die);
	return keep(d, ln ? ln : "[inlined]");
}

/* The file a DW_AT_call_file of a DIE in unit U names, "" when none. */
static const char *call_file(struct dwline *d, struct dw_unit *u, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;
	const char *f = NULL;

	if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &idx) == 0 &&
	    dwarf_getsrcfiles(&u->die, &files, &nfiles) == 0 && idx < nfiles)
		f = dwarf_filesrc(files, idx, NULL, NULL);
	return keep(d, f ? f : "");
}

static uint32_t as_line(Dwarf_Die *die, unsigned int attr)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, attr, &a) || dwarf_formudata(&a, &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* Work out the lines of VADDR into OUT (FRAME_MAX_LINES). Return how many,
 * or -ENOMEM. */
static int resolve(struct dwline *d, uint64_t vaddr, struct frame_line *out)
{
	struct frame_line all_lines[64];
	struct dw_unit *u = find_unit(d, vaddr);
	const char *file = "";
	Dwarf_Die *scopes = NULL;
	Dwarf_Line *l;
	int nscopes = 0, i, n = 0, line = 0;
	bool own = false;

	if (!u || !lines_fit(d, u))
		return 0;
	l = dwarf_getsrc_die(&u->die, vaddr);
	if (l) {
		file = dwarf_linesrc(l, NULL, NULL);
		if (dwarf_lineno(l, &line) || line < 0)
			line = 0;
	}
	file = keep(d, file);
	if (!file)
		return -ENOMEM;
	if (!u->skeleton)
		nscopes = dwarf_getscopes(&u->die, vaddr, &scopes);
	for (i = 0; i < nscopes && n < (int)ARRAY_SIZE(all_lines); i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s), decl = 0;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (dwarf_decl_line(s, &decl) || decl < 0)
			decl = 0;
		all_lines[n] = (struct frame_line){ NULL, file, (uint32_t)line, (uint32_t)decl };
		if (tag == DW_TAG_subprogram) {
			n++;
			own = true;
			break;
		}
		all_lines[n].function = func_name(d, s);
		if (!all_lines[n].function) {
			free(scopes);
			return -ENOMEM;
		}
		n++;
		/* the next one out is where this one was inlined */
		file = call_file(d, u, s);
		if (!file) {
			free(scopes);
			return -ENOMEM;
		}
		line = (int)as_line(s, DW_AT_call_line);
	}
	free(scopes);
	if (!own) {
		if (n == (int)ARRAY_SIZE(all_lines))
			n--;
		if (!n && !l)
			return 0;
		all_lines[n++] = (struct frame_line){ NULL, file, (uint32_t)line, 0 };
	}
	/* too deep: keep the innermost ones and the frame's own function */
	if (n > FRAME_MAX_LINES) {
		all_lines[FRAME_MAX_LINES - 1] = all_lines[n - 1];
		n = FRAME_MAX_LINES;
	}
	memcpy(out, all_lines, (size_t)n * sizeof(*out));
	return n;
}

static struct dw_hit *find_hit(struct dwline *d, uint64_t vaddr)
{
	size_t i;

	if (!d->hits_cap)
		return NULL;
	for (i = hash__u64(vaddr) & (d->hits_cap - 1); d->hits[i].used;
	     i = (i + 1) & (d->hits_cap - 1))
		if (d->hits[i].vaddr == vaddr)
			return &d->hits[i];
	return NULL;
}

static struct dw_hit *add_hit(struct dwline *d, uint64_t vaddr)
{
	size_t i, j;

	if ((d->nhits + 1) * 2 > d->hits_cap) {
		size_t ncap = d->hits_cap ? d->hits_cap * 2 : 256;
		struct dw_hit *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (j = 0; j < d->hits_cap; j++) {
			if (!d->hits[j].used)
				continue;
			for (i = hash__u64(d->hits[j].vaddr) & (ncap - 1); n[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = d->hits[j];
		}
		free(d->hits);
		d->hits = n;
		d->hits_cap = ncap;
	}
	for (i = hash__u64(vaddr) & (d->hits_cap - 1); d->hits[i].used;
	     i = (i + 1) & (d->hits_cap - 1))
		;
	d->hits[i] = (struct dw_hit){ .vaddr = vaddr, .used = true };
	d->nhits++;
	return &d->hits[i];
}

int dwline__lookup(struct dwline *d, uint64_t vaddr, const struct frame_line **out)
{
	struct frame_line lines[FRAME_MAX_LINES];
	struct dw_hit *h = find_hit(d, vaddr);
	struct budget after_stop;
	int n = 0, err;

	*out = NULL;
	if (h) {
		*out = h->lines;
		return (int)h->n;
	}
	/* once a stop is asked, the lines still to look up get its time */
	budget__start(&after_stop, 0);
	if (budget__over(&after_stop)) {
		if (!left_out++)
			p_warn("source lines of the frames still to name left out: over the "
			       "%llu s a stop signal leaves them", (unsigned long long)
			       (BUDGET_STOP_NS / 1000000000ull));
		return 0;
	}
	d->used = ++tick;
	if (!d->dbg && !d->failed) {
		err = load(d);
		if (err)
			return err;
	}
	if (d->dbg) {
		n = resolve(d, vaddr, lines);
		if (n < 0)
			return n;
	}
	h = add_hit(d, vaddr);
	if (!h)
		return -ENOMEM;
	if (n) {
		h->lines = malloc((size_t)n * sizeof(*h->lines));
		if (!h->lines)
			return -ENOMEM;
		memcpy(h->lines, lines, (size_t)n * sizeof(*h->lines));
		h->n = (uint32_t)n;
	}
	*out = h->lines;
	return n;
}
