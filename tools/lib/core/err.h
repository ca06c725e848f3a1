/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one error convention of the library: a function that can fail in
 * more than one way returns a negative errno (or NULL with errno set) and,
 * when its caller passes a struct err, says why in one line there, with
 * the column of the input where it went wrong when there is one. The
 * caller decides how to show it (p_err, a caret under a probe, JSON). */
#ifndef SIDESCOPE_ERR_H
#define SIDESCOPE_ERR_H

#define ERR_MSG_MAX 1024

struct err {
	int col;		/* 1-based column in the input, 0 if none */
	char msg[ERR_MSG_MAX];	/* "" when nothing was said */
};

/* Say why in E (may be NULL); return -ERRNUM. */
int err__set(struct err *e, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with a column. */
int err__set_at(struct err *e, int col, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void err__clear(struct err *e);

#endif
