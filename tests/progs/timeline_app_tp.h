/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Tracepoint provider of the timeline_app test program: one event per
 * tick, carrying the tick's counter. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER timeline_app

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./timeline_app_tp.h"

#if !defined(TIMELINE_APP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TIMELINE_APP_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(timeline_app, tick_done,
	LTTNG_UST_TP_ARGS(int, counter),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, counter, counter)
	)
)

#endif

#include <lttng/tracepoint-event.h>
