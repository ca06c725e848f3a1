/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Which trace events open or close a duration: names ending in Start/Stop
 * or Begin/End (CamelCase, or any case after '_' or ':'), with an optional
 * version suffix "_V<n>" as the .NET runtime's events carry (GCStart_V2,
 * GCEnd_V1, request_start/request_stop, lttng_ust_statedump:start/end). */
#ifndef SIDESCOPE_CTFPAIR_H
#define SIDESCOPE_CTFPAIR_H

enum ctfpair_kind { CTFPAIR_NONE, CTFPAIR_BEGIN, CTFPAIR_END };

/* Classify name. For BEGIN and END, *base is a malloc'd copy of the name
 * without the suffix (and without a separating '_' or ':'), the key that
 * pairs a begin with its end; the caller frees it. For NONE *base is NULL.
 * Return the kind, or -ENOMEM. */
int ctfpair__classify(const char *name, char **base);

#endif
