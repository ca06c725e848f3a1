/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Atomic output files: written under a temporary name in the destination
 * directory (mode 0640) and renamed into place only once complete, so a
 * reader never sees a partial file, even after a full disk or a signal.
 *
 * The output directory may be shared with the application, which can
 * plant links, FIFOs and sockets in it: a target is never followed and
 * never blocks the sidecar.
 *   "-"                           stdout
 *   /dev/stdout, /dev/stderr,     this process's descriptor, whatever it is
 *   /dev/fd/N, /proc/self/fd/N    (a pipe: -o /dev/stdout | gzip); written
 *                                 through a duplicate, never reopened
 *   absent or a regular file      temporary file created O_EXCL|O_NOFOLLOW
 *                                 next to it, renamed over it on commit
 *                                 (a rename replaces a link, never follows it)
 *   a character device            written in place (/dev/null)
 *   anything else                 refused, with errno:
 *     ELOOP            a symbolic link (not one of the aliases above)
 *     EISDIR           a directory
 *     ESPIPE           a FIFO
 *     ESOCKTNOSUPPORT  a socket
 *     EMEDIUMTYPE      a block device
 * outfile__strerror() turns these into "is a FIFO, not a regular file", and
 * ENOENT, ENOTDIR, EROFS, EACCES into what they say of the directory.
 * Directories along the path are the operator's and are followed; the
 * directory is opened once and every later step is relative to it. */
#ifndef SIDESCOPE_OUTFILE_H
#define SIDESCOPE_OUTFILE_H

#include <stdio.h>

struct outfile;

/* Open PATH for writing as above. Return NULL with errno set. */
struct outfile *outfile__open(const char *path);
FILE *outfile__fp(struct outfile *o);
const char *outfile__path(const struct outfile *o);
/* Flush, check for write errors, fsync and rename into place; frees o.
 * Return 0 or a negative errno, also left in errno (the temporary file is
 * removed on error). */
int outfile__commit(struct outfile *o);
/* Put the file in place now, before it is complete, so that a reader can
 * follow it as it grows (tail -f); for a temporary file only, else a
 * no-op. Commit then flushes, fsyncs and closes it; abort closes it and
 * leaves what was written, since that is what a streamed capture has.
 * Return 0 or a negative errno (also in errno). */
int outfile__publish(struct outfile *o);
/* Discard what was written (a published file keeps it); frees o. Accepts
 * NULL. */
void outfile__abort(struct outfile *o);

/* The steps above with their failure said (p_err) as every command says
 * it, "cannot write PATH: why" (PATH as opened; why from outfile__strerror,
 * or from the writer's errno). outfile__open_or_say: NULL with errno set;
 * outfile__commit_or_say: 0 or a negative errno. */
struct outfile *outfile__open_or_say(const char *path);
int outfile__commit_or_say(struct outfile *o);

/* What outfile__finish writes with: the whole output to F. 0 or a
 * negative errno. */
typedef int (*outfile_write_fn)(void *ctx, FILE *f);

/* O written by FN(CTX, F) and committed, or discarded when FN fails; O is
 * freed either way. 0, or a negative errno after saying why as above. */
int outfile__finish(struct outfile *o, outfile_write_fn fn, void *ctx);

/* What ERR (an errno from outfile__open or outfile__commit, either sign)
 * means for an output path, for "cannot write PATH: %s": the refusals above
 * in words ("is a symbolic link; not following it"), else strerror(). */
const char *outfile__strerror(int err);

#endif
