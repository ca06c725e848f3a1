/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The timeline of one process (sidescope timeline): CPU samples, uprobe
 * hits and LTTng events on one clock, written as one Chrome trace event
 * JSON document (Perfetto UI, chrome://tracing).
 *
 * Every time is in nanoseconds of CLOCK_MONOTONIC as BPF reads it
 * (bpf_ktime_get_ns); the document's times are microseconds since ORIGIN.
 *
 *   tl = timeline__new(pid, origin, period_ns);
 *   timeline__sample(tl, ts, tid, stack, kernel)   stack from timeline__stack
 *   timeline__instant(tl, ts, tid, name, args_json)
 *   timeline__raw_events(tl, text)                 events written elsewhere
 *   timeline__write(tl, out, other_data_fn, arg)
 *   timeline__free(tl);
 *
 * Samples become "X" slices on their thread's track named by the leaf
 * function: consecutive samples of one thread with the same leaf are
 * merged, a slice spanning from its first sample to its last plus one
 * period (cut at the next slice of the thread, and broken where the thread
 * was not sampled for two periods: off the CPU). Thread names are read from
 * /proc/PID/task/TID/comm when a thread is first seen. */
#ifndef SIDESCOPE_TIMELINE_TIMELINE_H
#define SIDESCOPE_TIMELINE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/json.h"

struct timeline;

/* A timeline of process PID (as this PID namespace numbers it); its name
 * is read now. NULL with errno set. */
struct timeline *timeline__new(pid_t pid, uint64_t origin_ns, uint64_t period_ns);
void timeline__free(struct timeline *tl);

/* A stack (leaf first, N names copied by reference: they must live as
 * long as the timeline, e.g. the symbolizer's) under key HASH; return its
 * index, or -ENOMEM. An index for a hash already added is returned as is. */
int timeline__stack(struct timeline *tl, uint64_t hash, const char *const *names, size_t n);
/* The index of the stack stored under HASH, or -ENOENT. */
int timeline__find_stack(const struct timeline *tl, uint64_t hash);

/* One CPU sample of thread TID at TS; STACK an index from timeline__stack
 * or -1 (no user stack). Return 0 or -ENOMEM. */
int timeline__sample(struct timeline *tl, uint64_t ts, pid_t tid, int stack, bool kernel);

/* An instant event NAME on thread TID at TS, ARGS a JSON object as text
 * (copied; NULL: none). Return 0 or -ENOMEM. */
int timeline__instant(struct timeline *tl, uint64_t ts, pid_t tid, const char *name,
		      const char *args, size_t args_len);

/* Name thread TID (copied) unless it has a name already; COMM: a hint
 * used when /proc has none (NULL: none). Return 0 or -ENOMEM. */
int timeline__thread(struct timeline *tl, pid_t tid, const char *comm);
/* Whether thread TID has been seen. */
bool timeline__has_thread(const struct timeline *tl, pid_t tid);

/* Events already formatted as trace event objects, one or more separated
 * by ",\n" (copied), written after the others. Return 0 or -ENOMEM. */
int timeline__raw_events(struct timeline *tl, const char *text, size_t len);
/* The same, TEXT (malloc'd) taken: the timeline frees it, on failure too. */
int timeline__raw_take(struct timeline *tl, char *text, size_t len);

/* Counts for the summary. */
struct timeline_counts {
	uint64_t samples, slices, instants, threads;
};
void timeline__counts(const struct timeline *tl, struct timeline_counts *c);

/* Called inside "otherData" to add the caller's keys (what was lost). */
typedef void (*timeline_other_fn)(void *arg, struct json *j);

/* Write the document to OUT. Return 0, or -EIO on a write error of OUT
 * (ferror), -ENOMEM. */
int timeline__write(struct timeline *tl, FILE *out, timeline_other_fn other, void *arg);

/* For writers of the file's events (timeline.c, tllttng.c's reader):
 * start one event object on OUT, after ",\n" unless *FIRST (then
 * cleared); and TS as KEY in microseconds since ORIGIN (negative before
 * it), with nanosecond decimals. */
void timeline__event_start(FILE *out, bool *first, struct json *j);
void timeline__put_time(struct json *j, const char *key, uint64_t ts, uint64_t origin);

#endif
