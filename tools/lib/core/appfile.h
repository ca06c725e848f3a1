/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Opening what the application controls. Every file the app can write (its
 * root filesystem through /proc/PID/root, its mapped files through
 * /proc/PID/map_files, the shared volumes) is hostile input to this more
 * privileged process: a link may point anywhere, a FIFO or a device may
 * block or never end, a file may be huge, sparse, growing or truncated
 * while it is read. So such files are opened here, and only here:
 *
 * - "PROCROOT/PID/root/REST" is REST resolved inside PID's root directory
 *   (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, or a component-by-
 *   component walk that does the same where the kernel lacks openat2):
 *   absolute links and ".." stay inside the app's root;
 * - APPFILE_NOFOLLOW refuses a link anywhere in the path (a shared volume:
 *   nothing there should be a link);
 * - every open is O_NONBLOCK | O_NOCTTY, and only regular files are kept
 *   (fstat after the open, never a stat before it);
 * - reads are bounded and use read/pread, never mmap, so a file truncated
 *   under us ends the read instead of raising SIGBUS.
 */
#ifndef SIDESCOPE_APPFILE_H
#define SIDESCOPE_APPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The errno for "not a regular file" (a FIFO, a device, a directory, a
 * socket): appfile__strerror says so in words. */
#define APPFILE_ENOTREG ENXIO

enum appfile_flags {
	APPFILE_NOFOLLOW = 1 << 0,	/* no symbolic link in any component */
};

/* Open PATH read-only as a regular file (see above). ST (if not NULL) gets
 * its fstat. Return the descriptor (O_CLOEXEC), or a negative errno:
 * APPFILE_ENOTREG, ELOOP (a link under APPFILE_NOFOLLOW, or too many),
 * EXDEV (a path that would leave the root), ENOENT, EACCES, ... */
int appfile__open(const char *path, unsigned int flags, struct stat *st);

struct proc_map;

/* Open the file of mapping M of process PID (as /proc/PID/maps gave it):
 * the process's own view of the file (resolved inside /proc/PID/root) if it
 * is still the same file (inode), else the mapping itself through
 * /proc/PID/map_files (deleted or replaced files). CLEAN (CLEANSZ bytes)
 * gets M's path without " (deleted)", PATH (PATHSZ) the path last tried,
 * ST (if not NULL) the fstat. The descriptor, or a negative errno. */
int appfile__open_mapping(pid_t pid, const struct proc_map *m, char *clean, size_t cleansz,
			  char *path, size_t pathsz, struct stat *st);

/* Open REL inside the directory ROOTFD as if ROOTFD were "/" (the same
 * rules; ROOTFD is typically an O_PATH descriptor of /proc/PID/root). */
int appfile__open_in_root(int rootfd, const char *rel, unsigned int flags, struct stat *st);

/* The O_PATH descriptor (O_CLOEXEC) of REL resolved inside ROOTFD by the
 * same rules, whatever its type: a directory to list, a socket to connect
 * to through /proc/self/fd/N. Nothing is opened for reading or writing;
 * the caller checks the type with fstat. A negative errno as above. */
int appfile__open_path_in_root(int rootfd, const char *rel, unsigned int flags);

/* Read FD from its current offset into a NUL-terminated malloc'd buffer of
 * at most MAX bytes. Return 0, or -EFBIG when the file holds more (with
 * TRUNCATE the first MAX bytes are returned instead and *TRUNCATED, if not
 * NULL, is set), or another negative errno. Caller frees *BUF. */
int appfile__read(int fd, size_t max, bool truncate, char **buf, size_t *len, bool *truncated);

/* Open PATH (appfile__open) and read it whole, at most MAX bytes (-EFBIG). */
int appfile__read_path(const char *path, unsigned int flags, size_t max, char **buf,
		       size_t *len);

/* strerror() that names APPFILE_ENOTREG and EFBIG in this module's terms.
 * ERR is a positive or negative errno. */
const char *appfile__strerror(int err);

/* Use the portable walk instead of openat2 (tests; kernels before 5.6 get
 * it without asking). */
void appfile__force_walk(bool on);

#endif
