/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stacks copied out of the profiler's BPF stack store, by hash. The
 * profiler deletes each stack from the store once copied, so the kernel
 * side stays small; a sample that raced with the delete still finds its
 * stack here at the next drain. Entries unused for a few drains are freed,
 * so that a capture over many processes (every one with its own addresses)
 * does not grow without end. */
#ifndef SIDESCOPE_STACKCACHE_H
#define SIDESCOPE_STACKCACHE_H

#include <stddef.h>
#include <stdint.h>

struct stackcache;

struct stackcache *stackcache__new(void);
void stackcache__free(struct stackcache *sc);

/* The stack cached for HASH (non-zero): [0] = depth, then the addresses;
 * owned by the cache, valid until the next put or sweep. NULL when absent.
 * Marks the entry used in EPOCH (the drain number). */
const uint64_t *stackcache__get(struct stackcache *sc, uint64_t hash, uint64_t epoch);
/* Copy the DEPTH addresses IPS in under HASH (non-zero, not present),
 * used in EPOCH. Return the cached copy, or NULL with errno = ENOMEM. */
const uint64_t *stackcache__put(struct stackcache *sc, uint64_t hash, const uint64_t *ips,
				size_t depth, uint64_t epoch);
/* Free the entries last used more than KEEP epochs before EPOCH. Return how
 * many were freed. */
size_t stackcache__sweep(struct stackcache *sc, uint64_t epoch, uint64_t keep);
size_t stackcache__count(const struct stackcache *sc);

#endif
