// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Libraries loaded on first use (dynlib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/dynlib.h"

int dynlib__load(struct dynlib *lib, struct err *e)
{
	void *h;
	size_t i;

	if (lib->state == 0) {
		/* RTLD_LOCAL: its symbols serve this table only */
		h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *d = dlerror(), *n = lib->soname;
			size_t nl = strlen(n);

			/* "SONAME: cannot open ...": the name is said already */
			if (d && !strncmp(d, n, nl) && !strncmp(d + nl, ": ", 2))
				d += nl + 2;
			snprintf(lib->why, sizeof(lib->why), "%s", d ? d : "dlopen failed");
			lib->state = -ELIBACC;
		}
		for (i = 0; h && i < lib->n; i++) {
			lib->table[i] = dlsym(h, lib->names[i]);
			if (!lib->table[i]) {
				snprintf(lib->why, sizeof(lib->why), "it has no function %s",
					 lib->names[i]);
				memset(lib->table, 0, lib->n * sizeof(void *));
				dlclose(h);
				h = NULL;
				lib->state = -ELIBACC;
			}
		}
		if (h)
			lib->state = 1;	/* kept open to the end */
	}
	if (lib->state == 1)
		return 0;
	return err__set(e, ELIBACC, "cannot load %s: %s", lib->soname, lib->why);
}
