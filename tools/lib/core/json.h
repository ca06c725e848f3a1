/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one JSON writer: compact output (no spaces), strings escaped so that
 * names the application chose are valid JSON and safe on a terminal.
 *
 *   struct json j;
 *   json__init(&j, stdout);
 *   json__obj(&j);
 *   json__key(&j, "pid");   json__u64(&j, 7);
 *   json__key(&j, "names"); json__arr(&j); json__str(&j, "a"); json__end(&j);
 *   json__end(&j);          -> {"pid":7,"names":["a"]}
 *
 * Commas are the writer's business; nesting is bounded by JSON_MAX_DEPTH
 * (deeper values are still written, with their commas, but unchecked). */
#ifndef SIDESCOPE_JSON_H
#define SIDESCOPE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool after_key;
	bool has_items[JSON_MAX_DEPTH];	/* a comma goes before the next item */
	char closer[JSON_MAX_DEPTH];	/* '}' or ']' */
};

void json__init(struct json *j, FILE *f);
void json__obj(struct json *j);
void json__arr(struct json *j);
void json__end(struct json *j);
void json__key(struct json *j, const char *key);
void json__str(struct json *j, const char *s);
void json__strn(struct json *j, const char *s, size_t n);
void json__u64(struct json *j, uint64_t v);
void json__i64(struct json *j, int64_t v);
void json__bool(struct json *j, bool v);
void json__null(struct json *j);
/* A number (or other value) formatted by the caller: json__num(j, "%.3f", x). */
void json__num(struct json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The escaper itself: S as a JSON string literal (quotes included), every
 * byte that is not valid UTF-8 replaced by U+FFFD, control characters (C0,
 * DEL, C1) escaped. */
void json_write_string(FILE *f, const char *s);
void json_write_stringn(FILE *f, const char *s, size_t n);

#endif
