// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The argument kinds' table (argkind.h), expanded from bpf/uprobe.h. */
#include <string.h>

#include "uprobe/argkind.h"

static const struct argkind kinds[UP_NKINDS] = {
#define AK_ROW(id, nm, u, sec, fl) [UP_KIND_##id] = { .name = nm, .unit = u, .second = sec, .flags = fl },
	UP_ARG_KINDS(AK_ROW)
#undef AK_ROW
};

const struct argkind *argkind__get(enum up_kind kind)
{
	return (unsigned int)kind < UP_NKINDS ? &kinds[kind] : &kinds[UP_KIND_INT];
}

int argkind__by_name(const char *name, size_t n)
{
	int k;

	for (k = 0; k < UP_NKINDS; k++)
		if ((kinds[k].flags & AK_CALL) && strlen(kinds[k].name) == n &&
		    strncmp(kinds[k].name, name, n) == 0)
			return k;
	return -1;
}

bool argkind__is_string(enum up_kind kind)
{
	return argkind__get(kind)->unit != 0;
}

unsigned int argkind__data_bytes(enum up_kind kind, unsigned int units)
{
	return (units + 1) * argkind__get(kind)->unit;
}
