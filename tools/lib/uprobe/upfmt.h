/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Decoding and formatting of uprobe events: raw records from the BPF ring
 * buffer (struct up_event_hdr + string bytes) -> a text line (time, PID,
 * TID, comm, probe, formatted text) or one JSON object with typed values.
 * Records are validated: a malformed one is refused, never trusted. */
#ifndef SIDESCOPE_UPFMT_H
#define SIDESCOPE_UPFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "uprobe/probespec.h"

struct upfmt;

/* SPECS (borrowed, must outlive the formatter) are indexed by probe number.
 * REALTIME_OFFSET_NS turns event timestamps (CLOCK_MONOTONIC) into wall
 * clock time. NULL with errno set on failure. */
struct upfmt *upfmt__new(struct probe_spec *const *specs, int nspecs, bool json,
			 int64_t realtime_offset_ns);
void upfmt__free(struct upfmt *f);

/* Format the record DATA of SIZE bytes and write one line to OUT.
 * Return 0, -EINVAL for a malformed record (nothing written), or -EIO. */
int upfmt__event(struct upfmt *f, const void *data, size_t size, FILE *out);

/* Format into an internal buffer only (for benchmarks and tests): return
 * the line (valid until the next call) and its length, or NULL (-EINVAL). */
const char *upfmt__line(struct upfmt *f, const void *data, size_t size, size_t *len);

/* The value of a --by key K of probe PS, decoded as its kind: a number,
 * a quoted and escaped string ("..." with U+2026 when cut) or <fault>; in
 * JSON mode the members "value":...[,"truncated":true]. Valid until the
 * next call; NULL when out of memory. */
const char *upfmt__by_value(struct upfmt *f, const struct probe_spec *ps,
			    const struct up_bykey *k, size_t *len);

/* CLOCK_REALTIME - CLOCK_MONOTONIC, in nanoseconds. */
int64_t upfmt__realtime_offset(void);

#endif
