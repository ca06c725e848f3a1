// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Outputs in a directory the application can write to: a regular file is
 * replaced atomically; links, FIFOs, sockets and directories are refused at
 * once (an alarm catches a hang); /dev/null and the process's own
 * descriptors (/dev/stdout, /dev/fd/N) work; no temporary file is left
 * behind, whatever fails. Needs no root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/outfile.h"
#include "tap.h"
#include "core/util.h"

static char dir[PATH_MAX];

static const char *at(const char *name)
{
	static char buf[2][PATH_MAX];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *path)
{
	char *buf = NULL;

	if (read_file(path, &buf, NULL, 1 << 20))
		return NULL;
	return buf;
}

/* Entries of the test directory, "." and ".." aside. */
static int entries(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void on_alarm(int sig)
{
	static const char msg[] = "not ok - outfile__open blocked (alarm)\n";

	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static void cleanup_dir(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0)
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* One refusal: the errno, its words, nothing created. */
static void refused(const char *name, int want, const char *words, const char *what)
{
	int before = entries();
	struct outfile *o;

	alarm(5);
	errno = 0;
	o = outfile__open(at(name));
	alarm(0);
	ok(o == NULL, "%s: refused", what);
	is_int(errno, want, "%s: errno", what);
	ok(strstr(outfile__strerror(want), words) != NULL, "%s: says '%s'", what, words);
	is_int(entries(), before, "%s: no temporary file left", what);
	outfile__abort(o);
}

static void test_regular(void)
{
	struct outfile *o;
	struct stat sb;
	char *s;

	put("out.txt", "old\n");
	ok(link(at("out.txt"), at("old-inode")) == 0, "regular: a second name for the old file");
	o = outfile__open(at("out.txt"));
	ok(o != NULL, "regular: opens");
	if (!o)
		return;
	fputs("new\n", outfile__fp(o));
	fflush(outfile__fp(o));
	s = get(at("out.txt"));
	is_str(s, "old\n", "regular: the target is untouched until commit");
	free(s);
	is_int(entries(), 3, "regular: the temporary file sits next to it");
	is_int(outfile__commit(o), 0, "regular: commit");
	s = get(at("out.txt"));
	is_str(s, "new\n", "regular: the new content is in place");
	free(s);
	s = get(at("old-inode"));
	is_str(s, "old\n", "regular: replaced by rename, the old file was not written");
	free(s);
	ok(stat(at("out.txt"), &sb) == 0 && (sb.st_mode & 07777) == 0640, "regular: mode 0640");
	is_int(entries(), 2, "regular: no temporary file left");
	cleanup_dir();

	umask(077);
	o = outfile__open(at("fresh.svg"));
	ok(o != NULL, "absent: opens");
	if (o) {
		fputs("x", outfile__fp(o));
		is_int(outfile__commit(o), 0, "absent: commit");
	}
	ok(stat(at("fresh.svg"), &sb) == 0 && (sb.st_mode & 07777) == 0640,
	   "absent: mode 0640 whatever the umask");
	umask(022);
	cleanup_dir();

	/* a name as long as a name can be: the temporary name still fits */
	{
		char name[NAME_MAX + 1];

		memset(name, 'n', NAME_MAX);
		name[NAME_MAX] = '\0';
		o = outfile__open(at(name));
		ok(o != NULL, "longest name: opens");
		if (o)
			is_int(outfile__commit(o), 0, "longest name: commit");
		ok(access(at(name), F_OK) == 0, "longest name: written");
		cleanup_dir();
	}
}

/* A streamed file is in place and growing before the end; abort keeps it. */
static void test_publish(void)
{
	struct outfile *o;
	struct stat sb;
	char *s;

	put("stream.log", "old\n");
	ok(link(at("stream.log"), at("old-inode")) == 0, "publish: a second name for the old file");
	o = outfile__open(at("stream.log"));
	ok(o != NULL, "publish: opens");
	if (!o)
		return;
	is_int(outfile__publish(o), 0, "publish: in place");
	fputs("line 1\n", outfile__fp(o));
	fflush(outfile__fp(o));
	s = get(at("stream.log"));
	is_str(s, "line 1\n", "publish: a reader sees the lines before the end");
	free(s);
	is_int(entries(), 2, "publish: no temporary file beside it");
	fputs("line 2\n", outfile__fp(o));
	is_int(outfile__commit(o), 0, "publish: commit");
	s = get(at("stream.log"));
	is_str(s, "line 1\nline 2\n", "publish: complete at the end");
	free(s);
	s = get(at("old-inode"));
	is_str(s, "old\n", "publish: replaced by rename, the old file was not written");
	free(s);
	ok(stat(at("stream.log"), &sb) == 0 && (sb.st_mode & 07777) == 0640, "publish: mode 0640");

	o = outfile__open(at("stream.log"));
	ok(o && outfile__publish(o) == 0, "publish then abort: opens and publishes");
	if (o) {
		fputs("partial\n", outfile__fp(o));
		outfile__abort(o);
	}
	s = get(at("stream.log"));
	is_str(s, "partial\n", "publish then abort: what was written stays");
	free(s);
	o = outfile__open("-");
	ok(o && outfile__publish(o) == 0, "publish of stdout: a no-op");
	if (o)
		is_int(outfile__commit(o), 0, "publish of stdout: commit");
	cleanup_dir();
}

static void test_refusals(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *s;
	int fd;

	put("secret", "keep me\n");
	ok(symlink(at("secret"), at("link.svg")) == 0, "planted a symlink to a file");
	refused("link.svg", ELOOP, "symbolic link", "symlink to a file");
	s = get(at("secret"));
	is_str(s, "keep me\n", "symlink to a file: its target is untouched");
	free(s);

	ok(mkfifo(at("fifo"), 0600) == 0, "planted a FIFO");
	ok(symlink(at("fifo"), at("to-fifo.svg")) == 0, "planted a symlink to the FIFO");
	refused("to-fifo.svg", ELOOP, "not following it", "symlink to a FIFO with no reader");
	refused("fifo", ESPIPE, "is a FIFO, not a regular file", "FIFO");

	ok(symlink(at("nowhere"), at("dangling")) == 0, "planted a dangling symlink");
	refused("dangling", ELOOP, "symbolic link", "dangling symlink");
	ok(access(at("nowhere"), F_OK) < 0, "dangling symlink: its target was not created");

	ok(symlink("/dev/null", at("to-null")) == 0, "planted a symlink to /dev/null");
	refused("to-null", ELOOP, "symbolic link", "symlink to a character device");

	ok(mkdir(at("sub"), 0700) == 0, "a directory");
	refused("sub", EISDIR, "directory", "directory");
	refused("sub/", EISDIR, "directory", "directory named with a slash");

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd >= 0 && strlen(at("sock")) < sizeof(sa.sun_path) &&
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		refused("sock", ESOCKTNOSUPPORT, "is a socket", "socket");
	else
		ok(0, "a socket can be bound in %s (path under %zu bytes)", dir,
		   sizeof(sa.sun_path));
	if (fd >= 0)
		close(fd);
	cleanup_dir();
}

static void test_devices(void)
{
	struct outfile *o;
	char buf[64];
	int p[2], saved, fd;
	ssize_t n;

	o = outfile__open("/dev/null");
	ok(o != NULL, "/dev/null: opens");
	if (o) {
		fputs("discarded", outfile__fp(o));
		is_int(outfile__commit(o), 0, "/dev/null: commit");
	}

	/* stdout redirected to a pipe, as in -o /dev/stdout | gzip */
	if (pipe(p) < 0) {
		ok(0, "pipe");
		return;
	}
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(p[1], STDOUT_FILENO);
	o = outfile__open("/dev/stdout");
	if (o) {
		fputs("to the pipe\n", outfile__fp(o));
		fd = outfile__commit(o);
	} else {
		fd = -errno;
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ok(o != NULL, "/dev/stdout: opens");
	is_int(fd, 0, "/dev/stdout: commit");
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "to the pipe\n", "/dev/stdout: written to the pipe");

	snprintf(buf, sizeof(buf), "/dev/fd/%d", p[1]);
	o = outfile__open(buf);
	ok(o != NULL, "/dev/fd/N: opens");
	if (o) {
		fputs("via /dev/fd", outfile__fp(o));
		is_int(outfile__commit(o), 0, "/dev/fd/N: commit");
	}
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "via /dev/fd", "/dev/fd/N: written through the descriptor");
	ok(fcntl(p[1], F_GETFD) >= 0, "/dev/fd/N: the caller's descriptor stays open");

	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", p[0]);
	errno = 0;
	o = outfile__open(buf);
	ok(o == NULL && errno == EBADF, "/proc/self/fd/N open for reading only: EBADF");
	outfile__abort(o);
	close(p[0]);
	close(p[1]);
	errno = 0;
	o = outfile__open("/dev/fd/999999");
	ok(o == NULL && errno == EBADF, "/dev/fd/N not open: EBADF");
	outfile__abort(o);
	/* only the names themselves: another way to the same place is a
	 * path through /dev/fd, whose entries are links like any other */
	errno = 0;
	o = outfile__open("/dev/./fd/1");
	ok(o == NULL && errno == ELOOP, "/dev/./fd/1 is not an alias: ELOOP");
	outfile__abort(o);
}

static void test_errors(void)
{
	struct outfile *o;
	char moved[PATH_MAX + 8], other[PATH_MAX + 8];
	char *s;

	/* abort: nothing left, the target untouched */
	put("out", "before\n");
	o = outfile__open(at("out"));
	ok(o != NULL, "abort: opens");
	if (o)
		fputs("half", outfile__fp(o));
	outfile__abort(o);
	s = get(at("out"));
	is_str(s, "before\n", "abort: the target is untouched");
	free(s);
	is_int(entries(), 1, "abort: no temporary file left");

	/* the rename fails (a directory took the target's place) */
	cleanup_dir();
	o = outfile__open(at("out"));
	ok(o != NULL, "failed rename: opens");
	ok(mkdir(at("out"), 0700) == 0, "failed rename: a directory takes the name");
	if (o) {
		fputs("data", outfile__fp(o));
		ok(outfile__commit(o) < 0, "failed rename: commit fails");
	}
	is_int(entries(), 1, "failed rename: no temporary file left");
	cleanup_dir();

	/* the directory is swapped for a link to another one before the
	 * commit: the file still lands where the directory was opened */
	snprintf(moved, sizeof(moved), "%s.moved", dir);
	snprintf(other, sizeof(other), "%s.other", dir);
	ok(mkdir(at("d"), 0700) == 0 && mkdir(other, 0700) == 0, "swap: directories");
	o = outfile__open(at("d/out"));
	ok(o != NULL, "swap: opens");
	ok(rename(at("d"), moved) == 0 && symlink(other, at("d")) == 0,
	   "swap: the directory replaced by a link elsewhere");
	if (o) {
		fputs("here", outfile__fp(o));
		is_int(outfile__commit(o), 0, "swap: commit");
	}
	snprintf(moved + strlen(moved), 8, "/out");
	snprintf(other + strlen(other), 8, "/out");
	ok(access(moved, F_OK) == 0, "swap: written into the directory that was opened");
	ok(access(other, F_OK) < 0, "swap: nothing written through the link");
	unlink(moved);
	unlink(other);
	*strrchr(moved, '/') = '\0';
	*strrchr(other, '/') = '\0';
	rmdir(moved);
	rmdir(other);
	cleanup_dir();

	errno = 0;
	o = outfile__open(at("no/such/dir/out"));
	ok(o == NULL && errno == ENOENT, "missing directory: ENOENT");
	outfile__abort(o);
	is_str(outfile__strerror(-ENOENT), "its directory does not exist", "strerror: ENOENT names the directory");
	is_str(outfile__strerror(-EIO), strerror(EIO), "strerror: other errors as strerror");
	is_str(outfile__strerror(EMEDIUMTYPE), "is a block device, not a regular file",
	       "strerror: block device");
}

/* A directory the writer may write but not list (0300): still works. Run
 * as nobody when the test runs as root, who may read any directory. */
static void test_write_only_dir(void)
{
	struct outfile *o;
	int status = -1;
	pid_t pid;

	ok(mkdir(at("wx"), 0300) == 0, "write-only directory: made");
	if (geteuid() == 0 && (chown(at("wx"), 65534, 65534) < 0 || chmod(dir, 0711) < 0))
		diag("cannot hand the directory to nobody: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(2);
		o = outfile__open(at("wx/out"));
		if (!o)
			_exit(3);
		fputs("x", outfile__fp(o));
		_exit(outfile__commit(o) ? 4 : 0);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	chmod(dir, 0700);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "write-only directory: written (exit %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ok(access(at("wx/out"), F_OK) == 0, "write-only directory: the file is there");
	unlink(at("wx/out"));
	rmdir(at("wx"));
}

/* outfile_write_fn: CTX's text, or the error it holds. */
static int write_text(void *ctx, FILE *f)
{
	const char *text = ctx;

	if (!strcmp(text, "ENOSPC"))
		return -ENOSPC;
	fputs(text, f);
	return 0;
}

/* The messages of what follows on stderr: into a file, read back. */
static int said_fd = -1, stderr_fd = -1;

static void said_begin(void)
{
	fflush(stderr);
	stderr_fd = dup(2);
	said_fd = open(at("said"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(said_fd, 2);
}

static char *said_end(void)
{
	char *said;

	fflush(stderr);
	dup2(stderr_fd, 2);
	close(stderr_fd);
	close(said_fd);
	said = get(at("said"));
	if (said && *said && said[strlen(said) - 1] == '\n')
		said[strlen(said) - 1] = '\0';	/* one line: shown as the test's name */
	return said;
}

/* The steps with their failure said: one line each, "cannot write PATH:
 * why", nothing when all goes well, no file and no temporary left after a
 * writer's failure. */
static void test_said(void)
{
	char want[PATH_MAX + 128], *said;
	struct outfile *o;
	int before, err;

	said_begin();
	o = outfile__open_or_say(at("nodir/x"));
	said = said_end();
	ok(!o, "open_or_say: a missing directory");
	snprintf(want, sizeof(want), "cannot write %s: its directory does not exist",
		 at("nodir/x"));
	ok(said && strstr(said, want), "... said: %s", said ? said : "(nothing)");
	free(said);

	said_begin();
	o = outfile__open_or_say(at("said-ok"));
	err = o ? outfile__finish(o, write_text, "hello\n") : -1;
	said = said_end();
	is_int(err, 0, "finish: written and committed");
	is_str(said ? said : "(unread)", "", "... nothing said");
	free(said);
	said = get(at("said-ok"));
	is_str(said ? said : "", "hello\n", "... the text in place");
	free(said);
	unlink(at("said-ok"));

	before = entries();
	said_begin();
	o = outfile__open_or_say(at("said-fail"));
	err = o ? outfile__finish(o, write_text, "ENOSPC") : -1;
	said = said_end();
	is_int(err, -ENOSPC, "finish: the writer's error returned");
	snprintf(want, sizeof(want), "cannot write %s: %s", at("said-fail"), strerror(ENOSPC));
	ok(said && strstr(said, want), "... and said: %s", said ? said : "(nothing)");
	free(said);
	is_int(entries(), before, "... nothing left behind");

	said_begin();
	o = outfile__open_or_say("/dev/full");
	if (o)
		fputs("more than fits\n", outfile__fp(o));
	err = o ? outfile__commit_or_say(o) : 0;
	said = said_end();
	is_int(err, -ENOSPC, "commit_or_say: a full device");
	snprintf(want, sizeof(want), "cannot write /dev/full: %s", strerror(ENOSPC));
	ok(said && strstr(said, want), "... said: %s", said ? said : "(nothing)");
	free(said);
	unlink(at("said"));
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct outfile *o;

	signal(SIGALRM, on_alarm);
	snprintf(dir, sizeof(dir), "%s/outfile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp %s: %s", dir, strerror(errno));
		return done_testing();
	}
	o = outfile__open("-");
	ok(o && outfile__fp(o) == stdout, "\"-\" is stdout");
	if (o)
		is_int(outfile__commit(o), 0, "\"-\": commit");

	test_regular();
	test_publish();
	test_refusals();
	test_devices();
	test_errors();
	test_write_only_dir();
	test_said();
	cleanup_dir();
	rmdir(dir);
	return done_testing();
}
