/* LTTng-UST tracepoint provider of the sidescope .NET sample.
 * Events: sampleapp:request_start, sampleapp:request_stop, sampleapp:echo. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER sampleapp

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./sampleapp_tp.h"

#if !defined(SAMPLEAPP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SAMPLEAPP_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(sampleapp, request_start,
	LTTNG_UST_TP_ARGS(const char *, path),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(path, path)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(sampleapp, request_stop,
	LTTNG_UST_TP_ARGS(const char *, path, int, status),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(path, path)
		lttng_ust_field_integer(int, status, status)
	)
)

/* text is UTF-8; length is the .NET string's length in UTF-16 code units */
LTTNG_UST_TRACEPOINT_EVENT(sampleapp, echo,
	LTTNG_UST_TP_ARGS(const char *, text, int, length),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(text, text)
		lttng_ust_field_integer(int, length, length)
	)
)

#endif /* SAMPLEAPP_TP_H */

#include <lttng/tracepoint-event.h>
