// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Libraries loaded on first use: a library that is there, one that is
 * not, one without a function the table names; the outcome kept. And a
 * shared table sidescope ships: libbabeltrace2's, every function found
 * (one of the header's inline functions in it once failed every read). */
#include <errno.h>
#include <string.h>

#include "core/dynlib.h"
#include "ctf/bt2.h"
#include "tap.h"

#define LIBC_FUNCS(X) X(strlen) X(strchr)
DYNLIB_DEFINE(libc, "libc.so.6", LIBC_FUNCS);

#define NONE_FUNCS(X) X(strlen)
DYNLIB_DEFINE(none, "libsidescope-none.so.9", NONE_FUNCS);

/* a name libc does not have, with a type to take */
int sidescope_no_such_function(int);
#define ODD_FUNCS(X) X(strlen) X(sidescope_no_such_function)
DYNLIB_DEFINE(odd, "libc.so.6", ODD_FUNCS);

int main(void)
{
	struct err e = { 0 };

	is_int(dynlib__load(&libc_lib, &e), 0, "libc.so.6 loads");
	ok(libc.strlen && libc.strchr, "its functions are in the table");
	is_int(libc.strlen ? (int)libc.strlen("sidescope") : -1, 9, "and called through it");
	is_int(dynlib__load(&libc_lib, NULL), 0, "a second call keeps the outcome");

	err__clear(&e);
	is_int(dynlib__load(&none_lib, &e), -ELIBACC, "a library that is not there: -ELIBACC");
	ok(!strcmp(e.msg, "cannot load libsidescope-none.so.9: cannot open shared object file: "
		       "No such file or directory"),
	   "the message names it and says why: %s", e.msg);
	ok(!none.strlen, "its table stays empty");
	err__clear(&e);
	is_int(dynlib__load(&none_lib, &e), -ELIBACC, "a second call fails the same way");
	ok(strstr(e.msg, "cannot load libsidescope-none.so.9") != NULL, "and says it again");

	err__clear(&e);
	is_int(dynlib__load(&odd_lib, &e), -ELIBACC, "a function the library lacks: -ELIBACC");
	ok(strstr(e.msg, "cannot load libc.so.6: it has no function sidescope_no_such_function") != NULL,
	   "the message names the function: %s", e.msg);
	ok(!odd.strlen, "no half-filled table");

	err__clear(&e);
	is_int(bt2__load(&e), 0, "libbabeltrace2.so.0 loads with every function bt2.h names%s%s",
	       e.msg[0] ? ": " : "", e.msg);
	ok(bt_graph_create && bt_plugin_find, "the shared table is filled (bt_graph_create is bt2.bt_graph_create)");
	return done_testing();
}
