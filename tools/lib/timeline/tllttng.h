/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The LTTng part of a timeline: a user-space session for one process
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

struct tl_lttng_opts {
	pid_t pid;		/* the target, as this PID namespace numbers it */
	pid_t vpid;		/* the same in its own namespace: what LTTng sees */
	char *const *events;	/* event names or patterns; none: every one */
	int nevents;
	const char *apps_dir;	/* where a daemon we start puts its application
				 * socket (the app's /var/run/lttng shared here);
				 * NULL: lttng-sessiond's default */
	unsigned int register_ms;	/* how long to wait for the app to register */
};

struct tl_lttng_stats {
	uint64_t events, discarded_events, discarded_packets;
	uint64_t slices, instants;
	char clock[32];		/* the trace's clock class name */
	int64_t clock_offset_ns;	/* its offset: CLOCK_REALTIME - its clock */
	int64_t our_offset_ns;	/* ours: CLOCK_REALTIME - CLOCK_MONOTONIC */
	bool monotonic;		/* its cycles are CLOCK_MONOTONIC ns */
	uint64_t first_ns, last_ns;	/* on the timeline's clock */
	bool started_daemon;
};

struct tl_lttng;

/* Start tracing the target's user-space events. NULL on failure (said). */
struct tl_lttng *tl_lttng__start(const struct tl_lttng_opts *o);

/* Stop the session (its buffers flushed to the trace) and destroy it.
 * Return 0 or -EIO (said). */
int tl_lttng__stop(struct tl_lttng *l);

/* Read the trace onto TL: LTTng events as instants, begin/end pairs
 * (ctfpair) as slices, their times converted to CLOCK_MONOTONIC (see
 * tllttng.c) and shown from ORIGIN; their threads renamed from VTIDS[i]
 * to TIDS[i] (N of them: a target in a PID namespace below ours). ST's
 * our_offset_ns is the caller's. The reading runs in a child process
 * (babeltrace2 aborts on some damaged packets); nothing is added unless it
 * ends well. Return 0, or a negative errno (said). */
int tl_lttng__read(struct tl_lttng *l, struct timeline *tl, uint64_t origin,
		   const pid_t *vtids, const pid_t *tids, int n, struct tl_lttng_stats *st);

/* Destroy the session if it is still there, remove the trace; NULL is
 * fine. */
void tl_lttng__free(struct tl_lttng *l);

#endif
