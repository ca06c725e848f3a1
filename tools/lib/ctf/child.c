// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* babeltrace2 in a child process (child.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
#include "ctf/child.h"

#if defined(__SANITIZE_ADDRESS__)
#define CTF_CHILD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTF_CHILD_ASAN 1
#endif
#endif

/* Of the child's stderr, kept; the rest is read and dropped. */
#define ERR_MAX ((size_t)1 << 20)

/* The shared memory: the child's result after this head. */
struct shared {
	volatile int done;
	long double align;
};

/* A child's own stop: run__stop, as the parent's handler sets it, but with
 * SA_RESTART, so that babeltrace2's reads are not failed by it. */
static void child_on_signal(int sig)
{
	run__stop = sig;
}

static void __attribute__((noreturn))
child_main(const struct ctf_child_opts *o, ctf_child_fn fn, void *arg, pid_t parent, int out,
	   int err, struct shared *sh)
{
	struct sigaction sa;
	int ret;

	/* the parent killed, or gone before this was set: no orphan reads on */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = child_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
#ifndef CTF_CHILD_ASAN
	/* babeltrace2 2.0 indexes a stream whose packet says its size is 0
	 * over and over, growing without end until it is killed; with ASan
	 * the shadow memory counts as data, so no limit there */
	if (o->max_mem) {
		struct rlimit rl = { o->max_mem, o->max_mem };

		setrlimit(RLIMIT_DATA, &rl);
	}
#endif
	if (err >= 0 && dup2(err, 2) < 0)
		_exit(1);
	ret = fn(arg, out, sh + 1);
	fflush(stdout);
	fflush(stderr);
	sh->done = 1;
	_exit(ret);
}

/* Read what FD has onto BUF (LEN, CAP) up to MAX bytes (past them: read
 * and dropped when DROP, else -EFBIG). 1: more may come; 0: its end;
 * -EFBIG, -ENOMEM, -errno. */
static int take(int fd, char **buf, size_t *len, size_t *cap, size_t max, bool drop)
{
	char sink[4096];
	ssize_t n;

	if (*len >= max) {
		if (!drop)
			return -EFBIG;
		n = read(fd, sink, sizeof(sink));
	} else {
		if (*cap - *len < 65536 && *cap < max) {
			size_t ncap = *cap ? *cap * 2 : 65536;
			char *nb;

			if (ncap > max)
				ncap = max;
			nb = realloc(*buf, ncap);
			if (!nb)
				return -ENOMEM;
			*buf = nb;
			*cap = ncap;
		}
		n = read(fd, *buf + *len, *cap - *len);
		if (n > 0)
			*len += (size_t)n;
	}
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	return n > 0;
}

/* Collect the child's pipes (FD[0] its output, FD[1] its stderr, -1 when
 * not kept; FD[2] open in the child until its end) until they end, it is
 * told to end by a signal here (passed on) or passes its deadline by
 * grace_ms. Return 0 when it ended by itself, CTF_CHILD_KILLED or
 * CTF_CHILD_FULL when it must be killed, or a negative errno. */
static int collect(const struct ctf_child_opts *o, pid_t pid, int fd[3], struct ctf_child *c)
{
	const uint64_t grace = o->grace_ms * 1000000ull;
	uint64_t hard = o->deadline_ns ? o->deadline_ns + grace : UINT64_MAX, now;
	size_t out_cap = 0, err_cap = 0;
	int r, i;

	for (;;) {
		struct pollfd pfd[3];
		int n = 0, wait_ms;

		for (i = 0; i < 3; i++)
			if (fd[i] >= 0)
				pfd[n++] = (struct pollfd){ .fd = fd[i], .events = POLLIN };
		if (!n)
			return 0;
		now = now_ns();
		if (run__stop && !c->told) {
			kill(pid, SIGTERM);
			c->told = true;
			if (hard > now + grace)
				hard = now + grace;
		}
		if (now >= hard)
			return CTF_CHILD_KILLED;
		/* a signal between the check and the poll is seen 100 ms on */
		wait_ms = hard - now < 100000000ull ? (int)((hard - now) / 1000000) + 1 : 100;
		r = poll(pfd, (nfds_t)n, wait_ms);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		for (i = 0; i < n; i++) {
			int *f = NULL;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].fd == fd[0]) {
				f = &fd[0];
				r = take(fd[0], &c->out, &c->out_len, &out_cap, o->max_out, false);
			} else if (pfd[i].fd == fd[1]) {
				f = &fd[1];
				r = take(fd[1], &c->err, &c->err_len, &err_cap, ERR_MAX, true);
			} else {
				char b;

				f = &fd[2];
				r = read(fd[2], &b, 1) < 0 && errno == EINTR;
			}
			if (r == -EFBIG)
				return CTF_CHILD_FULL;
			if (r < 0)
				return r;
			if (r == 0) {
				close(*f);
				*f = -1;
			}
		}
	}
}

int ctf_child__init(struct ctf_child *c, size_t result_size)
{
	size_t size = sizeof(struct shared) + result_size;
	struct shared *sh;

	memset(c, 0, sizeof(*c));
	sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		p_err("cannot map memory for the trace's reader: %s", strerror(errno));
		return -ENOMEM;
	}
	c->result = sh + 1;
	c->shared = size;
	return 0;
}

int ctf_child__run(struct ctf_child *c, const struct ctf_child_opts *o, ctf_child_fn fn,
		   void *arg)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, life[2] = { -1, -1 }, fd[3], i, ret = 0;
	struct shared *sh = (struct shared *)c->result - 1;
	pid_t pid, self = getpid();

	fflush(stdout);
	fflush(stderr);
	if ((o->out_pipe && pipe2(out, O_CLOEXEC)) || (o->keep_stderr && pipe2(err, O_CLOEXEC)) ||
	    pipe2(life, O_CLOEXEC)) {
		ret = -errno;
		p_err("cannot create a pipe: %s", strerror(errno));
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		p_err("cannot fork: %s", strerror(errno));
		goto cleanup;
	}
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		close(life[0]);
		child_main(o, fn, arg, self, out[1], err[1], sh);
	}
	for (i = 0; i < 2; i++) {
		int *w = i == 0 ? &out[1] : &err[1];

		if (*w >= 0)
			close(*w);
		*w = -1;
	}
	close(life[1]);
	life[1] = -1;
	fd[0] = out[0];
	fd[1] = err[0];
	fd[2] = life[0];
	out[0] = err[0] = life[0] = -1;
	ret = collect(o, pid, fd, c);
	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (ret)
		kill(pid, SIGKILL);
	while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
		;
	if (ret < 0) {
		p_err("cannot read from the trace's reader: %s", strerror(-ret));
		goto cleanup;
	}
	c->end = ret;
	c->done = sh->done;
	ret = 0;
cleanup:
	for (i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
		if (life[i] >= 0)
			close(life[i]);
	}
	return ret;
}

void ctf_child__free(struct ctf_child *c)
{
	if (c->result)
		munmap((struct shared *)c->result - 1, c->shared);
	free(c->out);
	free(c->err);
	memset(c, 0, sizeof(*c));
}
