/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Which profile stack a drained count key went to. The same key (process,
 * thread, name, stacks) is counted again at every drain while its code
 * runs; with the stack it went to known, its count is added there without
 * naming its frames again. An entry holds only at the generation it was
 * made at (the symbolizer's view of the key's process: its maps, its perf
 * map, the process itself), and one unused for a whole drain is forgotten,
 * so that memory stays bounded by what two drains see. */
#ifndef SIDESCOPE_KEYMEMO_H
#define SIDESCOPE_KEYMEMO_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "profile.h"

struct keymemo;

struct keymemo *keymemo__new(void);
void keymemo__free(struct keymemo *m);
/* The stack id kept for K at generation GEN (non-zero), or -1. */
long keymemo__get(struct keymemo *m, const struct profile_key *k, uint64_t gen);
/* Keep ID for K at GEN (replacing what K had). 0 or -ENOMEM. */
int keymemo__put(struct keymemo *m, const struct profile_key *k, uint64_t gen, size_t id);
/* After a drain: forget what was not got or put since the last call. */
void keymemo__age(struct keymemo *m);
/* Entries held (both drains'). */
size_t keymemo__count(const struct keymemo *m);

#endif
