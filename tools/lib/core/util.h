/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers shared by every subcommand. */
#ifndef SIDESCOPE_UTIL_H
#define SIDESCOPE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Parse a whole decimal (or 0x hex) number within [min, max].
 * Return 0, or -EINVAL (not a number) / -ERANGE (out of range). */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_long(const char *s, long min, long max, long *out);
/* A size in bytes: N, or N with k, M or G (powers of 1024; "Ki", "MiB" and
 * the like too). Same returns as parse_u64. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parse "PID[,PID...]" into a newly allocated array; caller frees *pids.
 * Return the count, or a negative errno. */
int parse_pid_list(const char *s, pid_t **pids);

/* Read a whole file of this process's own (a /proc file, a fixture; files the
 * application controls go through appfile.h) of at most MAX bytes (0:
 * READ_FILE_MAX) into a NUL-terminated malloc'd buffer. Return 0, -EFBIG
 * when it is longer, or another negative errno; caller frees *buf. */
#define READ_FILE_MAX (256u << 20)
int read_file(const char *path, char **buf, size_t *len, size_t max);

bool str_has_suffix(const char *s, const char *suffix);
bool str_has_prefix(const char *s, const char *prefix);
/* Room for element N of the array at *ARRP (a pointer to the array's
 * pointer), of ELEM-byte elements and *CAP allocated: doubled (from FIRST)
 * when N reaches *CAP. 0, or -ENOMEM with the array as it was. */
int array__room(void *arrp, size_t *cap, size_t n, size_t elem, size_t first);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/* Whether the running kernel's release (uname) is MAJOR.MINOR or newer;
 * false when it cannot be told. For features no probe can tell cheaply. */
bool kernel_at_least(unsigned int major, unsigned int minor);

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* S itself when it is at most MAX bytes long; else, in BUF (room for MAX +
 * 4 bytes), its first MAX bytes, fewer so as not to end inside a UTF-8
 * sequence, and "...". For names the application chooses, kept whole up
 * to a bound. */
#define UTF8_CUT_ROOM(max) ((max) + 4)
const char *utf8_cut(const char *s, size_t max, char *buf);

#endif
