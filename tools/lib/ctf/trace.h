/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Finding the CTF traces under a directory, and checking their metadata
 * before babeltrace2 reads it. */
#ifndef SIDESCOPE_CTF_TRACE_H
#define SIDESCOPE_CTF_TRACE_H

#include <stddef.h>

#include "core/err.h"

/* The trace directories found: every directory that holds a regular file
 * named 'metadata', sorted by strcmp. Owns the strings and the array. */
struct ctf_traces {
	char **dirs;
	size_t n, cap;
};

/* Search DIR, however deep, for CTF traces and add them to T (zeroed by the
 * caller). Symbolic links are not followed; a directory reached twice (a
 * bind mount) is searched once; one that cannot be opened for lack of
 * permission is skipped. The paths found are DIR, without its trailing
 * slashes, then '/' and the names below it. Return the number of traces
 * found, -ENOTDIR if DIR is not a directory, or another -errno. */
int ctf_traces__find(struct ctf_traces *t, const char *dir);

/* Free what T holds and zero it. */
void ctf_traces__free(struct ctf_traces *t);

/* Check the metadata file of trace directory TDIR. babeltrace2 2.0 loops
 * forever on a packetized metadata file cut in the middle of a packet, so
 * it must see only text metadata or a run of whole packets.
 * Return 0 if it is text or whole packets, -EBADMSG (and why, one line, in
 * E, which may be NULL) if it is empty, cut short or damaged, -errno if it
 * cannot be read. */
int ctf_traces__check_metadata(const char *tdir, struct err *e);

#endif
