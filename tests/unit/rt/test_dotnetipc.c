// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rt/dotnetipc: the .NET diagnostics IPC client against what an app can
 * put on the other side of its socket. The reply and ProcessInfo parsers
 * over tables of good and hostile bytes; then a fake process (a proc root
 * of our own: status, stat, environ and a root directory) whose "runtime"
 * is a forked server answering right, wrong, cut short, slowly or never,
 * with links and files planted where the socket belongs.
 *
 * With arguments it is the integration tests' driver (no server of its
 * own; the real /proc):
 *   test_dotnetipc.t --probe PID      socket, nspid, runtime version
 *   test_dotnetipc.t --enable PID     EnablePerfMap; "enabled in N ms"
 *   test_dotnetipc.t --disable PID    DisablePerfMap
 *   test_dotnetipc.t --listen PATH    listen on PATH until stdin ends, then
 *                                     print how many connections came
 *   test_dotnetipc.t --connect PATH   connect(2) to PATH by name, as a naive
 *                                     client would (links followed): the
 *                                     attack the client above refuses
 * Each prints its error line on stderr and exits 1 on failure. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/proc.h"
#include "core/util.h"
#include "rt/dotnetipc.h"
#include "rt/rtsock.h"
#include "tap.h"

/* ---- the driver ---- */

static int drive(int argc, char **argv)
{
	struct err e = { 0 };
	struct dotnetipc *d;
	long pid;
	uint64_t t0;
	int err;

	if (argc == 3 && strcmp(argv[1], "--listen") == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), n = 0, c;
		char buf[64];

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
			perror(argv[2]);
			return 1;
		}
		while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
			;
		fcntl(fd, F_SETFL, O_NONBLOCK);
		while ((c = accept(fd, NULL, NULL)) >= 0) {
			close(c);
			n++;
		}
		printf("connections %d\n", n);
		unlink(argv[2]);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--connect") == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror(argv[2]);
			return 1;
		}
		close(fd);
		return 0;
	}
	if (argc != 3 || parse_long(argv[2], 1, INT_MAX, &pid)) {
		fprintf(stderr, "usage: %s --probe|--enable|--disable PID | --listen|--connect PATH\n",
			argv[0]);
		return 2;
	}
	t0 = now_ns();
	d = dotnetipc__open((pid_t)pid, 0, &e);
	if (!d) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	if (strcmp(argv[1], "--probe") == 0) {
		struct dotnet_info info;

		err = dotnetipc__process_info(d, &info, &e);
		if (!err)
			printf("socket %s\nnspid %d\nversion %s\nassembly %s\nos %s\narch %s\n",
			       dotnetipc__socket(d), (int)dotnetipc__nspid(d), info.version,
			       info.assembly, info.os, info.arch);
	} else if (strcmp(argv[1], "--enable") == 0) {
		err = dotnetipc__enable_perfmap(d, &e);
		if (!err)
			printf("enabled in %.1f ms\n", (double)(now_ns() - t0) / 1e6);
	} else if (strcmp(argv[1], "--disable") == 0) {
		err = dotnetipc__disable_perfmap(d, &e);
		if (!err)
			printf("disabled in %.1f ms\n", (double)(now_ns() - t0) / 1e6);
	} else {
		err = -EINVAL;
		snprintf(e.msg, sizeof(e.msg), "unknown mode %s", argv[1]);
	}
	if (err)
		fprintf(stderr, "%s\n", e.msg);
	dotnetipc__free(d);
	return err ? 1 : 0;
}

/* ---- bytes ---- */

static size_t hdr(uint8_t *b, uint16_t size, uint8_t set, uint8_t id)
{
	memcpy(b, "DOTNET_IPC_V1", 14);
	b[14] = (uint8_t)size;
	b[15] = (uint8_t)(size >> 8);
	b[16] = set;
	b[17] = id;
	b[18] = b[19] = 0;
	return 20;
}

static void le32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

/* A reply: the Server set, ID, and a 4-byte HRESULT (HR) unless NOHR. */
static size_t reply(uint8_t *b, uint8_t id, uint32_t hr)
{
	hdr(b, 24, 0xff, id);
	le32(b + 20, hr);
	return 24;
}

static void test_encode(void)
{
	static const uint8_t enable[24] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		24, 0, 0x04, 0x05, 0, 0, 3, 0, 0, 0 };
	static const uint8_t disable[20] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		20, 0, 0x04, 0x06, 0, 0 };
	const uint8_t type[4] = { 3, 0, 0, 0 };
	uint8_t b[64];

	is_int(dotnetipc__encode(4, 5, type, 4, b, sizeof(b)), 24, "EnablePerfMap is 24 bytes");
	ok(memcmp(b, enable, 24) == 0, "EnablePerfMap: magic, size 24, 0x0405, type 3 (the map alone)");
	is_int(dotnetipc__encode(4, 6, NULL, 0, b, sizeof(b)), 20, "DisablePerfMap is a header");
	ok(memcmp(b, disable, 20) == 0, "DisablePerfMap: magic, size 20, 0x0406");
	is_int(dotnetipc__encode(4, 5, type, 4, b, 23), -ENOSPC, "a buffer too small is refused");
}

struct reply_case {
	const char *what;
	uint8_t bytes[40];
	size_t len;
	int want;		/* 0 or -EPROTO */
	bool error;
	uint32_t hr;
};

static void test_replies(void)
{
	static const struct reply_case cases[] = {
		{ "OK, HRESULT 0", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0xff, 0x00, 0, 0, 0, 0, 0, 0 }, 24, 0, false, 0 },
		{ "OK, HRESULT E_FAIL", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0xff, 0x00, 0, 0, 0x05, 0x40, 0x00, 0x80 }, 24, 0, false, 0x80004005u },
		{ "error: unknown command (.NET 7)", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0xff, 0xff, 0, 0, 0x85, 0x13, 0x13, 0x80 }, 24, 0, true, 0x80131385u },
		{ "error of 8 bytes, as the document draws it", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  28, 0, 0xff, 0xff, 0, 0, 0x84, 0x13, 0x13, 0x80, 0, 0, 0, 0 }, 28, 0, true, 0x80131384u },
		{ "reserved bits set: ignored", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0xff, 0x00, 0x12, 0x34, 0, 0, 0, 0 }, 24, 0, false, 0 },
		{ "no NUL after the magic", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 'X',
		  24, 0, 0xff, 0x00, 0, 0, 0, 0, 0, 0 }, 24, -EPROTO },
		{ "another magic", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '2', 0,
		  24, 0, 0xff, 0x00, 0, 0, 0, 0, 0, 0 }, 24, -EPROTO },
		{ "HTTP", "HTTP/1.1 400 Bad Request\r\n\r\n", 28, -EPROTO },
		{ "a size below a header", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  19, 0, 0xff, 0x00, 0, 0 }, 20, -EPROTO },
		{ "a size of 0", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  0, 0, 0xff, 0x00, 0, 0 }, 20, -EPROTO },
		{ "a size past the bytes (65535)", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  0xff, 0xff, 0xff, 0x00, 0, 0, 0, 0, 0, 0 }, 24, -EPROTO },
		{ "a size short of the bytes", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  20, 0, 0xff, 0x00, 0, 0, 0, 0, 0, 0 }, 24, -EPROTO },
		{ "a command where a reply belongs (0x0405)", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0x04, 0x05, 0, 0, 3, 0, 0, 0 }, 24, -EPROTO },
		{ "Server set, unknown id 0x01", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  24, 0, 0xff, 0x01, 0, 0, 0, 0, 0, 0 }, 24, -EPROTO },
		{ "an error without its HRESULT", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  20, 0, 0xff, 0xff, 0, 0 }, 20, -EPROTO },
		{ "an error with 3 bytes of HRESULT", { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		  23, 0, 0xff, 0xff, 0, 0, 1, 2, 3 }, 23, -EPROTO },
		{ "less than a header", { 'D', 'O', 'T', 'N', 'E', 'T' }, 6, -EPROTO },
		{ "nothing", { 0 }, 0, -EPROTO },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct reply_case *c = &cases[i];
		struct dotnetipc_reply r;
		struct err e = { 0 };
		int err = dotnetipc__parse_reply(c->bytes, c->len, &r, &e);

		is_int(err, c->want, "reply: %s%s%s", c->what, err ? ": " : "", err ? e.msg : "");
		if (!err && c->want == 0)
			ok(r.error == c->error && r.has_hresult && r.hresult == c->hr,
			   "reply: %s: error %d, HRESULT 0x%08x", c->what, r.error, r.hresult);
	}
}

/* ProcessInfo2's payload: pid, cookie, five strings (a NULL one as count 0) */
struct pbuf {
	uint8_t b[4096];
	size_t n;
};

static void put_str(struct pbuf *p, const char *s)
{
	size_t i, n = s ? strlen(s) + 1 : 0;

	le32(p->b + p->n, (uint32_t)n);
	p->n += 4;
	for (i = 0; i < n; i++) {
		p->b[p->n++] = (uint8_t)s[i];
		p->b[p->n++] = 0;
	}
}

static void info_payload(struct pbuf *p, uint64_t pid, const char *version)
{
	size_t i;

	p->n = 0;
	le32(p->b, (uint32_t)pid);
	le32(p->b + 4, (uint32_t)(pid >> 32));
	for (i = 0; i < 16; i++)
		p->b[8 + i] = (uint8_t)(0xa0 + i);
	p->n = 24;
	put_str(p, "/usr/share/dotnet/dotnet /app/HotApp.dll 30");
	put_str(p, "Linux");
	put_str(p, "x64");
	put_str(p, "HotApp");
	put_str(p, version);
}

static void test_process_info(void)
{
	struct dotnet_info info;
	struct pbuf p, q;
	struct err e = { 0 };
	size_t cut;
	int bad = 0;

	info_payload(&p, 5, "10.0.12");
	is_int(dotnetipc__parse_process_info(p.b, p.n, true, &info, &e), 0, "ProcessInfo2 parsed");
	ok(info.pid == 5 && info.v2 && info.cookie[0] == 0xa0 && info.cookie[15] == 0xaf,
	   "its pid and cookie");
	is_str(info.version, "10.0.12", "its runtime version");
	is_str(info.assembly, "HotApp", "its entry assembly");
	is_str(info.cmdline, "/usr/share/dotnet/dotnet /app/HotApp.dll 30", "its command line");
	is_str(info.arch, "x64", "its architecture");
	is_int(dotnetipc__parse_process_info(p.b, p.n, false, &info, &e), -EPROTO,
	       "read as ProcessInfo, the bytes left over are refused");

	/* every shorter prefix: refused, never read past */
	for (cut = 0; cut < p.n; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, p.b, cut);
		if (dotnetipc__parse_process_info(copy, cut, true, &info, &e) != -EPROTO)
			bad++;
		free(copy);
	}
	is_int(bad, 0, "each of the %zu shorter prefixes is refused (under ASan: no read past)", p.n);

	/* a string count past the payload, and near 2^32 (count * 2 wraps in 32 bits) */
	q = p;
	le32(q.b + 24, 0xffffffffu);
	is_int(dotnetipc__parse_process_info(q.b, q.n, true, &info, &e), -EPROTO,
	       "a string of 2^32-1 code units refused");
	le32(q.b + 24, 0x80000002u);
	is_int(dotnetipc__parse_process_info(q.b, q.n, true, &info, &e), -EPROTO,
	       "a count whose byte size wraps 32 bits refused");
	/* no terminating NUL */
	q = p;
	q.b[24 + 4 + 2 * 43] = 'x';
	is_int(dotnetipc__parse_process_info(q.b, q.n, true, &info, &e), -EPROTO,
	       "a string without its NUL refused (%s)", e.msg);
	/* empty strings (count 0) and an unpaired surrogate */
	q.n = 24;
	memcpy(q.b, p.b, 24);
	put_str(&q, NULL);
	put_str(&q, NULL);
	put_str(&q, NULL);
	put_str(&q, NULL);
	le32(q.b + q.n, 3);
	q.b[q.n + 4] = 0x00;
	q.b[q.n + 5] = 0xd8;	/* U+D800 alone */
	q.b[q.n + 6] = '8';
	q.b[q.n + 7] = 0;
	q.b[q.n + 8] = q.b[q.n + 9] = 0;
	q.n += 10;
	is_int(dotnetipc__parse_process_info(q.b, q.n, true, &info, &e), 0,
	       "strings of count 0 and a lone surrogate parse");
	is_str(info.version, "\xef\xbf\xbd" "8", "the lone surrogate is U+FFFD");
	/* a version longer than its field: cut, marked */
	info_payload(&q, 5, "10.0.12-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	is_int(dotnetipc__parse_process_info(q.b, q.n, true, &info, &e), 0, "a long version parses");
	ok(strlen(info.version) < sizeof(info.version) && strstr(info.version, "\xe2\x80\xa6"),
	   "cut to its field, with the cut marked (%s)", info.version);
}

struct env_case {
	const char *what;
	const char *block;	/* entries separated by '|' for NULs */
	const char *tmpdir;
	int diag, perfmap;
	const char *pmdir;
};

static void test_environ(void)
{
	static const struct env_case cases[] = {
		{ "nothing", "", "/tmp", -1, -1, "" },
		{ "TMPDIR", "PATH=/bin|TMPDIR=/var/tmp|HOME=/", "/var/tmp", -1, -1, "" },
		{ "an empty TMPDIR is /tmp", "TMPDIR=|X=1", "/tmp", -1, -1, "" },
		{ "the last entry without its NUL", "A=1|TMPDIR=/run/t", "/run/t", -1, -1, "" },
		{ "diagnostics off", "DOTNET_EnableDiagnostics=0", "/tmp", 0, -1, "" },
		{ "DOTNET_ over COMPlus_, either order", "DOTNET_EnableDiagnostics=1|COMPlus_EnableDiagnostics=0",
		  "/tmp", 1, -1, "" },
		{ "COMPlus_ alone", "COMPlus_EnableDiagnostics=0|COMPlus_PerfMapEnabled=3", "/tmp", 0, 3, "" },
		{ "hexadecimal, as the runtime reads it", "DOTNET_PerfMapEnabled=a", "/tmp", -1, 10, "" },
		{ "not a number: unset", "DOTNET_PerfMapEnabled=yes", "/tmp", -1, -1, "" },
		{ "the map's directory", "DOTNET_PerfMapJitDumpPath=/var/log", "/tmp", -1, -1, "/var/log" },
		{ "names are case-sensitive", "tmpdir=/x|dotnet_EnableDiagnostics=0", "/tmp", -1, -1, "" },
		{ "entries without '='", "TMPDIR|DOTNET_EnableDiagnostics|=|==", "/tmp", -1, -1, "" },
		{ "a prefix alone", "DOTNET_=0|COMPlus_=0", "/tmp", -1, -1, "" },
		{ "the first of a name, as getenv", "TMPDIR=/a|TMPDIR=/b|DOTNET_PerfMapEnabled=1|"
		  "DOTNET_PerfMapEnabled=0", "/a", -1, 1, "" },
		{ "an empty first TMPDIR hides a later one", "TMPDIR=|TMPDIR=/b", "/tmp", -1, -1, "" },
		{ "a later DOTNET_ over an earlier COMPlus_", "COMPlus_PerfMapEnabled=1|"
		  "DOTNET_PerfMapEnabled=0|COMPlus_PerfMapEnabled=2", "/tmp", -1, 0, "" },
	};
	struct dotnetipc_env env;
	char block[512], big[600];
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct env_case *c = &cases[i];

		n = strlen(c->block);
		memcpy(block, c->block, n);
		for (size_t j = 0; j < n; j++)
			if (block[j] == '|')
				block[j] = '\0';
		dotnetipc__parse_environ(block, n, &env);
		ok(strcmp(env.tmpdir, c->tmpdir) == 0 && env.diagnostics == c->diag &&
		   env.perfmap == c->perfmap && strcmp(env.perfmap_dir, c->pmdir) == 0,
		   "environ: %s (tmpdir %s, diagnostics %d, perfmap %d, dir '%s')", c->what,
		   env.tmpdir, env.diagnostics, env.perfmap, env.perfmap_dir);
	}
	n = (size_t)snprintf(big, sizeof(big), "TMPDIR=/");
	memset(big + n, 'a', 300);
	dotnetipc__parse_environ(big, n + 300, &env);
	ok(env.tmpdir_long && strcmp(env.tmpdir, "/tmp") == 0, "a TMPDIR of 301 bytes is said too long");
}

/* ---- a fake process and its runtime ---- */

#define FPID	77	/* in our namespace (the fake proc root) */
#define FNSPID	5	/* as it sees itself */
#define FSTART	424242ull
#define TIMEOUT	300	/* ms: the client's deadline in these tests */
#define SLACK	1500	/* ms past it a loaded machine may take to run us again */

static char proc_dir[PATH_MAX];		/* the fake proc root */
static char app_root[PATH_MAX + 32];	/* proc_dir/77/root */
static char outside[PATH_MAX + 32];	/* a "sidecar" directory outside it */

static void put_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		diag("cannot write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void set_start(uint64_t start)
{
	char p[PATH_MAX + 64], s[512];
	int n;

	n = snprintf(s, sizeof(s), "%d (fake) S 1 %d %d 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 %llu "
		     "1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		     FPID, FPID, FPID, (unsigned long long)start);
	snprintf(p, sizeof(p), "%s/%d/stat", proc_dir, FPID);
	put_file(p, s, (size_t)n);
}

/* The environment block, entries separated by '|'. */
static void set_environ(const char *entries)
{
	char p[PATH_MAX + 64], b[1024];
	size_t n = strlen(entries), i;

	memcpy(b, entries, n);
	b[n] = '\0';
	for (i = 0; i < n; i++)
		if (b[i] == '|')
			b[i] = '\0';
	snprintf(p, sizeof(p), "%s/%d/environ", proc_dir, FPID);
	put_file(p, b, n ? n + 1 : 0);
}

static int build_proc(void)
{
	char p[PATH_MAX + 64];
	static const char status[] = "Name:\tfake\nTgid:\t77\nPid:\t77\nPPid:\t1\n"
				     "NStgid:\t77\t5\nNSpid:\t77\t5\nUid:\t0\t0\t0\t0\n";

	snprintf(proc_dir, sizeof(proc_dir), "/tmp/test_dotnetipc.XXXXXX");
	if (!mkdtemp(proc_dir))
		return -1;
	snprintf(p, sizeof(p), "%s/%d", proc_dir, FPID);
	mkdir(p, 0755);
	snprintf(app_root, sizeof(app_root), "%s/%d/root", proc_dir, FPID);
	mkdir(app_root, 0755);
	snprintf(p, sizeof(p), "%s/tmp", app_root);
	mkdir(p, 01777);
	snprintf(p, sizeof(p), "%s/var", app_root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/var/tmp", app_root);
	mkdir(p, 01777);
	snprintf(outside, sizeof(outside), "%s/sidecar", proc_dir);
	mkdir(outside, 0700);
	snprintf(p, sizeof(p), "%s/%d/status", proc_dir, FPID);
	put_file(p, status, sizeof(status) - 1);
	set_start(FSTART);
	set_environ("");
	proc__set_root(proc_dir);
	return 0;
}

/* A listening socket named NAME in DIR (bound from inside DIR: the whole
 * path may be longer than sun_path). */
static int listen_at(const char *dir, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), here;

	here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || here < 0 || chdir(dir))
		goto fail;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	unlink(name);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		fchdir(here);
		goto fail;
	}
	if (fchdir(here))
		goto fail;
	close(here);
	return fd;
fail:
	diag("cannot listen at %s/%s: %s", dir, name, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (here >= 0)
		close(here);
	return -1;
}

static void sock_name(char *buf, size_t size, uint64_t key)
{
	snprintf(buf, size, "dotnet-diagnostic-%d-%llu-socket", FNSPID, (unsigned long long)key);
}

static void app_tmp(char *buf, size_t size, const char *sub)
{
	snprintf(buf, size, "%s%s", app_root, sub);
}

enum behaviour {
	B_OK,		/* OK, HRESULT 0 */
	B_OK_HR,	/* OK, HRESULT E_FAIL */
	B_OK_EMPTY,	/* OK without a payload */
	B_UNKNOWN,	/* error: unknown command (.NET 6, 7) */
	B_UNKNOWN_V7,	/* that, then ProcessInfo2 on a second connection says 7.0.20 */
	B_NOTSUP,	/* error: not supported (NativeAOT) */
	B_GARBAGE,	/* an HTTP answer */
	B_CLOSE,	/* accepts, closes at once */
	B_SHORT_HDR,	/* 10 bytes of a header, then closes */
	B_SHORT_BODY,	/* a header announcing 24 bytes, 2 of its payload, closes */
	B_SILENT,	/* reads the request, never answers */
	B_NOREAD,	/* never reads, never answers */
	B_HUGE_OPEN,	/* announces 65535 bytes, sends 100, holds the connection */
	B_HUGE_CLOSE,	/* announces 65535 bytes, sends 100, closes */
	B_DRIP,		/* a right answer one byte every 40 ms: longer than the deadline */
	B_INFO,		/* ProcessInfo2: 10.0.12, pid 5 */
	B_INFO_PID,	/* ProcessInfo2 for pid 6 */
};

/* The server's verdict on the request, written before it answers: 'y'
 * (the request expected), 'n' (another). Read by server_stop: by the time
 * the client has its answer, the verdict is there. */
static int verdict_fd = -1;

/* Answer one connection on LFD as BEHAVIOUR. The request must be WANT
 * (WANTLEN bytes, not checked when NULL). */
static void answer(int lfd, enum behaviour b, const uint8_t *want, size_t wantlen)
{
	uint8_t req[64], out[512];
	size_t n = 0, i;
	ssize_t r;
	int c = accept(lfd, NULL, NULL);

	if (c < 0)
		_exit(4);
	if (b == B_NOREAD) {
		pause();
		_exit(0);
	}
	if (b != B_CLOSE) {
		/* the header, then the payload it announces */
		while (n < 20 && (r = read(c, req + n, 20 - n)) > 0)
			n += (size_t)r;
		if (n == 20)
			while (n < (size_t)(req[14] | req[15] << 8) && n < sizeof(req) &&
			       (r = read(c, req + n, (req[14] | req[15] << 8) - n)) > 0)
				n += (size_t)r;
		if (want && write(verdict_fd, n == wantlen && memcmp(req, want, n) == 0 ? "y" : "n",
				  1) != 1)
			_exit(6);
	}
	switch (b) {
	case B_OK:
		n = reply(out, 0x00, 0);
		break;
	case B_OK_HR:
		n = reply(out, 0x00, 0x80004005u);
		break;
	case B_OK_EMPTY:
		n = hdr(out, 20, 0xff, 0x00);
		break;
	case B_UNKNOWN:
	case B_UNKNOWN_V7:
		n = reply(out, 0xff, DOTNETIPC_E_UNKNOWN_COMMAND);
		break;
	case B_NOTSUP:
		n = reply(out, 0xff, DOTNETIPC_E_NOTSUPPORTED);
		break;
	case B_GARBAGE:
		n = (size_t)snprintf((char *)out, sizeof(out), "HTTP/1.1 400 Bad Request\r\n\r\n");
		break;
	case B_CLOSE:
		n = 0;
		break;
	case B_SHORT_HDR:
		n = 10;
		reply(out, 0, 0);
		break;
	case B_SHORT_BODY:
		reply(out, 0, 0);
		n = 22;
		break;
	case B_SILENT:
		pause();
		_exit(0);
	case B_HUGE_OPEN:
	case B_HUGE_CLOSE:
		hdr(out, 0xffff, 0xff, 0x00);
		memset(out + 20, 'A', 80);
		n = 100;
		break;
	case B_DRIP:
		n = reply(out, 0x00, 0);
		for (i = 0; i < n; i++) {
			if (write(c, out + i, 1) != 1)
				_exit(0);
			poll(NULL, 0, 40);
		}
		_exit(0);
	case B_INFO:
	case B_INFO_PID: {
		struct pbuf p;

		info_payload(&p, b == B_INFO ? FNSPID : FNSPID + 1, "10.0.12");
		n = hdr(out, (uint16_t)(20 + p.n), 0xff, 0x00);
		memcpy(out + n, p.b, p.n);
		n += p.n;
		break;
	}
	case B_NOREAD:
		break;
	}
	if (n && write(c, out, n) != (ssize_t)n)
		_exit(5);
	if (b == B_HUGE_OPEN)
		pause();
	close(c);
}

/* The server process: one connection (two for B_UNKNOWN_V7: ProcessInfo2
 * follows), then exit 0. */
static void serve(int lfd, enum behaviour b, const uint8_t *want, size_t wantlen)
{
	answer(lfd, b, want, wantlen);
	if (b == B_UNKNOWN_V7)
		answer(lfd, B_INFO, NULL, 0);
	_exit(0);
}

/* A server process for one test: the listening socket in the app's /tmp
 * named for KEY, serving as B. */
struct server {
	pid_t pid;
	int lfd;
	int verdict;	/* the read end of the server's verdict_fd */
	char path[PATH_MAX + 128];
};

static int server_start(struct server *s, const char *dir_in_root, uint64_t key, enum behaviour b,
			const uint8_t *want, size_t wantlen)
{
	char dir[PATH_MAX + 32], name[96];

	app_tmp(dir, sizeof(dir), dir_in_root);
	sock_name(name, sizeof(name), key);
	snprintf(s->path, sizeof(s->path), "%s/%s", dir, name);
	int pfd[2];

	s->lfd = listen_at(dir, name);
	if (s->lfd < 0 || pipe2(pfd, O_CLOEXEC | O_NONBLOCK))
		return -1;
	s->verdict = pfd[0];
	s->pid = fork();
	if (s->pid == 0) {
		close(pfd[0]);
		verdict_fd = pfd[1];
		alarm(10);	/* a server of a test never outlives it */
		serve(s->lfd, b, want, wantlen);
	}
	close(pfd[1]);
	return s->pid > 0 ? 0 : -1;
}

/* Stop the server (killed if still there): 0 when the request was the one
 * expected, 3 when it was another, 4 when none was checked. */
static int server_stop(struct server *s)
{
	char v = 0;
	int ret;

	ret = read(s->verdict, &v, 1) != 1 ? 4 : v == 'y' ? 0 : 3;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	close(s->verdict);
	close(s->lfd);
	unlink(s->path);
	return ret;
}

static struct dotnetipc *open_fake(struct err *e)
{
	return dotnetipc__open(FPID, TIMEOUT, e);
}

static double ms_since(uint64_t t0)
{
	return (double)(now_ns() - t0) / 1e6;
}

struct enable_case {
	const char *what;
	enum behaviour b;
	int want;
	const char *says;	/* a piece of the line */
	bool times_out;
};

static void test_enable_against(void)
{
	static const struct enable_case cases[] = {
		{ "OK", B_OK, 0, NULL },
		{ "OK with E_FAIL", B_OK_HR, -EREMOTEIO, "HRESULT 0x80004005 (failure)" },
		{ "OK without an HRESULT", B_OK_EMPTY, -EPROTO, "0 payload bytes" },
		{ "unknown command (.NET 6, 7)", B_UNKNOWN, -EOPNOTSUPP, "no EnablePerfMap" },
		{ "not supported", B_NOTSUP, -EREMOTEIO, "HRESULT 0x80131515 (not supported)" },
		{ "garbage", B_GARBAGE, -EPROTO, "outside the .NET diagnostics protocol" },
		/* without a reply, or reset: the request was left unread */
		{ "closed at once", B_CLOSE, -EPROTO, "outside the .NET diagnostics protocol" },
		{ "a header cut short", B_SHORT_HDR, -EPROTO, "cut short after 10 bytes" },
		{ "a payload cut short", B_SHORT_BODY, -EPROTO, "22 of the 24 bytes" },
		{ "silent", B_SILENT, -ETIMEDOUT, "no reply from its diagnostics socket within 300 ms", true },
		{ "not even reading", B_NOREAD, -ETIMEDOUT, "no reply from its diagnostics socket within 300 ms", true },
		{ "65535 bytes announced, 100 sent", B_HUGE_OPEN, -ETIMEDOUT,
		  "only 100 of the 65535 bytes", true },
		{ "65535 bytes announced, 100 sent, closed", B_HUGE_CLOSE, -EPROTO,
		  "100 of the 65535 bytes it announced" },
		{ "one byte every 40 ms", B_DRIP, -ETIMEDOUT, "within 300 ms", true },
	};
	uint8_t want[24];
	const uint8_t type[4] = { 3, 0, 0, 0 };
	size_t i;

	dotnetipc__encode(4, 5, type, 4, want, sizeof(want));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct enable_case *c = &cases[i];
		struct err e = { 0 };
		struct dotnetipc *d;
		struct server s;
		uint64_t t0;
		double ms;
		int err, st;

		if (server_start(&s, "/tmp", FSTART, c->b, want, sizeof(want))) {
			ok(0, "enable, %s: server", c->what);
			continue;
		}
		t0 = now_ns();
		d = open_fake(&e);
		err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
		ms = ms_since(t0);
		st = server_stop(&s);
		is_int(err, c->want, "enable, %s: %s", c->what, err ? e.msg : "ok");
		if (c->says)
			ok(strstr(e.msg, c->says) != NULL, "enable, %s: the line says '%s'", c->what, c->says);
		if (c->want)
			ok(strstr(e.msg, "DOTNET_PerfMapEnabled=1") != NULL,
			   "enable, %s: the line says what to set instead", c->what);
		ok(ms < TIMEOUT + SLACK && (!c->times_out || ms >= TIMEOUT - 10),
		   "enable, %s: %.0f ms (the deadline %d ms)", c->what, ms, TIMEOUT);
		ok(st != 3, "enable, %s: the request was EnablePerfMap with type 3", c->what);
		dotnetipc__free(d);
	}
}

static void test_disable_and_info(void)
{
	uint8_t want[20];
	struct err e = { 0 };
	struct dotnet_info info;
	struct dotnetipc *d;
	struct server s;
	int err;

	dotnetipc__encode(4, 6, NULL, 0, want, sizeof(want));
	server_start(&s, "/tmp", FSTART, B_OK, want, sizeof(want));
	d = open_fake(&e);
	err = d ? dotnetipc__disable_perfmap(d, &e) : -errno;
	is_int(err, 0, "disable: OK");
	is_int(server_stop(&s), 0, "disable: the request was DisablePerfMap");
	dotnetipc__free(d);

	server_start(&s, "/tmp", FSTART, B_SILENT, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__disable_perfmap(d, &e) : -errno;
	is_int(err, -ETIMEDOUT, "disable, silent: %s", e.msg);
	ok(strstr(e.msg, "stays on until the process exits") != NULL, "disable: the line says what follows");
	server_stop(&s);
	dotnetipc__free(d);

	dotnetipc__encode(4, 4, NULL, 0, want, sizeof(want));
	server_start(&s, "/tmp", FSTART, B_INFO, want, sizeof(want));
	d = open_fake(&e);
	err = d ? dotnetipc__process_info(d, &info, &e) : -errno;
	is_int(err, 0, "probe: ProcessInfo2 %s", err ? e.msg : "");
	is_str(info.version, "10.0.12", "probe: the runtime's version");
	is_int(server_stop(&s), 0, "probe: the request was ProcessInfo2");
	is_str(d ? dotnetipc__socket(d) : "", "/tmp/dotnet-diagnostic-5-424242-socket",
	       "probe: the socket as the app sees it");
	dotnetipc__free(d);

	server_start(&s, "/tmp", FSTART, B_INFO_PID, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__process_info(d, &info, &e) : -errno;
	is_int(err, -EPROTO, "probe: a runtime answering for another process: %s", e.msg);
	server_stop(&s);
	dotnetipc__free(d);

	/* .NET 7: EnablePerfMap unknown, then ProcessInfo2 names the version
	 * (the fake says 10.0.12: what matters is that it is asked and said) */
	server_start(&s, "/tmp", FSTART, B_UNKNOWN_V7, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, -EOPNOTSUPP, "enable on a runtime without the command: %s", e.msg);
	ok(strstr(e.msg, "its runtime (10.0.12) has no EnablePerfMap (.NET 8 added it)") != NULL,
	   "the line names the runtime's version from ProcessInfo2");
	server_stop(&s);
	dotnetipc__free(d);
}

static bool pending(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static void test_lookup(void)
{
	char p[PATH_MAX + 128], q[PATH_MAX + 256], name[96];
	struct err e = { 0 };
	struct dotnetipc *d;
	struct server s, s2;
	int lfd, err, i;

	/* nothing there */
	d = open_fake(&e);
	ok(!d && errno == ENOENT, "no socket: ENOENT");
	ok(strstr(e.msg, "no .NET diagnostics socket in its TMPDIR /tmp") &&
	   strstr(e.msg, "DOTNET_PerfMapEnabled=1"), "no socket: %s", e.msg);
	set_environ("PATH=/bin|DOTNET_EnableDiagnostics=0");
	d = open_fake(&e);
	ok(!d && errno == ENOENT && strstr(e.msg, "DOTNET_EnableDiagnostics=0 in its environment") &&
	   strstr(e.msg, "DOTNET_PerfMapEnabled=1"), "diagnostics off: %s", e.msg);
	set_environ("");

	/* a name for another PID, a name with junk, a key too long */
	for (i = 0; i < 4; i++) {
		static const char *const names[] = {
			"dotnet-diagnostic-55-424242-socket", "dotnet-diagnostic-5-424242-socket.x",
			"dotnet-diagnostic-5--socket", "dotnet-diagnostic-5-424242424242424242424-socket" };

		app_tmp(p, sizeof(p), "/tmp/");
		strcat(p, names[i]);
		put_file(p, "", 0);
	}
	d = open_fake(&e);
	ok(!d && errno == ENOENT, "names of other processes, junk or keys past 20 digits: not taken");

	/* the key that is its start time wins over a newer one */
	server_start(&s, "/tmp", FSTART, B_OK, NULL, 0);
	server_start(&s2, "/tmp", FSTART + 1000, B_NOTSUP, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, 0, "two sockets: the one whose key is its start time is asked");
	server_stop(&s);
	server_stop(&s2);
	dotnetipc__free(d);
	/* none with its start time (a time namespace): the newest */
	server_start(&s, "/tmp", FSTART - 5, B_NOTSUP, NULL, 0);
	server_start(&s2, "/tmp", FSTART + 7, B_OK, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, 0, "no key is its start time: the newest is asked");
	server_stop(&s);
	server_stop(&s2);
	dotnetipc__free(d);

	/* TMPDIR from its environment, inside its root */
	set_environ("HOME=/root|TMPDIR=/var/tmp/");
	server_start(&s, "/var/tmp", FSTART, B_OK, NULL, 0);
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, 0, "TMPDIR=/var/tmp/ from its environment: found there");
	is_str(d ? dotnetipc__socket(d) : "", "/var/tmp/dotnet-diagnostic-5-424242-socket",
	       "the socket's path as the app sees it");
	server_stop(&s);
	dotnetipc__free(d);
	set_environ("TMPDIR=var/tmp");
	d = open_fake(&e);
	ok(!d && strstr(e.msg, "not an absolute path"), "a relative TMPDIR: %s", e.msg);

	/* a TMPDIR that is a link out of the root: resolved inside it */
	sock_name(name, sizeof(name), FSTART);
	lfd = listen_at(outside, name);
	app_tmp(p, sizeof(p), "/escape");
	symlink(outside, p);			/* absolute: "PROC/sidecar" inside the root */
	set_environ("TMPDIR=/escape");
	for (i = 0; i < 2; i++) {
		appfile__force_walk(i == 1);
		d = open_fake(&e);
		ok(!d && errno == ENOENT && !pending(lfd),
		   "TMPDIR an absolute link out of its root (%s): resolved inside, nothing found",
		   i ? "walk" : "openat2");
		dotnetipc__free(d);
	}
	unlink(p);
	snprintf(q, sizeof(q), "../../../sidecar");	/* relative: ".." stops at the root */
	symlink(q, p);
	for (i = 0; i < 2; i++) {
		appfile__force_walk(i == 1);
		d = open_fake(&e);
		ok(!d && errno == ENOENT && !pending(lfd),
		   "TMPDIR a relative link climbing out (%s): stays inside, nothing found",
		   i ? "walk" : "openat2");
		dotnetipc__free(d);
	}
	appfile__force_walk(false);
	unlink(p);
	set_environ("");

	/* planted where the socket belongs: links to a sidecar socket, a file,
	 * a directory */
	app_tmp(p, sizeof(p), "/tmp/");
	strcat(p, name);
	snprintf(q, sizeof(q), "%s/%s", outside, name);
	for (i = 0; i < 4; i++) {
		static const char *const what[] = { "an absolute link to a sidecar socket",
			"a relative link to it", "a regular file", "a directory" };
		static const int want[] = { -ELOOP, -ELOOP, -ENOTSOCK, -ENOTSOCK };

		unlink(p);
		rmdir(p);
		if (i == 0)
			symlink(q, p);
		else if (i == 1)
			symlink("../../../sidecar/dotnet-diagnostic-5-424242-socket", p);
		else if (i == 2)
			put_file(p, "x", 1);
		else
			mkdir(p, 0755);
		d = open_fake(&e);
		err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
		is_int(err, want[i], "planted %s: refused: %s", what[i], e.msg);
		ok(!pending(lfd), "planted %s: the sidecar's socket saw no connection", what[i]);
		dotnetipc__free(d);
	}
	unlink(p);
	rmdir(p);
	close(lfd);
	unlink(q);

	/* a socket nobody listens on any more */
	app_tmp(q, sizeof(q), "/tmp");
	lfd = listen_at(q, name);
	close(lfd);
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, -ECONNREFUSED, "a socket left by an exited process: %s", e.msg);
	dotnetipc__free(d);
	unlink(p);

	/* the process gone (its PID another's) between lookup and command */
	server_start(&s, "/tmp", FSTART, B_OK, NULL, 0);
	d = open_fake(&e);
	set_start(FSTART + 1);
	err = d ? dotnetipc__disable_perfmap(d, &e) : -errno;
	is_int(err, -ESRCH, "the PID reused before DisablePerfMap: %s", e.msg);
	set_start(FSTART);
	server_stop(&s);
	dotnetipc__free(d);

	/* perf maps written elsewhere */
	server_start(&s, "/tmp", FSTART, B_OK, NULL, 0);
	set_environ("DOTNET_PerfMapJitDumpPath=/var/log/maps");
	d = open_fake(&e);
	err = d ? dotnetipc__enable_perfmap(d, &e) : -errno;
	is_int(err, -EXDEV, "DOTNET_PerfMapJitDumpPath elsewhere: %s", e.msg);
	server_stop(&s);
	dotnetipc__free(d);
	set_environ("");
}

static void test_should_disable(void)
{
	struct err e = { 0 };
	struct dotnetipc *d;
	struct server s;
	static const struct {
		const char *env;
		bool existed, want;
	} cases[] = {
		{ "", false, true },
		{ "", true, false },
		{ "DOTNET_PerfMapEnabled=0", false, true },
		{ "DOTNET_PerfMapEnabled=1", false, false },
		{ "DOTNET_PerfMapEnabled=2", false, false },	/* jitdump: Disable would stop it */
		{ "COMPlus_PerfMapEnabled=3", false, false },
	};
	size_t i;

	server_start(&s, "/tmp", FSTART, B_SILENT, NULL, 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		set_environ(cases[i].env);
		d = open_fake(&e);
		ok(d && dotnetipc__should_disable(d, cases[i].existed) == cases[i].want,
		   "should_disable: env '%s', map %s before: %s", cases[i].env,
		   cases[i].existed ? "there" : "absent", cases[i].want ? "yes" : "no");
		dotnetipc__free(d);
	}
	server_stop(&s);
	set_environ("");
}

static int count_name(const char *name, void *arg)
{
	(void)name;
	(*(int *)arg)++;
	return 0;
}

static void test_rtsock(void)
{
	char p[PATH_MAX + 64];
	int dirfd, i, n = 0, sv[2];
	uint8_t *buf = NULL, b[64];
	struct dotnetipc_reply r;
	struct err e = { 0 };
	uint64_t t0;

	app_tmp(p, sizeof(p), "/many");
	mkdir(p, 0755);
	for (i = 0; i < 20; i++) {
		char f[PATH_MAX + 96];

		snprintf(f, sizeof(f), "%s/f%d", p, i);
		put_file(f, "", 0);
	}
	dirfd = rtsock__open_dir(FPID, "/many");
	ok(dirfd >= 0, "rtsock: a directory inside the root");
	is_int(rtsock__list(dirfd, 10, now_ns() + 1000000000ull, count_name, &n), -E2BIG,
	       "rtsock: more entries than the bound: E2BIG");
	is_int(n, 10, "rtsock: the bound's entries seen, no more");
	is_int(rtsock__list(dirfd, 100, now_ns() - 1, count_name, &n), -ETIMEDOUT,
	       "rtsock: a deadline passed: ETIMEDOUT");
	close(dirfd);
	is_int(rtsock__open_dir(FPID, "/many/f1"), -ENOTDIR, "rtsock: a file as the directory: ENOTDIR");
	dirfd = rtsock__open_dir(FPID, "///");
	ok(dirfd >= 0, "rtsock: \"///\" is the root itself");
	if (dirfd >= 0)
		close(dirfd);

	/* the exchange over a socketpair: a reply written before the call */
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	reply(b, 0x00, 0);
	if (write(sv[1], b, 24) != 24)
		diag("write: %s", strerror(errno));
	is_int(dotnetipc__call_fd(sv[0], 4, 6, NULL, 0, now_ns() + 100000000ull, &buf, &r, &e), 0,
	       "call_fd: a reply already waiting");
	ok(!r.error && r.has_hresult && r.hresult == 0, "call_fd: OK, HRESULT 0");
	free(buf);
	/* the peer gone: EPIPE on the request, no SIGPIPE */
	close(sv[1]);
	t0 = now_ns();
	is_int(dotnetipc__call_fd(sv[0], 4, 6, NULL, 0, now_ns() + 5000000000ull, &buf, &r, &e),
	       -EPROTO, "call_fd: the peer closed: %s", e.msg);
	ok(ms_since(t0) < 5000 - SLACK, "call_fd: at once, not at the deadline 5 s later");
	close(sv[0]);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return drive(argc, argv);
	signal(SIGPIPE, SIG_DFL);	/* a SIGPIPE would kill the test: none may come */
	test_encode();
	test_replies();
	test_process_info();
	test_environ();
	if (build_proc()) {
		ok(0, "a fake proc root in /tmp: %s", strerror(errno));
		return done_testing();
	}
	test_enable_against();
	test_disable_and_info();
	test_lookup();
	test_should_disable();
	test_rtsock();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", proc_dir);
		if (system(cmd))
			diag("cannot remove %s", proc_dir);
	}
	return done_testing();
}
