/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one hash of the library, for in-memory tables (not for BPF maps:
 * bpf/stackstore.bpf.h hashes stacks in the kernel). FNV-1a over bytes, finished
 * with a 64-bit mixer so that the low bits, which pick the slot of a
 * power-of-two table, depend on every input bit. */
#ifndef SIDESCOPE_HASH_H
#define SIDESCOPE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_SEED 0xcbf29ce484222325ull

/* The mixer alone (splitmix64's finaliser): a hash of one integer. */
static inline uint64_t hash__u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Continue hash H over N bytes at P; start with HASH_SEED and finish with
 * hash__u64 (hash__bytes does both). */
static inline uint64_t hash__more(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t hash__bytes(const void *p, size_t n)
{
	return hash__u64(hash__more(HASH_SEED, p, n));
}

/* A hash of N bytes at P eight at a time, for checksums of large blocks
 * (a cache entry, a file's text): about eight times as fast as hash__bytes,
 * and not the same value. Continue H with hash__more_words, starting from
 * HASH_SEED; every piece but the last a multiple of 8 bytes long. */
static inline uint64_t hash__more_words(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	return hash__more(h, b, n);
}

static inline uint64_t hash__words(const void *p, size_t n)
{
	return hash__u64(hash__more_words(HASH_SEED, p, n));
}

static inline uint64_t hash__str(const char *s)
{
	return hash__bytes(s, strlen(s));
}

/* Two hashes (or a hash and an integer) as one. */
static inline uint64_t hash__pair(uint64_t a, uint64_t b)
{
	return hash__u64(a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)));
}

#endif
