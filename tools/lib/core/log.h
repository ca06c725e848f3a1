/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Diagnostics funnel: every message to the user goes through here. */
#ifndef SIDESCOPE_LOG_H
#define SIDESCOPE_LOG_H

#include <stdbool.h>

extern bool log_verbose;	/* -v: debug messages and libbpf chatter */

/* Name printed before every message, e.g. "sidescope profile". */
void log__set_prog(const char *prog);
const char *log__prog(void);

/* The command's arguments: "--json" among them (before "--") makes every
 * message one JSON object on stderr,
 *   {"level":"error","program":"sidescope ps","message":"..."}
 * and turns getopt's own messages into ours. */
void log__set_args(int argc, char **argv);
bool log__json(void);

void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "prog: message" plus a hint to run `COMMAND --help`; return 2. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After getopt has named the bad option: print the --help hint; return 2. */
int usage_hint(void);

#endif
