// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* replace_v2: replace_v1 with more code before probed_fn. */
#define REPLACE_V2 1
#include "replace_v1.c"
