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
/* At most this much of a perf map is read (256 MiB unless set: 0 restores
 * the default): the newest part of a longer one, from its first whole line
 * on; perfmap__skipped says how much was left out. Maps are files the
 * application writes, so the bound is what keeps a sparse or endless file
 * from costing us its size. */
#define PERFMAP_DEFAULT_MAX (256u << 20)
void perfmap__set_max(size_t max);
size_t perfmap__max(void);

/* Read and parse PATH (opened with appfile__open: regular files only, a
 * /proc/PID/root path resolved inside that root). NULL with errno set on
 * failure. */
struct perfmap *perfmap__load(const char *path);
/* Read and parse PATH while a runtime may be writing it: a read that the
 * file changed under (truncated, rewritten in place) is retried, and a last
 * line without its newline is left out (half written). *VERSION (if not
 * NULL) gets the stat of the version read. NULL with errno set (EAGAIN:
 * the file kept changing). */
struct stat;
struct perfmap *perfmap__load_live(const char *path, struct stat *version);
/* The same over FD, a regular file opened by the caller (e.g. with
 * proc__perfmap_open); FD stays open. */
struct perfmap *perfmap__load_live_fd(int fd, struct stat *version);
void perfmap__free(struct perfmap *pm);

/* The name of the entry holding ADDR (the latest one when several do), owned
 * by the perfmap; NULL when none. *start gets the entry's start. */
const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *start);
size_t perfmap__count(const struct perfmap *pm);
size_t perfmap__bad_lines(const struct perfmap *pm);
/* Bytes parsed: a later load can tell whether the file grew. */
size_t perfmap__size(const struct perfmap *pm);
/* Bytes at the start of the file left out because it was over the cap. */
size_t perfmap__skipped(const struct perfmap *pm);

#endif
