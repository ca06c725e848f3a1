// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* appfile: what an app can plant in its root or a shared volume, opened both
 * with openat2 and with the portable walk. A fake process root is built in a
 * temporary directory next to a "sidecar" file outside it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/proc.h"
#include "tap.h"

#define PID 77

static char dir[PATH_MAX];	/* fake proc root: DIR/77/root is the app's / */
static char root[PATH_MAX + 16];
static char outside[PATH_MAX + 16];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void at_root(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

static void link_in_root(const char *target, const char *name)
{
	char p[PATH_MAX * 2];

	at_root(p, sizeof(p), name);
	if (symlink(target, p))
		diag("symlink %s: %s", p, strerror(errno));
}

static int build(void)
{
	char p[PATH_MAX * 3];

	snprintf(dir, sizeof(dir), "/tmp/test_appfile.XXXXXX");
	if (getenv("SIDESCOPE_BUILD")) {
		snprintf(dir, sizeof(dir), "%s/tmp", getenv("SIDESCOPE_BUILD"));
		mkdir(dir, 0755);
		snprintf(dir, sizeof(dir), "%s/tmp/test_appfile.XXXXXX", getenv("SIDESCOPE_BUILD"));
	}
	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/%d", dir, PID);
	mkdir(p, 0755);
	snprintf(root, sizeof(root), "%s/%d/root", dir, PID);
	mkdir(root, 0755);
	snprintf(outside, sizeof(outside), "%s/secret", dir);
	put(outside, "sidecar secret\n");
	at_root(p, sizeof(p), "secret");
	put(p, "app file\n");
	at_root(p, sizeof(p), "tmp");
	mkdir(p, 0755);
	at_root(p, sizeof(p), "tmp/perf-1.map");
	put(p, "1000 10 f\n");
	at_root(p, sizeof(p), "tmp/fifo");
	if (mkfifo(p, 0600))
		return -1;
	/* absolute links name the app's own files, never the sidecar's */
	snprintf(p, sizeof(p), "%s", outside);
	link_in_root(p, "abs-to-outside");
	link_in_root("/secret", "abs-to-secret");
	link_in_root("../../../../../../../../secret", "dotdot");
	link_in_root("tmp/../tmp/./perf-1.map", "relative");
	link_in_root("/tmp/fifo", "to-fifo");
	link_in_root("/tmp", "dirlink");
	link_in_root("loop2", "loop1");
	link_in_root("loop1", "loop2");
	link_in_root("/nonexistent", "dangling");
	return 0;
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("cannot remove %s", dir);
}

/* Open REL in the fake root (as PROCROOT/77/root/REL); return what the file
 * holds (first line) in BUF, or "" and the error. */
static int open_rel(const char *rel, unsigned int flags, char *buf, size_t size)
{
	char path[PATH_MAX * 2];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	buf[0] = '\0';
	fd = appfile__open(path, flags, NULL);
	if (fd < 0)
		return fd;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void cases(const char *mode)
{
	char buf[256];

	/* a FIFO must fail at once, never block: the alarm fails the test */
	alarm(10);
	is_int(open_rel("secret", 0, buf, sizeof(buf)), 0, "%s: a regular file opens", mode);
	is_str(buf, "app file", "%s: its content", mode);
	is_int(open_rel("abs-to-secret", 0, buf, sizeof(buf)), 0, "%s: absolute link", mode);
	is_str(buf, "app file", "%s: absolute link resolves inside the app's root", mode);
	ok(open_rel("abs-to-outside", 0, buf, sizeof(buf)) == -ENOENT,
	   "%s: a link to the sidecar's file names nothing inside the root", mode);
	is_int(open_rel("dotdot", 0, buf, sizeof(buf)), 0, "%s: '..' past the root", mode);
	is_str(buf, "app file", "%s: '..' stops at the app's root", mode);
	is_int(open_rel("relative", 0, buf, sizeof(buf)), 0, "%s: relative link with . and ..",
	       mode);
	is_str(buf, "1000 10 f", "%s: relative link content", mode);
	is_int(open_rel("tmp/fifo", 0, buf, sizeof(buf)), -APPFILE_ENOTREG,
	       "%s: a FIFO is not a regular file (and does not block)", mode);
	is_int(open_rel("to-fifo", 0, buf, sizeof(buf)), -APPFILE_ENOTREG,
	       "%s: a link to a FIFO neither", mode);
	is_int(open_rel("dirlink", 0, buf, sizeof(buf)), -APPFILE_ENOTREG,
	       "%s: a directory neither", mode);
	is_int(open_rel("", 0, buf, sizeof(buf)), -APPFILE_ENOTREG, "%s: the root itself", mode);
	is_int(open_rel("dirlink/perf-1.map", 0, buf, sizeof(buf)), 0,
	       "%s: a link to a directory in the middle", mode);
	is_int(open_rel("loop1", 0, buf, sizeof(buf)), -ELOOP, "%s: a link loop ends", mode);
	is_int(open_rel("dangling", 0, buf, sizeof(buf)), -ENOENT, "%s: a dangling link", mode);
	is_int(open_rel("secret/x", 0, buf, sizeof(buf)), -ENOTDIR, "%s: a file as a directory",
	       mode);
	is_int(open_rel("relative", APPFILE_NOFOLLOW, buf, sizeof(buf)), -ELOOP,
	       "%s: NOFOLLOW refuses a link", mode);
	is_int(open_rel("dirlink/perf-1.map", APPFILE_NOFOLLOW, buf, sizeof(buf)), -ELOOP,
	       "%s: NOFOLLOW refuses a link in the middle", mode);
	is_int(open_rel("tmp/perf-1.map", APPFILE_NOFOLLOW, buf, sizeof(buf)), 0,
	       "%s: NOFOLLOW opens a plain path", mode);
	alarm(0);
}

static void test_reads(void)
{
	char path[PATH_MAX * 2], *buf;
	size_t len;
	bool cut;
	int fd;

	at_root(path, sizeof(path), "sparse");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* 1 GiB that costs no disk: the read must stop at its bound */
	ok(fd >= 0 && ftruncate(fd, 1ll << 30) == 0, "a sparse 1 GiB file");
	if (fd >= 0)
		close(fd);
	is_int(appfile__read_path(path, 0, 1 << 20, &buf, &len), -EFBIG,
	       "read past the bound: EFBIG");
	ok(buf == NULL, "nothing returned");
	fd = appfile__open(path, 0, NULL);
	is_int(appfile__read(fd, 4096, true, &buf, &len, &cut), 0, "truncating read");
	ok(len == 4096 && cut, "the first 4096 bytes, marked cut");
	free(buf);
	close(fd);
	at_root(path, sizeof(path), "secret");
	is_int(appfile__read_path(path, 0, 9, &buf, &len), 0, "exactly at the bound");
	ok(buf && len == 9 && strcmp(buf, "app file\n") == 0, "whole file, NUL-terminated");
	free(buf);
	is_int(appfile__read_path(path, 0, 8, &buf, &len), -EFBIG, "one byte past the bound");
	is_str(appfile__strerror(-APPFILE_ENOTREG), "not a regular file", "strerror names it");
}

int main(void)
{
	if (build()) {
		/* nothing here needs privilege: not a skip, a failure */
		printf("1..1\nnot ok 1 - cannot build the fake root in %s: %s\n", dir,
		       strerror(errno));
		return 1;
	}
	proc__set_root(dir);
	cases("openat2");
	appfile__force_walk(true);
	cases("walk");
	appfile__force_walk(false);
	test_reads();
	cleanup();
	return done_testing();
}
