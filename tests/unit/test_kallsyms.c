// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms parser over fixtures and the running kernel. */
#include <errno.h>
#include <string.h>

#include "kallsyms.h"
#include "tap.h"

int main(void)
{
	struct kallsyms *ks = kallsyms__load(fixture("profile/kallsyms"));
	const char *mod = NULL;
	uint64_t delta = 0;

	ok(ks != NULL, "fixture loads");
	is_int(kallsyms__count(ks), 5, "text and weak symbols only");
	is_str(kallsyms__lookup(ks, 0xffffffff81001010, &mod, &delta), "do_one", "lookup");
	ok(delta == 0x10, "delta");
	is_str(mod, "", "no module");
	is_str(kallsyms__lookup(ks, 0xffffffff81003800, NULL, NULL), "helper_static",
	       "data symbols are not functions");
	is_str(kallsyms__lookup(ks, 0xffffffffc0001004, &mod, NULL), "ext4_thing", "module symbol");
	is_str(mod, "ext4", "module name without brackets");
	ok(kallsyms__lookup(ks, 0x1000, NULL, NULL) == NULL, "below the first symbol");
	ok(!kallsyms__hidden(ks), "addresses visible");
	kallsyms__free(ks);

	ks = kallsyms__load(fixture("profile/kallsyms.hidden"));
	ok(ks && kallsyms__hidden(ks), "all-zero addresses: hidden");
	ok(kallsyms__lookup(ks, 0xffffffff81001010, NULL, NULL) == NULL, "hidden: no lookup");
	kallsyms__free(ks);
	ok(kallsyms__load("/nonexistent") == NULL && errno == ENOENT, "missing file");

	ks = kallsyms__load(NULL);
	if (ks && !kallsyms__hidden(ks))
		ok(kallsyms__count(ks) > 1000, "running kernel: many symbols");
	else
		diag("the running kernel's symbols are hidden or unreadable here");
	kallsyms__free(ks);
	return done_testing();
}
