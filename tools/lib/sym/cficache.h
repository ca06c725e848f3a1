/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unwind tables (sym/cfitab) kept on disk between captures, so that a
 * capture of a process seen before does not build its objects' tables
 * again: periodic capture profiles the same processes every few minutes.
 *
 * An entry stands for one file as the kernel identifies it: device, inode,
 * size, modification and change times. A file changed in any way gets a
 * new change time (which no one can set back), so an entry never describes
 * other contents than its own. The directory is the sidecar's (default
 * /run/sidescope/cache: its own /run in the podspecs): a real directory,
 * ours, mode 0700, opened once and used only relative to that descriptor.
 * Entries are still read as untrusted: bounded, checked whole (magic,
 * version, key, size, sorted rows, known rules), else ignored and rebuilt.
 * Writes go to a temporary name (O_EXCL, no links followed) renamed into
 * place; a full disk loses the entry, not the capture. The directory is
 * kept under a size limit, the entries used longest ago removed first.
 * Blobs (cficache__put_blob) are entries of the same kind, for other
 * things worth keeping between captures. */
#ifndef SIDESCOPE_CFICACHE_H
#define SIDESCOPE_CFICACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "sym/cfitab.h"

#define CFICACHE_DIR "/run/sidescope/cache"
#define CFICACHE_MAX_BYTES (64ull << 20)

struct cficache;

struct cficache_stats {
	size_t hits, misses, stored, bad;	/* bad: entries found unusable */
};

/* Open (creating it, mode 0700, if missing) the cache directory DIR,
 * holding at most MAX_BYTES of entries. NULL with errno, and WHY (LEN
 * bytes) saying what is wrong with it: EPERM not ours or open to others,
 * ELOOP a symbolic link, ENOTDIR not a directory, or what mkdir/open said. */
struct cficache *cficache__open(const char *dir, uint64_t max_bytes, char *why, size_t len);
void cficache__close(struct cficache *c);

/* The table of the file ST describes (an fstat of the open file), into T
 * (free with cfitab__free): 0, or -ENOENT when there is none usable. */
int cficache__get(struct cficache *c, const struct stat *st, struct cfi_table *t);
/* Keep T as the table of the file ST describes. 0 or a negative errno
 * (nothing is left behind on failure). */
int cficache__put(struct cficache *c, const struct stat *st, const struct cfi_table *t);

/* Other things worth keeping between captures (prof/kbtf's kernel types):
 * the bytes stored under KEY, at most MAX of them, checked whole, into
 * *BUF and *LEN (read-only, until cficache__blob_free): 0, or -ENOENT
 * when there are none usable (a damaged blob is removed). */
int cficache__get_blob(struct cficache *c, uint64_t key, size_t max, void **buf, size_t *len);
/* Give back what cficache__get_blob gave (NULL: nothing). */
void cficache__blob_free(void *buf, size_t len);
/* Keep LEN bytes at BUF under KEY. 0 or a negative errno. */
int cficache__put_blob(struct cficache *c, uint64_t key, const void *buf, size_t len);
/* Remove what KEY stands for (found wrong after all). */
void cficache__drop_blob(struct cficache *c, uint64_t key);

void cficache__stats(const struct cficache *c, struct cficache_stats *st);

#endif
