/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one sanitizer for text that reaches a terminal or a line-based text
 * format. Names the application chose (process names, command lines,
 * symbols, perf-map and .NET method names, LTTng payloads) are hostile:
 * escaped this way they can neither move the cursor nor hide what follows.
 *
 *   printable ASCII          as is
 *   backslash                \\   (as is with ESCAPE_KEEP_BACKSLASH)
 *   newline, tab, CR         \n \t \r
 *   other C0 and DEL         \xNN
 *   C1 U+0080..U+009F        \u00NN  (UTF-8 c2 80..c2 9f: U+009B is a CSI)
 *   other valid UTF-8        as is
 *   invalid UTF-8            \xNN, every byte of it
 *
 * Display columns are counted one per output code point (a wide CJK
 * character counts as one). JSON has its own escaping (json_write_string, core/json.h). */
#ifndef SIDESCOPE_ESCAPE_H
#define SIDESCOPE_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Leave backslashes alone: for formats whose readers never parse escapes
 * (folded stacks), where doubling them would change every .NET or C++
 * name that has one. */
#define ESCAPE_KEEP_BACKSLASH 0x1u

/* The most bytes escape__mem writes for N input bytes. */
#define ESCAPE_MAX(n) ((n) * 4)

/* Escape the N bytes at S (NULs included) into DST, which has room for
 * ESCAPE_MAX(N) bytes; no NUL is added. Return the bytes written. */
size_t escape__mem(char *dst, const char *s, size_t n, unsigned int flags);

/* Escape the N bytes at S into DST of SIZE bytes, NUL-terminated when SIZE
 * is not 0, in at most MAXCOLS display columns (0: no limit). What does
 * not fit is cut before a whole escape or UTF-8 sequence and marked with
 * "..." (as many dots as fit). Return the display columns written. */
size_t escape__str(char *dst, size_t size, const char *s, size_t n, size_t maxcols,
		   unsigned int flags);

/* Write the escaped N bytes at S to F. Return 0, or -EIO on a write
 * error (F's error flag is set too). */
int escape__fwrite(FILE *f, const char *s, size_t n, unsigned int flags);

/* The escaped form of the N bytes at S as a new NUL-terminated string
 * (caller frees), or NULL with errno set. */
char *escape__dup(const char *s, size_t n, unsigned int flags);

#endif
