/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Perf maps (/tmp/perf-PID.map) written by JIT runtimes: "START SIZE NAME"
 * a line, hexadecimal with or without 0x. Parsed leniently: CRLF, names with
 * spaces, junk lines counted and skipped; where ranges overlap the later
 * line wins (a runtime re-JITs code at a reused address). */
#ifndef SIDESCOPE_PERFMAP_H
#define SIDESCOPE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap;

/* Parse a buffer; the perfmap takes ownership of BUF (malloc'd, LEN bytes,
 * NUL at BUF[LEN]) and modifies it. Return NULL with errno set (ENOMEM). */
struct perfmap *perfmap__parse(char *buf, size_t len);
/* Read and parse PATH. NULL with errno set on failure. */
struct perfmap *perfmap__load(const char *path);
/* Read and parse PATH while a runtime may be writing it: a read that the
 * file changed under (truncated, rewritten in place) is retried, and a last
 * line without its newline is left out (half written). *VERSION (if not
 * NULL) gets the stat of the version read. NULL with errno set (EAGAIN:
 * the file kept changing). */
struct stat;
struct perfmap *perfmap__load_live(const char *path, struct stat *version);
void perfmap__free(struct perfmap *pm);

/* The name of the entry holding ADDR (the latest one when several do), owned
 * by the perfmap; NULL when none. *start gets the entry's start. */
const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *start);
size_t perfmap__count(const struct perfmap *pm);
size_t perfmap__bad_lines(const struct perfmap *pm);
/* Bytes parsed: a later load can tell whether the file grew. */
size_t perfmap__size(const struct perfmap *pm);

#endif
