/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Chrome trace event JSON writer (Perfetto, chrome://tracing) of
 * 'sidescope ctf chrome': one track per thread (named after its procname),
 * each event an instant with its payload as args; events that open and
 * close a duration become complete ("X") slices, paired per thread,
 * innermost first, within ctfpair.h's budgets. The events must come in
 * time order (the muxer: sink.h). One event a line:
 *
 *   {"displayTimeUnit":"ns","traceEvents":[
 *   {"ph":"M","name":"thread_name",...},
 *   {"ph":"i","s":"t","name":...,"ts":1.234,"pid":..,"tid":..,"args":{...}}
 *   ],"otherData":{"source":"sidescope ctf chrome",...}}
 *
 * Times are microseconds (with ns decimals) from the first event.
 * otherData has the totals, and only when there is something to say, what
 * the budgets left out ("lost") and why the read ended early ("read_cut").
 *
 * The header is written (and flushed) by chrome__begin, the events through
 * a descriptor of OUT's (ctfpair.h), the end through OUT: a parent can
 * begin, let a child write the events, and end the file itself with the
 * totals the child left (chrome__salvage) when it had to be killed. */
#ifndef SIDESCOPE_CTF_CHROME_H
#define SIDESCOPE_CTF_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ctf/ctfpair.h"
#include "ctf/summary.h"
#include "core/json.h"

/* What otherData says. The writer keeps its part (origin, other_threads,
 * pair) up to date event by event, and its caller the counts, so that it
 * can live where a parent reads it (ctf/child.h). */
struct chrome_totals {
	uint64_t events, discarded_events, discarded_packets;
	uint64_t origin;		/* the first event's time */
	uint64_t other_threads;		/* events of threads past max_threads */
	struct ctfpair_stats pair;
};

struct chrome {
	FILE *out;
	struct json doc;	/* the outer object */
	off_t events_at;	/* where the events start in OUT; -1: not a file */
	struct ctfpair *pair;
	struct chrome_totals *tot;
};

/* Start the document on OUT (which the caller owns) into W, the totals
 * kept in TOT (the caller's), the pairing within LIM. Return 0, -ENOMEM,
 * or -EIO (OUT failed). */
int chrome__begin(struct chrome *w, FILE *out, struct chrome_totals *tot,
		  const struct ctfpair_limits *lim);

/* Write event E (counted into S with all_threads set, so it has a
 * thread): a track's name on its first event, then an instant, or a slice
 * when E closes an open one; a begin is kept until its end comes. The
 * events of S's 'other' thread are left out, counted. Return 0 or
 * -ENOMEM. */
int chrome__event(struct chrome *w, const struct ctf_summary *s, const struct ctf_event *e);

/* After the last event: the slices still open end at the last event,
 * marked unfinished, in the order of their tracks' first events and, per
 * track, outermost first. Return 0 or -EIO. */
int chrome__close_slices(struct chrome *w);

/* End the document: otherData from the totals; CUT, why the read ended
 * early ("signal", "killed"), or NULL. Then OUT is flushed. Return 0 or
 * -EIO. */
int chrome__end(struct chrome *w, const char *cut);

/* For a writer whose events were written by another process that could
 * not end the file: OUT cut after its last whole event (an event holds no
 * ",\n": its strings escape newlines), ready for chrome__end. Return 0,
 * -ESPIPE when OUT is not a file (what was written stays), or -errno. */
int chrome__salvage(struct chrome *w);

/* Field F (a payload, a context) as one JSON value into J: integers,
 * reals (NaN and infinities as null), strings escaped, structures as
 * objects, arrays, options, variants. */
void chrome__field_json(struct json *j, const bt_field *f);

/* Free what W holds (also without chrome__end). */
void chrome__free(struct chrome *w);

#endif
