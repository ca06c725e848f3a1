// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Symbolizer over a fake /proc built at run time: this test binary mapped
 * as /bin/target inside a process root, an anonymous JIT region with a perf
 * map in that root's /tmp, a PE image (.dll) for the R2R hook, [vdso], PID
 * reuse and a perf map that grows. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc.h"
#include "sym/symbolize.h"
#include "core/util.h"
#include "tap.h"

#define FAKE_PID 4100
#define FAKE_NSPID 17
#define JIT_BASE 0x7e0000000000ull
#define DLL_BASE 0x7d0000000000ull
#define VDSO_BASE 0x7c0000000000ull
#define MEMFD_BASE 0x7b0000000000ull
#define COPY_SHIFT 0x100000000ull	/* where the second copy is mapped */

static char dir[PATH_MAX];

__attribute__((noinline)) int symtest_target_fn(int x)
{
	return x * 3 + 1;
}

static int write_text(const char *rel, const char *text, const char *mode)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, mode);
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int copy_self(const char *dst, ino_t *ino)
{
	char *buf = NULL;
	size_t len = 0;
	struct stat sb;
	FILE *f;

	if (read_file("/proc/self/exe", &buf, &len, 0))
		return -1;
	f = fopen(dst, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		free(buf);
		return -1;
	}
	free(buf);
	if (stat(dst, &sb))
		return -1;
	*ino = sb.st_ino;
	return 0;
}

static int build_fake_proc(void)
{
	char path[PATH_MAX * 2], exe[PATH_MAX], *maps = NULL, *line, *save = NULL;
	char out[16384];
	size_t len = 0, n = 0;
	ino_t ino, ino2;
	struct stat dll;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/%d/root/bin", dir, FAKE_PID);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%d/root/tmp", dir, FAKE_PID);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/root/bin/target", dir, FAKE_PID);
	if (copy_self(path, &ino))
		return -1;
	/* the same binary under another inode, like a library in two containers */
	snprintf(path, sizeof(path), "%s/%d/root/bin/target2", dir, FAKE_PID);
	if (copy_self(path, &ino2))
		return -1;
	/* a .NET assembly for the PE hook (its bytes are the resolver's business) */
	snprintf(path, sizeof(path), "%s/%d/root/app", dir, FAKE_PID);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%d/root/app/Sample.App.dll", FAKE_PID);
	if (write_text(path, "MZ", "w"))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/root/app/Sample.App.dll", dir, FAKE_PID);
	if (stat(path, &dll))
		return -1;
	snprintf(path, sizeof(path), "%d/status", FAKE_PID);
	snprintf(out, sizeof(out), "Name:\tfaketarget\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
		 "Uid:\t0\t0\t0\t0\nNStgid:\t%d\t%d\nNSpid:\t%d\t%d\n", FAKE_PID, FAKE_PID,
		 FAKE_PID, FAKE_NSPID, FAKE_PID, FAKE_NSPID);
	if (write_text(path, out, "w"))
		return -1;
	snprintf(path, sizeof(path), "%d/stat", FAKE_PID);
	snprintf(out, sizeof(out), "%d (faketarget) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		 "1000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", FAKE_PID);
	if (write_text(path, out, "w"))
		return -1;
	/* this binary's mappings, renamed /bin/target with the copy's inode */
	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r < 0 || read_file("/proc/self/maps", &maps, &len, 0))
		return -1;
	exe[r] = '\0';
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long s, e, off;
		char perms[5];
		int pos = 0;

		if (!strstr(line, exe) ||
		    sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4)
			continue;
		n += snprintf(out + n, sizeof(out) - n, "%llx-%llx %s %08llx 00:99 %llu /bin/target\n"
			      "%llx-%llx %s %08llx 00:99 %llu /bin/target2\n",
			      s, e, perms, off, (unsigned long long)ino,
			      s + COPY_SHIFT, e + COPY_SHIFT, perms, off, (unsigned long long)ino2);
	}
	free(maps);
	n += snprintf(out + n, sizeof(out) - n,
		      "this line is not a mapping\n"
		      "%llx-%llx r-xp 00000000 00:00 0 \n"
		      "%llx-%llx r-xp 00002000 00:99 %llu /app/Sample.App.dll\n"
		      "%llx-%llx r-xp 00000000 00:00 0 [vdso]\n"
		      "%llx-%llx r-xp 00000000 00:01 777 /memfd:doublemapper (deleted)\n",
		      JIT_BASE, JIT_BASE + 0x10000, DLL_BASE, DLL_BASE + 0x10000,
		      (unsigned long long)dll.st_ino,
		      VDSO_BASE, VDSO_BASE + 0x2000, MEMFD_BASE, MEMFD_BASE + 0x10000);
	snprintf(path, sizeof(path), "%d/maps", FAKE_PID);
	if (write_text(path, out, "w"))
		return -1;
	snprintf(path, sizeof(path), "%d/root/tmp/perf-%d.map", FAKE_PID, FAKE_NSPID);
	if (write_text(path, "7e0000000100 100 Jit::Compiled(int)\nbogus line\n"
		       "7b0000000200 80 [dotnet] Program::Main(string[])\n", "w"))
		return -1;
	/* a name over the symbolizer's 1,024 bytes whose 1,025th byte is
	 * inside a UTF-8 sequence (e9 is c3 a9) */
	memset(out, 'N', 1023);
	snprintf(out + 1023, sizeof(out) - 1023, "\xc3\xa9tail\n");
	return write_text(path, "7e0000000900 10 ", "a") || write_text(path, out, "a");
}

/* A PE resolver standing in for tools/lib/dotnet/r2r. */
static int pe_opens;
static uint64_t pe_last_offset;

static void *fake_pe_open(const char *path)
{
	char target[PATH_MAX];
	ssize_t n;

	pe_opens++;
	/* the symbolizer hands over the file it opened: /proc/self/fd/N */
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return NULL;
	target[n] = '\0';
	return strstr(target, "Sample.App.dll") ? (void *)1 : NULL;
}

static int fake_pe_lookup(void *image, uint64_t off, char *name, size_t size)
{
	pe_last_offset = off;
	if (off < 0x2100)
		return -ENOENT;
	snprintf(name, size, "Sample.Program.Fib(int)");
	return 0;
}

static void fake_pe_close(void *image)
{
}

static const struct pe_resolver fake_pe = { fake_pe_open, fake_pe_lookup, fake_pe_close };

static void test_symbolize(void)
{
	struct symbolizer *sz = symbolizer__new();
	struct symbolizer_stats st;
	struct sym_frame f;
	char path[64];

	ok(sz != NULL, "symbolizer__new");
	symbolizer__set_pe_resolver(sz, &fake_pe);
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "watch the fake process");
	is_str(symbolizer__comm(sz, FAKE_PID), "faketarget", "comm");

	is_int(symbolizer__user(sz, FAKE_PID, (uint64_t)(uintptr_t)symtest_target_fn + 2, &f), 0,
	       "native address");
	is_str(f.name, "symtest_target_fn", "native: ELF symbol through the process root");
	is_int(f.kind, FRAME_NATIVE, "native: kind");
	is_str(f.module, "/bin/target", "native: module as the process names it");
	ok(strlen(f.build_id) == 40 || strlen(f.build_id) == 0, "native: build id is hex or empty");
	diag("build id: '%s'", f.build_id);

	symbolizer__user(sz, FAKE_PID, (uint64_t)(uintptr_t)symtest_target_fn + 2 + COPY_SHIFT, &f);
	is_str(f.name, "symtest_target_fn", "a second copy of the file (same build id)");
	is_str(f.module, "/bin/target2", "second copy: its own module path");

	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x180, &f);
	is_str(f.name, "Jit::Compiled(int)", "JIT: perf map in the process's own /tmp");
	is_int(f.kind, FRAME_JIT, "JIT: kind");
	is_str(f.module, "[jit]", "JIT: module");

	symbolizer__user(sz, FAKE_PID, MEMFD_BASE + 0x210, &f);
	is_str(f.name, "[dotnet] Program::Main(string[])",
	       "JIT code in a memfd double mapping: named by the perf map");
	is_int(f.kind, FRAME_JIT, "memfd JIT code: kind");
	symbolizer__user(sz, FAKE_PID, MEMFD_BASE + 0x1000, &f);
	is_str(f.name, "memfd:doublemapper (deleted)+0x1000", "memfd without an entry: offset");

	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x904, &f);
	{
		char want[1024 + 4];

		memset(want, 'N', 1023);
		strcpy(want + 1023, "...");
		is_str(f.name, want, "a long name cut before the UTF-8 sequence the bound splits");
	}

	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x800, &f);
	is_str(f.name, "[unknown]", "anonymous memory without a perf-map entry");
	is_int(f.kind, FRAME_UNKNOWN, "unknown: kind");

	symbolizer__user(sz, FAKE_PID, DLL_BASE + 0x200, &f);
	is_str(f.name, "Sample.Program.Fib(int)", "PE image: the resolver names the method");
	is_int(f.kind, FRAME_R2R, "PE image: kind R2R");
	ok(pe_last_offset == 0x2200, "PE image: resolver gets the file offset");
	symbolizer__user(sz, FAKE_PID, DLL_BASE + 0x10, &f);
	is_str(f.name, "Sample.App.dll+0x2010", "PE image, no method: module+0xoffset");
	is_int(pe_opens, 1, "PE image opened once");

	symbolizer__user(sz, FAKE_PID, VDSO_BASE + 0x10, &f);
	is_str(f.name, "[vdso]+0x10", "vdso: module+0xoffset");

	symbolizer__user(sz, 999999, 0x1234, &f);
	is_str(f.name, "[unknown]", "unknown process");

	symbolizer__kernel(sz, 0xffffffff81000000ull, &f);
	is_int(f.kind, FRAME_KERNEL, "kernel frame kind");
	is_str(f.module, "[kernel.kallsyms]", "kernel module name");

	/* the perf map grows: the new entry is found after the next watch */
	snprintf(path, sizeof(path), "%d/root/tmp/perf-%d.map", FAKE_PID, FAKE_NSPID);
	write_text(path, "7e0000000800 10 Jit::Later()\n", "a");
	symbolizer__watch(sz, FAKE_PID);
	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x808, &f);
	is_str(f.name, "Jit::Later()", "a perf map that grew is re-read");
	symbolizer__stats(sz, &st);
	is_int(st.perfmap_reloads, 1, "one reload");
	is_int(st.perfmap_bad_lines, 1, "bad perf-map lines counted once");

	/* PID reuse: another start time drops what was captured */
	snprintf(path, sizeof(path), "%d/stat", FAKE_PID);
	write_text(path, "4100 (other) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		   "2000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", "w");
	symbolizer__watch(sz, FAKE_PID);
	symbolizer__stats(sz, &st);
	is_int(st.pid_reuse, 1, "PID reuse detected by start time");
	is_int(st.files, 3, "files cached by identity: two ELF copies, the PE once");
	symbolizer__free(sz);

	sz = symbolizer__new();
	symbolizer__watch(sz, FAKE_PID);
	symbolizer__user(sz, FAKE_PID, DLL_BASE + 0x200, &f);
	is_str(f.name, "Sample.App.dll+0x2200", "no PE resolver: module+0xoffset");
	is_int(f.kind, FRAME_UNKNOWN, "no PE resolver: unknown kind");
	symbolizer__free(sz);
	symbolizer__free(NULL);
}

static int write_stat(const char *comm, unsigned long long start)
{
	char path[64], text[256];

	snprintf(path, sizeof(path), "%d/stat", FAKE_PID);
	snprintf(text, sizeof(text), "%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		 "%llu 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 FAKE_PID, comm, start);
	return write_text(path, text, "w");
}

static size_t tracked(struct symbolizer *sz)
{
	struct symbolizer_stats st;

	symbolizer__stats(sz, &st);
	return st.tracked;
}

/* Exited processes are forgotten, two sweeps after their last use. */
static void test_sweep(void)
{
	struct symbolizer *sz = symbolizer__new();
	char path[PATH_MAX * 2];
	struct symbolizer_stats st;
	struct sym_frame f;

	write_stat("faketarget", 1000);
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "sweep: watch");
	is_int((int)symbolizer__sweep(sz), 0, "a live process is kept");
	is_int((int)symbolizer__sweep(sz), 0, "... at every sweep");
	is_int((int)tracked(sz), 1, "one process held");

	/* it exits: its stat file goes */
	snprintf(path, sizeof(path), "%s/%d/stat", dir, FAKE_PID);
	unlink(path);
	is_int((int)symbolizer__sweep(sz), 0, "first sweep after exit: kept");
	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x180, &f);
	is_str(f.name, "Jit::Compiled(int)", "samples drained after the exit are symbolized");
	is_int((int)symbolizer__sweep(sz), 0, "first sweep after the last use: kept");
	is_int((int)symbolizer__sweep(sz), 1, "second sweep after the last use: freed");
	is_int((int)tracked(sz), 0, "nothing held");
	symbolizer__user(sz, FAKE_PID, JIT_BASE + 0x180, &f);
	is_str(f.name, "[unknown]", "a freed process is unknown");
	ok(strcmp(symbolizer__intern(sz, "Jit::Compiled(int)"), "Jit::Compiled(int)") == 0,
	   "interned names outlive the process");

	/* the PID comes back as another process: the old state goes */
	write_stat("faketarget", 1000);
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "watch again");
	write_stat("other", 3000);
	is_int((int)symbolizer__sweep(sz), 0, "reused PID seen: kept for queued samples");
	is_int((int)symbolizer__sweep(sz), 0, "one sweep later: kept");
	is_int((int)symbolizer__sweep(sz), 1, "two sweeps later: the old process's state freed");
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "the new process is watched afresh");
	is_str(symbolizer__comm(sz, FAKE_PID), "faketarget", "comm from status");
	is_int((int)symbolizer__sweep(sz), 0, "and kept while it lives");
	symbolizer__stats(sz, &st);
	is_int((int)st.evicted, 2, "evictions counted");
	is_int((int)st.processes, 3, "processes counted");

	/* many processes that come and go: what is held stays bounded */
	for (int i = 0; i < 50; i++) {
		write_stat("faketarget", 4000 + (unsigned long long)i);
		symbolizer__watch(sz, FAKE_PID);
		symbolizer__sweep(sz);
	}
	ok(tracked(sz) <= 1, "one PID reused 50 times: at most one held (%zu)", tracked(sz));
	symbolizer__free(sz);
	write_stat("faketarget", 1000);
}

/* Symbols are read when a frame first falls in a file (the executable and
 * the C library at once), from the descriptor opened when the process was
 * watched: a process gone since is still named. */
static void test_wait(void)
{
	struct symbolizer *sz = symbolizer__new();
	char path[PATH_MAX * 2], self[PATH_MAX];
	struct symbolizer_stats st;
	struct sym_frame f;
	ssize_t n;

	write_stat("faketarget", 1000);
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "wait: watch");
	symbolizer__stats(sz, &st);
	is_int((int)st.files_waiting, 2, "no exe link: both ELF copies wait for a frame");
	/* it exits, and its root goes: the descriptors kept still read */
	snprintf(path, sizeof(path), "%s/%d/stat", dir, FAKE_PID);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d/root/bin/target", dir, FAKE_PID);
	snprintf(self, sizeof(self), "%s.moved", path);
	ok(rename(path, self) == 0, "the file leaves the root");
	symbolizer__user(sz, FAKE_PID, (uint64_t)(uintptr_t)symtest_target_fn + 2, &f);
	is_str(f.name, "symtest_target_fn", "read at the first frame, after the process exited");
	ok(strlen(f.build_id) == 40 || strlen(f.build_id) == 0, "build id read with it");
	symbolizer__stats(sz, &st);
	is_int((int)st.files_waiting, 1, "the other copy still waits");
	symbolizer__user(sz, FAKE_PID, (uint64_t)(uintptr_t)symtest_target_fn + 2 + COPY_SHIFT,
			 &f);
	is_str(f.name, "symtest_target_fn", "the second copy, read at its first frame");
	symbolizer__stats(sz, &st);
	is_int((int)st.files_waiting, 0, "none waits");
	ok(rename(self, path) == 0, "the file back");
	symbolizer__free(sz);

	/* with its executable known, that one is read at once */
	snprintf(path, sizeof(path), "%s/%d/exe", dir, FAKE_PID);
	n = snprintf(self, sizeof(self), "/bin/target");
	ok(n > 0 && symlink(self, path) == 0, "an exe link");
	write_stat("faketarget", 1000);
	sz = symbolizer__new();
	is_int(symbolizer__watch(sz, FAKE_PID), 0, "watch with the exe link");
	symbolizer__stats(sz, &st);
	is_int((int)st.files_waiting, 1, "the executable read at once, its copy waits");
	symbolizer__free(sz);
	unlink(path);
}

int main(void)
{
	char path[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/sidescope-symtest.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	snprintf(path, sizeof(path), "%s/%d", dir, FAKE_PID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/root", dir, FAKE_PID);
	mkdir(path, 0755);
	if (build_fake_proc()) {
		ok(0, "build the fake /proc: %s", strerror(errno));
	} else {
		proc__set_root(dir);
		test_symbolize();
		test_sweep();
		test_wait();
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		diag("cannot remove %s", dir);
	return done_testing();
}
