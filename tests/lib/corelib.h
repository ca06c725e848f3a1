/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The .NET runtime's System.Private.CoreLib.dll, a large real ReadyToRun
 * image for the R2R tests: $SIDESCOPE_CORELIB, else the newest runtime's
 * under the SDK's usual directories. */
#ifndef SIDESCOPE_TEST_CORELIB_H
#define SIDESCOPE_TEST_CORELIB_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The path in OUT; return 0 when it is readable. */
static int find_corelib(char *out, size_t n)
{
	const char *env = getenv("SIDESCOPE_CORELIB");
	const char *dirs[] = { "/usr/share/dotnet/shared/Microsoft.NETCore.App",
			       "/usr/lib/dotnet/shared/Microsoft.NETCore.App" };
	char best[256] = "";

	if (env && *env) {
		snprintf(out, n, "%s", env);
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

#endif
