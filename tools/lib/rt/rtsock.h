/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A runtime's Unix socket (HotSpot's attach socket, .NET's diagnostics
 * socket) reached inside the application's root and spoken to within a
 * deadline. The app controls the directory, the socket, and what answers
 * on it: the socket is found without following a link (an O_PATH
 * descriptor, checked with fstat), connected to through /proc/self/fd/N
 * (the kernel never resolves a path the app chose), and every write and
 * read is non-blocking, bounded in size and ends at the deadline.
 *
 * Deadlines are CLOCK_MONOTONIC nanoseconds (now_ns(), core/util.h). */
#ifndef SIDESCOPE_RTSOCK_H
#define SIDESCOPE_RTSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* The O_PATH descriptor (O_CLOEXEC) of NAME, a single component, in the
 * directory DIRFD, if it is a socket; ST (if not NULL) gets its fstat.
 * A link is never followed. The descriptor, -ENOENT, -ENOTSOCK (a link or
 * anything else that is not a socket), or another negative errno. */
int rtsock__open(int dirfd, const char *name, struct stat *st);

/* A new stream socket (non-blocking, O_CLOEXEC) connected to the socket
 * PATHFD names (rtsock__open). A listener whose backlog is full is tried
 * again until DEADLINE_NS. The connected descriptor, or a negative errno:
 * -ETIMEDOUT, -ECONNREFUSED (no listener: a socket left behind), -EACCES
 * (no write permission on the socket), ... */
int rtsock__connect(int pathfd, uint64_t deadline_ns);

/* Send LEN bytes of BUF on FD, all of them, by DEADLINE_NS (no SIGPIPE).
 * 0, -ETIMEDOUT, or another negative errno (-EPIPE: the peer closed). */
int rtsock__send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns);

/* Receive from FD into BUF (MAX bytes) until the peer ends its side, MAX
 * bytes are in, or DEADLINE_NS. *LEN gets the bytes received, whatever the
 * return: 0 (the peer's end of file), -EMSGSIZE (MAX bytes came and the
 * peer had not ended: the rest is left unread), -ETIMEDOUT, -ECONNRESET,
 * or another negative errno. */
int rtsock__recv(int fd, char *buf, size_t max, size_t *len, uint64_t deadline_ns);

#endif
