// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Signal and libbpf set-up shared by the BPF commands (run.h). */
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/run.h"

volatile sig_atomic_t run__stop;

static void on_signal(int sig)
{
	run__stop = sig;
}

void run__catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!log_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void run__libbpf_quiet_unless_verbose(void)
{
	libbpf_set_print(libbpf_print);
}
