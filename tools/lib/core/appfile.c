// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Files the application controls: resolved inside its root, opened without
 * blocking or following what it planted, regular files only, read bounded.
 *
 * Every open first takes an O_PATH descriptor (no device is ever opened, so
 * no open side effect of a device node the app made can happen, and a FIFO
 * cannot block), checks the type with fstat, and only then reopens a
 * regular file for reading through /proc/self/fd: the inode is pinned by
 * the O_PATH descriptor between the check and the reopen. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/proc.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_XDEV		0x01
#define RESOLVE_NO_MAGICLINKS	0x02
#define RESOLVE_NO_SYMLINKS	0x04
#define RESOLVE_BENEATH		0x08
#define RESOLVE_IN_ROOT		0x10
#endif

struct open_how_compat {
	unsigned long long flags, mode, resolve;
};

/* the kernel's own limit on links followed in one lookup */
#define MAX_LINKS 40

static int openat2_state;	/* 0: unknown, 1: works, -1: use the walk */

void appfile__force_walk(bool on)
{
	openat2_state = on ? -1 : 0;
}

static bool have_openat2(void)
{
	struct open_how_compat how = { .flags = O_PATH | O_CLOEXEC };
	int fd;

	if (openat2_state)
		return openat2_state > 0;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd >= 0) {
		close(fd);
		openat2_state = 1;
	} else {
		/* ENOSYS before 5.6; EPERM from seccomp filters that predate it */
		openat2_state = -1;
	}
	return openat2_state > 0;
}

static int sys_openat2(int dirfd, const char *path, unsigned long long resolve)
{
	struct open_how_compat how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };
	int fd, tries;

	/* RESOLVE_IN_ROOT with ".." fails with EAGAIN when a rename raced it */
	for (tries = 0; tries < 8; tries++) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd >= 0 ? fd : -errno;
}

struct walk {
	int root;	/* not owned */
	int *fds;	/* directories entered below root, innermost last */
	size_t n, cap;
};

static int walk_cur(const struct walk *w)
{
	return w->n ? w->fds[w->n - 1] : w->root;
}

static void walk_pop(struct walk *w)
{
	if (w->n)
		close(w->fds[--w->n]);
}

static int walk_push(struct walk *w, int fd)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		int *p = realloc(w->fds, cap * sizeof(*p));

		if (!p) {
			close(fd);
			return -ENOMEM;
		}
		w->fds = p;
		w->cap = cap;
	}
	w->fds[w->n++] = fd;
	return 0;
}

/* The O_PATH walk: what RESOLVE_IN_ROOT does, one component at a time.
 * ".." pops the directory we really came through (never above ROOTFD), an
 * absolute link restarts at ROOTFD, a relative one is spliced in place of
 * its name. Return an O_PATH descriptor of the last component (not a link),
 * or a negative errno. */
static int walk_in_root(int rootfd, const char *rel, unsigned int flags)
{
	struct walk w = { .root = rootfd };
	char *todo = NULL, *p, target[PATH_MAX];
	int links = 0, fd = -1, err = 0;

	todo = strdup(rel);
	if (!todo)
		return -ENOMEM;
	p = todo;
	for (;;) {
		char *name, *next;
		struct stat sb;
		ssize_t n;

		while (*p == '/')
			p++;
		if (!*p) {
			/* the path names a directory (the root, or "a/b/") */
			err = -APPFILE_ENOTREG;
			break;
		}
		name = p;
		while (*p && *p != '/')
			p++;
		if (*p)
			*p++ = '\0';
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			walk_pop(&w);
			continue;
		}
		fd = openat(walk_cur(&w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			break;
		}
		if (fstat(fd, &sb)) {
			err = -errno;
			break;
		}
		if (!S_ISLNK(sb.st_mode)) {
			while (*p == '/')
				p++;
			if (!*p) {
				err = 0;	/* the last component */
				break;
			}
			if (!S_ISDIR(sb.st_mode)) {
				err = -ENOTDIR;
				break;
			}
			err = walk_push(&w, fd);
			fd = -1;
			if (err)
				break;
			continue;
		}
		/* a link: its text in place of its name */
		if ((flags & APPFILE_NOFOLLOW) || ++links > MAX_LINKS) {
			err = -ELOOP;
			break;
		}
		n = readlinkat(walk_cur(&w), name, target, sizeof(target));
		close(fd);
		fd = -1;
		if (n < 0) {
			err = -errno;
			break;
		}
		if ((size_t)n >= sizeof(target)) {
			err = -ENAMETOOLONG;
			break;
		}
		target[n] = '\0';
		if (target[0] == '/')
			while (w.n)
				walk_pop(&w);
		/* what follows NAME starts at p (its separator was cut) */
		next = malloc((size_t)n + strlen(p) + 2);
		if (!next) {
			err = -ENOMEM;
			break;
		}
		sprintf(next, "%s/%s", target, p);
		free(todo);
		todo = next;
		p = todo;
	}
	while (w.n)
		walk_pop(&w);
	free(w.fds);
	free(todo);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

/* O_PATH descriptor -> a regular file opened for reading. */
static int reopen_regular(int pathfd, struct stat *st)
{
	struct stat sb;
	char self[64];
	int fd;

	if (fstat(pathfd, &sb)) {
		fd = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		fd = -APPFILE_ENOTREG;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else if (st)
		*st = sb;
out:
	close(pathfd);
	return fd;
}

int appfile__open_path_in_root(int rootfd, const char *rel, unsigned int flags)
{
	if (have_openat2()) {
		unsigned long long resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

		if (flags & APPFILE_NOFOLLOW)
			resolve |= RESOLVE_NO_SYMLINKS;
		return sys_openat2(rootfd, rel, resolve);
	}
	return walk_in_root(rootfd, rel, flags);
}

int appfile__open_in_root(int rootfd, const char *rel, unsigned int flags, struct stat *st)
{
	int fd = appfile__open_path_in_root(rootfd, rel, flags);

	return fd < 0 ? fd : reopen_regular(fd, st);
}

/* "PROCROOT/PID/root[/REST]": the length of the prefix up to REST, or 0. */
static size_t app_root_prefix(const char *path)
{
	const char *proc = proc__root(), *p;
	size_t len = strlen(proc);

	if (strncmp(path, proc, len) != 0 || path[len] != '/')
		return 0;
	p = path + len + 1;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "/root", 5) != 0 || (p[5] != '/' && p[5] != '\0'))
		return 0;
	return (size_t)(p + 5 - path);
}

int appfile__open(const char *path, unsigned int flags, struct stat *st)
{
	size_t pre = app_root_prefix(path);
	int rootfd, fd;

	if (pre) {
		char root[PATH_MAX];

		if (pre >= sizeof(root))
			return -ENAMETOOLONG;
		memcpy(root, path, pre);
		root[pre] = '\0';
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return -errno;
		fd = appfile__open_in_root(rootfd, path + pre, flags, st);
		close(rootfd);
		return fd;
	}
	if (flags & APPFILE_NOFOLLOW) {
		if (path[0] != '/')
			return -EINVAL;
		rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return -errno;
		if (have_openat2())
			fd = sys_openat2(rootfd, path, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		else
			fd = walk_in_root(rootfd, path, flags);
		close(rootfd);
		return fd < 0 ? fd : reopen_regular(fd, st);
	}
	/* the sidecar's own path (or /proc/PID/map_files, /proc/self/fd):
	 * links followed as given, still regular files only */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return reopen_regular(fd, st);
}

int appfile__read(int fd, size_t max, bool truncate, char **buf, size_t *len, bool *truncated)
{
	size_t cap = 4096, n = 0;
	char *b, *tmp;
	ssize_t r;

	*buf = NULL;
	if (truncated)
		*truncated = false;
	if (cap > max + 1)
		cap = max + 1;
	b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			size_t ncap;

			if (n >= max) {
				/* one byte more tells a file of exactly MAX bytes
				 * from a longer one */
				char probe;

				do
					r = read(fd, &probe, 1);
				while (r < 0 && errno == EINTR);
				if (r <= 0)
					break;
				if (!truncate) {
					free(b);
					return -EFBIG;
				}
				if (truncated)
					*truncated = true;
				break;
			}
			ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			tmp = realloc(b, ncap);
			if (!tmp) {
				free(b);
				return -ENOMEM;
			}
			b = tmp;
			cap = ncap;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(b);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

int appfile__read_path(const char *path, unsigned int flags, size_t max, char **buf,
		       size_t *len)
{
	int fd = appfile__open(path, flags, NULL), err;

	*buf = NULL;
	if (fd < 0)
		return fd;
	err = appfile__read(fd, max, false, buf, len, NULL);
	close(fd);
	return err;
}

const char *appfile__strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == APPFILE_ENOTREG)
		return "not a regular file";
	if (err == EFBIG)
		return "file too large";
	return strerror(err);
}

int appfile__open_mapping(pid_t pid, const struct proc_map *m, char *clean, size_t cleansz,
			  char *path, size_t pathsz, struct stat *st)
{
	struct stat sb;
	size_t len;
	int fd;

	snprintf(clean, cleansz, "%s", m->path);
	len = strlen(clean);
	if (len > 10 && strcmp(clean + len - 10, " (deleted)") == 0)
		clean[len - 10] = '\0';
	snprintf(path, pathsz, "%s/%d/root%s", proc__root(), (int)pid, clean);
	fd = appfile__open(path, 0, &sb);
	if (fd >= 0 && sb.st_ino != m->inode) {
		close(fd);
		fd = -ENOENT;
	}
	if (fd < 0) {
		snprintf(path, pathsz, "%s/%d/map_files/%llx-%llx", proc__root(), (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = appfile__open(path, 0, &sb);
	}
	if (fd >= 0 && st)
		*st = sb;
	return fd;
}
