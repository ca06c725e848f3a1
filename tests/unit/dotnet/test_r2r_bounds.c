// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The bound on the R2R name arena: this file builds the part of the reader
 * that holds the arena (r2r_native.c) with a 1 MiB one, so that a real
 * assembly with more names than that (the runtime's CoreLib, about 5 MiB of
 * them) stands in for a hostile one that would make the arena grow to
 * 4 GiB. The small sample still opens. The rest of the reader comes from
 * the library; its r2r_native.o is not linked in, as this file defines
 * every symbol that object does. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define R2R_ARENA_MAX (1ull << 20)
#include "../../../tools/lib/dotnet/r2r_native.c"

#include "corelib.h"
#include "tap.h"

int main(void)
{
	const char *b = getenv("SIDESCOPE_BUILD"), *req = getenv("SIDESCOPE_REQUIRE_ALL");
	char corelib[PATH_MAX], sample[PATH_MAX];
	struct r2r_image *img;
	struct err why;

	snprintf(sample, sizeof(sample), "%s/r2r/publish/R2RSample.dll", b ? b : "build");
	if (find_corelib(corelib, sizeof(corelib)) || access(sample, R_OK)) {
		if (req && strcmp(req, "1") == 0) {
			printf("1..1\nnot ok 1 - required but unavailable: the .NET runtime's "
			       "CoreLib and the R2R sample\n");
			return 1;
		}
		printf("1..0 # SKIP needs the .NET runtime's CoreLib and the R2R sample\n");
		return 0;
	}
	img = r2r__open(sample, &why);
	ok(img != NULL, "the sample's names fit in 1 MiB: it opens");
	r2r__free(img);
	img = r2r__open(corelib, &why);
	ok(img == NULL, "an assembly with more names than the arena's bound is refused");
	ok(strstr(why.msg, "more method names than 1 MiB") != NULL, "and says why: %s",
	   why.msg);
	r2r__free(img);
	return done_testing();
}
