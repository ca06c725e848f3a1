// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer's files (sym/symfile) over a fake /proc: a copy of a file
 * with its build id kept and a function renamed is not the file (each is
 * named from its own table); processes of one view share a file, of two
 * views do not; a file no process maps any more has its table freed, and
 * the lines handed out for its frames still answer; a stripped file's
 * debug link is followed in its process's root only while that process
 * lives. The files are copies of this test's own executable. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/util.h"
#include "sym/symbolize.h"
#include "tap.h"

#define PID_A 4300	/* maps /bin/a and /bin/b (a look-alike of a) */
#define PID_SAME 4301	/* another process of PID_A's root: maps /bin/a */
#define PID_OTHER 4302	/* a process of another root: maps its own /bin/a */
#define PID_GONE 4303	/* maps /bin/s (stripped, a debug link, no build id) */
#define COPY_SHIFT 0x100000000ull

static char dir[PATH_MAX];
static char exe[PATH_MAX];

__attribute__((noinline)) int symfile_test_fn(int x)
{
	return x * 7 + 3;
}

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

static int write_text(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int write_stat(pid_t pid, unsigned long long start)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	snprintf(text, sizeof(text), "%d (fake) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		 "%llu 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 (int)pid, start);
	if (write_text(rel, text))
		return -1;
	snprintf(rel, sizeof(rel), "%d/status", (int)pid);
	snprintf(text, sizeof(text), "Name:\tfake\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
		 "Uid:\t0\t0\t0\t0\nNStgid:\t%d\nNSpid:\t%d\n", (int)pid, (int)pid, (int)pid,
		 (int)pid);
	return write_text(rel, text);
}

static ino_t inode_of(const char *rel)
{
	char path[PATH_MAX * 2];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return stat(path, &sb) ? 0 : sb.st_ino;
}

/* PID's maps: this executable's mappings as FILE (its inode), and, with
 * SECOND, as SECOND's too, COPY_SHIFT higher. */
static int write_maps(pid_t pid, const char *file, const char *second)
{
	char rel[64], path[PATH_MAX + 64], *maps = NULL, *line, *save = NULL, out[16384];
	size_t len = 0, n = 0;
	ino_t ino, ino2 = 0;

	snprintf(path, sizeof(path), "%d/root%s", (int)pid, file);
	ino = inode_of(path);
	if (second) {
		snprintf(path, sizeof(path), "%d/root%s", (int)pid, second);
		ino2 = inode_of(path);
	}
	if (!ino || (second && !ino2) || read_file("/proc/self/maps", &maps, &len, 0))
		return -1;
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long s, e, off;
		char perms[5];

		if (!strstr(line, exe) ||
		    sscanf(line, "%llx-%llx %4s %llx", &s, &e, perms, &off) < 4)
			continue;
		n += snprintf(out + n, sizeof(out) - n, "%llx-%llx %s %08llx 00:99 %llu %s\n", s, e,
			      perms, off, (unsigned long long)ino, file);
		if (second)
			n += snprintf(out + n, sizeof(out) - n,
				      "%llx-%llx %s %08llx 00:99 %llu %s\n", s + COPY_SHIFT,
				      e + COPY_SHIFT, perms, off, (unsigned long long)ino2, second);
	}
	free(maps);
	snprintf(rel, sizeof(rel), "%d/maps", (int)pid);
	return write_text(rel, out);
}

static int build(void)
{
	/* /bin/a: this executable; /bin/b: the same, build id kept, the
	 * function's name changed in place; /bin/s: stripped, no build id, a
	 * debug link to s.debug (set aside) */
	if (run("cd %s && mkdir -p %d/root/bin %d %d/root/bin %d/root/bin && "
		"cp %s %d/root/bin/a && "
		"sed 's/symfile_test_fn/symfile_evil_fn/g' %s > %d/root/bin/b && "
		"cd %d/root/bin && "
		"objcopy --only-keep-debug --remove-section .note.gnu.build-id a s.debug && "
		"objcopy --strip-all --remove-section .note.gnu.build-id a s && "
		"objcopy --add-gnu-debuglink=s.debug s && mv s.debug %s/s.debug",
		dir, PID_A, PID_SAME, PID_OTHER, PID_GONE, exe, PID_A, exe, PID_A, PID_A, dir))
		return -1;
	/* PID_SAME's root is PID_A's; PID_OTHER has a root of its own */
	if (run("cd %s && ln -s %s/%d/root %d/root && cp %s %d/root/bin/a && "
		"cp %d/root/bin/s %d/root/bin/s", dir, dir, PID_A, PID_SAME, exe, PID_OTHER, PID_A,
		PID_GONE))
		return -1;
	return write_stat(PID_A, 1000) || write_stat(PID_SAME, 1001) ||
	       write_stat(PID_OTHER, 1002) || write_stat(PID_GONE, 1003) ||
	       write_maps(PID_A, "/bin/a", "/bin/b") || write_maps(PID_SAME, "/bin/a", NULL) ||
	       write_maps(PID_OTHER, "/bin/a", NULL) || write_maps(PID_GONE, "/bin/s", NULL);
}

static void stats(struct symbolizer *sz, struct symbolizer_stats *st)
{
	symbolizer__stats(sz, st);
}

int main(void)
{
	uint64_t fn = (uint64_t)(uintptr_t)symfile_test_fn + 2;
	struct symbolizer_stats st;
	const struct frame_line *lines;
	struct frame_lines_ref ref;
	struct symbolizer *sz;
	char path[PATH_MAX + 32];
	struct sym_frame f;
	uint64_t held;
	ssize_t n;
	int i;

	snprintf(dir, sizeof(dir), "%s/sidescope-symfile.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!mkdtemp(dir) || n <= 0) {
		ok(0, "a directory and our executable");
		return done_testing();
	}
	exe[n] = '\0';
	if (build()) {
		ok(0, "build the fake /proc: %s", strerror(errno));
		goto out;
	}
	proc__set_root(dir);
	sz = symbolizer__new();

	/* a look-alike keeps its build id, not its names */
	is_int(symbolizer__watch(sz, PID_A), 0, "watch a process mapping a file and its look-alike");
	symbolizer__user(sz, PID_A, fn, &f);
	is_str(f.name, "symfile_test_fn", "the file's frame: its own name");
	symbolizer__user(sz, PID_A, fn + COPY_SHIFT, &f);
	is_str(f.name, "symfile_evil_fn", "the look-alike's frame: its own name, not shared by build id");
	ref = f.lines;
	symbolizer__user(sz, PID_A, fn, &f);
	is_str(f.name, "symfile_test_fn", "and the file's frames still the file's");

	/* one view shares a file, another does not */
	is_int(symbolizer__watch(sz, PID_SAME), 0, "watch a process of the same root");
	symbolizer__user(sz, PID_SAME, fn, &f);
	is_str(f.name, "symfile_test_fn", "it maps the same file");
	stats(sz, &st);
	is_int(st.files, 2, "shared: two files opened, not three");
	is_int(symbolizer__watch(sz, PID_OTHER), 0, "watch a process of another root");
	symbolizer__user(sz, PID_OTHER, fn, &f);
	is_str(f.name, "symfile_test_fn", "its own copy named");
	stats(sz, &st);
	is_int(st.files, 3, "a file of another root is a file of its own");

	/* the look-alike unmapped: its table goes two sweeps later */
	held = st.tables_bytes;
	ok(held > 0, "tables held: %llu bytes", (unsigned long long)held);
	ok(write_maps(PID_A, "/bin/a", NULL) == 0, "the look-alike unmapped");
	symbolizer__sweep(sz);
	is_int(symbolizer__watch(sz, PID_A), 0, "its maps read again");
	for (i = 0; i < 3; i++)
		symbolizer__sweep(sz);
	stats(sz, &st);
	is_int(st.files_evicted, 1, "the unmapped file's table freed");
	ok(st.tables_bytes < held, "tables held: %llu bytes, fewer",
	   (unsigned long long)st.tables_bytes);
	ok(ref.fn && ref.fn(ref.src, ref.vaddr, &lines) >= 0,
	   "the lines of a frame handed out before still answer");
	symbolizer__user(sz, PID_A, fn, &f);
	is_str(f.name, "symfile_test_fn", "the file still mapped keeps its names");

	/* a debug link is followed in the root of a live process only */
	is_int(symbolizer__watch(sz, PID_GONE), 0, "watch a process mapping a stripped file");
	snprintf(path, sizeof(path), "%s/%d/stat", dir, PID_GONE);
	ok(unlink(path) == 0, "it exits");
	ok(run("cp %s/s.debug %s/%d/root/bin/s.debug", dir, dir, PID_GONE) == 0,
	   "and the debug file its link names appears in its root");
	symbolizer__user(sz, PID_GONE, fn, &f);
	ok(strcmp(f.name, "symfile_test_fn") != 0,
	   "a gone process's debug link is not followed (%s)", f.name);
	symbolizer__free(sz);

	write_stat(PID_GONE, 1003);
	sz = symbolizer__new();
	is_int(symbolizer__watch(sz, PID_GONE), 0, "the process alive again");
	symbolizer__user(sz, PID_GONE, fn, &f);
	is_str(f.name, "symfile_test_fn", "its debug file (the link's CRC) names the frame");
	symbolizer__free(sz);
out:
	run("rm -rf %s", dir);
	return done_testing();
}
