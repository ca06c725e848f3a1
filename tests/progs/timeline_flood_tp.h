/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Tracepoint provider of the timeline_flood test program: begins and ends
 * whose names pair (x_begin, x_end) and an end of another name (y_end),
 * each carrying its sequence number; a pair with a string (z_begin, z_end)
 * and an event that pairs with nothing (note), for the seeds of
 * tests/fuzz/fuzz_tlread.c. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER timeline_flood

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./timeline_flood_tp.h"

#if !defined(TIMELINE_FLOOD_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TIMELINE_FLOOD_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT_CLASS(timeline_flood, seq,
	LTTNG_UST_TP_ARGS(int, n),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, n, n)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(timeline_flood, seq, timeline_flood, x_begin,
	LTTNG_UST_TP_ARGS(int, n))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(timeline_flood, seq, timeline_flood, x_end,
	LTTNG_UST_TP_ARGS(int, n))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(timeline_flood, seq, timeline_flood, y_end,
	LTTNG_UST_TP_ARGS(int, n))

LTTNG_UST_TRACEPOINT_EVENT(timeline_flood, z_begin,
	LTTNG_UST_TP_ARGS(const char *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(s, s)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(timeline_flood, seq, timeline_flood, z_end,
	LTTNG_UST_TP_ARGS(int, n))
LTTNG_UST_TRACEPOINT_EVENT(timeline_flood, note,
	LTTNG_UST_TP_ARGS(const char *, s, int, n),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(s, s)
		lttng_ust_field_integer(int, n, n)
	)
)

#endif

#include <lttng/tracepoint-event.h>
