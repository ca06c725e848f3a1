// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctf/ctfpair.h"
#include "core/util.h"

int ctfpair__classify(const char *name, char **base)
{
	static const struct { const char *w; enum ctfpair_kind k; } words[] = {
		{ "start", CTFPAIR_BEGIN }, { "begin", CTFPAIR_BEGIN },
		{ "stop", CTFPAIR_END }, { "end", CTFPAIR_END },
	};
	size_t len = strlen(name), i, wl, blen;
	const char *v;

	*base = NULL;
	/* strip "_V<digits>" */
	v = name + len;
	while (v > name && v[-1] >= '0' && v[-1] <= '9')
		v--;
	if (v < name + len && v - name >= 2 && v[-1] == 'V' && v[-2] == '_')
		len = (size_t)(v - name) - 2;
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		wl = strlen(words[i].w);
		if (len <= wl || strncasecmp(name + len - wl, words[i].w, wl) != 0)
			continue;
		blen = len - wl;
		if (name[blen - 1] == '_' || name[blen - 1] == ':') {
			blen--;
		} else if (!(name[blen] >= 'A' && name[blen] <= 'Z' &&
			     strncmp(name + blen + 1, words[i].w + 1, wl - 1) == 0)) {
			/* not CamelCase: "Append", "Legend", "BACKEND" are no ends */
			continue;
		}
		if (blen == 0)
			continue;
		*base = strndup(name, blen);
		if (!*base)
			return -ENOMEM;
		return words[i].k;
	}
	return CTFPAIR_NONE;
}
