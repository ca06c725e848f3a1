// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The bound on the R2R name arena: this file builds the reader itself with
 * a 1 MiB arena, so that a real assembly with more names than that (the
 * runtime's CoreLib, about 5 MiB of them) stands in for a hostile one that
 * would make the arena grow to 4 GiB. The small sample still opens. */
#define R2R_ARENA_MAX (1ull << 20)
#include "../../tools/lib/r2r.c"

#include <dirent.h>

#include "tap.h"

static int find_corelib(char *out, size_t n)
{
	const char *dirs[] = { "/usr/share/dotnet/shared/Microsoft.NETCore.App",
			       "/usr/lib/dotnet/shared/Microsoft.NETCore.App" };
	char best[256] = "";

	if (getenv("SIDESCOPE_CORELIB") && *getenv("SIDESCOPE_CORELIB")) {
		snprintf(out, n, "%s", getenv("SIDESCOPE_CORELIB"));
		return 0;
	}
	for (size_t d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			if (de->d_name[0] == '.' || strverscmp(de->d_name, best) <= 0)
				continue;
			snprintf(best, sizeof(best), "%s", de->d_name);
			snprintf(out, n, "%s/%s/System.Private.CoreLib.dll", dirs[d], best);
		}
		closedir(dir);
		if (best[0])
			return access(out, R_OK);
	}
	return -1;
}

int main(void)
{
	const char *b = getenv("SIDESCOPE_BUILD"), *req = getenv("SIDESCOPE_REQUIRE_ALL");
	char corelib[PATH_MAX], sample[PATH_MAX];
	struct r2r_image *img;

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
	img = r2r__open(sample);
	ok(img != NULL, "the sample's names fit in 1 MiB: it opens");
	r2r__free(img);
	img = r2r__open(corelib);
	ok(img == NULL, "an assembly with more names than the arena's bound is refused");
	ok(strstr(r2r__error(), "more method names than 1 MiB") != NULL, "and says why: %s",
	   r2r__error());
	r2r__free(img);
	return done_testing();
}
