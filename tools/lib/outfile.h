/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Atomic output files: written under a temporary name in the destination
 * directory (mode 0640) and renamed into place only once complete, so a
 * reader never sees a partial file, even after a full disk or a signal. */
#ifndef SIDESCOPE_OUTFILE_H
#define SIDESCOPE_OUTFILE_H

#include <stdio.h>

struct outfile;

/* Open PATH for writing; "-" means stdout. Return NULL with errno set. */
struct outfile *outfile__open(const char *path);
FILE *outfile__fp(struct outfile *o);
const char *outfile__path(const struct outfile *o);
/* Flush, check for write errors, fsync and rename into place; frees o.
 * Return 0 or a negative errno (the temporary file is removed on error). */
int outfile__commit(struct outfile *o);
/* Discard what was written; frees o. Accepts NULL. */
void outfile__abort(struct outfile *o);

#endif
