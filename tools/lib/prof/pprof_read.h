/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pprof reader: a profile.proto Profile, gzip'd or plain, turned into
 * stacks (outermost frame first) for the flame graph. Frame kinds come
 * from the Mapping filename conventions in frame.h. */
#ifndef SIDESCOPE_PPROF_READ_H
#define SIDESCOPE_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/folded.h"

struct pprof_read_stats {
	uint64_t samples;	/* Sample messages read */
	uint64_t bad;		/* samples skipped: unknown location, negative value */
	uint64_t total;		/* sum of the chosen value */
	char value_type[64];	/* the chosen sample type, e.g. "samples" */
	char value_unit[64];	/* and its unit, e.g. "count", "nanoseconds" */
};

/* True when buf starts with the gzip magic. */
bool pprof__is_gzip(const void *buf, size_t len);

/* Inflate a gzip stream into a new buffer (NUL-terminated, not counted in
 * *out_len), refusing more than max bytes (0: 1 GiB). Caller frees *out.
 * Return 0, -EINVAL (not gzip / corrupt), -EFBIG or -ENOMEM. */
int pprof__gunzip(const void *in, size_t len, char **out, size_t *out_len, size_t max);

/* Kind of the code in a mapping with this filename (NULL: no mapping). */
enum frame_kind pprof__mapping_kind(const char *filename);

/* Decode a profile (gzip'd or not) and call cb once per sample with its
 * stack (headed by the sample's "thread" label, else its "comm" label,
 * when it has one, as folded stacks start with the thread's name) and the value of sample type value_type (NULL: "samples" if the
 * profile has it, else its default sample type, else the last one).
 * Return 0, -EINVAL (not a profile, or no such sample type), -ENOMEM, or
 * the first negative errno of cb. */
int pprof__read(const void *buf, size_t len, const char *value_type, folded_cb cb,
		void *ctx, struct pprof_read_stats *st);

#endif
