/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Debug files of stripped binaries fetched by build ID from the debuginfod
 * servers DEBUGINFOD_URLS names, as perf, gdb and elfutils do.
 *
 * - Never in the capture's way: each fetch runs in a child process (this
 *   binary again, `sidescope debuginfod-fetch`, through elfutils'
 *   libdebuginfod loaded there at run time: a missing library costs the
 *   capture nothing and curl never runs in the capturing process). A read
 *   of a file's symbols waits for its fetch DEBUGINFOD_WAIT_FILE_NS at
 *   most, a capture DEBUGINFOD_WAIT_ALL_NS in all; a fetch still running
 *   then goes on in its own session, up to its own limit, and the next
 *   capture finds the file in the cache.
 * - Bounded: one fetch gets DEBUGINFOD_TIMEOUT seconds in all (default
 *   DEBUGINFOD_TIMEOUT_S; the library's own progress callback cancels it)
 *   and DEBUGINFOD_MAXSIZE bytes (default DEBUGINFOD_FILE_MAX), checked
 *   against what the server announces and against what it sends (an
 *   endless body is cut off); one capture starts DEBUGINFOD_FETCHES_MAX
 *   fetches, DEBUGINFOD_RUNNING_MAX at once.
 * - The cache is the sidecar's: the directory debuginfod/ inside the
 *   table cache's (sym/cficache: ours, 0700), DEBUGINFOD_CACHE_MAX bytes
 *   at most, the files used longest ago removed first. A file there is
 *   the server's answer, untrusted: it is taken only through the callers'
 *   bounded readers and only if it carries the build ID asked for;
 *   anything else is removed with one line saying so.
 * - A server that is down, refuses, or is cut off gets one line per kind
 *   of failure, not one per file. */
#ifndef SIDESCOPE_DEBUGINFOD_H
#define SIDESCOPE_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

#define DEBUGINFOD_WAIT_FILE_NS	(1000ull * 1000 * 1000)
#define DEBUGINFOD_WAIT_ALL_NS	(5000ull * 1000 * 1000)
#define DEBUGINFOD_TIMEOUT_S	30
#define DEBUGINFOD_FILE_MAX	(256ull << 20)
#define DEBUGINFOD_CACHE_MAX	(512ull << 20)
#define DEBUGINFOD_FETCHES_MAX	64
#define DEBUGINFOD_RUNNING_MAX	4

struct budget;
struct debuginfod;


/* The fetcher for the servers of DEBUGINFOD_URLS, its cache in
 * TABLE_CACHE/debuginfod (created 0700 if missing). NULL when the
 * variable is unset or empty (errno ENOENT, nothing said), or after saying
 * in one line why the cache cannot be used. */
struct debuginfod *debuginfod__open(const char *table_cache);
/* Say what is still coming (fetches go on without us) and free D. */
void debuginfod__close(struct debuginfod *d);

/* TRY(DIRFD, REL, CTX): the candidate REL inside DIRFD taken (its
 * descriptor), or a negative errno: -ETIME out of time, else not taken. */
typedef int (*debuginfod_try_fn)(int dirfd, const char *rel, void *ctx);

/* The debug file of BUILD_ID (lowercase hex) through TRY: from the cache,
 * else fetched now, waited for within TIME and the waits above. A
 * descriptor, or -ENOENT (none, not yet, or D is NULL), -ETIME. */
int debuginfod__find(struct debuginfod *d, const char *build_id, debuginfod_try_fn try,
		     void *ctx, const struct budget *time);

/* The fetch child: `sidescope debuginfod-fetch DIR BUILD_ID SECONDS
 * MAX_BYTES`; one line on standard output, "ok" or "err ERRNO WHY". */
int debuginfod__fetch_main(int argc, char **argv);

#endif
