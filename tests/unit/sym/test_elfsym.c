// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* elfsym over real files: this test's own executable (PIE), libstdc++ (C++
 * names), a stripped copy with its debug file found by build id and by
 * .gnu_debuglink, and corrupt files. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/demangle.h"
#include "sym/elfsym.h"
#include "core/proc.h"
#include "core/util.h"
#include "tap.h"

__attribute__((noinline)) int elfsym_test_target(int x)
{
	return x * 3 + 1;
}

static char tmpdir[PATH_MAX];

/* File offset of a runtime address of this process. */
static int runtime_offset(uint64_t addr, uint64_t *off, char *path, size_t size)
{
	struct proc_maps *m = proc_maps__load(getpid());
	const struct proc_map *e;

	if (!m)
		return -1;
	e = proc_maps__find(m, addr);
	if (!e) {
		proc_maps__free(m);
		return -1;
	}
	*off = addr - e->start + e->offset;
	snprintf(path, size, "%s", e->path);
	proc_maps__free(m);
	return 0;
}

static int run(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		diag("command failed (%d): %s", rc, cmd);
	return rc;
}

static void test_self(void)
{
	const struct elf_sym_info *hits[4], *e;
	struct elf_syms *s;
	char exe[PATH_MAX];
	uint64_t off = 0, addr = 0, delta = 99;

	ok(runtime_offset((uintptr_t)elfsym_test_target, &off, exe, sizeof(exe)) == 0,
	   "our function is in a file mapping");
	s = elfsym__load("/proc/self/exe", "");
	ok(s != NULL, "load our own executable");
	if (!s)
		return;
	ok(elfsym__count(s) > 10, "it has function symbols (%zu)", elfsym__count(s));
	ok(elfsym__is_dyn(s), "PIE is ET_DYN");
	is_int(strlen(elfsym__build_id(s)), 40, "build id is 20 bytes of hex");
	ok(elfsym__offset_to_addr(s, off, &addr) == 0, "file offset maps to an ELF address");
	e = elfsym__lookup_addr(s, addr, &delta);
	is_str(e ? e->name : NULL, "elfsym_test_target", "address -> function name");
	is_int(delta, 0, "at the start of the function");
	e = elfsym__lookup_addr(s, addr + 2, &delta);
	is_str(e ? e->name : NULL, "elfsym_test_target", "inside the function");
	is_int(delta, 2, "delta inside");
	ok(elfsym__lookup_addr(s, 0x10, &delta) == NULL, "below every symbol: none");
	is_int(elfsym__lookup_name(s, "elfsym_test_target", hits, 4), 1, "name -> one symbol");
	is_int(hits[0]->file_offset, off, "name -> the file offset a uprobe needs");
	is_int(elfsym__lookup_name(s, "no_such_function_here", hits, 4), 0, "unknown name: none");
	elfsym__free(s);
	elfsym__free(NULL);
}

static void test_cxx(void)
{
	const struct elf_sym_info *hits[8], *e;
	/* mapped here to find it: a stripped C++ library */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	struct proc_maps *m = proc_maps__load(getpid());
	struct elf_syms *s = NULL;
	char *d;
	size_t i, n;

	for (i = 0; m && i < m->n; i++)
		if (strstr(m->maps[i].path, "libstdc++")) {
			s = elfsym__load(m->maps[i].path, "");
			break;
		}
	proc_maps__free(m);
	ok(s != NULL, "load libstdc++ (stripped, .dynsym only)");
	if (!s)
		goto out;
	n = elfsym__lookup_name(s, "std::exception::~exception", hits, 8);
	ok(n >= 1, "demangled name without parameters matches (%zu)", n);
	if (n < 1)
		goto out;
	e = elfsym__lookup_addr(s, hits[0]->addr, NULL);
	ok(e && strncmp(e->name, "_Z", 2) == 0, "lookup by address gives the raw mangled name");
	d = e ? demangle__name(e->name) : NULL;
	is_str(d, "std::exception::~exception()", "demangled");
	free(d);
	ok(elfsym__lookup_name(s, "std::exception::~exception()", hits, 8) >= 1,
	   "full demangled name matches");
	ok(demangle__name("main") == NULL, "a C name is not demangled");
	ok(demangle__name("_Zgarbage!") == NULL, "a bad mangled name is not demangled");
out:
	elfsym__free(s);
	if (cxx)
		dlclose(cxx);
}

static void test_aliases(void)
{
	const struct elf_sym_info *a[2], *b[2];
	struct proc_maps *m = proc_maps__load(getpid());
	struct elf_syms *s = NULL;
	size_t i;

	for (i = 0; m && i < m->n; i++)
		if (strstr(m->maps[i].path, "/libc.so")) {
			s = elfsym__load(m->maps[i].path, "");
			break;
		}
	proc_maps__free(m);
	ok(s != NULL, "load libc");
	if (!s)
		return;
	ok(elfsym__lookup_name(s, "malloc", a, 2) >= 1, "malloc found by name");
	ok(elfsym__lookup_name(s, "__libc_malloc", b, 2) >= 1, "its alias __libc_malloc too");
	ok(a[0] && b[0] && a[0]->addr == b[0]->addr, "both name one address");
	ok(elfsym__lookup_addr(s, a[0]->addr, NULL) != NULL, "the address names a symbol");
	elfsym__free(s);
}

static void test_debug_files(void)
{
	const struct elf_sym_info *hits[2];
	struct elf_syms *s, *full;
	char cmd[3 * PATH_MAX], path[PATH_MAX], root[PATH_MAX], id[128];

	full = elfsym__load("/proc/self/exe", "");
	if (!full)
		return;
	snprintf(id, sizeof(id), "%s", elfsym__build_id(full));
	elfsym__free(full);

	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/usr/lib/debug/.build-id/%.2s && "
		 "objcopy --only-keep-debug /proc/%d/exe %s/usr/lib/debug/.build-id/%.2s/%s.debug && "
		 "objcopy --strip-all /proc/%d/exe %s/stripped",
		 root, id, (int)getpid(), root, id, id + 2, (int)getpid(), tmpdir);
	if (run(cmd)) {
		ok(0, "make a stripped copy and its debug file");
		return;
	}
	snprintf(path, sizeof(path), "%s/stripped", tmpdir);
	s = elfsym__load(path, "");
	ok(s && elfsym__lookup_name(s, "elfsym_test_target", hits, 2) == 0,
	   "stripped copy alone lacks the function");
	elfsym__free(s);
	s = elfsym__load(path, root);
	ok(s && elfsym__lookup_name(s, "elfsym_test_target", hits, 2) == 1,
	   "debug file found by build id under the root");
	elfsym__free(s);

	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug /proc/%d/exe linked.debug && "
		 "objcopy --strip-all --add-gnu-debuglink=linked.debug /proc/%d/exe linked",
		 tmpdir, (int)getpid(), (int)getpid());
	if (run(cmd)) {
		ok(0, "make a stripped copy with a debuglink");
		return;
	}
	snprintf(path, sizeof(path), "%s/linked", tmpdir);
	s = elfsym__load(path, "");
	ok(s && elfsym__lookup_name(s, "elfsym_test_target", hits, 2) == 1,
	   "debug file found by .gnu_debuglink next to the file");
	elfsym__free(s);
}

static void test_corrupt(void)
{
	char cmd[2 * PATH_MAX], path[PATH_MAX];
	struct elf_syms *s;
	int i;
	static const char *const makers[] = {
		": > %s/bad",					/* empty */
		"head -c 64 /bin/true > %s/bad",		/* ELF header only */
		"head -c 3000 /bin/true > %s/bad",		/* cut mid-file */
		"printf 'not an elf file at all' > %s/bad",	/* text */
		"head -c 4096 /dev/urandom > %s/bad",		/* noise */
	};

	snprintf(path, sizeof(path), "%s/bad", tmpdir);
	for (i = 0; i < (int)ARRAY_SIZE(makers); i++) {
		snprintf(cmd, sizeof(cmd), makers[i], tmpdir);
		if (run(cmd)) {
			ok(0, "make corrupt file %d", i);
			continue;
		}
		errno = 0;
		s = elfsym__load(path, "");
		/* truncated files may still parse as ELF with nothing usable */
		ok(s == NULL ? errno == ENOEXEC : elfsym__count(s) == 0,
		   "corrupt file %d: clear error or empty table, no crash", i);
		elfsym__free(s);
	}
	errno = 0;
	ok(elfsym__load("/nonexistent/file", "") == NULL && errno == ENOENT, "missing file: ENOENT");
}

/* The packed form kept between captures: the same answers after a round
 * trip; every damaged or cut copy refused, none read past its end. */
static void test_pack(void)
{
	const struct elf_sym_info *hits[4], *e;
	struct elf_syms *s, *u;
	uint64_t off = 0, addr = 0, delta = 0;
	char exe[PATH_MAX];
	unsigned char *bad;
	size_t len, i, refused = 0, tries = 0;
	void *buf = NULL;

	s = elfsym__load("/proc/self/exe", "");
	if (!s || runtime_offset((uintptr_t)elfsym_test_target, &off, exe, sizeof(exe))) {
		ok(0, "load our own executable to pack");
		elfsym__free(s);
		return;
	}
	ok(elfsym__complete(s), "our executable has a full symbol table");
	is_int(elfsym__pack(s, &buf, &len), 0, "packed (%zu bytes)", len);
	u = buf ? elfsym__unpack(buf, len) : NULL;
	ok(u != NULL, "unpacked");
	if (!u) {
		free(buf);
		elfsym__free(s);
		return;
	}
	is_int(elfsym__count(u), elfsym__count(s), "the same number of symbols");
	is_str(elfsym__build_id(u), elfsym__build_id(s), "the same build id");
	ok(elfsym__is_dyn(u) && elfsym__complete(u), "ET_DYN and a full table, still");
	ok(elfsym__offset_to_addr(u, off, &addr) == 0, "its segments: offset -> address");
	e = elfsym__lookup_addr(u, addr + 2, &delta);
	is_str(e ? e->name : NULL, "elfsym_test_target", "address -> name");
	is_int(delta, 2, "and the delta");
	ok(elfsym__lookup_name(u, "elfsym_test_target", hits, 4) == 1 &&
	   hits[0]->file_offset == off, "name -> file offset");
	elfsym__free(u);

	bad = malloc(len);
	for (i = 0; bad && i < len; i += 1 + i / 8) {
		/* cut short */
		tries++;
		u = elfsym__unpack(buf, i);
		refused += u == NULL;
		elfsym__free(u);
	}
	ok(bad && refused == tries, "every copy cut short refused (%zu of %zu)", refused, tries);
	/* the header's magic and counts, each set wrong */
	for (i = 0, refused = 0, tries = 0; bad && i < 24; i += 4) {
		memcpy(bad, buf, len);
		memset(bad + i, 0xff, 4);
		tries++;
		u = elfsym__unpack(bad, len);
		refused += u == NULL;
		elfsym__free(u);
	}
	ok(bad && refused == tries, "a damaged header refused (%zu of %zu)", refused, tries);
	if (bad) {
		/* the symbols (address, size, name offset: 24 bytes each)
		 * after the 176-byte header and the segments (24 bytes each,
		 * their count at byte 12) */
		uint32_t nsegs;
		size_t at;
		uint64_t v;

		memcpy(&nsegs, (char *)buf + 12, sizeof(nsegs));
		at = 176 + (size_t)nsegs * 24;
		memcpy(bad, buf, len);
		v = ~0ull;
		memcpy(bad + at + 16, &v, sizeof(v));
		u = elfsym__unpack(bad, len);
		ok(u == NULL && errno == EINVAL, "a name past the names refused");
		elfsym__free(u);
		memcpy(bad, buf, len);
		memcpy(bad + at + 24, &v, sizeof(v));	/* the second symbol's address */
		u = elfsym__unpack(bad, len);
		ok(u == NULL && errno == EINVAL, "addresses out of order refused");
		elfsym__free(u);
		memcpy(bad, buf, len);
		bad[len - 1] = 'x';
		u = elfsym__unpack(bad, len);
		ok(u == NULL && errno == EINVAL, "names without their last NUL refused");
		elfsym__free(u);
	}
	free(bad);
	free(buf);
	elfsym__free(s);
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sidescope-elfsym.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	ok(elfsym_test_target(1) == 4, "target function runs");
	test_self();
	test_cxx();
	test_aliases();
	test_debug_files();
	test_corrupt();
	test_pack();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	run(cmd);
	return done_testing();
}
