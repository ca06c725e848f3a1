/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The user stack of one thread of a snapshot (stacks/snap), walked in user
 * space by the unwind tables of the objects its addresses fall in (sym/
 * cfitab, as the profiler's BPF walker reads them; frame pointers where an
 * object has none: JIT code), over the stack memory the snapshot copied.
 * Tables are built once per file (by its identity, through sym/cficache
 * when given) and kept for every later walk; what building them may take
 * is bounded (STK_BUILD_MS a process, STK_MAX_ROWS in all). The files are
 * the app's: opened through appfile. */
#ifndef SIDESCOPE_STACKS_WALK_H
#define SIDESCOPE_STACKS_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include <stacks.h>

#define STK_MAX_FRAMES 128
#define STK_BUILD_MS 3000
#define STK_MAX_ROWS (8u << 20)

struct stk_walker;
struct cficache;

/* CACHE may be NULL (kept by the caller until stk_walker__free) */
struct stk_walker *stk_walker__new(struct cficache *cache);
void stk_walker__free(struct stk_walker *w);

/* The process whose threads are walked next: its mappings read now. 0, or
 * a negative errno (-ESRCH: gone). */
int stk_walker__set_proc(struct stk_walker *w, pid_t pid);
/* Whether the process's maps read since set_proc still describe it (an
 * exec or exit since makes them unreadable: the snapshot is taken again). */
int stk_walker__proc_same(struct stk_walker *w);

/* Walk the thread of R (its user stack: LEN bytes at US, from UBASE) into
 * IPS (at most MAX; the first is the thread's pc, the others return
 * addresses). Return how many; *WHY: NULL when the walk reached the
 * outermost frame, else why it stopped. */
int stk_walker__walk(struct stk_walker *w, const struct stacks_rec *r, uint64_t ubase,
		     const uint8_t *us, uint64_t *ips, int max, const char **why);

#endif
