// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libbabeltrace2's table (bt2.h). */
#define BT2_TABLE_ITSELF
#include "ctf/bt2.h"

DYNLIB_DEFINE_SHARED(bt2, "libbabeltrace2.so.0", BT2_FUNCS);

int bt2__load(struct err *e)
{
	return dynlib__load(&bt2_lib, e);
}
