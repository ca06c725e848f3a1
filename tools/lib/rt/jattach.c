// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HotSpot's dynamic attach (jattach.h): probe a JVM, start its attach
 * listener, send one jcmd command, read the reply within bounds. The
 * parsers are in jattach_parse.c. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/escape.h"
#include "core/proc.h"
#include "core/util.h"
#include "rt/jattach.h"
#include "rt/rtsock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define DEFAULT_START_MS 5000
#define DEFAULT_REPLY_MS 10000
#define DEFAULT_MAX_REPLY (64u << 10)
/* HotSpot's limit on an attach argument (AttachOperation::arg_length_max) */
#define MAX_COMMAND 1024
/* what is read of /proc/PID/status, cmdline and environ, and of a JDK's
 * release file (the app's) */
#define MAX_PROC_TEXT (1u << 20)
#define MAX_RELEASE (64u << 10)
/* the wait for the socket after SIGQUIT: first look, and the longest pause
 * between two */
#define SOCKET_POLL_FIRST_MS 1
#define SOCKET_POLL_MAX_MS 50
/* a perf map last written this long before the request is not its answer
 * (file times come from a coarse clock) */
#define MAP_MTIME_SLACK_NS 1000000000ll
/* the child of JATTACH_AS_USER gets start_ms and this to hand back a socket */
#define CHILD_SLACK_MS 2000

struct jattach {
	pid_t pid, nspid;
	uint64_t start;		/* start time: the process that was checked */
	uid_t euid;
	gid_t egid;
	int jdk;
	bool listening;
	enum jattach_how how;
	struct jattach_opts o;
	char name[64];		/* escaped */
	char map[PATH_MAX];
};

/* ---- the process ---- */

static int read_proc_text(pid_t pid, const char *file, char **buf, size_t *len)
{
	char path[PATH_MAX];
	bool cut;
	int fd, err;

	*buf = NULL;
	snprintf(path, sizeof(path), "%s/%d/%s", proc__root(), (int)pid, file);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = appfile__read(fd, MAX_PROC_TEXT, true, buf, len, &cut);
	close(fd);
	return err;
}

static int read_status(pid_t pid, struct jattach_status *st)
{
	char *buf;
	size_t len;
	int err = read_proc_text(pid, "status", &buf, &len);

	if (err)
		return err;
	err = jattach__parse_status(buf, len, st);
	free(buf);
	return err;
}

#define SIGBIT(sig) (1ull << ((sig) - 1))

static bool handles_sigquit(const struct jattach_status *st)
{
	return (st->sigcgt & SIGBIT(SIGQUIT)) && !(st->sigign & SIGBIT(SIGQUIT));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

enum vm_kind { VM_NONE, VM_HOTSPOT, VM_OPENJ9 };

/* What the mappings show; LIBJVM (SIZE) gets libjvm.so's path. */
static enum vm_kind vm_kind(pid_t pid, char *libjvm, size_t size)
{
	struct proc_maps *m = proc_maps__load(pid);
	enum vm_kind kind = VM_NONE;
	size_t i;

	if (!m)
		return VM_NONE;
	for (i = 0; i < m->n; i++) {
		const char *p = m->maps[i].path, *b = base_name(p);

		if (p[0] != '/')
			continue;
		if (str_has_prefix(b, "libj9vm")) {
			kind = VM_OPENJ9;
			break;
		}
		if (strcmp(b, "libjvm.so") == 0 ||
		    strcmp(b, "libjvm.so (deleted)") == 0) {
			if (kind == VM_NONE && libjvm)
				snprintf(libjvm, size, "%s", p);
			kind = VM_HOTSPOT;
		}
	}
	proc_maps__free(m);
	return kind;
}

static int open_root(pid_t pid)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/root", proc__root(), (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The JDK's feature version: the release file at its home, which is
 * libjvm.so's directory's grandparent (lib/server/libjvm.so), or JDK 8's
 * jre/lib/amd64/server/libjvm.so three levels further up. Read inside the
 * JVM's root, bounded. 0 when unknown. */
static int jdk_version(int rootfd, const char *libjvm)
{
	static const int ups[] = { 3, 5, 4 };
	char home[PATH_MAX], rel[PATH_MAX];
	size_t i, len;
	int version = 0;

	snprintf(home, sizeof(home), "%s", libjvm);
	len = strlen(home);
	if (len > 10 && strcmp(home + len - 10, " (deleted)") == 0)
		home[len - 10] = '\0';
	for (i = 0; i < ARRAY_SIZE(ups) && !version; i++) {
		char *buf = NULL, *cut;
		int fd, k;

		snprintf(rel, sizeof(rel), "%s", home);
		for (k = 0; k < ups[i]; k++) {
			cut = strrchr(rel, '/');
			if (!cut)
				break;
			*cut = '\0';
		}
		if (k < ups[i])
			break;
		if (strlen(rel) + sizeof("/release") > sizeof(rel))
			break;
		strcat(rel, "/release");
		fd = appfile__open_in_root(rootfd, rel, 0, NULL);
		if (fd < 0)
			continue;
		if (appfile__read(fd, MAX_RELEASE, true, &buf, &len, NULL) == 0)
			version = jattach__parse_release(buf, len);
		free(buf);
		close(fd);
	}
	return version;
}

static bool same_user_ns(pid_t pid)
{
	char path[PATH_MAX];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/%d/ns/user", proc__root(), (int)pid);
	return stat("/proc/self/ns/user", &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static bool have_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* How to attach to a JVM of EUID and EGID (see jattach.h), or -EPERM with
 * the capabilities it takes in E. */
static int choose_how(struct jattach *j, struct err *e)
{
	uid_t me = geteuid();
	bool same_ns, root_ok;

	if (me == j->euid && getegid() == j->egid) {
		j->how = JATTACH_AS_SELF;
		return 0;
	}
	same_ns = same_user_ns(j->pid);
	/* HotSpot serves a peer of uid 0 whatever its gid; the socket is
	 * 0600 and the signal goes to another user's process */
	root_ok = me == 0 && same_ns && (j->euid == 0 || have_cap(CAP_DAC_OVERRIDE)) &&
		  (j->euid == 0 || j->listening || have_cap(CAP_KILL));
	if (root_ok) {
		j->how = JATTACH_AS_ROOT;
		return 0;
	}
	if (have_cap(CAP_SETUID) && have_cap(CAP_SETGID)) {
		j->how = JATTACH_AS_USER;
		return 0;
	}
	if (!same_ns)
		return err__set(e, EPERM,
				"the JVM %d is in another user namespace (uid %u gid %u here): "
				"attaching to it takes CAP_SETUID and CAP_SETGID (a child process "
				"acts as that user)", (int)j->pid, (unsigned)j->euid,
				(unsigned)j->egid);
	return err__set(e, EPERM,
			"the JVM %d runs as uid %u gid %u, sidescope as uid %u: attaching to it "
			"takes CAP_SETUID and CAP_SETGID (a child process acts as that user), "
			"or CAP_KILL and CAP_DAC_OVERRIDE as root", (int)j->pid,
			(unsigned)j->euid, (unsigned)j->egid, (unsigned)me);
}

static void sock_name(const struct jattach *j, char *buf, size_t size)
{
	snprintf(buf, size, ".java_pid%d", (int)j->nspid);
}

static void trigger_name(const struct jattach *j, char *buf, size_t size)
{
	snprintf(buf, size, ".attach_pid%d", (int)j->nspid);
}

/* O_PATH descriptor of the JVM's /tmp inside ROOTFD. */
static int open_tmp(int rootfd)
{
	struct stat st;
	int fd = appfile__open_path_in_root(rootfd, "tmp", 0);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

static bool socket_there(int tmpfd, const struct jattach *j)
{
	char name[32];
	int fd;

	sock_name(j, name, sizeof(name));
	fd = rtsock__open_socket(tmpfd, name, NULL);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

struct jattach *jattach__probe(pid_t pid, const struct jattach_opts *o, struct err *e)
{
	struct jattach *j = calloc(1, sizeof(*j));
	struct jattach_status st;
	char libjvm[PATH_MAX] = "", *cmd = NULL, *env = NULL;
	size_t clen = 0, elen = 0;
	int rootfd = -1, tmpfd = -1, err;

	err__clear(e);
	if (!j) {
		err = err__set(e, ENOMEM, "out of memory");
		goto out;
	}
	j->pid = pid;
	if (o)
		j->o = *o;
	if (!j->o.start_ms)
		j->o.start_ms = DEFAULT_START_MS;
	if (!j->o.reply_ms)
		j->o.reply_ms = DEFAULT_REPLY_MS;
	if (!j->o.max_reply)
		j->o.max_reply = DEFAULT_MAX_REPLY;
	if (j->o.max_reply < 64)
		j->o.max_reply = 64;
	if (proc__start_time(pid, &j->start) || read_status(pid, &st)) {
		err = err__set(e, ESRCH, "no process %d", (int)pid);
		goto out;
	}
	snprintf(j->name, sizeof(j->name), "%s", st.name);
	j->nspid = st.nstgid;
	j->euid = st.euid;
	j->egid = st.egid;
	switch (vm_kind(pid, libjvm, sizeof(libjvm))) {
	case VM_HOTSPOT:
		break;
	case VM_OPENJ9:
		err = err__set(e, ENOEXEC,
			       "process %d (%s) is an OpenJ9 JVM, not HotSpot: sidescope does not "
			       "attach to it; start it with -XX:+PerfTool (or -Xjit:perfTool) for "
			       "a perf map", (int)pid, j->name);
		goto out;
	default:
		err = err__set(e, ENOEXEC,
			       "process %d (%s) is not a HotSpot JVM (no libjvm.so mapped): "
			       "not attaching", (int)pid, j->name);
		goto out;
	}
	snprintf(j->map, sizeof(j->map), "%s/%d/root/tmp/perf-%d.map", proc__root(), (int)pid,
		 (int)j->nspid);
	rootfd = open_root(pid);
	if (rootfd < 0) {
		err = err__set(e, -rootfd, "cannot open the root of the JVM %d: %s%s", (int)pid,
			       strerror(-rootfd), rootfd == -EACCES || rootfd == -EPERM ?
			       " (needs CAP_SYS_PTRACE)" : "");
		goto out;
	}
	j->jdk = jdk_version(rootfd, libjvm);
	if (j->jdk && j->jdk < JATTACH_PERFMAP_MIN_JDK) {
		err = err__set(e, EOPNOTSUPP,
			       "the JVM %d is JDK %d, without Compiler.perfmap (JDK %d or later has "
			       "it): upgrade its JDK, or load a perf-map agent into it at start",
			       (int)pid, j->jdk, JATTACH_PERFMAP_MIN_JDK);
		goto out;
	}
	tmpfd = open_tmp(rootfd);
	j->listening = tmpfd >= 0 && socket_there(tmpfd, j);
	if (!j->listening) {
		/* the listener must be started by SIGQUIT: would it start? */
		read_proc_text(pid, "cmdline", &cmd, &clen);
		read_proc_text(pid, "environ", &env, &elen);
		if (jattach__attach_disabled(cmd ? cmd : "", clen, env ? env : "", elen)) {
			err = err__set(e, EOPNOTSUPP,
				       "the JVM %d runs with -XX:+DisableAttachMechanism: it cannot "
				       "be asked for a perf map; restart it without that flag (or with "
				       "a perf-map agent loaded at start)", (int)pid);
			goto out;
		}
		if (!handles_sigquit(&st)) {
			err = err__set(e, EOPNOTSUPP,
				       "the JVM %d does not handle SIGQUIT (-Xrs?) and its attach "
				       "socket /tmp/.java_pid%d is gone: not signalling it (with -Xrs "
				       "the socket opens at the JVM's start only)", (int)pid,
				       (int)j->nspid);
			goto out;
		}
	}
	err = choose_how(j, e);
out:
	free(cmd);
	free(env);
	if (tmpfd >= 0)
		close(tmpfd);
	if (rootfd >= 0)
		close(rootfd);
	if (err) {
		free(j);
		errno = -err;
		return NULL;
	}
	return j;
}

/* ---- the attach ---- */

/* What a connection needs, opened by the process that can (the caller,
 * with CAP_SYS_PTRACE), used by the one that attaches (maybe a child of
 * another uid, which could not open them). */
struct dial {
	const struct jattach *j;
	int tmpfd;		/* the JVM's /tmp (O_PATH) */
	int cwdfd;		/* its working directory (O_PATH), or -1 */
	int pidfd;		/* the checked process, or -1 (kernels before 5.3) */
	uint64_t deadline;	/* for the socket */
};

/* Create the trigger file NAME in DIRFD: 0, or a negative errno. *MADE
 * gets its fstat (to remove only the file we made). */
static int make_trigger(int dirfd, const char *name, struct stat *made)
{
	/* O_EXCL | O_NOFOLLOW: a new file of ours, never through a link */
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, made)) {
		int err = -errno;

		close(fd);
		unlinkat(dirfd, name, 0);
		return err;
	}
	close(fd);
	return 0;
}

static void remove_trigger(int dirfd, const char *name, const struct stat *made)
{
	struct stat now;

	/* what is there now, if it is still the file we made */
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == made->st_dev &&
	    now.st_ino == made->st_ino)
		unlinkat(dirfd, name, 0);
}

/* Send SIGQUIT to the checked JVM and no other process: the pidfd (opened
 * before the checks) names the process that had the PID then; it is the
 * one that started at the checked start time if the PID still names that
 * process now. Its handlers are checked again (an exec resets them). */
static int signal_jvm(const struct dial *d, struct err *e)
{
	const struct jattach *j = d->j;
	struct jattach_status st;
	int rc;

	if (!proc__alive(j->pid, j->start))
		return err__set(e, ESRCH, "the JVM %d exited", (int)j->pid);
	if (read_status(j->pid, &st) || !handles_sigquit(&st))
		return err__set(e, EOPNOTSUPP,
				"process %d no longer handles SIGQUIT: not signalling it", (int)j->pid);
	if (d->pidfd >= 0)
		rc = (int)syscall(SYS_pidfd_send_signal, d->pidfd, SIGQUIT, NULL, 0);
	else
		rc = kill(j->pid, SIGQUIT);
	if (rc) {
		rc = errno;
		return err__set(e, rc, "cannot signal the JVM %d: %s%s", (int)j->pid, strerror(rc),
				rc == EPERM ? " (needs CAP_KILL)" : "");
	}
	return 0;
}

/* Wait until the socket is there, the JVM exits or the deadline passes. */
static int wait_socket(const struct dial *d, struct err *e)
{
	const struct jattach *j = d->j;
	unsigned int pause = SOCKET_POLL_FIRST_MS;

	for (;;) {
		struct pollfd pfd = { .fd = d->pidfd, .events = POLLIN };
		uint64_t now = now_ns();
		unsigned int ms = pause;

		if (socket_there(d->tmpfd, j))
			return 0;
		if (now >= d->deadline)
			return err__set(e, ETIMEDOUT,
					"the JVM %d opened no attach socket within %u ms of SIGQUIT "
					"(attach disabled in an options file? the JVM stalled?)",
					(int)j->pid, j->o.start_ms);
		if ((d->deadline - now) / 1000000 < ms)
			ms = (unsigned int)((d->deadline - now) / 1000000) + 1;
		/* a pidfd is readable once its process has exited */
		if (d->pidfd >= 0) {
			if (poll(&pfd, 1, (int)ms) > 0)
				return err__set(e, ESRCH, "the JVM %d exited", (int)j->pid);
		} else {
			struct timespec ts = { .tv_nsec = (long)ms * 1000000 };

			nanosleep(&ts, NULL);
			if (!proc__alive(j->pid, j->start))
				return err__set(e, ESRCH, "the JVM %d exited", (int)j->pid);
		}
		if (pause < SOCKET_POLL_MAX_MS)
			pause = pause * 2 > SOCKET_POLL_MAX_MS ? SOCKET_POLL_MAX_MS : pause * 2;
	}
}

/* Start the JVM's attach listener: the trigger file, SIGQUIT, the wait. */
static int start_listener(const struct dial *d, struct err *e)
{
	const struct jattach *j = d->j;
	char name[32];
	struct stat made;
	int dirfd = d->tmpfd, err, cwd_err = -ENOENT;

	trigger_name(j, name, sizeof(name));
	/* the JVM looks in its working directory, then /tmp: /tmp first here,
	 * the directory a JVM is expected to write, with the socket */
	err = make_trigger(dirfd, name, &made);
	if (err && d->cwdfd >= 0) {
		dirfd = d->cwdfd;
		cwd_err = make_trigger(dirfd, name, &made);
	}
	if (err && cwd_err)
		return err__set(e, -err,
				"cannot create %s in the JVM %d's /tmp (%s) or working directory "
				"(%s): not signalling it", name, (int)j->pid, strerror(-err),
				strerror(-cwd_err));
	err = signal_jvm(d, e);
	if (!err)
		err = wait_socket(d, e);
	remove_trigger(dirfd, name, &made);
	return err;
}

/* The attach itself: the socket found (the listener started if need be),
 * checked, connected. The connected descriptor, or a negative errno. */
static int dial(const struct dial *d, struct err *e)
{
	const struct jattach *j = d->j;
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	char name[32];
	int pathfd, fd, err;

	sock_name(j, name, sizeof(name));
	pathfd = rtsock__open_socket(d->tmpfd, name, NULL);
	if (pathfd == -ENOENT || pathfd == -ENOTSOCK || pathfd == -ELOOP) {
		/* none, or something planted in its place that the JVM's
		 * rename will replace */
		err = start_listener(d, e);
		if (err)
			return err;
		pathfd = rtsock__open_socket(d->tmpfd, name, NULL);
	}
	if (pathfd < 0)
		return err__set(e, -pathfd, "cannot open the JVM %d's attach socket /tmp/%s: %s",
				(int)j->pid, name, strerror(-pathfd));
	fd = rtsock__connect(pathfd, d->deadline);
	close(pathfd);
	if (fd < 0)
		return err__set(e, -fd, "cannot connect to the JVM %d's attach socket: %s%s",
				(int)j->pid, strerror(-fd),
				fd == -EACCES ? " (the socket is its user's alone)" : "");
	/* the listener is the process that was checked, not another one that
	 * put a socket under that name */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) || peer.pid != j->pid) {
		err = err__set(e, EPROTO, "the attach socket /tmp/%s is served by process %d, "
			       "not by the JVM %d: not using it", name, (int)peer.pid, (int)j->pid);
		close(fd);
		return err;
	}
	return fd;
}

/* JATTACH_AS_USER: the attach by a child process that takes the JVM's euid
 * and egid; it hands the connected socket back over a socket pair, with its
 * error when it has none. The credentials the JVM checks (SO_PEERCRED) are
 * the connecting process's at connect(): the child's. */
struct child_msg {
	int err;
	char msg[ERR_MSG_MAX];
};

/* Close every descriptor from 3 up but those in KEEP (N of them, -1 for
 * none): the child of another uid holds what the attach needs, not the
 * caller's BPF objects, outputs and the like. */
static void close_others(int *keep, int n)
{
	unsigned int from = 3;
	int i, k;

	/* a few: sorted in place */
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
			int t = keep[k];

			keep[k] = keep[k - 1];
			keep[k - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0u, 0);
}

static void child_attach(const struct dial *d, int sock)
{
	const struct jattach *j = d->j;
	struct child_msg m = { 0 };
	struct err e = { 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int keep[] = { sock, d->tmpfd, d->cwdfd, d->pidfd }, fd = -1;

	close_others(keep, (int)ARRAY_SIZE(keep));
	if (setgroups(0, NULL) || setresgid(j->egid, j->egid, j->egid) ||
	    setresuid(j->euid, j->euid, j->euid)) {
		int err = errno;

		m.err = err__set(&e, err, "cannot take the JVM %d's uid %u gid %u: %s",
				 (int)j->pid, (unsigned)j->euid, (unsigned)j->egid, strerror(err));
	} else {
		/* the change of user cleared it: set after */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = dial(d, &e);
		m.err = fd < 0 ? fd : 0;
	}
	snprintf(m.msg, sizeof(m.msg), "%s", e.msg);
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	sendmsg(sock, &mh, MSG_NOSIGNAL);
	_exit(0);
}

static int dial_as_user(const struct dial *d, struct err *e)
{
	const struct jattach *j = d->j;
	struct child_msg m = { 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd pfd;
	struct cmsghdr *c;
	int sp[2], fd = -1, err, status;
	pid_t child;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)) {
		err = errno;
		return err__set(e, err, "socketpair: %s", strerror(err));
	}
	child = fork();
	if (child < 0) {
		err = errno;
		err = err__set(e, err, "cannot fork to attach as uid %u: %s", (unsigned)j->euid,
			       strerror(err));
		close(sp[0]);
		close(sp[1]);
		return err;
	}
	if (child == 0) {
		close(sp[0]);
		child_attach(d, sp[1]);
	}
	close(sp[1]);
	pfd.fd = sp[0];
	pfd.events = POLLIN;
	do
		n = poll(&pfd, 1, (int)(j->o.start_ms + CHILD_SLACK_MS));
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		err = err__set(e, ETIMEDOUT, "the attach to the JVM %d as uid %u did not end "
			       "within %u ms", (int)j->pid, (unsigned)j->euid,
			       j->o.start_ms + CHILD_SLACK_MS);
		kill(child, SIGKILL);	/* our own child */
		goto out;
	}
	memset(&ctl, 0, sizeof(ctl));
	n = recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(m)) {
		err = err__set(e, EPROTO, "the attach to the JVM %d as uid %u failed", (int)j->pid,
			       (unsigned)j->euid);
	} else if (m.err || fd < 0) {
		m.msg[sizeof(m.msg) - 1] = '\0';
		err = err__set(e, m.err < 0 ? -m.err : EPROTO, "%s", m.msg);
	} else {
		err = 0;
	}
	if (err && fd >= 0) {
		close(fd);
		fd = -1;
	}
out:
	close(sp[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return err ? err : fd;
}

/* A connection to the JVM's attach listener: the descriptor, or a
 * negative errno with E. */
static int attach_connect(struct jattach *j, struct err *e)
{
	struct dial d = { .j = j, .tmpfd = -1, .cwdfd = -1, .pidfd = -1 };
	char path[PATH_MAX];
	int rootfd = -1, fd;

	/* first the pidfd, then the check that it names the process probed */
	d.pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	/* without pidfds (before 5.3, or a filter refusing them) the start
	 * time is checked again right before kill() */
	if (d.pidfd < 0 && errno == ESRCH) {
		fd = err__set(e, ESRCH, "the JVM %d exited", (int)j->pid);
		goto out;
	}
	if (!proc__alive(j->pid, j->start)) {
		fd = err__set(e, ESRCH, "the JVM %d exited (or its PID is another process's now)",
			      (int)j->pid);
		goto out;
	}
	rootfd = open_root(j->pid);
	if (rootfd < 0) {
		fd = err__set(e, -rootfd, "cannot open the root of the JVM %d: %s", (int)j->pid,
			      strerror(-rootfd));
		goto out;
	}
	d.tmpfd = open_tmp(rootfd);
	if (d.tmpfd < 0) {
		fd = err__set(e, -d.tmpfd, "cannot open the JVM %d's /tmp: %s", (int)j->pid,
			      strerror(-d.tmpfd));
		goto out;
	}
	if (!socket_there(d.tmpfd, j)) {
		/* a signal may be sent: the process must still map libjvm */
		if (vm_kind(j->pid, NULL, 0) != VM_HOTSPOT) {
			fd = err__set(e, ESRCH, "process %d no longer maps libjvm.so: not "
				      "signalling it", (int)j->pid);
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%d/cwd", proc__root(), (int)j->pid);
		d.cwdfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	d.deadline = now_ns() + (uint64_t)j->o.start_ms * 1000000ull;
	fd = j->how == JATTACH_AS_USER ? dial_as_user(&d, e) : dial(&d, e);
out:
	if (d.cwdfd >= 0)
		close(d.cwdfd);
	if (d.tmpfd >= 0)
		close(d.tmpfd);
	if (rootfd >= 0)
		close(rootfd);
	if (d.pidfd >= 0)
		close(d.pidfd);
	return fd;
}

int jattach__jcmd(struct jattach *j, const char *command, int *status, char **out,
		  size_t *outlen, bool *cut, struct err *e)
{
	size_t clen = strlen(command), rlen = 0, off = 0;
	char *req = NULL, *buf = NULL, line[256];
	uint64_t deadline;
	int fd = -1, err, rerr;

	err__clear(e);
	*out = NULL;
	*outlen = 0;
	*cut = false;
	if (clen == 0 || clen > MAX_COMMAND)
		return err__set(e, EINVAL, "a jcmd command of %zu bytes", clen);
	/* protocol 1: version, operation, three arguments, each ended by NUL */
	req = malloc(clen + 16);
	buf = malloc(j->o.max_reply + 1);
	if (!req || !buf) {
		err = err__set(e, ENOMEM, "out of memory");
		goto out;
	}
	memcpy(req, "1\0jcmd\0", 7);
	memcpy(req + 7, command, clen + 1);
	memcpy(req + 7 + clen + 1, "\0\0", 2);
	fd = attach_connect(j, e);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	j->listening = true;
	deadline = now_ns() + (uint64_t)j->o.reply_ms * 1000000ull;
	err = rtsock__send(fd, req, 7 + clen + 3, deadline);
	if (err) {
		err = err__set(e, -err, "cannot send to the JVM %d: %s", (int)j->pid,
			       strerror(-err));
		goto out;
	}
	rerr = rtsock__recv_upto(fd, buf, j->o.max_reply, &rlen, deadline);
	if (rlen == 0 && (rerr == 0 || rerr == -ECONNRESET || rerr == -EPIPE)) {
		err = err__set(e, ECONNRESET, "the JVM %d closed the connection without a reply "
			       "(it serves root or its own uid %u gid %u only)", (int)j->pid,
			       (unsigned)j->euid, (unsigned)j->egid);
		goto out;
	}
	err = jattach__parse_reply(buf, rlen, status, &off);
	if (err == -ENODATA && rerr == -ETIMEDOUT) {
		err = err__set(e, ETIMEDOUT, "the JVM %d did not answer '%s' within %u ms",
			       (int)j->pid, command, j->o.reply_ms);
		goto out;
	}
	if (err == -ENODATA && rlen == 0) {
		err = err__set(e, -rerr, "no reply from the JVM %d: %s", (int)j->pid,
			       strerror(-rerr));
		goto out;
	}
	if (err) {
		escape__str(line, sizeof(line), buf, rlen < 80 ? rlen : 80, 60, 0);
		err = err__set(e, EPROTO, "what answered on the JVM %d's attach socket is not an "
			       "attach reply (\"%s\"): not a HotSpot attach listener", (int)j->pid,
			       line);
		goto out;
	}
	/* more than max_reply, or the rest still coming at the deadline */
	*cut = rerr == -EMSGSIZE || rerr == -ETIMEDOUT;
	/* a whole status line came: what followed is the output, even if the
	 * JVM then timed out or reset */
	buf[rlen] = '\0';
	memmove(buf, buf + off, rlen - off + 1);
	*out = buf;
	*outlen = rlen - off;
	buf = NULL;
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	free(req);
	free(buf);
	return err;
}

int jattach__perfmap(struct jattach *j, struct err *e)
{
	struct timespec t0;
	struct stat st;
	char *out = NULL;
	size_t outlen;
	bool cut;
	int status, err, fd;

	clock_gettime(CLOCK_REALTIME, &t0);
	err = jattach__jcmd(j, "Compiler.perfmap", &status, &out, &outlen, &cut, e);
	if (!err)
		err = jattach__perfmap_reply(j->pid, status, out, outlen, e);
	free(out);
	if (err)
		return err;
	/* the JVM answers 0 even when it could not write the file (its log
	 * says so): look */
	fd = appfile__open(j->map, 0, &st);
	if (fd < 0)
		return err__set(e, ENOENT, "the JVM %d wrote no perf map /tmp/perf-%d.map: %s "
				"(is its /tmp writable?)", (int)j->pid, (int)j->nspid,
				appfile__strerror(fd));
	close(fd);
	if ((long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec <
	    (long long)t0.tv_sec * 1000000000ll + t0.tv_nsec - MAP_MTIME_SLACK_NS)
		return err__set(e, ENOENT, "the JVM %d did not rewrite its perf map "
				"/tmp/perf-%d.map (is its /tmp writable?)", (int)j->pid,
				(int)j->nspid);
	return 0;
}

const char *jattach__perfmap_path(const struct jattach *j)
{
	return j->map;
}

pid_t jattach__pid(const struct jattach *j)
{
	return j->pid;
}

pid_t jattach__nspid(const struct jattach *j)
{
	return j->nspid;
}

int jattach__jdk(const struct jattach *j)
{
	return j->jdk;
}

bool jattach__listening(const struct jattach *j)
{
	return j->listening;
}

enum jattach_how jattach__how(const struct jattach *j)
{
	return j->how;
}

void jattach__free(struct jattach *j)
{
	free(j);
}
