/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One process's snapshot (stacks/snap, stacks/walk) as a thread dump: the
 * threads' raw stacks kept as read, named afterwards (sym/symbolize: the
 * profile's names, perf maps included), the hints the stacks give (a
 * mutex's owner, a deadlock, a thread in disk wait), then written as text
 * (threads with the same stack once, the rarest first) or JSON (every
 * thread). Every name is the app's: escaped in text, JSON-escaped in JSON. */
#ifndef SIDESCOPE_STACKS_DUMP_H
#define SIDESCOPE_STACKS_DUMP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "stacks/snap.h"

struct symbolizer;
struct json;

struct stk_frame {
	const char *name;	/* the symbolizer's */
	const char *module;	/* base name, "" when none */
};

struct stk_th {
	struct stacks_rec r;	/* as read (its stacks below) */
	char wchan[64];
	uint64_t *ips;		/* kernel frames, then user frames */
	int nk, nu;
	const char *cut;	/* why the user walk stopped short, or NULL */
	struct stk_frame *fr;	/* nk + nu, once named */
	pid_t nstid;		/* its TID in the app's own PID namespace */
	pid_t owner;		/* the TID holding the lock it waits for (ours) */
	int deadlock;		/* in a cycle of such waits */
	uint64_t key;		/* its stack and state, for grouping */
};

struct stk_dump {
	pid_t pid;
	char comm[64];
	int64_t when_ns;	/* CLOCK_REALTIME of the snapshot */
	struct stk_th *th;
	size_t n, cap;
	struct stk_th **by_tid;	/* th by TID, once named (stk_dump__name) */
	struct stk_th **by_nstid;	/* and by their TIDs in the app's namespace */
	size_t threads_now;	/* /proc/PID/status Threads: after it */
	struct stk_snap_stats st;
	uint64_t took_ns;
	int retried;		/* taken again: the process exec'd meanwhile */
};

/* Keep thread R with its user frames IPS (NU of them, WHY as the walk
 * said). 0, or -ENOMEM. */
int stk_dump__add(struct stk_dump *d, const struct stacks_rec *r, const uint64_t *ips, int nu,
		  const char *why);
/* Name every frame and find the hints. 0, or -ENOMEM. */
int stk_dump__name(struct stk_dump *d, struct symbolizer *sz);
void stk_dump__text(const struct stk_dump *d, FILE *f);
void stk_dump__json(const struct stk_dump *d, struct json *j);
void stk_dump__reset(struct stk_dump *d);

#endif
