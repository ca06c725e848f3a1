/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tracing engine of sidescope uprobe: probe specs -> files and offsets
 * (uptarget), the BPF program (bpf/uprobe.bpf.c) loaded with their recipes
 * and attached (uplink), events read from its ring buffer and formatted
 * (upfmt) onto an output stream, optionally saved raw for a replay, and at
 * the end the per-probe counters and latency histograms.
 *
 *   s = session__new(&opts, specs, n, out);   the specs are the session's now
 *   session__save(s, path)                     optional
 *   session__resolve(s); session__load(s); session__attach(s);
 *   session__run(s);                           until a stop
 *   session__finish(s);                        drain, detach, report
 *   session__free(s);
 *
 * Every function that can fail says why with p_err (core/log.h, with the
 * capability hints of privhint and uplink) and returns a negative errno;
 * the caller only picks the exit status. */
#ifndef SIDESCOPE_SESSION_H
#define SIDESCOPE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "prof/prof.h"
#include "uprobe/probespec.h"

struct session_opts {
	pid_t pid;		/* the target (PIDs as the pod shows them); 0: every
				 * process of this PID namespace */
	uint64_t duration_s;	/* 0: until a stop */
	uint64_t count_limit;	/* events to print before stopping; 0: no limit */
	unsigned int max_str;	/* the --max-str the specs were finished with */
	unsigned int buf_kb;	/* ring buffer size in KiB (a power of 2) */
	bool json;		/* JSON lines (events, histograms, the summary) */
	bool latency;		/* attach the other half of each probe too and
				 * report log2 histograms */
	bool quiet;		/* count the events, format none */
	bool stacks;		/* count hits per user stack (session__profile) */
	size_t top;		/* --by: the most frequent values shown */
	unsigned int max_keys;	/* --by: distinct values counted at the most */
	unsigned int max_stacks;	/* --stacks: distinct stacks per second */
	const struct pe_resolver *pe;	/* --stacks: names in PE images, or NULL */
	/* When set, each event record (struct up_event_hdr and its data, SIZE
	 * bytes, borrowed for the call) goes to sink instead of the output:
	 * it returns 0, -EINVAL for a malformed record (counted, skipped) or
	 * another negative errno, which ends the run. */
	int (*sink)(void *arg, const void *rec, size_t size);
	void *sink_arg;
};

struct session;
struct pe_resolver;

/* A session over NSPECS parsed and finished specs (ownership passes to the
 * session, also on failure), writing to OUT (borrowed). With a PID, its
 * start time is taken now: the trace ends when that process exits, and a
 * later process with the same PID is not it. NULL on failure (errno). */
struct session *session__new(const struct session_opts *o, struct probe_spec **specs,
			     int nspecs, FILE *out);

/* Also save every event raw to PATH (the specs first) for session__replay. */
int session__save(struct session *s, const char *path);

/* Each probe's BINARY opened (uptarget__binary) and SYMBOL turned into a
 * file offset (uptarget__symbol). */
int session__resolve(struct session *s);

/* Open, size and load the BPF program; store each probe's recipe. */
int session__load(struct session *s);

/* Attach each probe (its companion too for latency) to the file resolved
 * and opened, then open the ring buffer. */
int session__attach(struct session *s);

/* Read events until a stop: SIGINT/SIGTERM (run__stop), the duration, the
 * count, the target's exit, or a probed file modified in place. Return 0
 * or a negative errno (the output or the ring buffer failed). */
int session__run(struct session *s);

/* Wait up to 50 ms for events and handle what came, for a caller that
 * runs its own loop instead of session__run. Return the records read, or
 * a negative errno (said; -EINTR when a signal came). */
int session__poll(struct session *s);

/* Events the kernel dropped (ring buffer full), known after
 * session__finish. */
uint64_t session__lost(const struct session *s);

/* Read events for up to a second until the first probe's first event
 * arrives. Return whether it did. */
bool session__wait_first(struct session *s);

/* Read what is queued, detach, read what came meanwhile; the histograms
 * and the JSON summary on the output, the per-probe counters on stderr,
 * the save file flushed. */
int session__finish(struct session *s);

/* --stacks: after session__finish, the hits per stack (owned by the
 * session), symbolized; NULL before or without. */
struct prof *session__profile(struct session *s);

/* Detach and free everything, closing the files; NULL is fine. */
void session__free(struct session *s);

/* Decode the events saved at PATH onto OUT (JSON lines with JSON) as fast
 * as possible, with the original times; report the rate on stderr. */
int session__replay(const char *path, FILE *out, bool json);

#endif
