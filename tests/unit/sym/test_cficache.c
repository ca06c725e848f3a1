// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The unwind table cache: a table stored comes back whole for the same
 * file and for no other; damaged, truncated, planted or linked entries are
 * misses (and never block); a directory that is not the sidecar's own is
 * refused; the size limit removes the entries used longest ago. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/cficache.h"
#include "sym/cfitab.h"
#include "tap.h"

static char top[] = "/tmp/test_cficache.XXXXXX";

/* The one .cfi entry of DIR: its path in BUF, or 0 when none */
static int entry_path(const char *dir, char *buf, size_t len)
{
	char cmd[512];
	FILE *p;
	int got;

	snprintf(cmd, sizeof(cmd), "ls %s/*.cfi 2>/dev/null | head -1", dir);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	got = fgets(buf, (int)len, p) != NULL;
	pclose(p);
	if (got)
		buf[strcspn(buf, "\n")] = '\0';
	return got && buf[0];
}

/* A synthetic table of N rows */
static void fake_table(struct cfi_table *t, size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->rows = calloc(n, sizeof(*t->rows));
	t->n = n;
	for (i = 0; i < n; i++) {
		t->rows[i].pc = (uint32_t)(i * 4);
		t->rows[i].cfa = CFI_CFA_SP;
		t->rows[i].cfa_off = 8;
	}
}

static void damage(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char b;

	if (fd < 0)
		return;
	if (pread(fd, &b, 1, off) == 1) {
		b ^= 0x55;
		if (pwrite(fd, &b, 1, off) != 1)
			diag("pwrite failed");
	}
	close(fd);
}

int main(void)
{
	char dir[256], path[512], why[512], cmd[600];
	struct cfi_table libc, got, big;
	struct cficache_stats cs;
	struct cficache *c;
	struct stat st, other;
	int fd, err;

	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/cache/tables", top);
	fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || cfitab__build_fd(fd, &libc)) {
		ok(0, "libc's table to cache");
		return done_testing();
	}
	close(fd);

	/* made (with its parents) mode 0700; a table comes back whole */
	c = cficache__open(dir, CFICACHE_MAX_BYTES, why, sizeof(why));
	ok(c != NULL, "the cache directory is made with its parents");
	if (!c)
		return done_testing();
	{
		struct stat ds;

		ok(!stat(dir, &ds) && (ds.st_mode & 0777) == 0700, "mode 0700");
	}
	is_int(cficache__get(c, &st, &got), -ENOENT, "an empty cache: a miss");
	is_int(cficache__put(c, &st, &libc), 0, "libc's table is stored");
	err = cficache__get(c, &st, &got);
	is_int(err, 0, "and found again");
	ok(!err && got.n == libc.n && got.base == libc.base &&
	   !memcmp(got.rows, libc.rows, libc.n * sizeof(*libc.rows)) &&
	   got.st.fdes == libc.st.fdes, "whole: %zu rows, the same base and stats", got.n);
	cfitab__free(&got);

	/* another file, or the same one changed: not its table */
	other = st;
	other.st_ctim.tv_nsec ^= 1;
	is_int(cficache__get(c, &other, &got), -ENOENT, "a file changed since (ctime): a miss");
	other = st;
	other.st_ino++;
	is_int(cficache__get(c, &other, &got), -ENOENT, "another inode: a miss");

	/* damaged entries: misses, removed, built and stored again */
	ok(entry_path(dir, path, sizeof(path)), "the entry is a file of its own");
	damage(path, 200);	/* in the rows */
	is_int(cficache__get(c, &st, &got), -ENOENT, "a damaged row: a miss");
	ok(access(path, F_OK) != 0, "and the entry is removed");
	cficache__put(c, &st, &libc);
	if (truncate(path, 4096))
		diag("truncate failed");
	is_int(cficache__get(c, &st, &got), -ENOENT, "a truncated entry: a miss");
	cficache__put(c, &st, &libc);
	damage(path, 0);	/* the magic */
	is_int(cficache__get(c, &st, &got), -ENOENT, "a wrong magic: a miss");

	/* planted: a FIFO (never blocks), a link to a valid entry elsewhere */
	unlink(path);
	ok(!mkfifo(path, 0600), "a FIFO planted under the entry's name");
	is_int(cficache__get(c, &st, &got), -ENOENT, "is a miss, without blocking");
	unlink(path);
	{
		char real[600];

		snprintf(real, sizeof(real), "%s/real.cfi", top);
		cficache__put(c, &st, &libc);
		rename(path, real);
		ok(!symlink(real, path), "a link planted under the entry's name");
		is_int(cficache__get(c, &st, &got), -ENOENT, "is not followed");
		unlink(path);
	}
	cficache__stats(c, &cs);
	ok(cs.hits == 1 && cs.bad >= 3 && cs.stored >= 4, "counted: %zu hits, %zu bad, %zu stored",
	   cs.hits, cs.bad, cs.stored);

	/* blobs: back whole under their key only; damaged or too large, a
	 * miss, and removed */
	{
		static const char blob[] = "the kernel types of a BPF object";
		char bpath[600];
		void *b;
		size_t bl;

		is_int(cficache__get_blob(c, 42, 1024, &b, &bl), -ENOENT, "no blob yet: a miss");
		is_int(cficache__put_blob(c, 42, blob, sizeof(blob)), 0, "a blob is stored");
		ok(cficache__get_blob(c, 42, 1024, &b, &bl) == 0 && bl == sizeof(blob) &&
			   !memcmp(b, blob, bl), "and comes back whole");
		cficache__blob_free(b, bl);
		is_int(cficache__get_blob(c, 43, 1024, &b, &bl), -ENOENT, "not under another key");
		is_int(cficache__get_blob(c, 42, 8, &b, &bl), -ENOENT, "nor when larger than asked");
		cficache__put_blob(c, 42, blob, sizeof(blob));
		snprintf(bpath, sizeof(bpath), "%s/%016x.blb", dir, 42);
		damage(bpath, 40);	/* in the bytes */
		is_int(cficache__get_blob(c, 42, 1024, &b, &bl), -ENOENT, "a damaged blob: a miss");
		ok(access(bpath, F_OK) != 0, "and it is removed");
		cficache__put_blob(c, 42, blob, sizeof(blob));
		cficache__drop_blob(c, 42);
		ok(access(bpath, F_OK) != 0, "a blob dropped is gone");
	}
	cficache__close(c);

	/* the size limit: the entry used longest ago goes first */
	c = cficache__open(dir, libc.n * sizeof(struct cfi_row) + 50000, why, sizeof(why));
	ok(c != NULL, "reopened with a limit a little over libc's entry");
	if (c) {
		cficache__put(c, &st, &libc);
		other = st;
		other.st_ino++;
		fake_table(&big, 10000);
		is_int(cficache__put(c, &other, &big), 0, "a second, smaller table");
		is_int(cficache__get(c, &st, &got), -ENOENT, "pushed libc's out");
		is_int(cficache__get(c, &other, &got), 0, "and is kept");
		cfitab__free(&got);
		cfitab__free(&big);
		fake_table(&big, (CFICACHE_MAX_BYTES / sizeof(struct cfi_row)));
		is_int(cficache__put(c, &st, &big), -EFBIG, "a table over the limit is not stored");
		cfitab__free(&big);
		cficache__close(c);
	}

	/* directories that are not the sidecar's own */
	chmod(dir, 0777);
	c = cficache__open(dir, CFICACHE_MAX_BYTES, why, sizeof(why));
	ok(!c && errno == EPERM, "a directory open to others is refused");
	ok(strstr(why, "open to other users") != NULL, "saying why: %s", why);
	chmod(dir, 0700);
	snprintf(path, sizeof(path), "%s/link", top);
	if (symlink(dir, path))
		diag("symlink failed");
	c = cficache__open(path, CFICACHE_MAX_BYTES, why, sizeof(why));
	ok(!c && errno == ELOOP, "a link to a directory is refused (%s)", why);
	snprintf(path, sizeof(path), "%s/file", top);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	c = cficache__open(path, CFICACHE_MAX_BYTES, why, sizeof(why));
	ok(!c && errno == ENOTDIR, "a file is refused (%s)", why);
	if (getuid() == 0) {
		if (chown(dir, 65534, 65534))
			diag("chown failed");
		c = cficache__open(dir, CFICACHE_MAX_BYTES, why, sizeof(why));
		ok(!c && errno == EPERM && strstr(why, "another user"),
		   "another user's directory is refused (%s)", why);
	}
	cfitab__free(&libc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	if (system(cmd))
		diag("cleanup failed");
	return done_testing();
}
