/* The sample's tracepoint provider and the three functions the app
 * P/Invokes. One shared object holds both: the provider registers with
 * lttng-ust when the app loads it, and the app calls the small wrappers
 * because it cannot expand the tracepoint macros itself. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "sampleapp_tp.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void sampleapp_tp_request_start(const char *path)
{
	lttng_ust_tracepoint(sampleapp, request_start, path ? path : "");
}

EXPORT void sampleapp_tp_request_stop(const char *path, int status)
{
	lttng_ust_tracepoint(sampleapp, request_stop, path ? path : "", status);
}

EXPORT void sampleapp_tp_echo(const char *text, int length)
{
	lttng_ust_tracepoint(sampleapp, echo, text ? text : "", length);
}
