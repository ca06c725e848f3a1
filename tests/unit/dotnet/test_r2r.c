// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ReadyToRun reader over a small image crossgen2 built from
 * tests/data/r2r/R2RSample (see the Makefile), over truncated and corrupted
 * copies of it made here, and over the installed System.Private.CoreLib.dll.
 *
 * The sample's path: $SIDESCOPE_R2R_SAMPLE, else
 * $SIDESCOPE_BUILD/r2r/publish/R2RSample.dll (its IL-only twin beside it as
 * r2r/R2RSample.il.dll). CoreLib: $SIDESCOPE_CORELIB, else the newest
 * /usr/share/dotnet/shared/Microsoft.NETCore.App/ ... wherever dotnet is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corelib.h"
#include "dotnet/r2r.h"
#include "tap.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char sample[PATH_MAX], il_only[PATH_MAX], tmpdir[PATH_MAX];
/* why the last r2r__open failed */
static struct err open_err;

static void skip_all(const char *why)
{
	const char *req = getenv("SIDESCOPE_REQUIRE_ALL");

	if (req && strcmp(req, "1") == 0) {
		printf("1..1\nnot ok 1 - required but unavailable: %s\n", why);
		exit(1);
	}
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

static int slurp(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf || read(fd, *buf, *len) != (ssize_t)*len) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int spit(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == (ssize_t)len;
	return close(fd) == 0 && ok ? 0 : -1;
}

/* exactly one method called NAME; NULL-safe name in failures */
static struct r2r_method_info one(struct r2r_image *img, const char *name)
{
	struct r2r_method_info m[4];
	size_t n = r2r__find_method(img, name, m, 4);

	if (!ok(n == 1, "'%s' names exactly one method", name)) {
		diag("got %zu", n);
		memset(&m[0], 0, sizeof(m[0]));
		m[0].name = "";
		m[0].signature = "";
	}
	return m[0];
}

/* The code at a leaf method's file offset ends in 'ret' (0xc3): proof that
 * RVA -> file offset and the size are right, read from the file itself. */
static void check_leaf_code(const unsigned char *file, size_t len,
			    const struct r2r_method_info *m)
{
	ok(m->size > 0 && m->file_offset + m->size <= len &&
	   file[m->file_offset + m->size - 1] == 0xc3,
	   "%s: code at file offset 0x%llx (size %u) ends in ret", m->name,
	   (unsigned long long)m->file_offset, m->size);
}

static void test_sample(void)
{
	struct r2r_method_info all[8], m;
	struct r2r_image *img;
	unsigned char *file = NULL;
	size_t len = 0, n, funclets = 0;
	unsigned major, minor;
	uint32_t rva;
	const char *name;
	uint32_t start, size;

	img = r2r__open(sample, &open_err);
	if (!ok(img != NULL, "open the sample R2R image")) {
		diag("%s: %s", sample, open_err.msg);
		return;
	}
	ok(slurp(sample, &file, &len) == 0, "read the sample image");
	r2r__version(img, &major, &minor);
	ok(major >= 5, "ReadyToRun version %u.%u", major, minor);
	is_int(r2r__machine(img), 0x8664, "machine is x64 (OS bits removed)");
	ok(r2r__method_count(img) >= 16, "%zu methods with code", r2r__method_count(img));

	/* static method, full name */
	m = one(img, "SampleApp.EchoProvider.Echo");
	is_str(m.name, "SampleApp.EchoProvider.Echo", "Echo: name");
	is_str(m.signature, "(System.String)", "Echo: signature");
	ok(m.is_static, "Echo is static (string in arg1)");
	ok(!m.instantiation, "Echo is not a generic instantiation");
	is_int(m.token >> 24, 0x06, "Echo: MethodDef token");
	ok(r2r__rva_from_file_offset(img, m.file_offset, &rva) == 0 && rva == m.rva,
	   "Echo: file offset 0x%llx maps back to RVA 0x%x",
	   (unsigned long long)m.file_offset, m.rva);

	/* instance method */
	m = one(img, "SampleApp.EchoProvider.EchoInstance");
	ok(!m.is_static && m.token, "EchoInstance is an instance method (this in arg1)");

	/* overloads: all listed; a parameter list picks one */
	n = r2r__find_method(img, "SampleApp.EchoProvider.Add", all, 8);
	is_int(n, 3, "Add: three overloads listed");
	for (size_t i = 0; i < n && i < 8; i++) {
		is_str(all[i].name, "SampleApp.EchoProvider.Add", "Add overload %zu: name", i);
		check_leaf_code(file, len, &all[i]);
	}
	is_int(r2r__find_method(img, "SampleApp.EchoProvider.Add", all, 1), 3,
	       "the count is the total even when MAX is smaller");
	m = one(img, "SampleApp.EchoProvider.Add(System.Int64,System.Int64)");
	is_str(m.signature, "(System.Int64,System.Int64)", "parameter list selects one overload");
	is_int(r2r__find_method(img, "SampleApp.EchoProvider.Add(System.String)", all, 8), 0,
	       "a parameter list that fits no overload matches none");
	/* Add(int, int) compiles to lea eax,[rdi+rsi]; ret */
	m = one(img, "SampleApp.EchoProvider.Add(System.Int32,System.Int32)");
	ok(m.size == 4 && m.file_offset + 4 <= len &&
	   memcmp(file + m.file_offset, "\x8d\x04\x37\xc3", 4) == 0,
	   "Add(int,int) at its file offset is 'lea eax,[rdi+rsi]; ret'");

	/* nested types: '+' in names, '.' accepted in lookups */
	m = one(img, "SampleApp.EchoProvider+Inner+Innermost.Twice");
	is_str(m.name, "SampleApp.EchoProvider+Inner+Innermost.Twice", "nested type joined by '+'");
	ok(!m.is_static, "Twice is an instance method");
	check_leaf_code(file, len, &m);
	m = one(img, "SampleApp.EchoProvider.Inner.Innermost.Twice");
	is_str(m.name, "SampleApp.EchoProvider+Inner+Innermost.Twice", "'.' between nested types");
	m = one(img, "SampleApp.EchoProvider+Inner.Depth");
	ok(m.is_static, "Inner.Depth is static");

	/* value type, deeper namespace, suffix lookup */
	m = one(img, "SampleApp.Point.Sum");
	check_leaf_code(file, len, &m);
	m = one(img, "Fibonacci.Compute");
	is_str(m.name, "SampleApp.Deep.Names.Fibonacci.Compute", "suffix lookup finds the full name");
	is_int(r2r__find_method(img, "ibonacci.Compute", all, 8), 0,
	       "a suffix must start at a name boundary");
	is_int(r2r__find_method(img, "SampleApp.Nope.Missing", all, 8), 0, "unknown name: none");
	is_int(r2r__find_method(img, "SampleApp.EchoProvider.JitOnly", all, 8), 0,
	       "a method left to the JIT has no code");

	/* generic method: one body per instantiation, named */
	n = r2r__find_method(img, "SampleApp.Generics.Identity", all, 8);
	is_int(n, 2, "Identity<T>: two instantiations (int and shared reference code)");
	for (size_t i = 0; i < n && i < 8; i++) {
		ok(all[i].instantiation, "%s is an instantiation", all[i].name);
		check_leaf_code(file, len, &all[i]);
	}
	m = one(img, "SampleApp.Generics.Identity[System.Int32]");
	is_str(m.name, "SampleApp.Generics.Identity[System.Int32]", "instantiation over int named");
	is_str(m.signature, "(System.Int32)", "method type parameter replaced in the signature");
	m = one(img, "SampleApp.Generics.Identity(System.Int32)");
	is_str(m.name, "SampleApp.Generics.Identity[System.Int32]",
	       "an instantiation picked by its parameter list");
	m = one(img, "SampleApp.Generics.Identity[System.__Canon]");
	is_str(m.name, "SampleApp.Generics.Identity[System.__Canon]", "shared instantiation named");
	m = one(img, "SampleApp.Generics.CountAll");
	is_str(m.signature, "(System.Collections.Generic.List`1[System.Int32])",
	       "generic type from another assembly in a signature");

	/* funclets: several code ranges, one method */
	m = one(img, "SampleApp.EchoProvider.Guarded");
	ok(m.nbodies >= 3, "Guarded has a main body and funclets (%u code ranges)", m.nbodies);
	for (size_t i = 0; i < r2r__code_range_count(img); i++) {
		uint32_t b, e;

		if (r2r__code_range_at(img, i, &b, &e) || b == m.rva)
			continue;
		if (r2r__lookup_rva(img, b, &name, &start, &size) == 0 &&
		    strcmp(name, "SampleApp.EchoProvider.Guarded") == 0) {
			funclets++;
			ok(start == b && size == e - b && b > m.rva,
			   "funclet at 0x%x (after the main body) names Guarded", b);
		}
	}
	is_int(funclets + 1, m.nbodies, "every funclet of Guarded found by RVA");

	/* RVA -> method for every method, at its start, middle and last byte */
	n = r2r__method_count(img);
	{
		size_t good = 0;

		for (size_t i = 0; i < n; i++) {
			struct r2r_method_info mi;
			bool fine = r2r__method_at(img, i, &mi) == 0;

			for (uint32_t d = 0; fine && d < 3; d++) {
				uint32_t at = mi.rva + (d == 0 ? 0 : d == 1 ? mi.size / 2 : mi.size - 1);

				fine = r2r__lookup_rva(img, at, &name, &start, &size) == 0 &&
				       strcmp(name, mi.name) == 0 && start == mi.rva &&
				       size == mi.size;
			}
			good += fine;
		}
		is_int(good, n, "RVA -> name at start, middle and end of all %zu methods", n);
	}
	ok(r2r__lookup_rva(img, 0, &name, NULL, NULL) == -ENOENT, "RVA 0: no method");
	ok(r2r__lookup_rva(img, 0xfffffff0u, &name, NULL, NULL) == -ENOENT,
	   "RVA past the image: no method");
	ok(r2r__method_at(img, n, &m) == -ERANGE, "method_at past the end: -ERANGE");
	ok(r2r__rva_from_file_offset(img, (uint64_t)len + 4096, &rva) == -ENOENT,
	   "file offset past the end: -ENOENT");
	free(file);
	r2r__free(img);
}

/* the adapters the profiler's and the uprobe resolver's hooks take */
static void test_hooks(void)
{
	struct err re;
	char *msg = re.msg, name[256];
	uint64_t off = 0;
	void *pe;
	struct r2r_image *img = r2r__open(sample, &open_err);
	struct r2r_method_info m;

	if (!ok(img != NULL, "open the sample for the hook tests"))
		return;
	m = one(img, "SampleApp.EchoProvider.Echo");
	r2r__free(img);

	is_int(r2r__uprobe_resolve(sample, "SampleApp.EchoProvider.Echo", &off, &re),
	       0, "uprobe resolver: Echo resolves");
	is_int(off, m.file_offset, "uprobe resolver: Echo's file offset");
	ok(strstr(msg, "static method") != NULL, "uprobe resolver says Echo is static: %s", msg);
	is_int(r2r__uprobe_resolve(sample, "SampleApp.EchoProvider.Add", &off, &re),
	       -EEXIST, "uprobe resolver: overloads are ambiguous");
	ok(strstr(msg, "Add(System.Int32,System.Int32)") &&
	   strstr(msg, "Add(System.Int64,System.Int64)"),
	   "uprobe resolver lists the overloads");
	is_int(r2r__uprobe_resolve(sample, "Nope.Nothing", &off, &re), -ENOENT,
	       "uprobe resolver: unknown method");
	ok(strstr(msg, "dotnet-methods") != NULL, "uprobe resolver: hint to list methods");
	/* AggressiveOptimization: in the metadata, never precompiled */
	is_int(r2r__uprobe_resolve(sample, "SampleApp.EchoProvider.JitOnly", &off, &re), -ENOENT,
	       "uprobe resolver: a method without precompiled code");
	ok(strstr(msg, "no precompiled code") != NULL, "uprobe resolver says it has no code: %s",
	   msg);
	is_int(r2r__uprobe_resolve(il_only, "SampleApp.EchoProvider.Echo", &off, &re),
	       -ENOEXEC, "uprobe resolver: IL-only image");
	ok(strstr(msg, "IL-only") != NULL, "uprobe resolver says why: %s", msg);

	pe = r2r__pe_open(sample);
	ok(pe != NULL, "profiler hook: open");
	ok(r2r__pe_lookup(pe, m.file_offset + 1, name, sizeof(name)) == 0 &&
	   strcmp(name, "SampleApp.EchoProvider.Echo") == 0,
	   "profiler hook: file offset inside Echo names it");
	ok(r2r__pe_lookup(pe, 0, name, sizeof(name)) == -ENOENT,
	   "profiler hook: the PE header is no method");
	r2r__pe_close(pe);
	ok(r2r__pe_open(il_only) == NULL, "profiler hook: IL-only image is not opened");
	r2r__pe_close(NULL);
}

static void expect_fail(const char *path, int want_errno, const char *want_msg, const char *what)
{
	struct r2r_image *img;

	errno = 0;
	img = r2r__open(path, &open_err);
	if (!ok(img == NULL && errno == want_errno && strstr(open_err.msg, want_msg),
		"%s: fails with %s", what, strerror(want_errno)))
		diag("errno %d, message '%s'", errno, open_err.msg);
	else
		diag("%s: %s", what, open_err.msg);
	r2r__free(img);
}

static void test_bad_files(void)
{
	char path[PATH_MAX + 32];
	unsigned char *file, *copy;
	size_t len, clean = 0, failed = 0, survived = 0;
	unsigned seed = 12345;
	struct r2r_image *img;
	size_t want_methods;

	expect_fail(il_only, ENOEXEC, "IL-only", "IL-only assembly");
	expect_fail("/nonexistent/x.dll", ENOENT, "cannot open", "missing file");
	expect_fail(tmpdir, ENOEXEC, "not a regular file", "directory");
	snprintf(path, sizeof(path), "%s/text.dll", tmpdir);
	spit(path, (const unsigned char *)"hello, world\n", 13);
	expect_fail(path, ENOEXEC, "not a PE file", "text file");
	spit(path, (const unsigned char *)"", 0);
	expect_fail(path, ENOEXEC, "empty", "empty file");
	if (access("/bin/true", R_OK) == 0)
		expect_fail("/bin/true", ENOEXEC, "not a PE file", "ELF file");

	if (!ok(slurp(sample, &file, &len) == 0 && len > 1024, "read the sample for corruption"))
		return;
	img = r2r__open(sample, &open_err);
	want_methods = img ? r2r__method_count(img) : 0;
	r2r__free(img);
	copy = malloc(len);

	/* targeted damage, with the message it must give */
	{
		uint32_t pe = (uint32_t)file[0x3c] | (uint32_t)file[0x3d] << 8;
		unsigned char *p;

		memcpy(copy, file, len);
		copy[0x3c] = 0xf0, copy[0x3d] = 0xff, copy[0x3e] = 0xff, copy[0x3f] = 0x7f;
		spit(path, copy, len);
		expect_fail(path, ENOEXEC, "no PE signature", "e_lfanew past the end");

		memcpy(copy, file, len);
		copy[pe + 6] = 0xff, copy[pe + 7] = 0xff;	/* NumberOfSections */
		spit(path, copy, len);
		expect_fail(path, ENOEXEC, "section table", "65535 sections");

		memcpy(copy, file, len);
		p = memmem(copy, len, "BSJB", 4);
		if (p)
			p[0] = 'X';
		spit(path, copy, len);
		expect_fail(path, ENOEXEC, "metadata signature", "bad metadata signature");

		memcpy(copy, file, len);
		p = memmem(copy, len, "RTR\0", 4);
		if (p)
			p[0] = 'X';
		spit(path, copy, len);
		expect_fail(path, ENOEXEC, "ReadyToRun header signature", "bad R2R signature");
	}

	/* every truncation: a clear error, never a crash */
	for (size_t cut = 0; cut < len; cut += cut < 1024 ? 1 : 61) {
		spit(path, file, cut);
		errno = 0;
		img = r2r__open(path, &open_err);
		if (!img && errno == ENOEXEC && open_err.msg[0]) {
			failed++;
		} else if (img && r2r__method_count(img) == want_methods) {
			survived++;	/* only trailing bytes cut */
		} else {
			diag("cut at %zu: img %p errno %d '%s'", cut, (void *)img, errno,
			     open_err.msg);
			clean++;
		}
		r2r__free(img);
	}
	is_int(clean, 0, "truncated copies: %zu clear errors, %zu complete, 0 other",
	       failed, survived);
	ok(failed > 1000, "most truncations are refused");

	/* random damage: open, then use everything the image offers */
	failed = survived = 0;
	for (int round = 0; round < 3000; round++) {
		int flips = 1 + (int)(rand_r(&seed) % 8);

		memcpy(copy, file, len);
		for (int f = 0; f < flips; f++) {
			/* the headers and metadata are the small front of the file */
			size_t at = rand_r(&seed) % (round % 2 ? len : (len < 4096 ? len : 4096));

			copy[at] = (unsigned char)rand_r(&seed);
		}
		spit(path, copy, len);
		errno = 0;
		img = r2r__open(path, &open_err);
		if (!img) {
			if (errno == ENOEXEC && open_err.msg[0])
				failed++;
			else
				clean++;
			continue;
		}
		survived++;
		for (size_t i = 0; i < r2r__method_count(img); i++) {
			struct r2r_method_info mi, hits[2];
			const char *nm;

			r2r__method_at(img, i, &mi);
			r2r__find_method(img, mi.name, hits, 2);
			r2r__lookup_rva(img, mi.rva, &nm, NULL, NULL);
		}
		for (size_t i = 0; i < r2r__code_range_count(img); i++) {
			uint32_t b, e;
			const char *nm;

			r2r__code_range_at(img, i, &b, &e);
			r2r__lookup_rva(img, b, &nm, NULL, NULL);
		}
		r2r__free(img);
	}
	is_int(clean, 0, "3000 corrupted copies: %zu refused clearly, %zu opened and walked",
	       failed, survived);
	free(copy);
	free(file);
}

static void test_corelib(void)
{
	static const char *const known[] = {
		"System.String.Concat",
		"System.String.IndexOf",
		"System.Math.Max",
		"System.Collections.Generic.List`1.Add",
		"System.Collections.Generic.Dictionary`2.TryInsert",
		"System.Threading.Tasks.Task.Wait",
		"System.Text.StringBuilder.Append",
		"System.SpanHelpers.IndexOfChar",
		"System.Number.FormatInt32",
	};
	struct r2r_method_info m[4];
	char path[PATH_MAX];
	struct r2r_image *img;
	struct timespec t0, t1;
	size_t n, sampled = 0, named = 0;
	double ms;

	if (find_corelib(path, sizeof(path))) {
		const char *req = getenv("SIDESCOPE_REQUIRE_ALL");

		ok(!(req && strcmp(req, "1") == 0), "System.Private.CoreLib.dll found "
		   "(set SIDESCOPE_CORELIB)");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	img = r2r__open(path, &open_err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!ok(img != NULL, "open %s", path)) {
		diag("%s", open_err.msg);
		return;
	}
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	diag("CoreLib: %zu methods, %zu code ranges, indexed in %.1f ms",
	     r2r__method_count(img), r2r__code_range_count(img), ms);
	ok(r2r__method_count(img) > 10000, "CoreLib has many methods with code");
	for (size_t i = 0; i < ARRAY_LEN(known); i++) {
		const char *nm;

		n = r2r__find_method(img, known[i], m, 4);
		if (!ok(n >= 1, "CoreLib: %s found (%zu bodies)", known[i], n))
			continue;
		ok(r2r__lookup_rva(img, m[0].rva + m[0].size / 2, &nm, NULL, NULL) == 0 &&
		   strcmp(nm, m[0].name) == 0, "CoreLib: middle of %s names it", m[0].name);
	}
	n = r2r__find_method(img, "System.Collections.Generic.List`1[System.Int32].Add", m, 4);
	ok(n == 1 && strcmp(m[0].signature, "(System.Int32)") == 0,
	   "CoreLib: type parameter replaced in List<int>.Add's signature");
	ok(n == 1 && strcmp(m[0].name, "System.Collections.Generic.List`1[System.Int32].Add") == 0,
	   "CoreLib: the List<int>.Add instantiation has its own body");

	/* RVA -> name over a sample of code ranges, at an inner address */
	n = r2r__code_range_count(img);
	for (size_t i = 0; i < n; i += 7) {
		uint32_t b, e, start, size;
		const char *nm;

		if (r2r__code_range_at(img, i, &b, &e))
			continue;
		sampled++;
		if (r2r__lookup_rva(img, b + (e - b) / 2, &nm, &start, &size) == 0 &&
		    start == b && size == e - b && nm[0])
			named++;
	}
	diag("CoreLib: RVA -> name resolved %zu of %zu sampled code ranges (%.2f%%)",
	     named, sampled, sampled ? 100.0 * (double)named / (double)sampled : 0.0);
	ok(sampled > 1000 && named * 1000 >= sampled * 999,
	   "CoreLib: at least 99.9%% of sampled code ranges named");
	r2r__free(img);
}

/* Sample the instruction pointer of the running sample (ptrace of our own
 * child) and name it the way the profiler does: mapping -> file offset ->
 * image from the cache -> method. Proves that the runtime executes the
 * precompiled code from the mapped file and that the names come out. */
static void test_live(void)
{
	char ready[PATH_MAX + 32];
	struct r2r_cache *cache = NULL;
	int samples = 0, in_dll = 0, named = 0, compute = 0;
	pid_t child;
	long waited;

	snprintf(ready, sizeof(ready), "%s/ready", tmpdir);
	child = fork();
	if (child == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		/* keep the precompiled bodies in use: no tiering, no rejit */
		setenv("DOTNET_TieredCompilation", "0", 1);
		setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
		execlp(getenv("DOTNET") ? getenv("DOTNET") : "dotnet", "dotnet", sample, "spin",
		       ready, (char *)NULL);
		_exit(127);
	}
	if (!ok(child > 0, "start the sample under dotnet"))
		return;
	/* the child writes the file (atomically, by rename) once it runs */
	for (waited = 0; access(ready, R_OK) != 0 && waited < 30000; waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		int st;

		if (waitpid(child, &st, WNOHANG) == child) {
			child = -1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (child < 0 || access(ready, R_OK) != 0) {
		const char *req = getenv("SIDESCOPE_REQUIRE_ALL");

		ok(!(req && strcmp(req, "1") == 0), "# skip live test: the sample did not "
		   "start under dotnet (is the .NET runtime installed?)");
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		return;
	}
	cache = r2r_cache__new();
	for (int k = 0; k < 200 && cache; k++) {
		struct user_regs_struct regs;
		char maps[64], line[1024], path[PATH_MAX], found[PATH_MAX] = "";
		unsigned long s, e, o, off = 0;
		struct r2r_image *img;
		const char *name;
		FILE *f;
		int st;

		if (ptrace(PTRACE_SEIZE, child, 0, 0) != 0)
			break;
		if (ptrace(PTRACE_INTERRUPT, child, 0, 0) != 0 ||
		    waitpid(child, &st, __WALL) != child ||
		    ptrace(PTRACE_GETREGS, child, 0, &regs) != 0) {
			ptrace(PTRACE_DETACH, child, 0, 0);
			break;
		}
		ptrace(PTRACE_DETACH, child, 0, 0);
		samples++;
		{
			/* a sampling interval, as a profiler has one */
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)child);
		f = fopen(maps, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &s, &e, &o, path) == 4 &&
			    regs.rip >= s && regs.rip < e) {
				snprintf(found, sizeof(found), "%s", path);
				off = regs.rip - s + o;
				break;
			}
		}
		if (f)
			fclose(f);
		if (strlen(found) < 4 || strcmp(found + strlen(found) - 4, ".dll") != 0) {
			if (getenv("R2R_DEBUG"))
				diag("sample %d at %llx in %s", k, (unsigned long long)regs.rip, found);
			continue;
		}
		in_dll++;
		img = r2r_cache__get(cache, found, NULL);
		if (img && r2r__lookup_file_offset(img, off, &name, NULL, NULL) == 0) {
			named++;
			compute += strcmp(name, "SampleApp.Deep.Names.Fibonacci.Compute") == 0;
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	r2r_cache__free(cache);
	diag("live: %d samples, %d in .dll mappings, %d named, %d in Fibonacci.Compute",
	     samples, in_dll, named, compute);
	ok(samples == 200, "sampled the running sample 200 times");
	/* the rest is in the runtime's call thunks (anonymous executable
	 * memory, named by the perf map when it is on) */
	ok(in_dll >= samples / 4, "many samples run precompiled code from a mapped .dll");
	is_int(named, in_dll, "every sample in a .dll mapping is named");
	ok(compute * 10 >= in_dll * 9, "nearly all are in SampleApp.Deep.Names.Fibonacci.Compute");
}

int main(void)
{
	const char *env = getenv("SIDESCOPE_R2R_SAMPLE");
	const char *build = getenv("SIDESCOPE_BUILD");
	char *slash;

	if (env && *env)
		snprintf(sample, sizeof(sample), "%s", env);
	else
		snprintf(sample, sizeof(sample), "%s/r2r/publish/R2RSample.dll",
			 build ? build : "build");
	snprintf(il_only, sizeof(il_only), "%s", sample);
	slash = strrchr(il_only, '/');
	if (slash && slash - il_only > 8 && strncmp(slash - 8, "/publish", 8) == 0)
		snprintf(slash - 8, sizeof(il_only) - (size_t)(slash - 8 - il_only),
			 "/R2RSample.il.dll");
	if (access(sample, R_OK) != 0 || access(il_only, R_OK) != 0)
		skip_all("no R2R sample image (needs the .NET SDK: make builds it)");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_r2r.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_sample();
	test_hooks();
	test_bad_files();
	test_corelib();
	test_live();
	{
		char p[PATH_MAX + 32];

		snprintf(p, sizeof(p), "%s/text.dll", tmpdir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/ready", tmpdir);
		unlink(p);
		rmdir(tmpdir);
	}
	return done_testing();
}
