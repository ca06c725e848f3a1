// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms parser over fixtures and the running kernel. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/kallsyms.h"
#include "tap.h"
#include "core/util.h"

/* The kernel's permanent text, [_stext, _etext) in /proc/kallsyms: what
 * any kernel names. Init text (freed after boot), the BPF JIT's and
 * trampolines' pages are another kernel build's business: the running
 * kernel rightly names nothing in freed init text. 0 when not found. */
static int core_text(const char *buf, unsigned long long *lo, unsigned long long *hi)
{
	const char *p;
	unsigned long long a;
	char type, name[16];

	*lo = *hi = 0;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "%llx %c %15s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "_stext"))
			*lo = a;
		else if (!strcmp(name, "_etext"))
			*hi = a;
	}
	return *lo && *hi > *lo ? 0 : -1;
}

/* The running kernel asked address by address (kallsyms__load(NULL): a BPF
 * program when this process may load one) against the file read whole, at
 * every 50th function of the kernel's permanent text: its start + 1, where
 * no other symbol starts. */
static void compare_live(const struct kallsyms *file)
{
	struct kallsyms *live = kallsyms__load(NULL);
	char *buf = NULL, *line, *save = NULL;
	unsigned long long addr, cand = 0, last = 0;
	unsigned long long lo, hi;
	char type, name[512], cand_name[512] = "";
	size_t len = 0, asked = 0, bad = 0, i = 0;

	ok(live != NULL, "the running kernel: opened");
	if (!live || read_file("/proc/kallsyms", &buf, &len, 0)) {
		kallsyms__free(live);
		return;
	}
	ok(core_text(buf, &lo, &hi) == 0, "_stext and _etext found in /proc/kallsyms");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool mod = strchr(line, '[') != NULL;

		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		/* cand + 1 lies in cand alone: no other symbol starts at cand
		 * (aliases) or at cand + 1; functions of the kernel proper */
		if (cand && addr > cand + 1 && !mod && i++ % 50 == 0) {
			const char *want = kallsyms__lookup(file, cand + 1, NULL, NULL);
			const char *got = kallsyms__lookup(live, cand + 1, NULL, NULL);

			asked++;
			if (!want || strcmp(want, cand_name) || !got || strcmp(got, want)) {
				if (bad++ < 5)
					diag("0x%llx: kernel says %s, /proc/kallsyms %s", cand + 1,
					     got ? got : "(nothing)", want ? want : "(nothing)");
			}
		}
		cand = 0;
		if ((type == 't' || type == 'T') && !mod && addr > last && addr >= lo && addr < hi) {
			cand = addr;
			snprintf(cand_name, sizeof(cand_name), "%s", name);
		}
		last = addr;
	}
	diag("%zu addresses asked, %zu symbols held", asked, kallsyms__count(live));
	ok(asked > 100 && bad == 0, "the running kernel's answers match /proc/kallsyms");
	free(buf);
	kallsyms__free(live);
}

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

	ks = kallsyms__load("/proc/kallsyms");
	if (ks && !kallsyms__hidden(ks)) {
		ok(kallsyms__count(ks) > 1000, "running kernel: many symbols");
		compare_live(ks);
	} else {
		diag("the running kernel's symbols are hidden or unreadable here");
	}
	kallsyms__free(ks);
	return done_testing();
}
