// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rt/jattach: the reply, status, option and release parsers over tables;
 * then the whole attach against a fake JVM in this process: a fake proc
 * root (PROCROOT/PID with stat, status, maps, a root with /tmp, a working
 * directory) for this process's own PID, whose attach socket a thread
 * serves. The fake answers right, answers garbage, never answers, answers
 * without end, drips, closes, is another process, or starts its listener
 * when this process gets SIGQUIT with a trigger file present (as HotSpot
 * does); links planted in its /tmp point at a socket and a file outside.
 *
 * With arguments it is the integration tests' driver:
 *   test_jattach.t probe PID
 *   test_jattach.t perfmap PID [TIMES]    ask TIMES times (default 1), print ms
 *   test_jattach.t listen PATH RECORD     a Unix socket at PATH that appends a
 *                                         line to RECORD per connection */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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
#include "rt/jattach.h"
#include "rt/rtsock.h"
#include "tap.h"

#define NSPID 4242

/* ---- the integration tests' driver ---- */

static const char *how_name(enum jattach_how h)
{
	return h == JATTACH_AS_SELF ? "self" : h == JATTACH_AS_ROOT ? "root" : "user";
}

static int drive_probe(pid_t pid, int times)
{
	struct err e = { 0 };
	struct jattach *j = jattach__probe(pid, NULL, &e);
	int i, rc = 0;

	if (!j) {
		fprintf(stderr, "%s\n", e.msg);
		printf("errno %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("pid %d nspid %d jdk %d how %s listening %d\nmap %s\n", (int)jattach__pid(j),
	       (int)jattach__nspid(j), jattach__jdk(j), how_name(jattach__how(j)),
	       jattach__listening(j), jattach__perfmap_path(j));
	for (i = 0; i < times; i++) {
		uint64_t t0 = now_ns();
		int err = jattach__perfmap(j, &e);

		if (err) {
			fprintf(stderr, "%s\n", e.msg);
			printf("errno %s\n", strerrorname_np(-err));
			rc = 1;
			break;
		}
		printf("ms %.1f\n", (double)(now_ns() - t0) / 1e6);
	}
	jattach__free(j);
	return rc;
}

static int drive_listen(const char *path, const char *record)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 8)) {
		perror(path);
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	while ((c = accept(s, NULL, NULL)) >= 0) {
		FILE *f = fopen(record, "a");

		if (f) {
			fprintf(f, "connection\n");
			fclose(f);
		}
		close(c);
	}
	return 1;
}

/* ---- parsers ---- */

static void test_parse_reply(void)
{
	static const struct {
		const char *in;
		size_t len;
		int err, status;
		size_t off;
	} t[] = {
		{ "0\n", 2, 0, 0, 2 },
		{ "0\nsome output\n", 14, 0, 0, 2 },
		{ "-1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n", 66, 0, -1, 3 },
		{ "101\n", 4, 0, 101, 4 },
		{ "", 0, -ENODATA, 0, 0 },
		{ "0", 1, -ENODATA, 0, 0 },
		{ "-", 1, -ENODATA, 0, 0 },
		{ "-\n", 2, -EPROTO, 0, 0 },
		{ "\n", 1, -EPROTO, 0, 0 },
		{ "HTTP/1.1 200 OK\r\n", 17, -EPROTO, 0, 0 },
		{ "0 \n", 3, -EPROTO, 0, 0 },
		{ "0\r\n", 3, -EPROTO, 0, 0 },
		{ "123456789\n", 10, 0, 123456789, 10 },
		{ "1234567890\n", 11, -EPROTO, 0, 0 },
		{ "-999999999\n", 11, 0, -999999999, 11 },
		{ "00\n", 3, 0, 0, 3 },
		{ "0\0\n", 3, -EPROTO, 0, 0 },
		{ "+1\n", 3, -EPROTO, 0, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int status = 12345, err;
		size_t off = 999;

		err = jattach__parse_reply(t[i].in, t[i].len, &status, &off);
		is_int(err, t[i].err, "reply %zu: result", i);
		if (!err && !t[i].err) {
			is_int(status, t[i].status, "reply %zu: status", i);
			is_int(off, t[i].off, "reply %zu: output offset", i);
		}
	}
}

static void test_perfmap_reply(void)
{
	static const char unknown[] =
		"java.lang.IllegalArgumentException: Unknown diagnostic command\n";
	static const char refused[] = "java.lang.IllegalArgumentException: The argument list "
				      "of this diagnostic command should be empty.\n";
	static const char hostile[] = "\x1b]0;owned\x07\x9b" "31m red\nsecond line";
	struct err e = { 0 };

	is_int(jattach__perfmap_reply(7, 0, "", 0, &e), 0, "status 0: done");
	is_int(jattach__perfmap_reply(7, 0, "warning\n", 8, &e), 0,
	       "status 0 with output: done (the file is checked next)");
	is_int(jattach__perfmap_reply(7, -1, unknown, sizeof(unknown) - 1, &e), -EOPNOTSUPP,
	       "a JDK without the command (HotSpot's reply to an unknown one)");
	ok(strstr(e.msg, "no Compiler.perfmap") && strstr(e.msg, "JDK 17 or later"), "said: %s",
	   e.msg);
	is_int(jattach__perfmap_reply(7, -1, refused, sizeof(refused) - 1, &e), -EPROTO,
	       "another refusal");
	ok(strstr(e.msg, "should be empty") && strstr(e.msg, "status -1"),
	   "its first line and status said: %s", e.msg);
	is_int(jattach__perfmap_reply(7, 101, "", 0, &e), -EPROTO, "status 101, no output");
	ok(strstr(e.msg, "no message") != NULL, "said: %s", e.msg);
	is_int(jattach__perfmap_reply(7, -1, hostile, sizeof(hostile) - 1, &e), -EPROTO,
	       "a hostile message");
	ok(!strchr(e.msg, '\x1b') && !strchr(e.msg, '\x07') && !strstr(e.msg, "\xc2\x9b") &&
	   !strstr(e.msg, "second line") && strstr(e.msg, "\\x1b]0;owned"),
	   "escaped, first line only: %s", e.msg);
}

static void test_parse_status(void)
{
	static const char jvm[] =
		"Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t9155\nNgid:\t0\n"
		"Pid:\t9155\nPPid:\t1\nTracerPid:\t0\nUid:\t1000\t1001\t1000\t1000\n"
		"Gid:\t2000\t2001\t2000\t2000\nFDSize:\t256\nGroups:\t \nNStgid:\t9155\t1\n"
		"NSpid:\t9155\t1\nSigQ:\t2/96367\nSigPnd:\t0000000000000000\n"
		"ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
		"SigIgn:\t0000000000000002\nSigCgt:\t2000000101005ccd\nCapInh:\t0000000000000000\n";
	static const char old_kernel[] =
		"Name:\tjava\nTgid:\t77\nPid:\t77\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
		"SigIgn:\t0000000000000000\nSigCgt:\t0000000000000004\n";
	static const char no_sig[] =
		"Name:\tjava\nTgid:\t77\nPid:\t77\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n";
	static const char bad_uid[] =
		"Tgid:\t77\nUid:\tx\t0\t0\t0\nGid:\t0\t0\t0\t0\nSigIgn:\t0\nSigCgt:\t0\n";
	static const char huge_mask[] =
		"Tgid:\t77\nUid:\t0\t0\nGid:\t0\t0\nSigIgn:\t10000000000000000\nSigCgt:\t0\n";
	struct jattach_status st;

	is_int(jattach__parse_status(jvm, sizeof(jvm) - 1, &st), 0, "a JVM's status");
	is_int(st.euid, 1001, "the effective uid (second field)");
	is_int(st.egid, 2001, "the effective gid");
	is_int(st.nstgid, 1, "the PID in its own namespace (last NStgid)");
	ok(st.sigcgt == 0x2000000101005ccdull && st.sigign == 2, "the signal masks");
	ok(st.sigcgt & (1ull << (SIGQUIT - 1)), "SIGQUIT caught");
	is_str(st.name, "java", "its name");
	is_int(jattach__parse_status(old_kernel, sizeof(old_kernel) - 1, &st), 0,
	       "no NStgid (before 4.1)");
	is_int(st.nstgid, 77, "the Tgid then");
	is_int(jattach__parse_status(no_sig, sizeof(no_sig) - 1, &st), -EINVAL,
	       "no signal masks: refused");
	is_int(jattach__parse_status(bad_uid, sizeof(bad_uid) - 1, &st), -EINVAL,
	       "a Uid that is no number: refused");
	is_int(jattach__parse_status(huge_mask, sizeof(huge_mask) - 1, &st), -EINVAL,
	       "a mask past 64 bits: refused");
	is_int(jattach__parse_status("", 0, &st), -EINVAL, "nothing: refused");
}

/* NUL-separated text from a literal with '|' for NUL */
static size_t nuls(char *dst, const char *src)
{
	size_t n = strlen(src), i;

	for (i = 0; i < n; i++)
		dst[i] = src[i] == '|' ? '\0' : src[i];
	return n;
}

static void test_attach_disabled(void)
{
	static const struct {
		const char *cmd, *env;
		bool off;
	} t[] = {
		{ "java|-cp|.|Main|", "", false },
		{ "java|-XX:+DisableAttachMechanism|-cp|.|Main|", "", true },
		{ "java|-XX:+DisableAttachMechanism|-XX:-DisableAttachMechanism|Main|", "", false },
		{ "java|-XX:DisableAttachMechanism=true|Main|", "", true },
		{ "java|-jar|app.jar|-XX:+DisableAttachMechanism|", "", false },
		{ "java|Main|-XX:+DisableAttachMechanism|", "", false },
		{ "java|-cp|-XX:+DisableAttachMechanism|Main|", "", false },
		{ "java|-m|mod/Main|-XX:+DisableAttachMechanism|", "", false },
		{ "java|Main|", "PATH=/bin|JAVA_TOOL_OPTIONS=-Xmx1g -XX:+DisableAttachMechanism|", true },
		{ "java|-XX:-DisableAttachMechanism|Main|",
		  "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism|", false },
		{ "java|-XX:-DisableAttachMechanism|Main|",
		  "_JAVA_OPTIONS=-XX:+DisableAttachMechanism|", true },
		{ "java|Main|", "JDK_JAVA_OPTIONS=\t-XX:+DisableAttachMechanism\t|", true },
		{ "java|Main|", "XJAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism|", false },
		{ "java|-XX:+DisableAttachMechanismX|Main|", "", false },
		{ "java|-XX:+DisableAttachMechanism", "", true },
		{ "java|-cp", "", false },
		{ "", "", false },
	};
	char cmd[512], env[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		size_t cl = nuls(cmd, t[i].cmd), el = nuls(env, t[i].env);

		is_int(jattach__attach_disabled(cmd, cl, env, el), t[i].off,
		       "attach disabled by '%s' '%s'", t[i].cmd, t[i].env);
	}
}

static void test_parse_release(void)
{
	static const struct {
		const char *in;
		int v;
	} t[] = {
		{ "IMPLEMENTOR=\"Debian\"\nJAVA_VERSION=\"17.0.15\"\nJAVA_VERSION_DATE=\"x\"\n", 17 },
		{ "JAVA_VERSION=\"1.8.0_392\"\n", 8 },
		{ "JAVA_VERSION=\"11.0.21\"\r\n", 11 },
		{ "JAVA_VERSION=\"25\"", 25 },
		{ "JAVA_VERSION=\"21-ea\"\n", 21 },
		{ "JAVA_VERSION=17.0.1\n", 17 },
		{ "JAVA_VERSION=\"\"\n", 0 },
		{ "JAVA_VERSION=\"99999\"\n", 0 },
		{ "JAVA_RUNTIME_VERSION=\"17\"\n", 0 },
		{ "", 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		is_int(jattach__parse_release(t[i].in, strlen(t[i].in)), t[i].v, "release %zu", i);
}

/* ---- a fake JVM in this process ---- */

static char dir[PATH_MAX];		/* the fake proc root */
static char pdir[PATH_MAX + 32];	/* dir/PID */
static char tmp[PATH_MAX + 64];		/* dir/PID/root/tmp */
static char cwd[PATH_MAX + 64];		/* dir/PID/cwd */
static char outside[PATH_MAX + 64];	/* dir/outside: the sidecar's */

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void at(char *buf, size_t size, const char *base, const char *rel)
{
	snprintf(buf, size, "%s/%s", base, rel);
}

/* The fake process's status: our own ids (or UID), SIGQUIT caught or not. */
static void put_status(bool quit, uid_t uid)
{
	char p[PATH_MAX * 2], text[512];

	snprintf(text, sizeof(text),
		 "Name:\tjava\nTgid:\t%d\nPid:\t%d\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
		 "NStgid:\t%d\t%d\nSigIgn:\t0000000000000000\nSigCgt:\t%016llx\n",
		 (int)getpid(), (int)getpid(), uid, uid, uid, uid, getegid(), getegid(), getegid(),
		 getegid(), (int)getpid(), NSPID, quit ? 0x4ull : 0x0ull);
	at(p, sizeof(p), pdir, "status");
	put(p, text);
}

static int build(void)
{
	const char *b = getenv("SIDESCOPE_BUILD");
	char p[PATH_MAX * 2];

	if (b) {
		snprintf(dir, sizeof(dir), "%s/tmp", b);
		mkdir(dir, 0755);
		snprintf(dir, sizeof(dir), "%s/tmp/test_jattach.XXXXXX", b);
	} else {
		snprintf(dir, sizeof(dir), "/tmp/test_jattach.XXXXXX");
	}
	if (!mkdtemp(dir))
		return -1;
	snprintf(pdir, sizeof(pdir), "%s/%d", dir, (int)getpid());
	mkdir(pdir, 0755);
	at(p, sizeof(p), pdir, "root");
	mkdir(p, 0755);
	snprintf(tmp, sizeof(tmp), "%s/root/tmp", pdir);
	mkdir(tmp, 01777);
	at(cwd, sizeof(cwd), pdir, "cwd");
	mkdir(cwd, 0755);
	at(outside, sizeof(outside), dir, "outside");
	mkdir(outside, 0755);
	at(p, sizeof(p), pdir, "root/usr");
	mkdir(p, 0755);
	at(p, sizeof(p), pdir, "root/usr/jdk");
	mkdir(p, 0755);
	at(p, sizeof(p), pdir, "root/usr/jdk/release");
	put(p, "JAVA_VERSION=\"17.0.15\"\n");
	at(p, sizeof(p), pdir, "stat");
	{
		char text[256];

		/* field 22, the start time: 4242 */
		snprintf(text, sizeof(text),
			 "%d (java) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 1000 10\n",
			 (int)getpid());
		put(p, text);
	}
	at(p, sizeof(p), pdir, "maps");
	put(p, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 123 "
	       "/usr/jdk/lib/server/libjvm.so\n");
	at(p, sizeof(p), pdir, "cmdline");
	put(p, "java");
	at(p, sizeof(p), pdir, "environ");
	put(p, "");
	put_status(false, geteuid());
	proc__set_root(dir);
	return 0;
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 32];

	proc__set_root("/proc");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("cannot remove %s", dir);
}

enum fake_mode {
	FAKE_OK,	/* "0\n", and a fresh perf map */
	FAKE_OK_NOMAP,	/* "0\n", no map written */
	FAKE_TEXT,	/* "0\n" and some output */
	FAKE_GARBAGE,	/* not an attach reply */
	FAKE_SILENT,	/* reads the request, never answers */
	FAKE_HUGE,	/* "0\n" and output without end */
	FAKE_DRIP,	/* "0\n", then a byte every 20 ms without end */
	FAKE_CLOSE,	/* closes at once, as HotSpot does with a peer it refuses */
	FAKE_UNKNOWN,	/* JDK 11's answer to Compiler.perfmap */
};

struct fake {
	enum fake_mode mode;
	int listener;		/* bound and listening */
	char req[256];		/* the request received */
	size_t reqlen;
	pthread_t thread;
};

static int tmpfd = -1;		/* the fake /tmp, kept for binding */

/* Bind NAME in the fake /tmp as HotSpot does: NAME.tmp, then renamed over
 * whatever is at NAME. The listening socket, or -1. */
static int fake_bind(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char from[64], to[64];
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(from, sizeof(from), "%s.tmp", name);
	snprintf(to, sizeof(to), "%s", name);
	/* through /proc/self/fd: sun_path is too short for the fake's path */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", tmpfd, from);
	unlinkat(tmpfd, from, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 5) ||
	    fchmodat(tmpfd, from, 0600, 0) || renameat(tmpfd, from, tmpfd, to)) {
		diag("fake bind %s: %s", name, strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

static void write_map(void)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/perf-%d.map", tmp, NSPID);
	put(p, "7f0000001000 40 long HotJava.hotAlpha(long)\n");
}

static void *fake_serve(void *arg)
{
	struct fake *f = arg;
	int c = accept4(f->listener, NULL, NULL, SOCK_CLOEXEC), nuls = 0;
	char big[65536];
	ssize_t n;
	size_t sent = 0;

	if (c < 0)
		return NULL;
	/* the request: five strings */
	while (nuls < 5 && f->reqlen < sizeof(f->req)) {
		n = read(c, f->req + f->reqlen, 1);
		if (n <= 0)
			break;
		if (f->req[f->reqlen++] == '\0')
			nuls++;
	}
	switch (f->mode) {
	case FAKE_OK:
		write_map();
		/* fall through */
	case FAKE_OK_NOMAP:
		send(c, "0\n", 2, MSG_NOSIGNAL);
		break;
	case FAKE_TEXT:
		send(c, "0\nline one\nline two\n", 20, MSG_NOSIGNAL);
		break;
	case FAKE_GARBAGE:
		send(c, "HTTP/1.1 400 Bad Request\r\n\r\n", 28, MSG_NOSIGNAL);
		break;
	case FAKE_SILENT:
		/* until the client gives up */
		while (read(c, big, sizeof(big)) > 0)
			;
		break;
	case FAKE_HUGE:
		memset(big, 'x', sizeof(big));
		send(c, "0\n", 2, MSG_NOSIGNAL);
		while (sent < (256u << 20) && (n = send(c, big, sizeof(big), MSG_NOSIGNAL)) > 0)
			sent += (size_t)n;
		break;
	case FAKE_DRIP:
		send(c, "0\n", 2, MSG_NOSIGNAL);
		for (n = 0; n < 500 && send(c, "x", 1, MSG_NOSIGNAL) == 1; n++) {
			struct timespec ts = { 0, 20 * 1000000 };

			nanosleep(&ts, NULL);
		}
		break;
	case FAKE_CLOSE:
		break;
	case FAKE_UNKNOWN:
		send(c, "-1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n",
		     66, MSG_NOSIGNAL);
		break;
	}
	close(c);
	return NULL;
}

static int fake_start(struct fake *f, enum fake_mode mode)
{
	char name[32];

	memset(f, 0, sizeof(*f));
	f->mode = mode;
	snprintf(name, sizeof(name), ".java_pid%d", NSPID);
	f->listener = fake_bind(name);
	if (f->listener < 0)
		return -1;
	if (pthread_create(&f->thread, NULL, fake_serve, f)) {
		close(f->listener);
		return -1;
	}
	return 0;
}

static void fake_stop(struct fake *f)
{
	char name[32];

	/* a thread still in accept() gets EINVAL */
	shutdown(f->listener, SHUT_RDWR);
	pthread_join(f->thread, NULL);
	close(f->listener);
	snprintf(name, sizeof(name), ".java_pid%d", NSPID);
	unlinkat(tmpfd, name, 0);
}

static void remove_map(void)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/perf-%d.map", tmp, NSPID);
	unlink(p);
}

static double ms_since(uint64_t t0)
{
	return (double)(now_ns() - t0) / 1e6;
}

static struct jattach *probe_fake(unsigned int start_ms, unsigned int reply_ms, size_t max,
				  struct err *e)
{
	struct jattach_opts o = { .start_ms = start_ms, .reply_ms = reply_ms, .max_reply = max };

	return jattach__probe(getpid(), &o, e);
}

static void test_fake_listening(void)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0\0";
	struct err e = { 0 };
	struct jattach *j;
	struct fake f;
	char *out;
	size_t outlen;
	uint64_t t0;
	bool cut;
	int status, err;
	char p[PATH_MAX * 2];

	if (fake_start(&f, FAKE_OK)) {
		ok(0, "fake JVM started");
		return;
	}
	j = probe_fake(300, 300, 0, &e);
	ok(j != NULL, "probe: a listening fake JVM (%s)", e.msg);
	if (!j) {
		fake_stop(&f);
		return;
	}
	ok(jattach__listening(j), "probe: its socket is there");
	is_int(jattach__jdk(j), 17, "probe: JDK 17 from its release file");
	is_int(jattach__nspid(j), NSPID, "probe: its PID in its namespace");
	is_int(jattach__how(j), JATTACH_AS_SELF, "probe: our own uid and gid");
	snprintf(p, sizeof(p), "%s/%d/root/tmp/perf-%d.map", dir, (int)getpid(), NSPID);
	is_str(jattach__perfmap_path(j), p, "the map's path inside the JVM's root");
	remove_map();
	err = jattach__perfmap(j, &e);
	is_int(err, 0, "perfmap: done (%s)", e.msg);
	fake_stop(&f);
	ok(f.reqlen == sizeof(want) - 1 && memcmp(f.req, want, f.reqlen) == 0,
	   "the request is protocol 1: \"1\\0jcmd\\0Compiler.perfmap\\0\\0\\0\" (%zu bytes)",
	   f.reqlen);

	/* the same where the kernel has no openat2: the O_PATH walk */
	appfile__force_walk(true);
	remove_map();
	fake_start(&f, FAKE_OK);
	is_int(jattach__perfmap(j, &e), 0, "perfmap through the O_PATH walk (%s)", e.msg);
	fake_stop(&f);
	appfile__force_walk(false);

	/* the fake answers 0 and writes nothing */
	remove_map();
	fake_start(&f, FAKE_OK_NOMAP);
	is_int(jattach__perfmap(j, &e), -ENOENT, "status 0 and no map: said");
	ok(strstr(e.msg, "wrote no perf map") != NULL, "said: %s", e.msg);
	fake_stop(&f);

	/* an old map is not the answer */
	write_map();
	snprintf(p, sizeof(p), "%s/perf-%d.map", tmp, NSPID);
	{
		struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };

		utimensat(AT_FDCWD, p, old, 0);
	}
	fake_start(&f, FAKE_OK_NOMAP);
	is_int(jattach__perfmap(j, &e), -ENOENT, "status 0 and a stale map: said");
	ok(strstr(e.msg, "did not rewrite") != NULL, "said: %s", e.msg);
	fake_stop(&f);

	fake_start(&f, FAKE_TEXT);
	err = jattach__jcmd(j, "VM.version", &status, &out, &outlen, &cut, &e);
	is_int(err, 0, "jcmd: a reply with output");
	is_int(status, 0, "jcmd: its status");
	is_str(out, "line one\nline two\n", "jcmd: its output");
	ok(!cut, "jcmd: not cut");
	free(out);
	fake_stop(&f);
	ok(f.reqlen == 20 && memcmp(f.req, "1\0jcmd\0VM.version\0\0\0", 20) == 0,
	   "the request names the command");

	fake_start(&f, FAKE_UNKNOWN);
	is_int(jattach__perfmap(j, &e), -EOPNOTSUPP, "a JDK without Compiler.perfmap");
	ok(strstr(e.msg, "JDK 17 or later") != NULL, "said: %s", e.msg);
	fake_stop(&f);

	fake_start(&f, FAKE_GARBAGE);
	is_int(jattach__perfmap(j, &e), -EPROTO, "garbage: refused");
	ok(strstr(e.msg, "not an attach reply") && strstr(e.msg, "HTTP/1.1 400") &&
	   !strchr(e.msg, '\r'), "said, escaped: %s", e.msg);
	fake_stop(&f);

	fake_start(&f, FAKE_CLOSE);
	is_int(jattach__perfmap(j, &e), -ECONNRESET, "closed without a reply");
	ok(strstr(e.msg, "without a reply") != NULL, "said: %s", e.msg);
	fake_stop(&f);

	fake_start(&f, FAKE_SILENT);
	t0 = now_ns();
	is_int(jattach__perfmap(j, &e), -ETIMEDOUT, "never answers: timed out");
	ok(ms_since(t0) >= 290 && ms_since(t0) < 1500, "after its 300 ms (%.0f ms)", ms_since(t0));
	ok(strstr(e.msg, "within 300 ms") != NULL, "said: %s", e.msg);
	fake_stop(&f);
	jattach__free(j);

	/* 64 KiB kept of a reply without end; a second within its deadline */
	fake_start(&f, FAKE_HUGE);
	j = probe_fake(300, 2000, 65536, &e);
	if (!j) {
		ok(0, "probe (%s)", e.msg);
		fake_stop(&f);
		return;
	}
	t0 = now_ns();
	err = jattach__jcmd(j, "VM.version", &status, &out, &outlen, &cut, &e);
	is_int(err, 0, "huge: a reply");
	ok(cut && outlen == 65536 - 2, "huge: cut at 64 KiB (%zu bytes)", outlen);
	ok(ms_since(t0) < 1000, "huge: at once (%.0f ms)", ms_since(t0));
	free(out);
	fake_stop(&f);

	fake_start(&f, FAKE_DRIP);
	t0 = now_ns();
	err = jattach__jcmd(j, "VM.version", &status, &out, &outlen, &cut, &e);
	is_int(err, 0, "drip: what came by the deadline");
	ok(cut && outlen > 10 && outlen < 200, "drip: cut (%zu bytes)", outlen);
	ok(ms_since(t0) >= 1990 && ms_since(t0) < 3000, "drip: ended at its 2 s (%.0f ms)",
	   ms_since(t0));
	free(out);
	fake_stop(&f);
	jattach__free(j);
}

/* What the probe refuses before anything else: an old JDK, OpenJ9, no JVM. */
static void test_probe_refusals(void)
{
	char rel[PATH_MAX * 2], maps[PATH_MAX * 2];
	struct err e = { 0 };
	struct jattach *j;

	at(rel, sizeof(rel), pdir, "root/usr/jdk/release");
	at(maps, sizeof(maps), pdir, "maps");
	put(rel, "JAVA_VERSION=\"11.0.21\"\n");
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == EOPNOTSUPP, "JDK 11: refused");
	ok(strstr(e.msg, "is JDK 11, without Compiler.perfmap") != NULL, "said: %s", e.msg);
	put(rel, "JAVA_VERSION=\"17.0.15\"\n");

	put(maps, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 123 /opt/j9/lib/default/libj9vm29.so\n"
		  "7f0000200000-7f0000300000 r-xp 00000000 fe:00 124 /opt/j9/lib/server/libjvm.so\n");
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == ENOEXEC, "OpenJ9: refused");
	ok(strstr(e.msg, "OpenJ9") != NULL, "said: %s", e.msg);
	put(maps, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 123 /usr/bin/sleep\n");
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == ENOEXEC, "no libjvm.so: refused");
	ok(strstr(e.msg, "(java) is not a HotSpot JVM (no libjvm.so mapped)") != NULL, "said: %s",
	   e.msg);
	/* the tests after this one see libjvm.so deleted (its JDK upgraded
	 * under the running JVM): still HotSpot, its release file still read */
	put(maps, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 123 "
		  "/usr/jdk/lib/server/libjvm.so (deleted)\n");
	jattach__free(j);
}

/* A listener that is another process: the peer check refuses it. */
static void test_fake_other_process(void)
{
	char name[32];
	struct err e = { 0 };
	struct jattach *j;
	int s, pfd[2], status;
	pid_t child;
	char c;

	snprintf(name, sizeof(name), ".java_pid%d", NSPID);
	if (pipe(pfd))
		return;
	child = fork();
	if (child == 0) {
		close(pfd[0]);
		s = fake_bind(name);
		if (write(pfd[1], "r", 1) != 1 || s < 0)
			_exit(1);
		s = accept(s, NULL, NULL);
		_exit(s < 0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		ok(0, "the other process listens");
		return;
	}
	close(pfd[0]);
	j = probe_fake(300, 300, 0, &e);
	ok(j && jattach__listening(j), "a socket of another process at the JVM's name");
	if (j)
		is_int(jattach__perfmap(j, &e), -EPROTO, "refused: not served by the JVM");
	ok(strstr(e.msg, "served by process") != NULL, "said: %s", e.msg);
	jattach__free(j);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	unlinkat(tmpfd, name, 0);
}

/* ---- SIGQUIT: the fake starts its listener as HotSpot does ---- */

static int quit_pipe[2] = { -1, -1 };
static volatile sig_atomic_t quits;

static void on_quit(int sig)
{
	(void)sig;
	quits++;
	if (write(quit_pipe[1], "q", 1) < 0)
		quits += 1000;
}

struct starter {
	enum fake_mode mode;
	bool started;
	char where[16];		/* "cwd" or "tmp": where the trigger was */
	struct fake f;
	pthread_t thread;
};

/* Wait for SIGQUIT; with a trigger file of our uid or root's in the
 * working directory or /tmp, bind the socket and serve one request. */
static void *starter_run(void *arg)
{
	struct starter *s = arg;
	char name[32], p[PATH_MAX * 2];
	struct pollfd pfd = { .fd = quit_pipe[0], .events = POLLIN };
	struct stat st;
	char q;

	if (poll(&pfd, 1, 5000) <= 0 || read(quit_pipe[0], &q, 1) != 1)
		return NULL;
	snprintf(name, sizeof(name), ".attach_pid%d", NSPID);
	at(p, sizeof(p), cwd, name);
	if (stat(p, &st) == 0) {
		snprintf(s->where, sizeof(s->where), "cwd");
	} else {
		at(p, sizeof(p), tmp, name);
		if (stat(p, &st))
			return NULL;	/* a thread dump, in HotSpot */
		snprintf(s->where, sizeof(s->where), "tmp");
	}
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return NULL;
	snprintf(name, sizeof(name), ".java_pid%d", NSPID);
	s->f.mode = s->mode;
	s->f.listener = fake_bind(name);
	if (s->f.listener < 0)
		return NULL;
	s->started = true;
	fake_serve(&s->f);
	return NULL;
}

static void starter_begin(struct starter *s, enum fake_mode mode)
{
	char q;

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->f.listener = -1;
	while (read(quit_pipe[0], &q, 1) == 1)
		;
	pthread_create(&s->thread, NULL, starter_run, s);
}

static void starter_end(struct starter *s)
{
	char name[32];

	if (write(quit_pipe[1], "x", 1) < 0)	/* a starter still waiting ends */
		diag("quit pipe: %s", strerror(errno));
	pthread_join(s->thread, NULL);
	if (s->f.listener >= 0)
		close(s->f.listener);
	snprintf(name, sizeof(name), ".java_pid%d", NSPID);
	unlinkat(tmpfd, name, 0);
}

static bool exists_at(const char *base, const char *fmt)
{
	char name[64], p[PATH_MAX * 2];
	struct stat st;

	snprintf(name, sizeof(name), fmt, NSPID);
	at(p, sizeof(p), base, name);
	return lstat(p, &st) == 0;
}

static void test_fake_trigger(void)
{
	struct sigaction sa = { .sa_handler = on_quit };
	char p[PATH_MAX * 2], q[PATH_MAX * 2], buf[64];
	struct err e = { 0 };
	struct starter s;
	struct jattach *j;
	uint64_t t0;
	int recorder, fd;
	sig_atomic_t before;

	if (pipe2(quit_pipe, O_CLOEXEC | O_NONBLOCK) || sigaction(SIGQUIT, &sa, NULL)) {
		ok(0, "SIGQUIT handler");
		return;
	}

	/* SIGQUIT not caught: no socket, no signal */
	put_status(false, geteuid());
	before = quits;
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == EOPNOTSUPP, "probe: SIGQUIT not caught and no socket: refused");
	ok(strstr(e.msg, "does not handle SIGQUIT") != NULL, "said: %s", e.msg);
	is_int(quits, before, "no signal sent");

	/* -XX:+DisableAttachMechanism: refused before any signal */
	put_status(true, geteuid());
	at(p, sizeof(p), pdir, "cmdline");
	fd = open(p, O_WRONLY | O_TRUNC);
	if (fd >= 0) {
		if (write(fd, "java\0-XX:+DisableAttachMechanism\0Main\0", 39) != 39)
			diag("write cmdline");
		close(fd);
	}
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == EOPNOTSUPP, "probe: attach disabled: refused");
	ok(strstr(e.msg, "DisableAttachMechanism") != NULL, "said: %s", e.msg);
	is_int(quits, before, "no signal sent");
	put(p, "java");

	/* the trigger in /tmp, SIGQUIT, the socket, the reply */
	starter_begin(&s, FAKE_OK);
	remove_map();
	j = probe_fake(2000, 2000, 0, &e);
	ok(j && !jattach__listening(j), "probe: SIGQUIT caught, no socket yet (%s)", e.msg);
	t0 = now_ns();
	is_int(j ? jattach__perfmap(j, &e) : -1, 0, "perfmap through SIGQUIT (%s)", e.msg);
	ok(s.started && strcmp(s.where, "tmp") == 0, "the listener started by a trigger in /tmp");
	is_int(quits, before + 1, "one SIGQUIT");
	ok(!exists_at(tmp, ".attach_pid%d"), "the trigger removed after");
	diag("a dump through SIGQUIT: %.1f ms", ms_since(t0));
	starter_end(&s);
	jattach__free(j);

	/* a link planted at the trigger's name in /tmp: not followed; the
	 * working directory instead */
	snprintf(q, sizeof(q), "%s/created-through-link", outside);
	snprintf(p, sizeof(p), "%s/.attach_pid%d", tmp, NSPID);
	if (symlink(q, p))
		diag("symlink: %s", strerror(errno));
	starter_begin(&s, FAKE_OK);
	before = quits;
	j = probe_fake(2000, 2000, 0, &e);
	is_int(j ? jattach__perfmap(j, &e) : -1, 0, "a link at /tmp/.attach_pid: done (%s)",
	       e.msg);
	ok(s.started && strcmp(s.where, "cwd") == 0, "the trigger made in the working directory");
	ok(access(q, F_OK) != 0, "nothing created through the link");
	ok(readlink(p, buf, sizeof(buf)) > 0, "the planted link left as it was");
	ok(!exists_at(cwd, ".attach_pid%d"), "our trigger removed after");
	starter_end(&s);
	jattach__free(j);
	unlink(p);

	/* a link planted at the socket's name, to a socket outside that
	 * records connections: not followed; the JVM's rename replaces it */
	snprintf(q, sizeof(q), "%s/sidecar.sock", outside);
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int ofd = open(outside, O_PATH | O_DIRECTORY | O_CLOEXEC);

		recorder = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/sidecar.sock", ofd);
		if (recorder < 0 || bind(recorder, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(recorder, 8))
			diag("recorder: %s", strerror(errno));
		close(ofd);
	}
	snprintf(p, sizeof(p), "%s/.java_pid%d", tmp, NSPID);
	if (symlink(q, p))
		diag("symlink: %s", strerror(errno));
	starter_begin(&s, FAKE_OK);
	j = probe_fake(2000, 2000, 0, &e);
	ok(j && !jattach__listening(j), "a link at /tmp/.java_pid is no socket");
	is_int(j ? jattach__perfmap(j, &e) : -1, 0, "done through the JVM's own socket (%s)",
	       e.msg);
	ok(s.started, "the listener started");
	fd = accept4(recorder, NULL, NULL, SOCK_NONBLOCK);
	ok(fd < 0 && errno == EAGAIN, "the socket outside got no connection");
	if (fd >= 0)
		close(fd);
	close(recorder);
	starter_end(&s);
	jattach__free(j);

	/* the same link, SIGQUIT not caught: refused, not followed */
	if (symlink(q, p))
		diag("symlink: %s", strerror(errno));
	put_status(false, geteuid());
	before = quits;
	j = probe_fake(300, 300, 0, &e);
	ok(!j && errno == EOPNOTSUPP, "a link at /tmp/.java_pid and no SIGQUIT handler: refused");
	is_int(quits, before, "no signal sent");
	unlink(p);
	put_status(true, geteuid());

	/* SIGQUIT caught, but no listener comes (no starter): the wait ends */
	before = quits;
	j = probe_fake(300, 300, 0, &e);
	t0 = now_ns();
	is_int(j ? jattach__perfmap(j, &e) : -1, -ETIMEDOUT, "no socket after SIGQUIT: timed out");
	ok(ms_since(t0) >= 290 && ms_since(t0) < 2000, "after its 300 ms (%.0f ms)", ms_since(t0));
	ok(strstr(e.msg, "no attach socket within 300 ms") != NULL, "said: %s", e.msg);
	is_int(quits, before + 1, "one SIGQUIT");
	ok(!exists_at(tmp, ".attach_pid%d") && !exists_at(cwd, ".attach_pid%d"),
	   "the trigger removed after");
	jattach__free(j);
	signal(SIGQUIT, SIG_DFL);
}

/* rtsock: a listener that never accepts, its backlog full */
static void test_rtsock_backlog(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char name[] = "full.sock";
	int s, extra[64], n = 0, pathfd, fd, i;
	uint64_t t0;

	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", tmpfd, name);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 0)) {
		ok(0, "listener");
		return;
	}
	pathfd = rtsock__open_socket(tmpfd, name, NULL);
	ok(pathfd >= 0, "rtsock__open_socket: a socket");
	/* fill the backlog */
	for (n = 0; n < 64; n++) {
		extra[n] = rtsock__connect(pathfd, now_ns());
		if (extra[n] < 0)
			break;
	}
	ok(n < 64, "the backlog is full after %d connections", n);
	t0 = now_ns();
	fd = rtsock__connect(pathfd, now_ns() + 200 * 1000000ull);
	is_int(fd, -ETIMEDOUT, "a full backlog: timed out");
	ok(ms_since(t0) >= 195 && ms_since(t0) < 1000, "after 200 ms (%.0f ms)", ms_since(t0));
	for (i = 0; i < n; i++)
		close(extra[i]);
	close(pathfd);
	close(s);
	unlinkat(tmpfd, name, 0);
	is_int(rtsock__open_socket(tmpfd, "nothing", NULL), -ENOENT, "rtsock__open_socket: nothing there");
	if (symlinkat("/dev/null", tmpfd, "link") == 0)
		is_int(rtsock__open_socket(tmpfd, "link", NULL), -ELOOP, "rtsock__open_socket: a link, unfollowed");
	unlinkat(tmpfd, "link", 0);
	is_int(rtsock__open_socket(tmpfd, "../x", NULL), -EINVAL, "rtsock__open_socket: one component only");
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && strcmp(argv[1], "probe") == 0)
		return drive_probe((pid_t)atoi(argv[2]), 0);
	if (argc >= 3 && strcmp(argv[1], "perfmap") == 0)
		return drive_probe((pid_t)atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1);
	if (argc == 4 && strcmp(argv[1], "listen") == 0)
		return drive_listen(argv[2], argv[3]);
	if (argc > 1) {
		fprintf(stderr, "usage: %s [probe PID | perfmap PID [TIMES] | listen PATH RECORD]\n",
			argv[0]);
		return 2;
	}

	test_parse_reply();
	test_perfmap_reply();
	test_parse_status();
	test_attach_disabled();
	test_parse_release();
	if (build()) {
		ok(0, "fake proc root: %s", strerror(errno));
		return done_testing();
	}
	tmpfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	alarm(120);
	test_rtsock_backlog();
	test_probe_refusals();
	test_fake_listening();
	test_fake_other_process();
	test_fake_trigger();
	close(tmpfd);
	cleanup();
	return done_testing();
}
