/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every BPF command sets up first: SIGINT and SIGTERM that end the
 * capture cleanly at any moment, and libbpf's messages through -v. */
#ifndef SIDESCOPE_RUN_H
#define SIDESCOPE_RUN_H

#include <signal.h>

/* The signal that asked to stop (SIGINT, SIGTERM), 0 while none has. */
extern volatile sig_atomic_t run__stop;

/* Catch SIGINT and SIGTERM into run__stop; call it first of all. */
void run__catch_stop(void);
/* libbpf's messages on stderr with -v, none without. */
void run__libbpf_quiet_unless_verbose(void);

#endif
