// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Runs a fuzz target over files, without libFuzzer: the seed corpora and
 * the crash regressions are replayed this way by 'make test'. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		char *buf;
		size_t len;

		if (read_file(argv[i], &buf, &len, 64 << 20)) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		free(buf);
		n++;
	}
	printf("%d inputs\n", n);
	return 0;
}
