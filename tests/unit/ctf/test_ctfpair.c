// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctfpair: which event names open or close a duration slice. */
#include <stdlib.h>

#include "ctf/ctfpair.h"
#include "tap.h"

static const struct {
	const char *name;
	int kind;
	const char *base;
} cases[] = {
	{ "sidescope_app:WorkStart", CTFPAIR_BEGIN, "sidescope_app:Work" },
	{ "sidescope_app:WorkStop", CTFPAIR_END, "sidescope_app:Work" },
	{ "DotNETRuntime:GCStart_V2", CTFPAIR_BEGIN, "DotNETRuntime:GC" },
	{ "DotNETRuntime:GCEnd_V1", CTFPAIR_END, "DotNETRuntime:GC" },
	{ "DotNETRuntime:GCSuspendEEBegin_V1", CTFPAIR_BEGIN, "DotNETRuntime:GCSuspendEE" },
	{ "DotNETRuntime:GCSuspendEEEnd_V1", CTFPAIR_END, "DotNETRuntime:GCSuspendEE" },
	{ "sampleapp:request_start", CTFPAIR_BEGIN, "sampleapp:request" },
	{ "sampleapp:request_stop", CTFPAIR_END, "sampleapp:request" },
	{ "lttng_ust_statedump:start", CTFPAIR_BEGIN, "lttng_ust_statedump" },
	{ "lttng_ust_statedump:end", CTFPAIR_END, "lttng_ust_statedump" },
	{ "app:REQUEST_BEGIN", CTFPAIR_BEGIN, "app:REQUEST" },
	{ "app:Append", CTFPAIR_NONE, NULL },
	{ "app:Legend", CTFPAIR_NONE, NULL },
	{ "app:BACKEND", CTFPAIR_NONE, NULL },
	{ "app:restart", CTFPAIR_NONE, NULL },
	{ "app:request", CTFPAIR_NONE, NULL },
	{ "Start", CTFPAIR_NONE, NULL },
	{ "_start", CTFPAIR_NONE, NULL },
	{ "app:Thing_V", CTFPAIR_NONE, NULL },
	{ "app:Start_V", CTFPAIR_NONE, NULL },
	{ "", CTFPAIR_NONE, NULL },
	{ "DotNETRuntime:ExceptionThrown_V1", CTFPAIR_NONE, NULL },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *base = (char *)1;
		int k = ctfpair__classify(cases[i].name, &base);

		is_int(k, cases[i].kind, "'%s' kind", cases[i].name);
		if (cases[i].base)
			is_str(base, cases[i].base, "'%s' base", cases[i].name);
		else
			ok(base == NULL, "'%s' has no base", cases[i].name);
		free(base);
	}
	return done_testing();
}
