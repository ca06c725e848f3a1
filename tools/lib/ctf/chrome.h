/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Chrome trace event JSON writer (Perfetto, chrome://tracing) of
 * 'sidescope ctf chrome': one track per thread (named after its procname),
 * each event an instant with its payload as args; events that open and
 * close a duration (ctfpair.h) become complete ("X") slices, paired per
 * thread, innermost first. The events must come in time order (the muxer:
 * sink.h). One event a line:
 *
 *   {"displayTimeUnit":"ns","traceEvents":[
 *   {"ph":"M","name":"thread_name",...},
 *   {"ph":"i","s":"t","name":...,"ts":1.234,"pid":..,"tid":..,"args":{...}}
 *   ],"otherData":{"source":"sidescope ctf chrome",...}}
 *
 * Times are microseconds (with ns decimals) from the first event. */
#ifndef SIDESCOPE_CTF_CHROME_H
#define SIDESCOPE_CTF_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctf/summary.h"
#include "core/json.h"

struct chrome_track;

struct chrome {
	FILE *out;
	struct json doc;	/* the outer object */
	bool first_out;		/* no event written yet */
	bool origin_set;
	uint64_t origin;	/* the first event's time */
	struct chrome_track **tracks;	/* in the order of their first event */
	size_t n_tracks, cap_tracks;
};

/* Start the document on OUT (which the caller owns) into W. */
void chrome__begin(struct chrome *w, FILE *out);

/* Write event E (counted with ctf_summary.all_threads set, so it has a
 * thread): a track's name on its first event, then an instant, or a slice
 * when E closes an open one; a begin is kept until its end comes. Return 0
 * or -ENOMEM. */
int chrome__event(struct chrome *w, const struct ctf_event *e);

/* End the document: the slices still open end at the last event (S, after
 * ctf_summary__finish), marked unfinished, in the order of their tracks'
 * first events and, per track, outermost first; then the totals. */
void chrome__finish(struct chrome *w, const struct ctf_summary *s);

/* Field F (a payload, a context) as one JSON value into J: integers,
 * reals (NaN and infinities as null), strings escaped, structures as
 * objects, arrays, options, variants. */
void chrome__field_json(struct json *j, const bt_field *f);

/* Free the tracks (also without chrome__finish). */
void chrome__free(struct chrome *w);

#endif
