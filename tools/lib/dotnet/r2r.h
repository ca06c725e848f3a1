/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* .NET ReadyToRun images: method name <-> native code, read from the file.
 *
 * Reads the PE headers and section table, the CLI header, the ReadyToRun
 * header and its RuntimeFunctions, MethodDefEntryPoints, InstanceEntryPoints
 * and HotColdMap sections, and the ECMA-335 metadata (#~ tables, #Strings,
 * #Blob) to name every method that has precompiled code.
 *
 * Names: "Namespace.Type.Method", nested types joined with '+' as .NET's own
 * perf maps and reflection write them ("SampleApp.EchoProvider+Inner.Depth"),
 * generic type names keep their arity ("List`1"), and generic instantiations
 * follow in brackets as in .NET perf maps:
 *   "System.Collections.Generic.List`1[System.__Canon].Add"
 *   "SampleApp.Generics.Identity[System.Int32]"
 * A type that lives in another module is written "[module N]" (its name is
 * in that module's metadata). Parameter lists come separately (signature).
 *
 * Every read is bounds checked: a truncated or corrupt file gives ENOEXEC
 * and a message in the caller's struct err, never a crash. */
#ifndef SIDESCOPE_R2R_H
#define SIDESCOPE_R2R_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct r2r_image;

struct r2r_method_info {
	const char *name;	/* owned by the image */
	const char *signature;	/* "(System.String,System.Int32)"; owned */
	uint32_t token;		/* MethodDef token (0x06xxxxxx), 0 if unknown */
	uint32_t rva;		/* entry point: start of the main body */
	uint64_t file_offset;	/* where rva lives in the file (uprobe offset) */
	uint32_t size;		/* size of the main body in bytes */
	uint32_t nbodies;	/* runtime functions: main body + funclets + cold */
	bool instantiation;	/* a generic instantiation (InstanceEntryPoints) */
	bool is_static;		/* false: arg1 is 'this' (or unknown token) */
};

/* Open and index PATH (opened with appfile__open and read into memory, at
 * most R2R_FILE_MAX bytes: the app's file is never mapped, so truncating it
 * cannot raise SIGBUS here). Return NULL with errno set: ENOENT/EACCES
 * (open), ENOEXEC (not a regular file, not PE, not .NET, corrupt, too
 * large, IL only, composite component), EFBIG (more names than a real
 * assembly has), ENOMEM; E (may be NULL) says why in one line, and is
 * cleared ("") on success. */
#define R2R_FILE_MAX (1ull << 30)
#define R2R_FILE_MAX_TEXT "1 GiB"
struct r2r_image *r2r__open(const char *path, struct err *e);
/* Drop the file's bytes once indexed: lookups by RVA or file offset and
 * r2r__method_at keep working; metadata queries (r2r__in_metadata, a
 * method's static flag) do not. */
void r2r__release_file(struct r2r_image *img);
void r2r__free(struct r2r_image *img);

/* ReadyToRun header version, e.g. 9.2; machine as in the COFF header with
 * the OS bits removed (0x8664 x64, 0xaa64 arm64). */
void r2r__version(const struct r2r_image *img, unsigned *major, unsigned *minor);
unsigned r2r__machine(const struct r2r_image *img);

/* Methods with code: count and the i-th (sorted by RVA). Return 0 or
 * -ERANGE. */
size_t r2r__method_count(const struct r2r_image *img);
int r2r__method_at(const struct r2r_image *img, size_t i, struct r2r_method_info *out);

/* Find the methods named NAME: the full name ('+' and '.' both accepted
 * between nested types), with or without the generic instantiation; if no
 * full name matches, names ending in "." NAME (e.g. "EchoProvider.Echo").
 * NAME may end in a parameter list "(System.String)" to pick one overload.
 * Fill up to MAX entries of OUT; return how many match in all. */
size_t r2r__find_method(const struct r2r_image *img, const char *name,
			struct r2r_method_info *out, size_t max);

/* Whether the metadata has a method named NAME (matched as by
 * r2r__find_method), with or without precompiled code. */
bool r2r__in_metadata(const struct r2r_image *img, const char *name);

/* The method whose code contains RVA (main body, funclet or cold part).
 * *name gets its name (owned by the image); *start and *size the code range
 * (runtime function) containing RVA, which for a funclet is the funclet.
 * Any out pointer may be NULL. Return 0, or -ENOENT when no code holds RVA. */
int r2r__lookup_rva(const struct r2r_image *img, uint32_t rva, const char **name,
		    uint32_t *start, uint32_t *size);

/* File offset <-> RVA through the section table. Return 0 or -ENOENT. */
int r2r__rva_from_file_offset(const struct r2r_image *img, uint64_t off, uint32_t *rva);
int r2r__file_offset_from_rva(const struct r2r_image *img, uint32_t rva, uint64_t *off);

/* Runtime functions (code ranges): count and the i-th [begin, end). */
size_t r2r__code_range_count(const struct r2r_image *img);
int r2r__code_range_at(const struct r2r_image *img, size_t i, uint32_t *begin, uint32_t *end);

/* The method at file offset OFF: for a sampled address in a file-backed
 * mapping of the image, OFF = addr - mapping start + mapping file offset
 * (/proc/PID/maps). Like r2r__lookup_rva, with *start as an RVA. */
int r2r__lookup_file_offset(const struct r2r_image *img, uint64_t off, const char **name,
			    uint32_t *start, uint32_t *size);

/* Images opened once per file identity (device, inode, size, mtime).
 * Failures are remembered too, so an IL-only .dll costs one attempt. */
struct r2r_cache;

struct r2r_cache *r2r_cache__new(void);
void r2r_cache__free(struct r2r_cache *c);
/* The image at PATH (e.g. "/proc/PID/root/app/App.dll"), opened on first
 * use; owned by the cache. NULL with errno set when it cannot be read or
 * is not ReadyToRun; *why (if not NULL) gets the reason, owned by the
 * cache. */
struct r2r_image *r2r_cache__get(struct r2r_cache *c, const char *path, const char **why);

/* Adapters with the signatures of the profiler's PE hook (struct
 * pe_resolver in symbolize.h: open, lookup, close). lookup writes the
 * method name at FILE_OFFSET into NAME; 0 or -ENOENT. */
void *r2r__pe_open(const char *path);
int r2r__pe_lookup(void *image, uint64_t file_offset, char *name, size_t size);
void r2r__pe_close(void *image);
/* The three in the profiler's struct pe_resolver (sym/symbolize.h). */
struct pe_resolver;
extern const struct pe_resolver r2r__pe_resolver;

/* Adapter with the signature of the uprobe target resolver's PE hook
 * (uptarget_pe_resolver_fn): METHOD in the image at PATH -> *FILE_OFFSET of
 * its code. Return 0 (what was found, in E); -ENOENT (no such method with
 * code), -EEXIST (several: listed in E), -ENOEXEC (not ReadyToRun: why in
 * E) or another negative errno. E may be NULL. */
int r2r__uprobe_resolve(const char *path, const char *method, uint64_t *file_offset,
			struct err *e);

#endif
