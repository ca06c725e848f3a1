// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* elfsym's separate debug files, the rules a file the app controls is held
 * to: looked for only inside the root given (none without one), taken only
 * with the file's build id or, the file having none, the CRC its debug link
 * gives (any other ELF file at that path is not its debug file); and the
 * limits of a read (a table over its bytes, a search over its time). Over
 * this test's own executable, stripped of its build id. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/run.h"
#include "sym/budget.h"
#include "sym/elfsym.h"
#include "tap.h"

__attribute__((noinline)) int debugfile_test_target(int x)
{
	return x * 5 + 2;
}

static char tmpdir[PATH_MAX];

static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		diag("command failed (%d): %s", rc, cmd);
	return rc;
}

/* The symbols of ROOT/bin/stripped, its debug file looked for inside ROOT
 * (NULL: no root), within LIM. */
static struct elf_syms *load(const char *root, const struct elfsym_limits *lim)
{
	char path[PATH_MAX + 32];
	struct elf_syms *s;
	int fd, rootfd = -1, err;

	snprintf(path, sizeof(path), "%s/root/bin/stripped", tmpdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (root)
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s = elfsym__load_in(fd, rootfd, "/bin/stripped", lim);
	err = errno;
	close(fd);
	if (rootfd >= 0)
		close(rootfd);
	errno = err;
	return s;
}

static int take_any(int fd, Elf *elf, uint64_t fsize, const char *path, void *ctx)
{
	return 0;
}

static bool names_target(const struct elf_syms *s)
{
	const struct elf_sym_info *hits[2];

	return s && elfsym__lookup_name(s, "debugfile_test_target", hits, 2) == 1;
}

int main(void)
{
	char root[PATH_MAX + 16], exe[PATH_MAX];
	struct elfsym_limits lim = { 0 };
	struct budget time;
	struct elf_syms *s, *u;
	size_t len;
	void *buf;
	ssize_t n;

	snprintf(tmpdir, sizeof(tmpdir), "%s/sidescope-debugfile.XXXXXX",
		 getenv("TMPDIR") ?: "/tmp");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!mkdtemp(tmpdir) || n <= 0) {
		ok(0, "a directory and our executable");
		return done_testing();
	}
	exe[n] = '\0';
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	/* a stripped copy without build id whose debug link names
	 * stripped.debug, which is then set aside */
	if (run("mkdir -p %s/bin %s/usr/lib/debug && cd %s/bin && "
		"objcopy --only-keep-debug --remove-section .note.gnu.build-id %s stripped.debug && "
		"objcopy --strip-all --remove-section .note.gnu.build-id %s stripped && "
		"objcopy --add-gnu-debuglink=stripped.debug stripped && "
		"mv stripped.debug %s/real.debug", root, root, root, exe, exe, tmpdir)) {
		ok(0, "make the stripped copy and its debug file");
		goto out;
	}

	s = load(root, NULL);
	ok(s && !names_target(s) && !elfsym__complete(s), "no debug file: the dynamic symbols");
	is_str(s ? elfsym__build_id(s) : NULL, "", "no build id");
	is_str(s && elfsym__debuglink(s) ? elfsym__debuglink(s) : NULL, "stripped.debug",
	       "its debug link");
	elfsym__free(s);

	/* the real debug file beside it: its CRC is the link's */
	run("cp %s/real.debug %s/bin/stripped.debug", tmpdir, root);
	s = load(root, NULL);
	ok(names_target(s) && elfsym__complete(s), "the debug file the link's CRC names is taken");
	elfsym__free(s);
	s = load(NULL, NULL);
	ok(s && !names_target(s), "without a root no debug file is looked for");
	elfsym__free(s);

	s = load("/nonexistent", NULL);
	ok(s != NULL, "stripped table to pack");
	if (s && !elfsym__pack(s, &buf, &len)) {
		int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), dfd;

		u = elfsym__unpack(buf, len);
		free(buf);
		dfd = u ? elfsym__find_debug_in(rootfd, "/bin/stripped", u, take_any, NULL, NULL) : -1;
		ok(dfd >= 0, "a packed table keeps its link's CRC: its debug file is found");
		if (dfd >= 0)
			close(dfd);
		elfsym__free(u);
		close(rootfd);
	}
	elfsym__free(s);

	/* any other ELF file where the link points (an unstripped copy with
	 * the same names, even) is not its debug file: its CRC differs */
	run("cp %s %s/bin/stripped.debug && mkdir -p %s/bin/.debug %s/usr/lib/debug/bin && "
	    "cp %s %s/bin/.debug/stripped.debug && cp %s %s/usr/lib/debug/bin/stripped.debug",
	    exe, root, root, root, exe, root, exe, root);
	s = load(root, NULL);
	ok(s && !names_target(s), "an ELF file of another CRC at every debug path: not taken");
	elfsym__free(s);

	/* the limits of a read */
	run("cp %s/real.debug %s/bin/stripped.debug", tmpdir, root);
	lim.max_bytes = 64;
	errno = 0;
	s = load(root, &lim);
	ok(!s && errno == EFBIG, "a table over the bytes allowed: EFBIG, nothing read");
	elfsym__free(s);
	lim.max_bytes = 64u << 20;
	s = load(root, &lim);
	ok(names_target(s), "within them: read");
	elfsym__free(s);
	budget__start(&time, 1);
	while (!budget__over(&time))
		;
	lim.time = &time;
	s = load(root, &lim);
	ok(s && !names_target(s) && elfsym__debug_left_out(s) == -ETIME,
	   "a debug-file search over its time: the file's own symbols, and ETIME said");
	elfsym__free(s);

	budget__start(&time, 60ull * 1000 * 1000 * 1000);
	ok(!budget__over(&time) && !budget__over(NULL), "a budget of a minute is not over");
	run__stop = SIGTERM;
	ok(!budget__over(&time), "a stop leaves the work left its time");
	run__stop = 0;
	ok(!budget__over(&time), "a stop taken back: the budget's own time again");
out:
	run("rm -rf %s", tmpdir);
	return done_testing();
}
