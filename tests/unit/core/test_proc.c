// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* proc module over saved /proc fixtures (tests/data/proc). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/proc.h"
#include "core/util.h"
#include "tap.h"

static void test_status(void)
{
	struct proc_status st;

	is_int(proc__read_status(4242, &st), 0, "status of a containerised dotnet parses");
	is_int(st.pid, 4242, "pid as seen here");
	is_int(st.nspid, 7, "NSpid is the last field");
	is_int(st.nstgid, 7, "NStgid is the last field");
	is_int(st.ns_depth, 2, "two PID namespaces deep");
	is_int(st.ppid, 4100, "ppid");
	is_int(st.uid, 1000, "uid");
	is_str(st.name, "dotnet", "name");

	is_int(proc__read_status(77, &st), 0, "status without NSpid parses");
	is_int(st.nspid, 77, "no NSpid: namespace pid is the pid");
	is_int(st.ns_depth, 1, "no NSpid: one namespace");
	is_str(st.name, "a (weird) name", "name with spaces and parentheses");

	ok(proc__parse_status("Name:\tx\n", &st) == -EINVAL, "status without Pid is an error");
	ok(proc__parse_status("Pid:\tabc\n", &st) == -EINVAL, "non-numeric Pid is an error");
	ok(proc__parse_status("", &st) == -EINVAL, "empty status is an error");
	is_int(proc__read_status(999999, &st), -ENOENT, "missing process: -ENOENT");
}

static void test_stat(void)
{
	uint64_t t = 0;

	is_int(proc__start_time(4242, &t), 0, "stat parses");
	is_int(t, 987654, "start time is field 22");
	is_int(proc__start_time(77, &t), 0, "comm with ') ' parses");
	is_int(t, 4242, "start time after a weird comm");
	ok(proc__parse_stat_starttime("1 (x) R 1 2", &t) == -EINVAL, "short stat is an error");
	ok(!proc__is_kernel_thread(4242), "a process is not a kernel thread");
	{
		unsigned long flags;

		is_int(proc__parse_stat_flags("2 (kthreadd) S 0 0 0 0 -1 2129984 0", &flags), 0,
		       "flags parse");
		ok(flags & 0x00200000, "kthreadd has PF_KTHREAD");
	}
	ok(proc__parse_stat_starttime("garbage", &t) == -EINVAL, "stat without ')' is an error");
}

static void test_cmdline_cgroup(void)
{
	char buf[256], hint[64];

	is_int(proc__cmdline(4242, buf, sizeof(buf)), 0, "cmdline reads");
	is_str(buf, "dotnet /app/SampleApp.dll --urls http://0.0.0.0:8080", "NULs become spaces");
	is_int(proc__cmdline(77, buf, sizeof(buf)), 0, "empty cmdline reads");
	is_str(buf, "[a (weird) name]", "empty cmdline shows [name]");

	is_int(proc__cgroup(4242, buf, sizeof(buf)), 0, "cgroup v2 reads");
	proc__container_hint(buf, hint, sizeof(hint));
	is_str(hint, "3f2a9c81d4b7", "containerd scope gives the short container id");
	is_int(proc__cgroup(77, buf, sizeof(buf)), 0, "hybrid cgroup reads");
	is_str(buf, "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	       "a v1 path wins over an empty v2 root");
	proc__container_hint(buf, hint, sizeof(hint));
	is_str(hint, "0123456789ab", "docker path gives the short id");
	proc__container_hint("/system.slice/ssh.service", hint, sizeof(hint));
	is_str(hint, "ssh.service", "no id: last component");
	proc__container_hint("/", hint, sizeof(hint));
	is_str(hint, "/", "root cgroup");
	ok(proc__parse_cgroup("garbage", buf, sizeof(buf)) == -EINVAL, "garbage cgroup is an error");
}

static void test_maps(void)
{
	struct proc_maps *m;
	const struct proc_map *e;
	char *buf;
	size_t len;

	m = proc_maps__load(4242);
	ok(m != NULL, "maps load");
	if (!m)
		return;
	is_int(m->n, 8, "eight mappings");
	is_int(m->bad_lines, 0, "no bad lines");
	e = proc_maps__find(m, 0x7f2000001234);
	ok(e && strstr(e->path, "libcoreclr.so"), "lookup finds libcoreclr");
	e = proc_maps__find(m, 0x7f2300000010);
	ok(e && strcmp(e->path, "/usr/lib/my lib (deleted)") == 0, "path with spaces kept whole");
	e = proc_maps__find(m, 0x7f1000000000);
	ok(e && e->path[0] == '\0', "anonymous mapping has an empty path");
	ok(proc_maps__find(m, 0x1000) == NULL, "address below every mapping");
	ok(proc_maps__find(m, 0x7f2000400000) == NULL, "end address is exclusive");
	ok(proc_maps__has_lib(m, "liblttng-ust.so"), "lttng-ust detected");
	is_str(proc__runtime_name(proc__detect_runtime(m, "/usr/share/dotnet/dotnet")), "dotnet",
	       "dotnet runtime detected");
	proc_maps__free(m);

	m = proc_maps__load(77);
	ok(m && proc__detect_runtime(m, "/opt/java/bin/java") == RUNTIME_JVM, "jvm detected");
	ok(m && !proc_maps__has_lib(m, "liblttng-ust.so"), "no lttng-ust");
	proc_maps__free(m);
	ok(proc__detect_runtime(NULL, "/usr/local/bin/node") == RUNTIME_NODE, "node by executable");
	ok(proc__detect_runtime(NULL, "/bin/sh") == RUNTIME_NATIVE, "native otherwise");
	static const char pymaps[] = "7f0000000000-7f0000001000 r-xp 00000000 08:01 12 "
				     "/usr/lib/libpython3.11.so.1.0\n";

	ok(proc__detect_runtime(NULL, "/usr/bin/python3.11") == RUNTIME_PYTHON, "python3.11");
	ok(proc__detect_runtime(NULL, "/usr/bin/python") == RUNTIME_PYTHON, "python");
	ok(proc__detect_runtime(NULL, "/usr/bin/python-config") == RUNTIME_NATIVE,
	   "python-config is not python");
	if (proc_maps__parse(pymaps, strlen(pymaps), &m) == 0) {
		ok(proc__detect_runtime(m, "/usr/bin/app") == RUNTIME_PYTHON,
		   "an embedded interpreter (libpython) is python");
		proc_maps__free(m);
	} else {
		ok(0, "maps line parses");
	}
	{
		static const struct {
			const char *exe, *want;
		} named[] = {
			{ "/usr/bin/ruby3.1", "ruby" },
			{ "/usr/local/bin/ruby", "ruby" },
			{ "/usr/bin/php8.2", "php" },
			{ "/usr/sbin/php-fpm8.2", "php" },
			{ "/usr/bin/php-cgi", "php" },
			{ "/usr/bin/perl", "perl" },
			{ "/usr/bin/perl5.36.0", "perl" },
			{ "/usr/lib/erlang/erts-13.1.5/bin/beam.smp", "beam" },
			{ "/usr/bin/rubocop", "native" },
			{ "/usr/bin/perldoc", "native" },
			{ "/usr/bin/phpize", "native" },
			{ "/usr/bin/beamer", "native" },
		};
		static const char rbmaps[] = "7f0000000000-7f0000001000 r-xp 00000000 08:01 12 "
					     "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2\n";
		size_t i;

		for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
			is_str(proc__runtime_name(proc__detect_runtime(NULL, named[i].exe)),
			       named[i].want, "%s is %s", named[i].exe, named[i].want);
		if (proc_maps__parse(rbmaps, strlen(rbmaps), &m) == 0) {
			is_str(proc__runtime_name(proc__detect_runtime(m, "/usr/bin/app")), "ruby",
			       "an embedded interpreter (libruby) is ruby");
			proc_maps__free(m);
		} else {
			ok(0, "maps line parses");
		}
	}
	is_str(proc__runtime_name(RUNTIME_GO), "go", "go's name");
	is_str(proc__runtime_name(RUNTIME_PYTHON), "python", "python's name");

	if (read_file(fixture("maps/malformed.maps"), &buf, &len, 0)) {
		ok(0, "malformed fixture readable");
		return;
	}
	is_int(proc_maps__parse(buf, len, &m), 0, "malformed maps still parse");
	is_int(m->n, 4, "four good lines kept");
	is_int(m->bad_lines, 5, "five bad lines counted");
	e = proc_maps__find(m, 0x700010);
	ok(e && strcmp(e->path, "/bin/crlf") == 0, "CRLF stripped from the path");
	proc_maps__free(m);
	free(buf);
	proc_maps__free(NULL);
}

/* proc_maps__load_changed_fd: parsed only when the text's hash moved,
 * read again from its start through the one descriptor */
static void test_maps_changed(void)
{
	unsigned char b[200000];
	char empty[] = "/tmp/sidescope-test-maps.XXXXXX";
	struct proc_maps *m;
	uint64_t h = 0, h2 = 0;
	size_t i;
	int fd = proc_maps__open(4242), efd;

	ok(fd >= 0, "the maps opened");
	m = proc_maps__load_changed_fd(fd, 0, &h);
	ok(m && m->n == 8 && h, "the maps, first seen: loaded, with a hash");
	proc_maps__free(m);
	errno = EINVAL;
	m = proc_maps__load_changed_fd(fd, h, &h2);
	ok(!m && errno == 0 && h2 == h, "the same text again: not loaded, the same hash");
	m = proc_maps__load_changed_fd(fd, h ^ 2, &h2);
	ok(m && m->n == 8 && h2 == h, "a hash that differs: loaded, read from the start");
	proc_maps__free(m);
	if (fd >= 0)
		close(fd);
	is_int(proc_maps__open(4241), -ENOENT, "no such process: -ENOENT");
	/* what an exited process's maps read: nothing */
	efd = mkstemp(empty);
	m = efd >= 0 ? proc_maps__load_changed_fd(efd, h, &h2) : NULL;
	ok(efd >= 0 && !m && errno == ESRCH && h2 == 0, "no text (the process exited): ESRCH");
	if (efd >= 0) {
		close(efd);
		unlink(empty);
	}

	/* the word-wise hash: pieces of multiples of 8 bytes make the whole */
	for (i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)(i * 131 + (i >> 9));
	h = hash__words(b, sizeof(b));
	h2 = hash__u64(hash__more_words(hash__more_words(HASH_SEED, b, 65536), b + 65536,
					sizeof(b) - 65536));
	ok(h == h2, "hash__more_words over pieces is the hash of the whole");
	b[123457] ^= 0x80;
	ok(hash__words(b, sizeof(b)) != h, "one bit changed changes it");
	b[123457] ^= 0x80;
	ok(hash__words(b, sizeof(b) - 3) != h, "and so do fewer bytes");
}

/* The one target rule (proc__target_kind) and the words of
 * proc__check_target over it: a process, a thread, a kernel thread, a
 * zombie, nothing. */
static void test_target(void)
{
	struct proc_status st;
	struct err e;

	is_int(proc__target_kind(4242, &st), PROC_TARGET_OK, "a process is a target");
	is_int(proc__target_kind(77, &st), PROC_TARGET_OK, "a weird name is still a target");
	is_int(proc__target_kind(78, &st), PROC_TARGET_THREAD, "a thread is not");
	is_int(st.tgid, 77, "a thread's process is its Tgid");
	is_int(proc__target_kind(2, &st), PROC_TARGET_KTHREAD, "a kernel thread is not");
	is_int(proc__target_kind(79, &st), PROC_TARGET_EXITED, "a zombie is not");
	is_int(proc__target_kind(999999, &st), PROC_TARGET_NONE, "a missing PID is none");

	is_int(proc__check_target(4242, &e), 0, "check: a process");
	is_int(proc__check_target(78, &e), -ECHILD, "check: a thread, ECHILD");
	is_str(e.msg, "PID 78 is a thread (worker) of process 77 (a (weird) name), not a process; "
	       "use -p 77", "check: the thread's words");
	is_int(proc__check_target(2, &e), -EPERM, "check: a kernel thread, EPERM");
	is_str(e.msg, "PID 2 is a kernel thread (kthreadd): it has no user space (kernel work: "
	       "profile -a --kernel-only)", "check: the kernel thread's words");
	is_int(proc__check_target(79, &e), -ESRCH, "check: a zombie, ESRCH");
	is_str(e.msg, "PID 79 (gone) has exited", "check: the zombie's words");
	is_int(proc__check_target(999999, &e), -ESRCH, "check: nothing, ESRCH");
	is_str(e.msg, "no process with PID 999999 in this PID namespace (see 'sidescope ps')",
	       "check: the missing PID's words");
}

static void test_parse_numbers(void)
{
	uint64_t v;
	long l;
	pid_t *pids;

	is_int(parse_u64("99", 1, 100, &v), 0, "99 parses");
	is_int(parse_u64("0x10", 0, 100, &v), 0, "hex parses");
	is_int(v, 16, "hex value");
	is_int(parse_u64("101", 1, 100, &v), -ERANGE, "out of range");
	is_int(parse_u64("-1", 0, 100, &v), -EINVAL, "negative refused");
	is_int(parse_u64("12x", 0, 100, &v), -EINVAL, "trailing junk refused");
	is_int(parse_u64("", 0, 100, &v), -EINVAL, "empty refused");
	is_int(parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE, "overflow");
	is_int(parse_long("-5", -10, 10, &l), 0, "negative long");
	is_int(parse_pid_list("1,22,333", &pids), 3, "pid list");
	ok(pids && pids[2] == 333, "third pid");
	free(pids);
	ok(parse_pid_list("1,,x", &pids) < 0, "bad pid list refused");
	ok(parse_pid_list("0", &pids) < 0, "pid 0 refused");
}

int main(void)
{
	char root[4096];

	snprintf(root, sizeof(root), "%s", fixture("proc"));
	proc__set_root(root);
	test_status();
	test_stat();
	test_cmdline_cgroup();
	test_maps();
	test_maps_changed();
	test_target();
	test_parse_numbers();
	return done_testing();
}
