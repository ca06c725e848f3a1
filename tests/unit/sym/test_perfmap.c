// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Perf-map parser: lenient lines, overlaps, large maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/perfmap.h"
#include "core/util.h"
#include "tap.h"

static void test_fixture(void)
{
	struct perfmap *pm = perfmap__load(fixture("profile/malformed.map"));
	uint64_t start = 0;

	ok(pm != NULL, "malformed map loads");
	if (!pm)
		return;
	is_int(perfmap__count(pm), 5, "five good entries");
	is_int(perfmap__bad_lines(pm), 5, "five bad lines counted (blank lines are not)");
	is_str(perfmap__lookup(pm, 0x7f0000001000, &start), "JitFrame::Run()", "CRLF stripped");
	ok(start == 0x7f0000001000, "entry start");
	is_str(perfmap__lookup(pm, 0x7f000000103f, NULL), "JitFrame::Run()", "last byte");
	ok(perfmap__lookup(pm, 0x7f0000001040, NULL) == NULL, "end is exclusive");
	is_str(perfmap__lookup(pm, 0x7f0000002010, NULL),
	       "Namespace.Type.Method(System.String, int)", "0x prefixes, name with spaces");
	is_str(perfmap__lookup(pm, 0x7f0000002090, NULL), "Later::Override",
	       "a later overlapping entry wins");
	is_str(perfmap__lookup(pm, 0x7f00000020a0, NULL),
	       "Namespace.Type.Method(System.String, int)", "outside the later entry");
	is_str(perfmap__lookup(pm, 0x7f0000006004, NULL), "[stub] tab separated", "tabs");
	is_str(perfmap__lookup(pm, 0x7f0000008001, NULL), "last line without newline",
	       "last line without newline");
	ok(perfmap__lookup(pm, 0x1000, NULL) == NULL, "below every entry");
	ok(perfmap__lookup(pm, 0x7f0000005000, NULL) == NULL, "zero-size entry skipped");
	perfmap__free(pm);
}

static void test_earlier_covers_later(void)
{
	/* a big early entry and a small later one inside it, then a third
	 * that starts after the small one but is still inside the big one */
	char *buf = strdup("1000 1000 Big\n1100 10 Small\n1200 10 Other\n");
	struct perfmap *pm = perfmap__parse(buf, strlen(buf));

	ok(pm != NULL, "overlap map parses");
	is_str(perfmap__lookup(pm, 0x1105, NULL), "Small", "later small entry wins inside");
	is_str(perfmap__lookup(pm, 0x1150, NULL), "Big", "big entry between the small ones");
	is_str(perfmap__lookup(pm, 0x1f00, NULL), "Big", "big entry after every small one");
	perfmap__free(pm);
	buf = strdup("1100 10 Small\n1000 1000 Big\n");
	pm = perfmap__parse(buf, strlen(buf));
	is_str(perfmap__lookup(pm, 0x1105, NULL), "Big", "a later big entry replaces a small one");
	perfmap__free(pm);
}

static void test_hostile(void)
{
	const char *cases[] = { "", "\n\n\n", "0x", "1 1", "1 1 ", "\r\n", "10 10 \r\n" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *b = strdup(cases[i]);
		struct perfmap *pm = perfmap__parse(b, strlen(cases[i]));

		ok(pm && perfmap__count(pm) == 0, "hostile input %zu: no entries, no crash", i);
		perfmap__free(pm);
	}
	perfmap__free(NULL);
	ok(perfmap__load("/nonexistent/perf-1.map") == NULL && errno == ENOENT,
	   "missing file: ENOENT");
}

static void test_large(void)
{
	const size_t n = 300000;
	size_t cap = n * 48, len = 0, i, bad = 0;
	char *buf = malloc(cap + 1);
	struct perfmap *pm;
	char want[64];
	uint64_t t0;

	for (i = 0; i < n; i++)
		len += snprintf(buf + len, cap - len, "%llx 40 Jit::Method_%zu(int)\n",
				0x7f0000000000ull + i * 0x40, i);
	t0 = now_ns();
	pm = perfmap__parse(buf, len);
	diag("%zu lines parsed in %.3f s", n, (now_ns() - t0) / 1e9);
	is_int(perfmap__count(pm), (int)n, "every line of a large map");
	for (i = 0; i < n; i += 997) {
		snprintf(want, sizeof(want), "Jit::Method_%zu(int)", i);
		const char *got = perfmap__lookup(pm, 0x7f0000000000ull + i * 0x40 + 0x3f, NULL);

		if (!got || strcmp(got, want))
			bad++;
	}
	is_int(bad, 0, "lookups across a large map");
	perfmap__free(pm);
}

/* A map read while a runtime writes it: the half-written last line is left
 * out (perfmap__load keeps it: a saved file is whole), the version read is
 * reported. */
static void test_live(void)
{
	char path[] = "/tmp/test_perfmap.XXXXXX";
	const char *text = "1000 10 Whole::Line\n2000 10 Half::Li";
	struct perfmap *pm;
	struct stat st, v;
	int fd = mkstemp(path);

	ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "temp map written");
	pm = perfmap__load_live(path, &v);
	ok(pm != NULL, "live load");
	is_int(perfmap__count(pm), 1, "live: the half-written last line is left out");
	is_str(perfmap__lookup(pm, 0x1004, NULL), "Whole::Line", "live: whole lines kept");
	ok(perfmap__lookup(pm, 0x2004, NULL) == NULL, "live: no name from half a line");
	ok(fstat(fd, &st) == 0 && st.st_ino == v.st_ino && st.st_size == v.st_size,
	   "live: the version read is reported");
	perfmap__free(pm);
	pm = perfmap__load(path);
	is_int(perfmap__count(pm), 2, "plain load keeps a last line without newline");
	perfmap__free(pm);
	ok(ftruncate(fd, 0) == 0, "truncated");
	pm = perfmap__load_live(path, NULL);
	ok(pm && perfmap__count(pm) == 0, "live: an empty map loads empty");
	perfmap__free(pm);
	close(fd);
	unlink(path);
	errno = 0;
	ok(perfmap__load_live(path, NULL) == NULL && errno == ENOENT, "live: deleted map: ENOENT");
}

int main(void)
{
	test_fixture();
	test_live();
	test_earlier_covers_later();
	test_hostile();
	test_large();
	return done_testing();
}
