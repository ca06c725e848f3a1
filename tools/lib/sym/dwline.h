/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Source lines and inlined functions from DWARF, through elfutils' libdw,
 * for the profiler's pprof output. One dwline per ELF file (the caller
 * caches it with the file's symbols, by file identity).
 *
 * The files are the application's, so libdw is never handed a descriptor
 * or a path: the file is opened with appfile, read through libelf with
 * pread (ELF_C_READ: never mapped, a truncation is a read error), and its
 * debug sections' sizes (compressed ones by the size their header claims)
 * are checked against the file and the caps below before libdw reads them;
 * then libelf is told the descriptor is done, so nothing more is read from
 * the file. libdw would open files by paths the DWARF names (a dwz
 * supplementary file, split-DWARF .dwo files) in the sidecar's own root:
 * the supplementary file is found here instead (by build id or its name,
 * inside the app's root, with appfile, when the dwline is made: while the
 * process whose root that is still lives) and given to libdw, a file whose
 * supplementary file is not found gets no lines, and skeleton units (split
 * DWARF) give their line table only, without the .dwo lookups.
 *
 * Bounds: a file's debug sections at most 128 MiB (decompressed), all the
 * files' loaded DWARF at most 192 MiB (the least recently used is unloaded
 * first and loaded again when needed), 200,000 units and one unit's line
 * program at most 2 MiB, 256 descriptors held open, a file's DWARF loaded
 * and indexed in 2 s; once a stop is asked (SIGINT, SIGTERM), lookups get
 * the time sym/budget.h gives, the rest answer none (said once).
 * Answers are cached per address, so an address costs libdw once. Not
 * thread-safe. */
#ifndef SIDESCOPE_DWLINE_H
#define SIDESCOPE_DWLINE_H

#include <stddef.h>
#include <stdint.h>

#include "sym/frame.h"

struct dwline;

/* Strings handed out (file and function names) go through INTERN, which
 * returns a copy that outlives the dwline, or NULL when out of memory. */
typedef const char *(*dwline_intern_fn)(void *ctx, const char *s);

struct budget;
struct elf_syms;

/* The DWARF line tables of the ELF file open at FD (a regular file opened
 * with appfile, whose symbols SYMS are), or else of its separate debug file
 * (elfsym__find_debug_in ROOTFD, REL: inside the root of the process that
 * maps it, -1 for none, by SYMS's build id or debug link, within TIME).
 * Nothing is loaded yet: the dwline keeps a descriptor of the file that has
 * them (and of its dwz supplementary file). Return NULL with errno ENOENT
 * (no line tables), EMFILE (too many descriptors held), ETIME, ENOMEM. */
struct dwline *dwline__new(int fd, int rootfd, const char *rel, const struct elf_syms *syms,
			   const struct budget *time, dwline_intern_fn intern, void *ctx);
/* Close D's descriptors and unload its DWARF: lines looked up already are
 * still answered, no other. For making room (EMFILE) when D's file is no
 * longer mapped; D stays valid until dwline__free. NULL: nothing. */
void dwline__release(struct dwline *d);
void dwline__free(struct dwline *d);

/* The source lines of VADDR (an ELF virtual address of the file), innermost
 * first (frame.h: the functions inlined there, then the function VADDR is
 * in, whose .function is NULL), at most FRAME_MAX_LINES. *OUT stays valid
 * until dwline__free. Return how many (0: the DWARF does not cover VADDR,
 * or cannot be read), or -ENOMEM. */
int dwline__lookup(struct dwline *d, uint64_t vaddr, const struct frame_line **out);

/* Set the cap on the loaded DWARF of all files (tests); 0: the default. */
void dwline__set_budget(uint64_t bytes);

#endif
