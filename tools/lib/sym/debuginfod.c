// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Debug files fetched from debuginfod servers (debuginfod.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "core/dynlib.h"
#include "core/escape.h"
#include "core/log.h"
#include "core/run.h"
#include "core/util.h"
#include "sym/budget.h"
#include "sym/debuginfod.h"

extern char **environ;

#define ID_MAX		128		/* hex digits of a build ID */
#define WHY_MAX		200
/* a partial download left by a fetch that was killed: removed after */
#define STALE_TMP_S	600

/* what a capture's fetches came to (said with -v at the end) */
struct debuginfod_stats {
	size_t fetched;		/* debug files that came */
	size_t from_cache;	/* taken from the cache without a fetch */
	size_t failed;		/* fetches that ended without one */
	size_t late;		/* still running when they were needed */
	size_t bad;		/* answers that were not the debug file */
	size_t put_off;		/* over DEBUGINFOD_FETCHES_MAX: not asked */
};

enum fetch_state { FETCH_QUEUED, FETCH_RUNNING, FETCH_OK, FETCH_FAILED };

struct fetch {
	char id[ID_MAX + 1];
	pid_t pid;
	int fd;				/* the child's answer, -1 once read */
	enum fetch_state state;
	char line[WHY_MAX + 40];
	size_t len;
	bool waited;			/* waited for once: not again */
	bool said;			/* its failure */
};

struct debuginfod {
	char dir[PATH_MAX];
	int dfd;
	unsigned int timeout_s;
	uint64_t max_bytes;
	uint64_t waited_ns;		/* all the capture's waits so far */
	struct fetch f[DEBUGINFOD_FETCHES_MAX];
	size_t n;
	struct debuginfod_stats st;
	char said[4][WHY_MAX];		/* the kinds of failure said so far */
	size_t nsaid, unsaid;
};

static bool valid_id(const char *id)
{
	size_t n = strlen(id), i;

	if (n < 2 || n > ID_MAX || n % 2)
		return false;
	for (i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

static bool urls_set(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u && u[strspn(u, " \t\n")];
}

/* An environment variable of whole numbers in [1, MAX], else DEF. */
static uint64_t env_u64(const char *name, uint64_t def, uint64_t max)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s || !*s)
		return def;
	if (parse_u64(s, 1, max, &v)) {
		p_warn("%s=%.32s is not a number from 1 to %llu: %llu used", name, s,
		       (unsigned long long)max, (unsigned long long)def);
		return def;
	}
	return v;
}

struct debuginfod *debuginfod__open(const char *table_cache)
{
	struct debuginfod *d;
	struct stat sb;
	int n;

	if (!urls_set() || !table_cache) {
		if (urls_set())
			p_warn("debuginfod not used: its files are kept in the table cache, which this capture does not use");
		errno = ENOENT;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dfd = -1;
	n = snprintf(d->dir, sizeof(d->dir), "%s/debuginfod", table_cache);
	if (n < 0 || (size_t)n >= sizeof(d->dir)) {
		p_warn("debuginfod not used: the table cache's path is too long");
		goto fail;
	}
	/* inside the table cache (ours, 0700, checked when it was opened):
	 * still no link followed, and only a directory of ours */
	if (mkdir(d->dir, 0700) && errno != EEXIST) {
		p_warn("debuginfod not used: cannot create %s: %s", d->dir, strerror(errno));
		goto fail;
	}
	d->dfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->dfd < 0 || fstat(d->dfd, &sb)) {
		p_warn("debuginfod not used: cannot open %s: %s", d->dir, strerror(errno));
		goto fail;
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
		p_warn("debuginfod not used: %s is not the sidecar's own (another owner, or open to others)",
		       d->dir);
		goto fail;
	}
	d->timeout_s = (unsigned int)env_u64("DEBUGINFOD_TIMEOUT", DEBUGINFOD_TIMEOUT_S, 3600);
	d->max_bytes = env_u64("DEBUGINFOD_MAXSIZE", DEBUGINFOD_FILE_MAX, 1ull << 40);
	return d;
fail:
	if (d->dfd >= 0)
		close(d->dfd);
	free(d);
	errno = EPERM;
	return NULL;
}

/* Say WHY (of the fetch of ID) once per kind: the first few kinds, the
 * rest counted. */
static void say_failure(struct debuginfod *d, const char *id, const char *why)
{
	size_t i;

	for (i = 0; i < d->nsaid; i++)
		if (strcmp(d->said[i], why) == 0) {
			p_debug("debuginfod: build ID %s: %s", id, why);
			return;
		}
	if (d->nsaid == sizeof(d->said) / sizeof(d->said[0])) {
		d->unsaid++;
		p_debug("debuginfod: build ID %s: %s", id, why);
		return;
	}
	snprintf(d->said[d->nsaid++], WHY_MAX, "%s", why);
	p_warn("debuginfod: no debug file for build ID %.16s...: %s (its frames keep the file's own symbols)",
	       id, why);
}

/* Start the fetch of ID: running, or failed with why. */
static void start(struct debuginfod *d, struct fetch *f)
{
	char secs[24], max[24], *argv[7];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int p[2], err;

	f->fd = -1;
	f->pid = -1;
	f->state = FETCH_FAILED;
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(f->line, sizeof(f->line), "err %d cannot start a fetch: %s", errno,
			 strerror(errno));
		return;
	}
	snprintf(secs, sizeof(secs), "%u", d->timeout_s);
	snprintf(max, sizeof(max), "%llu", (unsigned long long)d->max_bytes);
	argv[0] = "sidescope";
	argv[1] = "debuginfod-fetch";
	argv[2] = d->dir;
	argv[3] = f->id;
	argv[4] = secs;
	argv[5] = max;
	argv[6] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* nothing else of ours: a fetch that outlives the capture must not
	 * hold its pipes, maps or events */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	/* its own session: a Ctrl-C of the capture does not end a fetch
	 * the next capture would use; default signals, none blocked */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
				      POSIX_SPAWN_SETSIGMASK);
	{
		sigset_t all, none;

		sigfillset(&all);
		sigemptyset(&none);
		posix_spawnattr_setsigdefault(&at, &all);
		posix_spawnattr_setsigmask(&at, &none);
	}
	err = posix_spawn(&f->pid, "/proc/self/exe", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (err) {
		close(p[0]);
		snprintf(f->line, sizeof(f->line), "err %d cannot start a fetch: %s", err,
			 strerror(err));
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	f->fd = p[0];
	f->state = FETCH_RUNNING;
}

/* Read what F's child said, if it has: its state follows. */
static void collect(struct debuginfod *d, struct fetch *f)
{
	ssize_t r;

	if (f->state != FETCH_RUNNING)
		return;
	for (;;) {
		r = read(f->fd, f->line + f->len, sizeof(f->line) - 1 - f->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return;		/* EAGAIN: not yet */
		f->len += (size_t)r;
		f->line[f->len] = '\0';
		if (r > 0 && !strchr(f->line, '\n') && f->len < sizeof(f->line) - 1)
			continue;
		break;			/* a line, a full buffer, or the end */
	}
	close(f->fd);
	f->fd = -1;
	waitpid(f->pid, NULL, WNOHANG);
	f->line[strcspn(f->line, "\n")] = '\0';
	if (strcmp(f->line, "ok") == 0) {
		f->state = FETCH_OK;
		d->st.fetched++;
		return;
	}
	f->state = FETCH_FAILED;
	d->st.failed++;
	if (strncmp(f->line, "err ", 4))
		snprintf(f->line, sizeof(f->line), "err 0 the fetch ended without an answer");
}

/* The text of a failed fetch's line: "err ERRNO WHY" -> WHY. */
static const char *why_of(const struct fetch *f)
{
	const char *w = f->line + 4;

	w += strspn(w, "0123456789-");
	return *w == ' ' ? w + 1 : w;
}

/* Wait for F within TIME and the waits left. */
static void wait_for(struct debuginfod *d, struct fetch *f, const struct budget *time)
{
	uint64_t t0 = now_ns(), end = t0 + DEBUGINFOD_WAIT_FILE_NS, now;
	struct pollfd pfd;

	if (d->waited_ns >= DEBUGINFOD_WAIT_ALL_NS)
		return;
	if (end > t0 + (DEBUGINFOD_WAIT_ALL_NS - d->waited_ns))
		end = t0 + (DEBUGINFOD_WAIT_ALL_NS - d->waited_ns);
	/* half of what is left to the read: the debug file is still to be
	 * read after */
	if (time && time->deadline != UINT64_MAX && time->deadline > t0 &&
	    end > t0 + (time->deadline - t0) / 2)
		end = t0 + (time->deadline - t0) / 2;
	while (f->state == FETCH_RUNNING && !run__stop) {
		now = now_ns();
		if (now >= end)
			break;
		pfd.fd = f->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)((end - now + 999999) / 1000000)) > 0)
			collect(d, f);
	}
	d->waited_ns += now_ns() - t0;
}

/* Remove what the server sent for ID: it was not the debug file. */
static void drop_bad(struct debuginfod *d, const char *id, const char *rel, int why)
{
	char msg[WHY_MAX];

	d->st.bad++;
	unlinkat(d->dfd, rel, 0);
	snprintf(msg, sizeof(msg), "the server's answer is not its debug file (%s): removed",
		 why == -ENOEXEC ? "not an ELF file" : "another build ID, or unreadable");
	say_failure(d, id, msg);
}

/* TRY on ID's file in the cache: a descriptor, -ENOENT none there, -ETIME,
 * or -EBADMSG (one there, not taken: removed). */
static int from_cache(struct debuginfod *d, const char *id, debuginfod_try_fn try, void *ctx)
{
	char rel[ID_MAX + 16];
	struct stat sb;
	int fd;

	snprintf(rel, sizeof(rel), "%s/debuginfo", id);
	if (fstatat(d->dfd, rel, &sb, AT_SYMLINK_NOFOLLOW))
		return -ENOENT;
	if (!S_ISREG(sb.st_mode) || sb.st_size == 0)
		return -ENOENT;		/* the library's record of a miss */
	fd = try(d->dfd, rel, ctx);
	if (fd >= 0 || fd == -ETIME)
		return fd;
	drop_bad(d, id, rel, fd);
	return -EBADMSG;
}

/* Fetches running now (the ended ones collected). */
static size_t running(struct debuginfod *d)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++) {
		collect(d, &d->f[i]);
		n += d->f[i].state == FETCH_RUNNING;
	}
	return n;
}

int debuginfod__find(struct debuginfod *d, const char *build_id, debuginfod_try_fn try,
		     void *ctx, const struct budget *time)
{
	struct fetch *f = NULL;
	size_t i;
	int fd;

	if (!d || !valid_id(build_id))
		return -ENOENT;
	for (i = 0; i < d->n; i++)
		if (strcmp(d->f[i].id, build_id) == 0)
			f = &d->f[i];
	if (!f) {
		fd = from_cache(d, build_id, try, ctx);
		if (fd >= 0) {
			d->st.from_cache++;
			return fd;
		}
		if (fd == -ETIME)
			return fd;
		if (d->n == DEBUGINFOD_FETCHES_MAX) {
			d->st.put_off++;
			return -ENOENT;
		}
		f = &d->f[d->n++];
		snprintf(f->id, sizeof(f->id), "%s", build_id);
		f->len = 0;
		f->waited = false;
		f->said = false;
		f->state = FETCH_QUEUED;
	}
	if (f->state == FETCH_QUEUED) {
		if (running(d) >= DEBUGINFOD_RUNNING_MAX)
			return -ENOENT;	/* asked again when its file is */
		start(d, f);
		if (f->state == FETCH_FAILED)
			d->st.failed++;
	}
	collect(d, f);
	if (f->state == FETCH_RUNNING && !f->waited) {
		f->waited = true;
		wait_for(d, f, time);
		if (f->state == FETCH_RUNNING)
			d->st.late++;
	}
	if (f->state == FETCH_RUNNING)
		return -ENOENT;
	if (f->state == FETCH_FAILED) {
		if (!f->said)
			say_failure(d, f->id, why_of(f));
		f->said = true;
		return -ENOENT;
	}
	fd = from_cache(d, build_id, try, ctx);
	return fd >= 0 || fd == -ETIME ? fd : -ENOENT;
}

void debuginfod__close(struct debuginfod *d)
{
	size_t i, left = 0;

	if (!d)
		return;
	for (i = 0; i < d->n; i++) {
		collect(d, &d->f[i]);
		if (d->f[i].state == FETCH_RUNNING) {
			left++;
			close(d->f[i].fd);	/* it goes on, answering no one */
		} else if (d->f[i].state == FETCH_QUEUED) {
			d->st.put_off++;
		} else if (d->f[i].state == FETCH_FAILED && !d->f[i].said) {
			say_failure(d, d->f[i].id, why_of(&d->f[i]));
		}
	}
	if (left)
		p_warn("debuginfod: %zu debug file%s not here in time; %s on for the next capture (at most %u s)",
		       left, left == 1 ? "" : "s", left == 1 ? "its fetch goes" : "their fetches go",
		       d->timeout_s);
	for (i = 0; i < d->n; i++)
		if (d->f[i].pid > 0)
			waitpid(d->f[i].pid, NULL, WNOHANG);	/* those done */
	if (d->unsaid)
		p_debug("debuginfod: %zu more kinds of failure not said (-v names each)", d->unsaid);
	p_debug("debuginfod: %zu fetched, %zu from the cache, %zu failed, %zu late, %zu bad, %zu put off",
		d->st.fetched, d->st.from_cache, d->st.failed, d->st.late, d->st.bad, d->st.put_off);
	close(d->dfd);
	free(d);
}

/* ---- the fetch child ---- */

#define DBGD_FUNCS(X) X(debuginfod_begin) X(debuginfod_end) X(debuginfod_find_debuginfo) \
	X(debuginfod_set_progressfn) X(debuginfod_get_url)
DYNLIB_DEFINE(dbgd, "libdebuginfod.so.1", DBGD_FUNCS);

struct fetch_limits {
	uint64_t deadline;	/* CLOCK_MONOTONIC ns */
	uint64_t max_bytes;
	int why;		/* what cancelled it: -ETIME, -EFBIG */
};

static struct fetch_limits limits;

/* the library's progress callback: nonzero cancels the transfer */
static int on_progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	if (now_ns() >= limits.deadline) {
		limits.why = -ETIME;
		return 1;
	}
	if ((a > 0 && (uint64_t)a > limits.max_bytes) || (b > 0 && (uint64_t)b > limits.max_bytes)) {
		limits.why = -EFBIG;
		return 1;
	}
	return 0;
}

/* Remove the debug files used longest ago until DIR holds no more than
 * DEBUGINFOD_CACHE_MAX, and partial downloads of fetches that died. */
static void trim(const char *dir)
{
	struct ent { char rel[ID_MAX + 16]; time_t used; off_t size; } *e = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *de;
	DIR *top;
	int dfd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	top = fdopendir(dfd);
	if (!top) {
		close(dfd);
		return;
	}
	while ((de = readdir(top))) {
		char rel[ID_MAX + 16];
		struct stat sb;
		DIR *sub;
		struct dirent *se;
		int sfd;

		if (!valid_id(de->d_name))
			continue;
		sfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		sub = fdopendir(sfd);
		if (!sub) {
			close(sfd);
			continue;
		}
		while ((se = readdir(sub))) {
			if (se->d_name[0] == '.' && (!se->d_name[1] || se->d_name[1] == '.'))
				continue;
			if (fstatat(sfd, se->d_name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode))
				continue;
			if (strcmp(se->d_name, "debuginfo")) {
				if (sb.st_mtime + STALE_TMP_S < time(NULL))
					unlinkat(sfd, se->d_name, 0);
				continue;
			}
			snprintf(rel, sizeof(rel), "%s/debuginfo", de->d_name);
			if (array__room(&e, &cap, n + 1, sizeof(*e), 64))
				break;
			snprintf(e[n].rel, sizeof(e[n].rel), "%s", rel);
			e[n].used = sb.st_atime > sb.st_mtime ? sb.st_atime : sb.st_mtime;
			e[n].size = sb.st_size;
			total += (uint64_t)sb.st_size;
			n++;
		}
		closedir(sub);
	}
	while (total > DEBUGINFOD_CACHE_MAX && n) {
		size_t old = 0;

		for (i = 1; i < n; i++)
			if (e[i].used < e[old].used)
				old = i;
		if (!unlinkat(dfd, e[old].rel, 0) || errno == ENOENT)
			total -= (uint64_t)e[old].size;
		e[old] = e[--n];
	}
	free(e);
	closedir(top);
}

/* The child's one line to the capture, out at once: a sanitizer's exit
 * flushes nothing. */
static void answer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void answer(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* The fetch talks to a network and writes only in the sidecar's own
 * directory: none of the capabilities the capture had (BPF, ptrace,
 * reading every process), and no way back to them. */
static int drop_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2];

	memset(none, 0, sizeof(none));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_capset, &h, none))
		return -errno;
	return 0;
}

int debuginfod__fetch_main(int argc, char **argv)
{
	debuginfod_client *c;
	struct err e = { 0 };
	const char *url;
	uint64_t secs, max;
	char *path = NULL, safe[WHY_MAX];
	int fd;

	signal(SIGPIPE, SIG_IGN);	/* the capture may be gone: still fill the cache */
	if (argc != 5 || !valid_id(argv[2]) || parse_u64(argv[3], 1, 3600, &secs) ||
	    parse_u64(argv[4], 1, 1ull << 40, &max)) {
		answer("err %d usage: debuginfod-fetch DIR BUILD_ID SECONDS MAX_BYTES\n", EINVAL);
		return 2;
	}
	if (drop_privileges()) {
		answer("err %d cannot drop its capabilities: %s\n", errno, strerror(errno));
		return 1;
	}
	if (setenv("DEBUGINFOD_CACHE_PATH", argv[1], 1) ||
	    (!getenv("DEBUGINFOD_MAXSIZE") && setenv("DEBUGINFOD_MAXSIZE", argv[4], 1))) {
		answer("err %d %s\n", errno, strerror(errno));
		return 1;
	}
	limits.deadline = now_ns() + secs * 1000000000ull;
	limits.max_bytes = max;
	/* a transfer stuck where the library calls no one back */
	alarm((unsigned int)secs + 5);
	if (dynlib__load(&dbgd_lib, &e)) {
		answer("err %d libdebuginfod not loaded: %s\n", ENOSYS, dbgd_lib.why);
		return 1;
	}
	c = dbgd.debuginfod_begin();
	if (!c) {
		answer("err %d libdebuginfod: no client\n", ENOMEM);
		return 1;
	}
	dbgd.debuginfod_set_progressfn(c, on_progress);
	fd = dbgd.debuginfod_find_debuginfo(c, (const unsigned char *)argv[2], 0, &path);
	if (fd >= 0) {
		close(fd);
		free(path);
		dbgd.debuginfod_end(c);
		answer("ok\n");
		trim(argv[1]);
		return 0;
	}
	url = dbgd.debuginfod_get_url(c);
	/* the server, not the file: one line per server and kind */
	escape__str(safe, sizeof(safe), url ? url : "",
		    url ? (strstr(url, "/buildid/") ? (size_t)(strstr(url, "/buildid/") - url) :
		    strlen(url)) : 0, 96, 0);
	if (limits.why == -ETIME || fd == -ETIME)
		answer("err %d cut off after %llu s (DEBUGINFOD_TIMEOUT)%s%s\n", ETIME,
		       (unsigned long long)secs, url ? ": " : "", safe);
	else if (limits.why == -EFBIG || fd == -EFBIG)
		answer("err %d cut off over %llu bytes (DEBUGINFOD_MAXSIZE)%s%s\n", EFBIG,
		       (unsigned long long)max, url ? ": " : "", safe);
	else if (fd == -ENOENT)
		answer("err %d no server has it\n", ENOENT);
	else
		answer("err %d %s%s%s\n", -fd, strerror(-fd), url ? ": " : "", safe);
	dbgd.debuginfod_end(c);
	return 1;
}
