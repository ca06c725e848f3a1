/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Names for a running app's JIT code, without a restart: when a process
 * the profiler (or the timeline) first sees runs .NET 8+ or a HotSpot JVM
 * of JDK 17+ and has no perf map, its runtime is asked to write one
 * (rt/dotnetipc's EnablePerfMap; rt/jattach's Compiler.perfmap), and the
 * app is left as it was found at the end (a .NET perf map switched on here
 * is switched off again). A JVM's map is a snapshot: it is asked again
 * during the capture and once more at its end, for code compiled since.
 * A runtime that cannot be switched on from outside (Node) gets one line
 * with the flag to add at its next start. Each process is said once. */
#ifndef SIDESCOPE_RTNAMES_H
#define SIDESCOPE_RTNAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What can be had for a process's JIT code names (sidescope ps) */
enum rtnames_state {
	RTNAMES_NONE,		/* no JIT code known (native, Go, an interpreter) */
	RTNAMES_NOW,		/* a perf map is there */
	RTNAMES_ASK,		/* none, but its runtime can be asked now */
	RTNAMES_RESTART,	/* none, and only a restart with a flag gives one */
};

/* PID's state (in our PID namespace) and, for RESTART or an ASK that may
 * fail, what to set at its next start into HINT (SIZE bytes; "" when
 * none). Reads /proc and the app's root only: nothing is asked. */
enum rtnames_state rtnames__state(pid_t pid, char *hint, size_t size);
const char *rtnames__state_name(enum rtnames_state s);

struct rtnames_opts {
	bool hands_off;		/* ask nothing: only say what could be done */
	unsigned int timeout_ms;	/* one request's (0: RTNAMES_TIMEOUT_MS) */
};

#define RTNAMES_TIMEOUT_MS 1000
/* a JVM's perf map asked again this often during a capture */
#define RTNAMES_REFRESH_NS (5ull * 1000000000ull)
#define RTNAMES_MISS_NS (1ull * 1000000000ull)
/* what a capture loop gives those refreshes at one time */
#define RTNAMES_REFRESH_BUDGET_NS (500ull * 1000000ull)

struct rtnames;

/* NULL: no memory (said). */
struct rtnames *rtnames__new(const struct rtnames_opts *o);
/* PID (in our PID namespace), seen for the first time: its runtime asked
 * for a perf map when it has none; what could not be done said once. */
void rtnames__see(struct rtnames *r, pid_t pid);
/* How many of PID's frames its perf map did not name so far (the
 * symbolizer's count: symbolizer__jit_misses) */
typedef uint64_t (*rtnames_misses_fn)(void *ctx, pid_t pid);

/* The JVMs' perf maps asked again, until BUDGET_NS after NOW (now_ns()) is
 * spent: a JVM's when RTNAMES_REFRESH_NS have passed since its last, or
 * RTNAMES_MISS_NS when MISSES (may be NULL) says frames went unnamed since
 * (code compiled after it: named from the next drain on). */
void rtnames__refresh(struct rtnames *r, uint64_t now, uint64_t budget_ns,
		      rtnames_misses_fn misses, void *ctx);
/* The capture's end, before its last drain: every JVM's perf map asked
 * once more. */
void rtnames__last_refresh(struct rtnames *r);
/* After the last drain: the .NET perf maps switched on here switched off
 * again (unless the app turns them on itself). */
void rtnames__restore(struct rtnames *r);
/* Whether PID's runtime was asked here and writes its perf map: frames of
 * its JIT code unnamed now may be named a moment later. */
bool rtnames__writing(const struct rtnames *r, pid_t pid);
/* Processes asked, and how many perf maps were switched on or dumped. */
void rtnames__counts(const struct rtnames *r, unsigned int *asked, unsigned int *maps);

void rtnames__free(struct rtnames *r);

#endif
