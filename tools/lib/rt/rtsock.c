// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A runtime's Unix socket inside the app's root, within a deadline
 * (rtsock.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "rt/rtsock.h"

/* how long a full listener's backlog is given before the next try */
#define CONNECT_RETRY_NS (5 * 1000000ull)

int rtsock__open(int dirfd, const char *name, struct stat *st)
{
	struct stat sb;
	int fd;

	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	/* O_PATH | O_NOFOLLOW: a link is opened as itself, never followed */
	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		close(fd);
		return -ENOTSOCK;
	}
	if (st)
		*st = sb;
	return fd;
}

/* Milliseconds left until DEADLINE_NS for poll(), at least 1 while any is
 * left (a deadline 0.4 ms away still waits), 0 once it has passed. */
static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = now_ns(), ms;

	if (now >= deadline_ns)
		return 0;
	ms = (deadline_ns - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

static void pause_ns(uint64_t ns, uint64_t deadline_ns)
{
	uint64_t now = now_ns();
	struct timespec ts;

	if (now >= deadline_ns)
		return;
	if (ns > deadline_ns - now)
		ns = deadline_ns - now;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	nanosleep(&ts, NULL);
}

int rtsock__connect(int pathfd, uint64_t deadline_ns)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err;

	/* the kernel resolves /proc/self/fd/N to the inode PATHFD holds: no
	 * path of the app's is looked up again */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", pathfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		err = -errno;
		if (err == -EINTR)
			continue;
		/* a Unix stream listener with a full backlog: EAGAIN when
		 * non-blocking; nothing to poll for, so try again shortly */
		if (err != -EAGAIN)
			break;
		if (!ms_left(deadline_ns)) {
			err = -ETIMEDOUT;
			break;
		}
		pause_ns(CONNECT_RETRY_NS, deadline_ns);
	}
	close(fd);
	return err;
}

int rtsock__send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int ms;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		ms = ms_left(deadline_ns);
		if (!ms)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

int rtsock__recv(int fd, char *buf, size_t max, size_t *len, uint64_t deadline_ns)
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
