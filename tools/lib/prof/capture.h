/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The capture engine of stack profiles: moves what a BPF program counted
 * into the profile model (prof.h), symbolized.
 *
 * The BPF side has the maps of bpf/profile.h: two hash maps of counts
 * (struct profile_key -> __u64), of which the global "active" index names
 * the one being counted into; a hash map of stacks (hash -> struct
 * profile_stack, the leaf first, 0-terminated); a per-CPU array of
 * PSTAT_MAX counters; and a ring buffer of struct profile_new, the
 * processes sampled for the first time.
 *
 * capture__drain flips "active", waits for the programs that read the old
 * index (microseconds), then empties the idle count map and the stack store
 * into the profile: memory stays bounded and no increment races with the
 * drain. Any BPF program with these maps (on-CPU samples, off-CPU waits)
 * can be drained by it.
 *
 * The caller owns what it hands in (the symbolizer, the profile, the stack
 * cache, the maps); the capture owns its buffers and the ring buffer
 * reader, released by capture__free. */
#ifndef SIDESCOPE_PROF_CAPTURE_H
#define SIDESCOPE_PROF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "prof/prof.h"
#include "profile.h"

struct ring_buffer;
struct keymemo;
struct stackcache;
struct symbolizer;

/* The BPF object's maps as descriptors, and its "active" index. */
struct capture_maps {
	int counts[2];		/* count maps, by the value of *active */
	int stacks;		/* stack store */
	int stats;		/* per-CPU counters (enum profile_stat) */
	int news;		/* ring buffer of struct profile_new, -1: none */
	int offstart;		/* off-CPU: TID -> struct profile_offstart, -1: none */
	volatile __u32 *active;	/* the global the programs read (mmap'd) */
};

/* A drained count held back because its stack has JIT code its process's
 * perf map did not name yet (one that is being written) */
struct capture_held {
	struct profile_key k;
	__u64 count;
	unsigned int drains;	/* drains it was held through */
};

/* a count is held back through this many drains at most, and this many
 * counts at once; then it goes into the profile as it is */
#define CAPTURE_HOLD_DRAINS 3
#define CAPTURE_HOLD_MAX 16384

/* A report of the "news" ring buffer, waiting to be handled */
struct capture_news {
	pid_t pid;
	uint32_t want;		/* struct profile_new's */
};

struct capture {
	/* set by the caller before capture__start */
	const pid_t *pids;	/* -p/-n targets and their start times */
	const uint64_t *starts;
	int npids;
	struct capture_maps maps;
	struct stackcache *stacks;	/* stacks copied out of the BPF store */
	struct symbolizer *sz;
	struct prof *prof;
	/* called for a process sampled for the first time, after the
	 * symbolizer watches it (NULL: none) */
	void (*on_new)(void *arg, pid_t pid);
	void *on_new_arg;
	/* called when a walk needs the table of mapping IDX of unwind_maps,
	 * of process PID (struct profile_new's want; NULL: none), with
	 * on_new_arg */
	void (*on_want)(void *arg, pid_t pid, uint32_t idx);
	/* whether PID's JIT code may get names by a later drain (its
	 * runtime was asked for a perf map: rt/rtnames); NULL: never. A
	 * count of it with unnamed JIT frames is then held back and named
	 * again at the next drains, CAPTURE_HOLD_DRAINS at most, and at the
	 * last (c->last) whatever its names */
	bool (*names_coming)(void *arg, pid_t pid);
	bool last;		/* the capture's last drains: nothing held */
	/* read by the caller */
	struct prof_meta meta;	/* samples and losses (capture__read_stats) */
	uint64_t pid_reused;	/* samples of another process with a target's PID */
	uint64_t news_lost;	/* reports of first-sampled processes lost */
	uint64_t drains;
	uint64_t off_pending;	/* threads still off the CPU at the end */
	/* the capture's own */
	struct ring_buffer *news;	/* processes sampled for the first time */
	struct capture_news *pending;	/* its reports still to handle */
	struct capture_held *held, *held_next;	/* counts held back */
	size_t nheld, held_cap, nheld_next, held_next_cap;
	uint64_t held_total;		/* counts held back, in all */
	size_t news_head, news_n, news_cap;
	uint64_t news_dropped;		/* reports not queued: too many waiting */
	struct keymemo *memo;		/* the stack each key went to */
	size_t nkeys_last;		/* keys of the last drain */
	uint64_t memo_hits;		/* of those, added by c->memo */
	bool store_read;		/* the last drain read the stack store */
	struct profile_key *keys;	/* a drain's counts, read in batches */
	__u64 *vals;
	size_t keys_cap;
	__u64 *stack_keys;		/* one batch of the stack store */
	struct profile_stack *stack_vals;
	__u32 *off_keys;		/* one batch of maps.offstart */
	struct profile_offstart *off_vals;
	char waker_comm[PROFILE_COMM_LEN + 1];	/* a frame's name, copied by prof__add */
};

/* Open the reader of maps.news (when not -1), whose reports make the
 * symbolizer watch a process while it lives. Return 0 or a negative
 * errno. */
int capture__start(struct capture *c);

/* Wait up to MS milliseconds for reports of new processes and handle
 * them (without a ring buffer: sleep MS). Handling one is the app's to
 * slow down (a read of its maps takes a second when it has 60,000): the
 * reports still waiting when MS (at least CAPTURE_POLL_MIN_MS) have
 * passed, or a stop signal came, are handled by the next poll. Return the
 * number handled or a negative errno (-EINTR when a signal came). */
#define CAPTURE_POLL_MIN_MS 100
#define CAPTURE_NEWS_MAX 65536	/* reports waiting at most */
int capture__poll(struct capture *c, int ms);

/* The queue under capture__poll, for tests: a report (a process first
 * sampled, WANT 0; a walk's want, struct profile_new's) queued once,
 * past CAPTURE_NEWS_MAX waiting counted in news_dropped; and the queued
 * reports handled until now_ns() reaches UNTIL or a stop signal comes, at
 * least one when any waits: how many. */
void capture__queue_news(struct capture *c, pid_t pid, uint32_t want);
int capture__handle_news(struct capture *c, uint64_t until);

/* Flip the active count map and move the other one's counts into the
 * profile. Return 0, or a negative errno (-ENOMEM, a bpf() or symbolizer
 * error). */
int capture__drain(struct capture *c);

/* Off-CPU: count the time of threads still off the CPU at NOW (the BPF
 * clock, CLOCK_MONOTONIC outside any time namespace) as if they ran again
 * then, after the last drain, with the programs detached. Return 0, or a
 * negative errno. */
int capture__flush_offstart(struct capture *c, uint64_t now);

/* Sum the per-CPU counters into c->meta (samples, stacks lost and
 * truncated), c->pid_reused and c->news_lost. */
void capture__read_stats(struct capture *c);
/* A warning for each cause of the stacks and samples the kernel could not
 * keep (capture__read_stats), with what to do about it (prof__fail_advice:
 * for a full map, raise OPTION, now NOW). */
void capture__say_fail_hints(const struct capture *c, const char *option, unsigned long long now);

/* Whether a -p/-n target still runs: some c->pids[i] names the process
 * that started at c->starts[i] (proc__alive). */
bool capture__any_alive(const struct capture *c);

/* Release what the capture owns; C can be started again afterwards. */
void capture__free(struct capture *c);

#endif
