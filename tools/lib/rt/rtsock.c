// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unix sockets inside the application's root: found without following
 * what the app planted, connected by descriptor, talked to within a
 * deadline. See rtsock.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/proc.h"
#include "core/util.h"
#include "rt/rtsock.h"

/* Milliseconds left until DEADLINE_NS, rounded up; 0 once it has passed. */
static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = now_ns(), ms;

	if (now >= deadline_ns)
		return 0;
	ms = (deadline_ns - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Wait for EVENTS on FD until DEADLINE_NS: 0 when ready (or an error or
 * hang-up is pending, which the next call reports), -ETIMEDOUT. */
static int wait_for(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int left = ms_left(deadline_ns), n;

		if (left == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int rtsock__open_dir(pid_t pid, const char *dir)
{
	char root[PATH_MAX], rel[PATH_MAX];
	size_t len = strlen(dir);
	struct stat sb;
	int rootfd, fd, n;

	if (dir[0] != '/')
		return -EINVAL;
	if (len >= sizeof(rel))
		return -ENAMETOOLONG;
	memcpy(rel, dir, len + 1);
	while (len > 1 && rel[len - 1] == '/')
		rel[--len] = '\0';
	n = snprintf(root, sizeof(root), "%s/%d/root", proc__root(), (int)pid);
	if (n < 0 || (size_t)n >= sizeof(root))
		return -ENAMETOOLONG;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	/* "/" is the root itself: the walk names no component for it */
	if (strspn(rel, "/") == len) {
		fd = rootfd;
	} else {
		fd = appfile__open_path_in_root(rootfd, rel, 0);
		close(rootfd);
		if (fd < 0)
			return fd;
	}
	if (fstat(fd, &sb))
		n = -errno;
	else
		n = S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
	if (n) {
		close(fd);
		return n;
	}
	return fd;
}

int rtsock__list(int dirfd, size_t max, uint64_t deadline_ns,
		 int (*fn)(const char *name, void *arg), void *arg)
{
	char self[64];
	struct dirent *de;
	size_t seen = 0;
	DIR *d;
	int fd, err = 0;

	/* an O_PATH descriptor cannot be read: reopen the directory it pins */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dirfd);
	fd = open(self, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = errno ? -errno : 0;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++seen > max) {
			err = -E2BIG;
			break;
		}
		if (now_ns() >= deadline_ns) {
			err = -ETIMEDOUT;
			break;
		}
		err = fn(de->d_name, arg);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

int rtsock__open_socket(int dirfd, const char *name, struct stat *st)
{
	struct stat sb;
	int fd, err;

	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	/* O_PATH | O_NOFOLLOW on a link gives the link itself, never its
	 * target: fstat then says what was planted */
	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		close(fd);
		return S_ISLNK(sb.st_mode) ? -ELOOP : -ENOTSOCK;
	}
	if (st)
		*st = sb;
	return fd;
}

int rtsock__connect(int pathfd, uint64_t deadline_ns)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pathfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		err = errno;
		if (err == EINTR)
			continue;
		if (err == EINPROGRESS) {
			int so = 0;
			socklen_t len = sizeof(so);

			err = wait_for(fd, POLLOUT, deadline_ns);
			if (err == 0)
				err = getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) ? -errno : -so;
			break;
		}
		/* a Unix socket whose backlog is full refuses a non-blocking
		 * connect with EAGAIN and offers nothing to poll for: try
		 * again every few milliseconds until the deadline */
		if (err == EAGAIN) {
			int left = ms_left(deadline_ns);

			if (left == 0) {
				err = -ETIMEDOUT;
				break;
			}
			poll(NULL, 0, left < 5 ? left : 5);
			continue;
		}
		err = -err;
		break;
	}
	if (err == 0)
		return fd;
	close(fd);
	return err;
}

int rtsock__send(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const char *p = buf;
	int err;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		err = wait_for(fd, POLLOUT, deadline_ns);
		if (err)
			return err;
	}
	return 0;
}

int rtsock__recv(int fd, void *buf, size_t len, uint64_t deadline_ns, size_t *got)
{
	size_t have = 0;
	int err = 0;

	while (have < len) {
		ssize_t n = recv(fd, (char *)buf + have, len - have, MSG_DONTWAIT);

		if (n > 0) {
			have += (size_t)n;
			continue;
		}
		if (n == 0) {
			err = -ENODATA;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			err = -errno;
			break;
		}
		err = wait_for(fd, POLLIN, deadline_ns);
		if (err)
			break;
	}
	if (got)
		*got = have;
	return err;
}

int rtsock__recv_upto(int fd, char *buf, size_t max, size_t *len, uint64_t deadline_ns)
{
	size_t got = 0;
	int err = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int ms;

		if (got == max) {
			char probe;

			/* full: has the peer ended, or is there more? */
			n = recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
			err = n == 0 ? 0 : -EMSGSIZE;
			break;
		}
		n = recv(fd, buf + got, max - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			err = -errno;
			break;
		}
		ms = ms_left(deadline_ns);
		if (!ms) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
	}
	*len = got;
	return err;
}
