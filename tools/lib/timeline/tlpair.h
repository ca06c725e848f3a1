/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Chrome trace events of a timeline's LTTng events, within budgets:
 * begin/end pairs (ctfpair) as "X" slices, every other event an instant,
 * a thread's first event its thread_name. tlread.c feeds it from the trace;
 * tests/fuzz/fuzz_tlpair.c from a buffer.
 *
 *   p = tl_pair__new(fd, &opts, st);
 *   tl_pair__event(p, &ev) ...         in the trace's order
 *   tl_pair__finish(p);                begins still open: unfinished slices
 *   tl_pair__free(p);
 *
 * Every event is the app's doing, so:
 *   - an end finds its begin in O(1): the open begins are stacks in a hash
 *     table keyed by (thread, name), with a secret seed;
 *   - open begins are kept up to lim->max_depth per thread and name and
 *     lim->max_open in all, the oldest dropped first (its end is then an
 *     instant), and a begin's arguments up to lim->max_args bytes;
 *   - what is written is counted (tl_pair__written), for lim->max_bytes.
 * Each one left out is counted in the stats. */
#ifndef SIDESCOPE_TIMELINE_TLPAIR_H
#define SIDESCOPE_TIMELINE_TLPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/json.h"
#include "timeline/timeline.h"
#include "timeline/tlread.h"

/* Writes an event's payload (PAYLOAD, the feeder's) as one JSON value. */
typedef void (*tl_payload_fn)(struct json *j, const void *payload);

struct tl_pair_opts {
	pid_t pid;		/* the process the events are put on */
	uint64_t origin;	/* times are shown from it */
	const struct timeline *tl;	/* threads it has are not named again;
					 * NULL: none */
	const struct tl_read_limits *lim;
	tl_payload_fn payload;
};

struct tl_event {
	int kind;		/* enum ctfpair_kind */
	const char *name;	/* the event's */
	const char *base;	/* BEGIN and END: the key that pairs them; must
				 * live as long as the pairer */
	pid_t tid;
	bool new_thread;	/* its thread's first event: named */
	const char *procname;	/* the thread's name then; NULL: none */
	uint64_t ts;		/* on the timeline's clock */
	const void *payload;	/* for opts' payload; NULL: none */
};

struct tl_pair;

/* A pairer writing to FD (",\n" between the events), counting into ST
 * (slices, instants, begins_dropped, args_dropped, unwritten, first_ns,
 * last_ns). NULL with errno set. */
struct tl_pair *tl_pair__new(int fd, const struct tl_pair_opts *o, struct tl_lttng_stats *st);

/* One event. 0, or -ENOMEM. */
int tl_pair__event(struct tl_pair *p, const struct tl_event *e);

/* Bytes of events that reached the fd so far. */
size_t tl_pair__written(const struct tl_pair *p);

/* The begins still open as slices until the last event, marked unfinished,
 * oldest first, while lim->max_bytes lasts (the others counted unwritten);
 * then everything flushed. 0, or -EIO (the fd failed). */
int tl_pair__finish(struct tl_pair *p);

/* NULL is fine. */
void tl_pair__free(struct tl_pair *p);

#endif
