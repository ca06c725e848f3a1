// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Runs a fuzz target over files, without libFuzzer: the seed corpora and
 * the crash regressions are replayed this way by 'make test'. An input
 * that takes longer than libFuzzer's -timeout in 'make fuzz' (10 s;
 * FUZZ_TIMEOUT seconds when set) fails the run, as it fails fuzzing. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current;

static void on_alarm(int sig)
{
	static const char msg[] = ": slower than the time for one input (FUZZ_TIMEOUT)\n";

	(void)sig;
	if (write(STDERR_FILENO, current, strlen(current)) < 0 ||
	    write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *env = getenv("FUZZ_TIMEOUT");
	unsigned limit = env && atoi(env) > 0 ? (unsigned)atoi(env) : 10;
	int i, n = 0;

	signal(SIGALRM, on_alarm);
	for (i = 1; i < argc; i++) {
		char *buf;
		size_t len;

		if (read_file(argv[i], &buf, &len, 64 << 20)) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 1;
		}
		current = argv[i];
		alarm(limit);
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		alarm(0);
		free(buf);
		n++;
	}
	printf("%d inputs\n", n);
	return 0;
}
