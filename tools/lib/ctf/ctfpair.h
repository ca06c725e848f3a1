/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Begin/end pairs of trace events, the one pairing of 'sidescope ctf
 * chrome' (ctf/chrome.h) and of the timeline's LTTng events
 * (timeline/tlread.h).
 *
 * Which events open or close a duration: names ending in Start/Stop or
 * Begin/End (CamelCase, or any case after '_' or ':'), with an optional
 * version suffix "_V<n>" as the .NET runtime's events carry (GCStart_V2,
 * GCEnd_V1, request_start/request_stop, lttng_ust_statedump:start/end).
 *
 * Pairing them into Chrome trace events, within budgets: a begin and its
 * end as an "X" slice, every other event an instant, a thread's first
 * event its thread_name.
 *
 *   p = ctfpair__new(fd, &opts, &stats);
 *   ctfpair__event(p, &ev) ...         in time order
 *   ctfpair__finish(p);                begins still open: unfinished slices
 *   ctfpair__free(p);
 *
 * Every event is the traced app's doing, so:
 *   - an end finds its begin in O(1): the open begins are stacks in a hash
 *     table keyed by (thread, name), with a secret seed;
 *   - open begins are kept up to lim.max_depth per thread and name and
 *     lim.max_open in all, the oldest dropped first (its end is then an
 *     instant), and a begin's arguments up to lim.max_args bytes;
 *   - what is written is counted (ctfpair__written), for lim.max_bytes.
 * Each one left out is counted in the stats. */
#ifndef SIDESCOPE_CTFPAIR_H
#define SIDESCOPE_CTFPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json.h"

enum ctfpair_kind { CTFPAIR_NONE, CTFPAIR_BEGIN, CTFPAIR_END };

/* Classify name. For BEGIN and END, *base is a malloc'd copy of the name
 * without the suffix (and without a separating '_' or ':'), the key that
 * pairs a begin with its end; the caller frees it. For NONE *base is NULL.
 * Return the kind, or -ENOMEM. */
int ctfpair__classify(const char *name, char **base);

/* The budgets ctfpair__default_limits sets. */
#define CTFPAIR_MAX_OPEN	8192u	/* open begins in all */
#define CTFPAIR_MAX_DEPTH	1024u	/* open begins of one thread and name */
#define CTFPAIR_MAX_ARGS	2048u	/* bytes of a begin's arguments kept */

struct ctfpair_limits {
	size_t max_bytes;	/* the begins still open at the end are written
				 * while fewer bytes than this were; 0: no limit
				 * (ctfpair__written tells a reader when to stop) */
	uint32_t max_open, max_depth, max_args;
};

/* LIM's budgets from the CTFPAIR_MAX_* above, max_bytes none. */
void ctfpair__default_limits(struct ctfpair_limits *lim);

/* What was written, and what the budgets left out. */
struct ctfpair_stats {
	uint64_t slices, instants;
	uint64_t begins_dropped;	/* open begins over max_depth or max_open */
	uint64_t args_dropped;	/* begins whose arguments were over max_args */
	uint64_t unwritten;	/* begins still open at the end, over max_bytes */
	uint64_t first_ns, last_ns;	/* of the events, as given */
};

/* Writes an event's payload (PAYLOAD, the feeder's) as one JSON value. */
typedef void (*ctfpair_payload_fn)(struct json *j, const void *payload);

/* Whether thread TID has a name already (CTX: the feeder's). */
typedef bool (*ctfpair_named_fn)(const void *ctx, int64_t tid);

/* How the events are written: the timeline's and 'ctf chrome''s files
 * differ in these, and each keeps its own. */
struct ctfpair_opts {
	struct ctfpair_limits lim;
	ctfpair_payload_fn payload;
	uint64_t origin;	/* times are shown from it... */
	bool origin_first;	/* ...or from the first event's */
	const char *cat;	/* every event's "cat"; NULL: none */
	bool process_names;	/* a thread whose tid is its pid names its
				 * process too */
	bool no_payload_null;	/* an event without a payload: a slice's
				 * "begin" null and no "end" (else an empty
				 * object for both, as for an instant's args) */
	bool open_by_thread;	/* the begins still open at the end: by thread
				 * in the order of their first events, outermost
				 * first (else oldest first) */
	ctfpair_named_fn named;	/* threads it says are named are not named
				 * again; NULL: none is */
	const void *named_ctx;
};

struct ctfpair_event {
	int kind;		/* enum ctfpair_kind */
	const char *name;	/* the event's */
	const char *base;	/* BEGIN and END: the key that pairs them; must
				 * live as long as the pairer */
	uint32_t thread;	/* its thread's number (one per thread, in the
				 * order of their first events): with base, the
				 * key */
	int64_t pid, tid;	/* as shown */
	bool new_thread;	/* its thread's first event: named */
	const char *procname;	/* the thread's name then; NULL: none */
	uint64_t ts;		/* ns */
	const void *payload;	/* for opts' payload; NULL: none */
};

struct ctfpair;

/* A pairer writing to FD (",\n" between the events, none before the
 * first), counting into ST. NULL with errno set. */
struct ctfpair *ctfpair__new(int fd, const struct ctfpair_opts *o, struct ctfpair_stats *st);

/* One event. 0, or -ENOMEM. */
int ctfpair__event(struct ctfpair *p, const struct ctfpair_event *e);

/* Bytes of events that reached the fd so far. */
size_t ctfpair__written(const struct ctfpair *p);

/* The time the events are shown from (the first event's with
 * origin_first; 0 before it). */
uint64_t ctfpair__origin(const struct ctfpair *p);

/* The begins still open as slices until the last event, marked
 * unfinished, in opts' order, while lim.max_bytes lasts (the others
 * counted unwritten); then everything flushed to the fd. 0, or -EIO (the
 * fd failed). */
int ctfpair__finish(struct ctfpair *p);

/* NULL is fine. */
void ctfpair__free(struct ctfpair *p);

#endif
