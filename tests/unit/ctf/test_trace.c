// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctf/trace: finding CTF traces under a directory, and the metadata check
 * that keeps babeltrace2 from a metadata file cut mid-packet. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/trace.h"
#include "tap.h"

static char root[] = "/tmp/sidescope-test-trace-XXXXXX";

static void mkdirs(const char *rel)
{
	char p[512], *s;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static void put(const char *rel, const void *data, size_t n)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "wb");
	if (!f)
		return;
	fwrite(data, 1, n, f);
	fclose(f);
}

static const char *at(const char *rel)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s%s%s", root, *rel ? "/" : "", rel);
	return p;
}

/* One metadata packet header: magic, uuid, checksum, content and packet
 * size in bits, then the schemes and version bytes. */
static void packet_header(unsigned char *h, uint32_t content_bits, uint32_t packet_bits)
{
	uint32_t magic = 0x75D11D57U;

	memset(h, 0, 37);
	memcpy(h, &magic, 4);
	memcpy(h + 24, &content_bits, 4);
	memcpy(h + 28, &packet_bits, 4);
}

static void test_find(void)
{
	struct ctf_traces t = {};
	char want[600];
	int n;

	mkdirs("out/session/ust/uid/0/64-bit");
	mkdirs("out/session/ust/pid/app-1/64-bit");
	mkdirs("out/other");
	mkdirs("out/notatrace/metadata");	/* a directory of that name */
	put("out/session/ust/uid/0/64-bit/metadata", "/* CTF 1.8 */\n", 14);
	put("out/session/ust/pid/app-1/64-bit/metadata", "/* CTF 1.8 */\n", 14);
	put("out/other/metadata.txt", "x", 1);
	snprintf(want, sizeof(want), "%s", at("out/session"));
	if (symlink(want, at("out/link")))
		diag("symlink: %s", strerror(errno));

	n = ctf_traces__find(&t, at("out"));
	is_int(n, 2, "two traces, however deep; links not followed");
	snprintf(want, sizeof(want), "%s/out/session/ust/pid/app-1/64-bit", root);
	is_str(n > 0 ? t.dirs[0] : "", want, "sorted: pid before uid");
	snprintf(want, sizeof(want), "%s/out/session/ust/uid/0/64-bit", root);
	is_str(n > 1 ? t.dirs[1] : "", want, "the directory of the metadata file");
	ctf_traces__free(&t);
	ok(t.dirs == NULL && t.n == 0, "free zeroes");

	snprintf(want, sizeof(want), "%s/out//", root);
	n = ctf_traces__find(&t, want);
	snprintf(want, sizeof(want), "%s/out/session/ust/pid/app-1/64-bit", root);
	is_str(n > 0 ? t.dirs[0] : "", want, "trailing slashes dropped");
	ctf_traces__free(&t);

	is_int(ctf_traces__find(&t, at("out/link")), 0, "a link as the directory: not followed");
	ctf_traces__free(&t);
	is_int(ctf_traces__find(&t, at("out/other")), 0, "no trace");
	is_int(ctf_traces__find(&t, at("out/other/metadata.txt")), -ENOTDIR, "a file");
	is_int(ctf_traces__find(&t, at("nope")), -ENOENT, "missing");
}

static void test_metadata(void)
{
	unsigned char buf[200];
	struct err e;
	char *why = e.msg;
	int err;

	mkdirs("m");
	put("m/metadata", "/* CTF 1.8 */\ntrace {};\n", 24);
	is_int(ctf_traces__check_metadata(at("m"), &e), 0, "text metadata");

	put("m/metadata", "", 0);
	why[0] = '\0';
	is_int(ctf_traces__check_metadata(at("m"), &e), -EBADMSG, "empty");
	ok(strstr(why, "is empty") != NULL, "empty: said (%s)", why);

	packet_header(buf, 100 * 8, 100 * 8);
	packet_header(buf + 100, 40 * 8, 100 * 8);
	put("m/metadata", buf, 200);
	is_int(ctf_traces__check_metadata(at("m"), &e), 0, "two whole packets");

	put("m/metadata", buf, 150);
	err = ctf_traces__check_metadata(at("m"), &e);
	is_int(err, -EBADMSG, "cut in the second packet");
	ok(strstr(why, "is cut short: its packet at byte 100 needs 100 bytes, 50 are there") != NULL,
	   "cut: where and how much (%s)", why);

	put("m/metadata", buf, 120);
	ctf_traces__check_metadata(at("m"), &e);
	ok(strstr(why, "cut short in the packet header at byte 100") != NULL,
	   "cut in a header (%s)", why);

	packet_header(buf + 100, 120 * 8, 100 * 8);	/* content past the packet */
	put("m/metadata", buf, 200);
	is_int(ctf_traces__check_metadata(at("m"), &e), -EBADMSG, "damaged header");
	ok(strstr(why, "damaged packet header at byte 100") != NULL, "damaged: where (%s)", why);

	is_int(ctf_traces__check_metadata(at("nope"), &e), -ENOENT, "no metadata file");
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(root))
		return 1;
	test_find();
	test_metadata();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		diag("cannot remove %s", root);
	return done_testing();
}
