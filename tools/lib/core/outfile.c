// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/outfile.h"

/* room for ".", the target's name (cut), "." and the random part, within
 * NAME_MAX however long the target's name is */
#define TMP_BASE_MAX 200
#define TMP_RANDOM 12
#define TMP_TRIES 64

struct outfile {
	FILE *fp;
	char *path;
	int dirfd;	/* the target's directory; -1 when written in place */
	char *base;	/* the target's name in dirfd */
	char *tmp;	/* the temporary file's name in dirfd */
	bool shared;	/* fp is stdout or stderr: flushed, never closed */
	bool published;	/* renamed into place before the end (outfile__publish) */
};

/* The descriptor that PATH names in this process, or -1: the operator's
 * way to say "write to what my shell gave me" (-o /dev/stdout | gzip). */
static int fd_alias(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	const char *p = NULL;
	long v = 0;
	size_t i;

	if (strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !p; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			p = path + strlen(dirs[i]);
	if (!p || !*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v <= INT_MAX ? (int)v : -1;
}

/* The errno that refuses a file of type MODE (see outfile.h). */
static int refusal(mode_t mode)
{
	if (S_ISLNK(mode))
		return ELOOP;
	if (S_ISDIR(mode))
		return EISDIR;
	if (S_ISFIFO(mode))
		return ESPIPE;
	if (S_ISSOCK(mode))
		return ESOCKTNOSUPPORT;
	return EMEDIUMTYPE;
}

const char *outfile__strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ELOOP:
		return "is a symbolic link; not following it";
	case EISDIR:
		return "is a directory";
	case ESPIPE:
		return "is a FIFO, not a regular file";
	case ESOCKTNOSUPPORT:
		return "is a socket, not a regular file";
	case EMEDIUMTYPE:
		return "is a block device, not a regular file";
	case ENOENT:
		return "its directory does not exist";
	case ENOTDIR:
		return "a part of its directory is not a directory";
	case EROFS:
		return "its directory is on a read-only file system (write to a writable "
		       "volume, e.g. an emptyDir)";
	case EACCES:
		return "permission denied: its directory is not writable by this user";
	default:
		return strerror(err);
	}
}

static int open_alias(struct outfile *o, int n)
{
	int fl = fcntl(n, F_GETFL), fd;

	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
		errno = EBADF;
		return -1;
	}
	if (n == STDOUT_FILENO || n == STDERR_FILENO) {
		/* the stdio stream itself, so that the order of what else
		 * goes to it is kept */
		o->fp = n == STDOUT_FILENO ? stdout : stderr;
		o->shared = true;
		return 0;
	}
	/* a duplicate, not a new open: a socket cannot be reopened, and
	 * reopening with O_TRUNC would cut a file the shell opened to append */
	fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -1;
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return 0;
}

/* FD as O's stream: 0; or -1, FD closed and errno kept */
static int stream_of(struct outfile *o, int fd)
{
	int err;

	o->fp = fdopen(fd, "w");
	if (o->fp)
		return 0;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* A character device named directly (/dev/null), written in place.
 * Return 0, 1 if a regular file has taken its place since, or -1. */
static int open_chardev(struct outfile *o)
{
	struct stat sb;
	int fd, fl, err;

	/* O_NONBLOCK: if a FIFO was swapped in since lstat, do not wait
	 * for its reader; O_NOFOLLOW: nor follow a link swapped in */
	fd = openat(o->dirfd, o->base, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0)
		goto fail;
	if (S_ISREG(sb.st_mode)) {
		close(fd);
		return 1;
	}
	if (!S_ISCHR(sb.st_mode)) {
		errno = refusal(sb.st_mode);
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto fail;
	return stream_of(o, fd);
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

static void random_name(char *out, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static uint64_t counter;
	unsigned char r[TMP_RANDOM];
	size_t i;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		/* no entropy yet: O_EXCL keeps this safe, the name only has to
		 * differ from what is there */
		uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ ++counter * 0x9e3779b97f4a7c15ull;

		for (i = 0; i < sizeof(r); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			r[i] = (unsigned char)x;
		}
	}
	for (i = 0; i < n && i < sizeof(r); i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[i] = '\0';
}

/* The temporary file next to the target: a new name, created here. */
static int open_tmp(struct outfile *o)
{
	size_t blen = strlen(o->base);
	int fd = -1, tries, err;

	if (blen > TMP_BASE_MAX)
		blen = TMP_BASE_MAX;
	o->tmp = malloc(blen + TMP_RANDOM + 3);
	if (!o->tmp) {
		errno = ENOMEM;
		return -1;
	}
	for (tries = 0; tries < TMP_TRIES; tries++) {
		o->tmp[0] = '.';
		memcpy(o->tmp + 1, o->base, blen);
		o->tmp[blen + 1] = '.';
		random_name(o->tmp + blen + 2, TMP_RANDOM);
		fd = openat(o->dirfd, o->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		goto fail_name;
	/* exactly 0640, whatever the umask */
	if (fchmod(fd, 0640) < 0) {
		err = errno;
		close(fd);
		errno = err;
	} else if (stream_of(o, fd) == 0) {
		return 0;
	}
	err = errno;
	unlinkat(o->dirfd, o->tmp, 0);
	errno = err;
fail_name:
	free(o->tmp);
	o->tmp = NULL;
	return -1;
}

static void outfile_free(struct outfile *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->base);
	free(o->path);
	free(o);
}

struct outfile *outfile__open(const char *path)
{
	struct outfile *o;
	const char *slash, *base;
	struct stat sb;
	char *dir = NULL;
	int n, err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dirfd = -1;
	o->path = strdup(path);
	if (!o->path)
		goto fail_nomem;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout;
		o->shared = true;
		return o;
	}
	n = fd_alias(path);
	if (n >= 0) {
		if (open_alias(o, n) < 0)
			goto fail;
		return o;
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (*base == '\0') {
		errno = *path ? EISDIR : ENOENT;
		goto fail;
	}
	dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	o->base = strdup(base);
	if (!dir || !o->base)
		goto fail_nomem;
	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* a directory we may write but not read: every *at() call works on
	 * an O_PATH descriptor, only the fsync after the rename does not */
	if (o->dirfd < 0 && errno == EACCES)
		o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0)
		goto fail;
	if (fstatat(o->dirfd, o->base, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			goto fail;
		sb.st_mode = S_IFREG;
	}
	if (S_ISCHR(sb.st_mode)) {
		n = open_chardev(o);
		if (n < 0)
			goto fail;
		if (n == 0) {
			/* written in place: the directory is not needed */
			close(o->dirfd);
			o->dirfd = -1;
			free(dir);
			return o;
		}
		sb.st_mode = S_IFREG;
	}
	if (S_ISREG(sb.st_mode)) {
		if (open_tmp(o) < 0)
			goto fail;
	} else {
		errno = refusal(sb.st_mode);
		goto fail;
	}
	free(dir);
	return o;
fail_nomem:
	errno = ENOMEM;
fail:
	err = errno;
	free(dir);
	outfile_free(o);
	errno = err;
	return NULL;
}

FILE *outfile__fp(struct outfile *o)
{
	return o->fp;
}

const char *outfile__path(const struct outfile *o)
{
	return o->path;
}

int outfile__publish(struct outfile *o)
{
	if (!o->tmp)
		return 0;
	if (renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0) {
		int err = errno;

		errno = err;
		return -err;
	}
	free(o->tmp);
	o->tmp = NULL;
	o->published = true;
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (fflush(o->fp) != 0 || ferror(o->fp))
		err = errno ? -errno : -EIO;
	if (o->published && !err && fsync(fileno(o->fp)) < 0 && errno != EINVAL)
		err = -errno;
	if (!o->tmp) {
		if (!o->shared && fclose(o->fp) != 0 && !err)
			err = errno ? -errno : -EIO;
		outfile_free(o);
		if (err)
			errno = -err;
		return err;
	}
	if (!err && fsync(fileno(o->fp)) < 0 && errno != EINVAL)
		err = -errno;
	if (fclose(o->fp) != 0 && !err)
		err = errno ? -errno : -EIO;
	/* both names relative to the directory opened at the start: a
	 * directory swapped in since cannot redirect the rename */
	if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0)
		err = -errno;
	if (err)
		unlinkat(o->dirfd, o->tmp, 0);
	else
		/* the rename itself survives a crash; best effort: the file
		 * is complete and in place whatever this says */
		(void)fsync(o->dirfd);
	outfile_free(o);
	if (err)
		errno = -err;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (!o)
		return;
	if (o->tmp) {
		fclose(o->fp);
		unlinkat(o->dirfd, o->tmp, 0);
	} else if (!o->shared) {
		fclose(o->fp);
	} else {
		fflush(o->fp);
	}
	outfile_free(o);
}

struct outfile *outfile__open_or_say(const char *path)
{
	struct outfile *o = outfile__open(path);

	if (!o)
		p_err("cannot write %s: %s", path, outfile__strerror(errno));
	return o;
}

int outfile__commit_or_say(struct outfile *o)
{
	char *path = o->path;
	int err;

	o->path = NULL;		/* kept for the message: commit frees O */
	err = outfile__commit(o);
	if (err)
		p_err("cannot write %s: %s", path, outfile__strerror(err));
	free(path);
	return err;
}

int outfile__finish(struct outfile *o, outfile_write_fn fn, void *ctx)
{
	int err = fn(ctx, o->fp);

	if (err) {
		p_err("cannot write %s: %s", o->path, strerror(-err));
		outfile__abort(o);
		return err;
	}
	return outfile__commit_or_say(o);
}
