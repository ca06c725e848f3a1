/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading CTF traces through the libbabeltrace2 graph API: src.ctf.fs over
 * the trace directories, flt.utils.muxer when the messages must come in
 * time order, and a sink of our own that hands every message to a callback.
 *
 * Unordered, the sink reads every stream of the source directly, one input
 * port per source output port: counts do not need a global order, and
 * skipping the muxer keeps the reader near the decoding floor. Ordered
 * (begin/end pairs per thread, whose events may sit in several per-CPU
 * streams), it reads through the muxer. */
#ifndef SIDESCOPE_CTF_SINK_H
#define SIDESCOPE_CTF_SINK_H

#include "ctf/bt2.h"
#include <stdbool.h>
#include <stddef.h>

/* Called for every message, which is borrowed for the call. Return 0, or a
 * negative errno to stop the graph: ctf_sink__read returns it (said, but
 * for -ECANCELED: a reader that chose to stop early). */
typedef int (*ctf_sink_fn)(void *data, const bt_message *msg);

struct ctf_read {
	char *const *dirs;	/* the trace directories, read together */
	size_t n_dirs;
	const char *shown;	/* the directory as messages name it */
	bool ordered;		/* messages in time order (through the muxer) */
	ctf_sink_fn fn;
	void *data;		/* fn's first argument */
};

/* Build the graph for R and run it to the end. babeltrace2's own warnings
 * are printed with -v only. Return 0; the callback's negative errno (the
 * message printed here); or -EIO or -ENOMEM when babeltrace2 fails, its
 * error reported here in one line that names R->shown (with -v, every
 * cause follows). */
int ctf_sink__read(const struct ctf_read *r);

#endif
