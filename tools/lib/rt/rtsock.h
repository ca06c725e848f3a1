/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unix sockets a language runtime listens on inside the application's root
 * (the .NET diagnostics server, the JVM's attach listener). The app owns
 * the directory, the name, what sits there and what answers, so:
 *
 * - the directory is resolved inside the app's root (core/appfile: openat2
 *   RESOLVE_IN_ROOT or its O_PATH walk) and listed within a count and a
 *   deadline;
 * - the socket is opened O_PATH | O_NOFOLLOW relative to that directory's
 *   descriptor and kept only if fstat says it is a socket: a link planted
 *   in its place is never followed, whatever it points at;
 * - the connection goes through /proc/self/fd/N of that descriptor (the
 *   inode checked, not a name resolved again), non-blocking;
 * - every write and read has a deadline (CLOCK_MONOTONIC, now_ns()), so a
 *   server that never answers, answers slowly or stops reading costs at
 *   most the caller's time.
 */
#ifndef SIDESCOPE_RTSOCK_H
#define SIDESCOPE_RTSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Open DIR (an absolute path as process PID sees it; links inside its root
 * followed there) inside PID's root (proc__root()/PID/root). Return an
 * O_PATH descriptor of a directory, or a negative errno: ENOTDIR, ENOENT,
 * EINVAL (DIR not absolute), EACCES (PID's root not ours to read). */
int rtsock__open_dir(pid_t pid, const char *dir);

/* Call FN(NAME, ARG) for each entry of the directory DIRFD (an O_PATH
 * descriptor from rtsock__open_dir) but "." and "..", until FN returns
 * non-zero (returned as is). At most MAX entries are looked at, by
 * DEADLINE_NS: -E2BIG past MAX, -ETIMEDOUT past the deadline, 0 when all
 * were seen, or another negative errno. */
int rtsock__list(int dirfd, size_t max, uint64_t deadline_ns,
		 int (*fn)(const char *name, void *arg), void *arg);

/* Open NAME (one component) in DIRFD as a socket without following a link:
 * an O_PATH descriptor (O_CLOEXEC), ST (if not NULL) its fstat, or a
 * negative errno: ELOOP for a symbolic link, ENOTSOCK for anything else
 * that is not a socket, ENOENT. */
int rtsock__open_socket(int dirfd, const char *name, struct stat *st);

/* Connect a new SOCK_STREAM socket to the socket PATHFD (from
 * rtsock__open_socket) names, through /proc/self/fd/PATHFD. Return the
 * connected socket (O_NONBLOCK, O_CLOEXEC; the caller closes it), or a
 * negative errno: ECONNREFUSED (nobody listens: a socket left by an exited
 * process), EACCES (no write permission on it), EPROTOTYPE (not a stream
 * socket), ETIMEDOUT (its backlog stayed full until DEADLINE_NS). */
int rtsock__connect(int pathfd, uint64_t deadline_ns);

/* Write all LEN bytes of BUF to the non-blocking socket FD by DEADLINE_NS
 * (no SIGPIPE). 0, -ETIMEDOUT, or the write's negative errno (EPIPE,
 * ECONNRESET: the peer closed). */
int rtsock__send(int fd, const void *buf, size_t len, uint64_t deadline_ns);

/* Read exactly LEN bytes from the non-blocking socket FD into BUF by
 * DEADLINE_NS. *GOT (if not NULL) gets the bytes read whatever happened.
 * 0; -ENODATA when the peer closed before LEN bytes; -ETIMEDOUT; or the
 * read's negative errno (ECONNRESET). */
int rtsock__recv(int fd, void *buf, size_t len, uint64_t deadline_ns, size_t *got);

/* Receive from FD into BUF (MAX bytes) until the peer ends its side, MAX
 * bytes are in, or DEADLINE_NS (a reply whose end is the peer's close, as
 * HotSpot's). *LEN gets the bytes received, whatever the return: 0 (the
 * peer's end of file), -EMSGSIZE (MAX bytes came and the peer had not
 * ended: the rest is left unread), -ETIMEDOUT, -ECONNRESET, or another
 * negative errno. */
int rtsock__recv_upto(int fd, char *buf, size_t max, size_t *len, uint64_t deadline_ns);

#endif
