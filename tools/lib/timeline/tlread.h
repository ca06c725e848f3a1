/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading a timeline's LTTng trace (tllttng.h) into Chrome trace events,
 * within budgets.
 *
 * The trace is the app's work: the names come from its registrations, the
 * contexts and payloads from the ring buffers it writes in its own memory,
 * so every event is hostile input. babeltrace2 decodes it (ctf/),
 * ctf/ctfpair.h pairs the events in O(1) with its own budgets (open begins,
 * arguments, bytes written), and here:
 *   - threads are told apart up to max_threads, the events of the others
 *     left out and counted;
 *   - the read stops at its deadline, when max_bytes of events are
 *     written, or on SIGINT/SIGTERM (run__stop), the events written so far
 *     kept; ST->cut says which ended it;
 *   - tl_read__forked runs it in a child process that a parent kills when
 *     it does not stop on time, its memory limited (ctf/child.h):
 *     babeltrace2 itself may loop or abort on a damaged stream.
 * Bounded memory and time per event whatever the trace holds. */
#ifndef SIDESCOPE_TIMELINE_TLREAD_H
#define SIDESCOPE_TIMELINE_TLREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctf/child.h"
#include "ctf/ctfpair.h"
#include "timeline/timeline.h"

/* The budgets tl_read__default_limits sets. */
#define TL_READ_MAX_BYTES	((size_t)64 << 20)	/* of events written */
#define TL_READ_MAX_OPEN	CTFPAIR_MAX_OPEN	/* open begins in all */
#define TL_READ_MAX_DEPTH	CTFPAIR_MAX_DEPTH	/* of one thread and name */
#define TL_READ_MAX_THREADS	4096u	/* threads told apart */
#define TL_READ_MAX_ARGS	CTFPAIR_MAX_ARGS	/* bytes of a begin's arguments */

struct tl_read_limits {
	uint64_t deadline_ns;	/* now_ns() at which the read stops; 0: none */
	size_t max_bytes;
	uint32_t max_open, max_depth, max_threads, max_args;
};

/* Why a read ended before the trace's end. */
enum tl_read_cut {
	TL_CUT_NONE,		/* it did not: read to the end */
	TL_CUT_SIGNAL,		/* SIGINT or SIGTERM */
	TL_CUT_TIME,		/* its deadline */
	TL_CUT_OUTPUT,		/* max_bytes of events written */
	TL_CUT_KILLED,		/* it did not stop in time (tl_read__forked) */
	TL_CUT_FAILED,		/* it failed (tl_read__forked) */
};

/* The name of a cut for otherData and messages: "none", "signal", ... */
const char *tl_read__cut_name(int cut);

struct tl_lttng_stats {
	uint64_t events, discarded_events, discarded_packets;
	uint64_t slices, instants;
	uint64_t begins_dropped;	/* open begins over max_depth or max_open */
	uint64_t args_dropped;	/* begins whose arguments were over max_args */
	uint64_t other_threads;	/* events of threads past max_threads */
	uint64_t unwritten;	/* begins still open at the end, over max_bytes */
	int cut;		/* enum tl_read_cut */
	char clock[32];		/* the trace's clock class name */
	int64_t clock_offset_ns;	/* its offset: CLOCK_REALTIME - its clock */
	int64_t our_offset_ns;	/* ours: CLOCK_REALTIME - CLOCK_MONOTONIC */
	bool monotonic;		/* its cycles are CLOCK_MONOTONIC ns */
	uint64_t first_ns, last_ns;	/* on the timeline's clock */
	bool started_daemon;
};

struct tl_read {
	const char *dir;	/* searched for CTF traces */
	pid_t pid;		/* the process the events are put on */
	const struct timeline *tl;	/* threads it has are not named again;
					 * NULL: none */
	uint64_t origin;	/* times are shown from it */
	const pid_t *vtids, *tids;	/* thread VTIDS[i] shown as TIDS[i] */
	int ntids;
	int fd;			/* the events go there, ",\n" between them */
	struct tl_read_limits lim;
};

/* How long tl_read__forked's reader has to end once told to (its deadline,
 * a signal) before it is killed: it stops at its next event, then closes
 * the begins still open (max_open slices at most: milliseconds). */
#define TL_READ_GRACE_MS 300
/* Its data memory (RLIMIT_DATA; not under ASan, whose shadow counts). */
#define TL_READ_MAX_MEM CTF_CHILD_MAX_MEM

/* LIM's budgets from the TL_READ_MAX_* above, no deadline. */
void tl_read__default_limits(struct tl_read_limits *lim);

/* Read the traces under RD->dir onto RD->fd; ST's our_offset_ns is the
 * caller's, the rest is filled. Every event written is whole before the
 * next ",\n" starts: a reader stopped from outside leaves whole events up
 * to its last separator. Return 0 when the trace was read to its end or
 * ended by a budget or a signal (ST->cut says which), a negative errno
 * (said) when it cannot be read or written. */
int tl_read__dir(const struct tl_read *rd, struct tl_lttng_stats *st);

/* tl_read__dir in a child process, its events added to TL: babeltrace2
 * aborts on some damaged packets and loops on others, taking memory as it
 * goes. RD->fd is not used (the child's is a pipe). A signal (run__stop)
 * during the read ends it at once; a child still there TL_READ_GRACE_MS
 * after its deadline or the signal is killed, one that fails is said
 * (p_warn): the whole events it wrote are added in every case, and ST->cut
 * says what ended the read early. Return 0, or a negative errno (said)
 * when nothing could be read. */
int tl_read__forked(const struct tl_read *rd, struct timeline *tl, struct tl_lttng_stats *st);

#endif
