/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stack addresses -> named frames, for the processes of a capture.
 *
 * Each process's /proc/PID/maps is captured while it lives (and re-read at
 * every symbolizer__watch, or by symbolizer__revisit when an address falls
 * outside them), so a process that exits mid-capture is still symbolized.
 * File-backed addresses: ELF symbols (tools/lib/sym/elfsym) of the file opened
 * through /proc/PID/root/PATH, else /proc/PID/map_files/...; files are kept
 * by identity and view, within budgets of memory and time, and their tables
 * freed once no process maps them (sym/symfile.h). PE images (.dll,
 * .exe: .NET ReadyToRun) go to the PE resolver when one is set. Anonymous
 * memory: the process's perf map (proc__perfmap_path), re-read when it
 * changed (grown, rewritten, replaced; a torn read is retried and a half
 * written last line ignored), kept when deleted, dropped when the PID is
 * reused (start time). Kernel: /proc/kallsyms.
 * An address in a known file without a symbol becomes "file+0xOFFSET". */
#ifndef SIDESCOPE_SYMBOLIZE_H
#define SIDESCOPE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sym/frame.h"

struct sym_frame {
	const char *name;	/* owned by the symbolizer, valid until __free */
	enum frame_kind kind;
	const char *module;	/* mapping file, "[kernel.kallsyms]", "[jit]", "" */
	const char *build_id;	/* lowercase hex, "" when unknown */
	uint64_t addr;		/* the address looked up */
	uint64_t map_start;	/* the mapping that holds it (0s: none known) */
	uint64_t map_limit;
	uint64_t map_offset;	/* file offset of map_start */
	struct frame_lines_ref lines;	/* its DWARF source lines, looked up
					 * when asked (frame.h); valid until
					 * symbolizer__free */
	bool unresolved;	/* NAME is "file+0xOFF" for an ELF file without a
				 * symbol there: a reader with its debug info may
				 * do better */
};

/* symbolizer__user_at: IP is in a caller's frame (its return address - 1):
 * an address outside code there is a broken frame-pointer walk, named
 * "[not code: MODULE]", not code (a sampled address is code: the maps may
 * be older than a JIT's mprotect). */
#define SYM_CALLER 0x1u

/* Hook for PE/ReadyToRun images (issue 10, tools/lib/dotnet/r2r). The symbolizer
 * calls open() once per image identity with a path it can read (through
 * /proc/PID/root or map_files), then lookup() with the file offset of each
 * sampled address in that image. lookup() writes a NUL-terminated method
 * name ("Namespace.Type.Method") into NAME and returns 0, or returns
 * -ENOENT when no method covers the offset. */
struct pe_resolver {
	void *(*open)(const char *path);	/* NULL: not a usable image */
	int (*lookup)(void *image, uint64_t file_offset, char *name, size_t size);
	void (*close)(void *image);
};

struct symbolizer_stats {
	size_t processes;	/* ever watched */
	size_t tracked;		/* held now */
	size_t evicted;		/* freed by symbolizer__sweep */
	size_t files;		/* distinct files opened */
	size_t files_waiting;	/* of them, symbols not read: no frame fell
				 * in them yet (libraries mapped, not run) */
	size_t perfmap_bad_lines;
	size_t perfmap_reloads;
	size_t perfmap_capped;	/* maps over perfmap__max(), read in part */
	size_t pid_reuse;
	size_t unknown;		/* frames left "[unknown]" */
	size_t files_denied;	/* binaries unreadable: EACCES/EPERM */
	size_t files_evicted;	/* symbol tables freed: no process mapped the file */
	size_t files_over_memory;	/* left out: a memory budget (sym/symfile.h) */
	size_t files_over_time;	/* left out: the time budget */
	uint64_t tables_bytes;	/* symbol tables held now, in bytes */
	uint64_t tables_peak;	/* and at the most */
	int kallsyms_err;	/* 0, or why kernel symbols are missing */
};

struct symbolizer;

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *sz);
/* Use R for PE images; R must outlive the symbolizer. NULL: none. */
void symbolizer__set_pe_resolver(struct symbolizer *sz, const struct pe_resolver *r);
struct cficache;
/* Keep ELF symbol tables in C (sym/cficache blobs, by file identity) and
 * take them from there: a file seen by an earlier capture is not read and
 * sorted again. C must outlive the symbolizer. NULL: none. */
void symbolizer__set_cache(struct symbolizer *sz, struct cficache *c);

/* Capture (or refresh) what is needed to symbolize PID later: its maps,
 * start time and perf map. Call for every process seen, while it lives.
 * Return 0, or a negative errno when PID was never readable. */
int symbolizer__watch(struct symbolizer *sz, pid_t pid);
/* Free what is held for processes that have exited (or whose PID now names
 * another process). Call once after each drain of samples: a process first
 * seen gone at one sweep is freed at the second sweep after its last use,
 * so samples still queued for it are symbolized. Strings and the file
 * cache stay (names handed out remain valid). Return how many were freed. */
size_t symbolizer__sweep(struct symbolizer *sz);
/* Like symbolizer__watch, but only while PID is still the process that
 * started at START (clock ticks, /proc/PID/stat): once another process has
 * the PID, keep what was captured and return -ESRCH. */
int symbolizer__watch_start(struct symbolizer *sz, pid_t pid, uint64_t start);
/* Before a drain's stacks of PID are symbolized: watch PID if it never was
 * (or was seen gone: its PID may name a new process), re-read its maps if
 * they do not hold one of the N user addresses IPS (mapped since it was
 * watched: dlopen, JIT code), at most once between two sweeps, and re-read
 * its perf map if that changed. START as for symbolizer__watch_start (0:
 * any). Cheap when nothing changed: no /proc read. Return as
 * symbolizer__watch. */
/* How many frames of PID in code outside files its perf map did not name
 * (JIT code written since the map), in all so far: a caller that can have
 * the map written again (rt/rtnames) compares it with what it saw last. */
uint64_t symbolizer__jit_misses(struct symbolizer *sz, pid_t pid);
int symbolizer__revisit(struct symbolizer *sz, pid_t pid, uint64_t start,
			const uint64_t *ips, size_t n);
/* A number that changes whenever what names PID's frames may have (the
 * process watched again, its maps or perf map read again): the same
 * address of PID at the same generation gets the same frame. 0: PID not
 * known. */
uint64_t symbolizer__generation(struct symbolizer *sz, pid_t pid);
/* Name of PID's process (comm) as last seen, or NULL. */
const char *symbolizer__comm(struct symbolizer *sz, pid_t pid);

/* Symbolize one user-space address of PID / one kernel address. Always
 * fill OUT (with "[unknown]" at worst); return 0 or -ENOMEM. The vDSO is
 * named from this process's own (the same kernel's) when the target's is
 * the same size, else from a copy of the target's. FLAGS: SYM_CALLER. */
int symbolizer__user_at(struct symbolizer *sz, pid_t pid, uint64_t ip, unsigned int flags,
			struct sym_frame *out);
/* symbolizer__user_at with no flags. */
int symbolizer__user(struct symbolizer *sz, pid_t pid, uint64_t ip, struct sym_frame *out);
int symbolizer__kernel(struct symbolizer *sz, uint64_t ip, struct sym_frame *out);

void symbolizer__stats(const struct symbolizer *sz, struct symbolizer_stats *st);

/* Intern a string in the symbolizer (stable pointer until __free). */
const char *symbolizer__intern(struct symbolizer *sz, const char *s);

#endif
