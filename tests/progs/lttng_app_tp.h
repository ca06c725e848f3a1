/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Tracepoint provider of the lttng_app test program: an instant event with
 * a payload, and a Start/Stop pair that sidescope ctf chrome turns into a
 * duration slice. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER sidescope_app

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_app_tp.h"

#if !defined(LTTNG_APP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LTTNG_APP_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(sidescope_app, request,
	LTTNG_UST_TP_ARGS(int, id, const char *, path, int, status),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, id, id)
		lttng_ust_field_string(path, path)
		lttng_ust_field_integer(int, status, status)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(sidescope_app, WorkStart,
	LTTNG_UST_TP_ARGS(int, id),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, id, id)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(sidescope_app, WorkStop,
	LTTNG_UST_TP_ARGS(int, id, long, result),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, id, id)
		lttng_ust_field_integer(long, result, result)
	)
)

#endif

#include <lttng/tracepoint-event.h>
