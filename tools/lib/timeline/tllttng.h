/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The LTTng part of a timeline: a user-space session for one process (its
 * lttng-ust events and its LTTng agents' log records)
 * through liblttng-ctl (the C API of lttng-tools), and its trace read back
 * with the CTF reader (tools/lib/ctf/) onto the timeline's clock.
 *
 *   l = tl_lttng__start(&opts);      daemon (started if none answers),
 *                                    session, events, contexts, vpid
 *                                    tracker and filter, the app registered
 *   ... the capture ...
 *   tl_lttng__stop(l);               stop (buffers flushed), destroy
 *   tl_lttng__read(l, tl, &st);      events onto the timeline
 *   tl_lttng__free(l);               the trace directory removed
 *
 * The session writes to a new directory under $TMPDIR (the sidecar's
 * private one), never to a place the app can reach. Every failure is said
 * with p_err. */
#ifndef SIDESCOPE_TIMELINE_TLLTTNG_H
#define SIDESCOPE_TIMELINE_TLLTTNG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "timeline/timeline.h"
#include "timeline/tlread.h"

/* How long a trace may take to read after the capture's duration (600,000
 * events, 37 MB of them written, took about a second here; tlread.h allows
 * 64 MiB). */
#define TL_LTTNG_READ_MS 2000
/* The same when a signal ended the capture: with the flush's half second
 * and the reader's grace, the command ends within two seconds of it. */
#define TL_LTTNG_READ_STOPPED_MS 800

struct tl_lttng_opts {
	pid_t pid;		/* the target, as this PID namespace numbers it */
	pid_t vpid;		/* the same in its own namespace: what LTTng sees */
	char *const *events;	/* event names or patterns; none: every one */
	int nevents;
	const char *apps_dir;	/* where a daemon we start puts its application
				 * socket (the app's /var/run/lttng shared here);
				 * NULL: lttng-sessiond's default */
	unsigned int register_ms;	/* how long to wait for the app to register */
	unsigned int read_ms;	/* how long the trace may take to read */
};

struct tl_lttng;

/* Start tracing the target's user-space events. NULL on failure (said). */
struct tl_lttng *tl_lttng__start(const struct tl_lttng_opts *o);

/* Stop the session (its buffers flushed to the trace, for two seconds at
 * most, half a second once a signal came) and destroy it. Return 0 or -EIO
 * (said). */
int tl_lttng__stop(struct tl_lttng *l);

/* Read the trace onto TL: LTTng events as instants, begin/end pairs
 * (ctfpair) as slices, their times converted to CLOCK_MONOTONIC (see
 * tlread.c) and shown from ORIGIN; their threads renamed from VTIDS[i]
 * to TIDS[i] (N of them: a target in a PID namespace below ours). ST's
 * our_offset_ns is the caller's. tl_read__forked reads, within tlread.h's
 * budgets, until opts' read_ms from now (TL_LTTNG_READ_STOPPED_MS when a
 * signal, run__stop, ended the capture); the whole events read are added
 * however the read ended, and ST->cut says what ended it early. Return 0,
 * or a negative errno (said) when nothing could be read. */
int tl_lttng__read(struct tl_lttng *l, struct timeline *tl, uint64_t origin,
		   const pid_t *vtids, const pid_t *tids, int n, struct tl_lttng_stats *st);

/* Destroy the session if it is still there, remove the trace; NULL is
 * fine. */
void tl_lttng__free(struct tl_lttng *l);

#endif
