/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ELF symbol tables through libelf: address -> name for the profiler,
 * name -> file offset for uprobes. One elf_syms per file; callers cache them
 * by file identity (device, inode, size, change time), never by build id
 * alone: two files with one build id may still differ (a copy with its
 * names changed). */
#ifndef SIDESCOPE_ELFSYM_H
#define SIDESCOPE_ELFSYM_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_syms;

struct elf_sym_info {
	const char *name;	/* owned by the elf_syms */
	uint64_t addr;		/* st_value (virtual address in the file) */
	uint64_t size;
	uint64_t file_offset;	/* where addr lives in the file */
};

struct budget;

/* What one read of the application's files may cost (NULL: the caps of
 * elfsym.c alone): the table built at most MAX_BYTES (its records and
 * names, judged from the section headers before anything is read; 0: no
 * more than the caps), and the time TIME gives (NULL: none). */
struct elfsym_limits {
	uint64_t max_bytes;
	const struct budget *time;
};

/* The function symbols of the ELF file open at FD (.symtab, else .dynsym),
 * a regular file the caller opened with appfile; FD stays open. A file
 * without .symtab takes the table of its separate debug file, looked for
 * inside the directory ROOTFD (the root of the process that maps it, O_PATH;
 * -1: none looked for) where REL names the file ("/usr/lib/libz.so.1"): by
 * build id under /usr/lib/debug/.build-id, by .gnu_debuglink beside REL, in
 * its .debug/ and under /usr/lib/debug/DIR. A debug file is taken only when
 * it has the file's build id, or, the file having none, the CRC-32 its
 * debug link gives. Return NULL with errno: ENOEXEC (not ELF, corrupt),
 * EFBIG (its table over LIM's bytes), ETIME (LIM's time ran out), ENOMEM.
 * A debug file over LIM leaves the file's own symbols and says so in
 * elfsym__debug_left_out. */
struct elf_syms *elfsym__load_in(int fd, int rootfd, const char *rel,
				 const struct elfsym_limits *lim);
/* Load the function symbols of PATH, its debug file looked for inside
 * DEBUG_ROOT ("" or NULL: "/"; e.g. "/proc/PID/root", PATH then under it).
 * Return NULL with errno set: ENOENT, EACCES, ENOEXEC (not ELF or corrupt). */
struct elf_syms *elfsym__load(const char *path, const char *debug_root);
/* The same over FD, a regular file the caller opened (with appfile); PATH
 * names it, for the debug-file lookups beside it. FD stays open. */
struct elf_syms *elfsym__load_fd(int fd, const char *path, const char *debug_root);
/* The same over an ELF image in memory (the vDSO), LEN bytes, checked as a
 * file would be; no debug file is looked for. The image is copied. */
struct elf_syms *elfsym__load_mem(const void *image, size_t len);
void elfsym__free(struct elf_syms *s);

/* The symbols of S as one block of bytes, to keep between captures
 * (sym/cficache blobs): 0 with *BUF (free it) and *LEN, or -ENOMEM. */
int elfsym__pack(const struct elf_syms *s, void **buf, size_t *len);
/* The symbols packed in BUF (LEN bytes), checked whole (sizes, names
 * inside the block, addresses in order): NULL with errno EINVAL when they
 * are not a packed table, ENOMEM. */
struct elf_syms *elfsym__unpack(const void *buf, size_t len);
/* S holds a full symbol table (.symtab, its own or its debug file's), not
 * just the dynamic symbols: what a later look for a debug file cannot
 * better. */
bool elfsym__complete(const struct elf_syms *s);
/* 0, or why S holds only its file's own symbols though a debug file may
 * have had more: -ETIME (the search or read ran out of time), -EFBIG (the
 * debug file's table was over the bytes allowed). */
int elfsym__debug_left_out(const struct elf_syms *s);
/* The memory S holds, in bytes. */
size_t elfsym__bytes(const struct elf_syms *s);

/* libelf over FD, a regular file, read with pread (ELF_C_READ, never
 * mapped) once its ELF header's section and program header counts were
 * checked against the file's size. *FSIZE gets the size. NULL with errno
 * ENOEXEC (not ELF, or corrupt). Caller calls elf_end. */
Elf *elfsym__begin(int fd, uint64_t *fsize);
/* The GNU build id of ELF (FSIZE bytes) as lowercase hex into OUT (cut to
 * OUTSZ). Return 0, or -ENOENT (none: OUT is ""). */
int elfsym__elf_build_id(Elf *elf, uint64_t fsize, char *out, size_t outsz);

/* Called on a candidate debug file (FD, read through ELF, of FSIZE bytes,
 * at PATH inside the root) that is the file's (its build id, or the CRC of
 * its debug link): 0 takes it, anything else goes on. */
typedef int (*elfsym_debug_fn)(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx);
/* The separate debug file of the file S was read from, which REL names
 * inside the directory ROOTFD (-1: none looked for), in the places and by
 * the rules of elfsym__load_in; each candidate opened inside ROOTFD with
 * appfile, and FN decides. Return the descriptor of the file FN took
 * (caller closes it), -ETIME when TIME ran out first, or -ENOENT. */
int elfsym__find_debug_in(int rootfd, const char *rel, const struct elf_syms *s,
			  elfsym_debug_fn fn, void *ctx, const struct budget *time);
struct debuginfod;
/* After the places above, ask D (sym/debuginfod: debug files fetched by
 * build id into the sidecar's own cache) for files with a build id; NULL:
 * none. For the whole process: the capture's commands set it once. */
void elfsym__set_debuginfod(struct debuginfod *d);

/* Build id as lowercase hex ("" when the file has none). */
const char *elfsym__build_id(const struct elf_syms *s);
/* The .gnu_debuglink name of the file (not of its debug file), or NULL. */
const char *elfsym__debuglink(const struct elf_syms *s);
/* Number of function symbols loaded (0: stripped). */
size_t elfsym__count(const struct elf_syms *s);
/* ET_DYN (PIE or shared object): addresses are relative to the load base. */
bool elfsym__is_dyn(const struct elf_syms *s);

/* File offset -> ELF virtual address, through the PT_LOAD headers.
 * Return 0 or -ENOENT when no segment holds the offset. */
int elfsym__offset_to_addr(const struct elf_syms *s, uint64_t off, uint64_t *addr);
/* ELF virtual address -> file offset. */
int elfsym__addr_to_offset(const struct elf_syms *s, uint64_t addr, uint64_t *off);

/* The function containing ADDR (ELF virtual address). NULL when none; *delta
 * gets ADDR - symbol start. The name is raw (mangled). */
const struct elf_sym_info *elfsym__lookup_addr(const struct elf_syms *s, uint64_t addr,
					       uint64_t *delta);
/* Find function symbols named NAME (exact, or the demangled name, or a
 * demangled name without parameters). Fill up to MAX entries; return how
 * many match in all (may exceed MAX). */
size_t elfsym__lookup_name(const struct elf_syms *s, const char *name,
			   const struct elf_sym_info **out, size_t max);

#endif
