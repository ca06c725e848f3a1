// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/err.h"
#include "sym/elfsym.h"
#include "sym/gobin.h"
#include "uprobe/insn.h"
#include "core/proc.h"
#include "uprobe/uptarget.h"
#include "core/util.h"

static uptarget_pe_resolver_fn pe_resolver;

void uptarget__set_pe_resolver(uptarget_pe_resolver_fn fn)
{
	pe_resolver = fn;
}

/* "libNAME.so", "libNAME.so.6", "libNAME-2.31.so": the library NAME. */
static bool lib_matches(const char *base, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(base, name) == 0)
		return true;
	if (strncmp(base, "lib", 3) != 0 || strncmp(base + 3, name, n) != 0)
		return false;
	base += 3 + n;
	return strncmp(base, ".so", 3) == 0 && (base[3] == '\0' || base[3] == '.') ?
		true : base[0] == '-' && strstr(base, ".so") != NULL;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int is_file(const char *p)
{
	return access(p, R_OK) == 0;
}

/* Standard library directories, versioned sonames first ("libc.so" of a
 * -dev package may be a linker script). */
static int search_lib_dirs(const char *name, char *host, size_t size)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	char best[PATH_MAX] = "";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			char p[PATH_MAX];

			if (!lib_matches(e->d_name, name) || strcmp(e->d_name, name) == 0)
				continue;
			snprintf(p, sizeof(p), "%s/%s", dirs[i], e->d_name);
			if (!is_file(p))
				continue;
			/* prefer a versioned soname, then the shorter name */
			if (!best[0] ||
			    (strstr(base_name(best), ".so.") == NULL && strstr(e->d_name, ".so.")) ||
			    (!!strstr(base_name(best), ".so.") == !!strstr(e->d_name, ".so.") &&
			     strlen(e->d_name) < strlen(base_name(best))))
				snprintf(best, sizeof(best), "%s", p);
		}
		closedir(d);
		if (best[0])
			break;
	}
	if (!best[0])
		return -ENOENT;
	if (!realpath(best, host) || strlen(host) >= size)
		snprintf(host, size, "%s", best);
	return 0;
}

/* Open HOST (appfile__open: a /proc/PID/root path stays inside that root,
 * regular files only) into *FD; on failure say why in ERR. */
static int open_host(pid_t pid, const char *binary, const char *host, int *fd,
		     struct err *e)
{
	int err;

	*fd = appfile__open(host, 0, NULL);
	if (*fd >= 0)
		return 0;
	err = -*fd;
	*fd = -1;
	if (pid > 0)
		return err__set(e, err, "cannot open %s in the mount namespace of PID %d: %s%s",
				binary, (int)pid, appfile__strerror(err),
				err == EACCES || err == EPERM ?
				" (other users' processes need CAP_SYS_PTRACE; run 'doctor')" : "");
	return err__set(e, err, "cannot open %s: %s%s", binary, appfile__strerror(err),
			err == ENOENT ? " (a file of another container? add -p PID)" : "");
}

int uptarget__binary(pid_t pid, const char *binary, char *host, size_t size, int *fd,
		     struct err *e)
{
	int n;

	*fd = -1;
	if (binary[0] == '/') {
		n = pid > 0 ? snprintf(host, size, "%s/%d/root%s", proc__root(), (int)pid, binary) :
			snprintf(host, size, "%s", binary);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		return open_host(pid, binary, host, fd, e);
	}
	if (strchr(binary, '/')) {
		return err__set(e, EINVAL,
				"binary '%s' must be an absolute path or a library name such as 'c'",
				binary);
	}
	if (pid > 0) {
		struct proc_maps *m = proc_maps__load(pid);
		size_t i;

		if (!m) {
			int err = errno;

			return err__set(e, err, "cannot read the mappings of PID %d: %s%s", (int)pid,
					strerror(err), err == EACCES || err == EPERM ?
					" (other users' processes need CAP_SYS_PTRACE; run 'doctor')" : "");
		}
		for (i = 0; i < m->n; i++) {
			const char *p = m->maps[i].path;

			if (p[0] != '/' || strstr(p, " (deleted)"))
				continue;
			if (!lib_matches(base_name(p), binary))
				continue;
			n = snprintf(host, size, "%s/%d/root%s", proc__root(), (int)pid, p);
			proc_maps__free(m);
			if (n < 0 || (size_t)n >= size)
				return -ENAMETOOLONG;
			return open_host(pid, binary, host, fd, e);
		}
		proc_maps__free(m);
		return err__set(e, ENOENT, "PID %d has no library '%s' mapped (see /proc/%d/maps)",
				(int)pid, binary, (int)pid);
	}
	if (search_lib_dirs(binary, host, size)) {
		return err__set(e, ENOENT, "no library 'lib%s.so*' in the standard library "
				"directories (give an absolute path, or -p PID to search what a "
				"process has mapped)", binary);
	}
	return open_host(pid, binary, host, fd, e);
}

int uptarget__is_pe(int fd)
{
	unsigned char m[2];

	if (pread(fd, m, 2, 0) < 0)
		return -errno;
	return m[0] == 'M' && m[1] == 'Z';
}

/* The only function named SYMBOL in the ELF file at FD. */
static int elf_symbol(int fd, const char *host, const char *debug_root, const char *symbol,
		      uint64_t *file_offset, struct err *e)
{
	const struct elf_sym_info *hits[8];
	struct elf_syms *s;
	size_t n, i, len;
	int r = 0;

	s = elfsym__load_fd(fd, host, debug_root);
	if (!s) {
		int err = errno;

		return err__set(e, err, "cannot read symbols of %s: %s", host,
				err == ENOEXEC ? "not an ELF file" : strerror(err));
	}
	n = elfsym__count(s) ? elfsym__lookup_name(s, symbol, hits, ARRAY_SIZE(hits)) : 0;
	if (elfsym__count(s) == 0) {
		r = err__set(e, ESRCH, "%s has no symbol table (stripped, no debug file found); "
			     "give a file offset as BINARY:0xOFFSET", host);
	} else if (n == 0) {
		r = err__set(e, ESRCH, "no function '%s' in %s", symbol, host);
	} else {
		/* aliases (several names, one address) are one function */
		for (i = 1; i < n && i < ARRAY_SIZE(hits); i++)
			if (hits[i]->file_offset != hits[0]->file_offset)
				break;
		if (i < n) {
			r = err__set(e, EEXIST, "'%s' names %zu functions in %s; pick one by file "
				     "offset:", symbol, n, host);
			len = e ? strlen(e->msg) : sizeof(e->msg);
			for (i = 0; i < n && i < ARRAY_SIZE(hits) && len < sizeof(e->msg); i++)
				len += (size_t)snprintf(e->msg + len, sizeof(e->msg) - len, " 0x%llx",
							(unsigned long long)hits[i]->file_offset);
		} else {
			*file_offset = hits[0]->file_offset;
		}
	}
	elfsym__free(s);
	return r;
}

int uptarget__symbol(int fd, const char *host, const char *debug_root, const char *symbol,
		     uint64_t *file_offset, struct err *e)
{
	char self[64];
	int pe;

	pe = uptarget__is_pe(fd);
	if (pe < 0)
		return err__set(e, -pe, "cannot open %s: %s", host, strerror(-pe));
	if (!pe)
		return elf_symbol(fd, host, debug_root, symbol, file_offset, e);
	if (!pe_resolver)
		return err__set(e, ENOEXEC, "%s is a PE image (.NET assembly): method names need "
				"the ReadyToRun resolver, missing from this build; give the "
				"native code's file offset as BINARY:0xOFFSET", host);
	/* the resolver reads the very file opened here */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	err__clear(e);
	return pe_resolver(self, symbol, file_offset, e);
}

/* Whether FD is a 64-bit x86 ELF file: the only code insn decodes. */
static bool is_x86_64(int fd)
{
	unsigned char h[20];

	return pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && memcmp(h, "\177ELF", 4) == 0 &&
	       h[4] == 2 && h[5] == 1 && h[18] == 62 && h[19] == 0;
}

/* The function holding file offset OFF in the ELF file at FD, its code read
 * into *CODE (malloc'd) with its start's file offset in *START. Return 0,
 * or a negative errno with E saying why. */
static int function_code(int fd, const char *host, const char *debug_root, uint64_t off,
			 uint8_t **code, uint64_t *len, uint64_t *start, const char **name,
			 struct elf_syms **syms, struct err *e)
{
	const struct elf_sym_info *si;
	uint64_t addr, delta;
	struct elf_syms *s;
	ssize_t got;

	*code = NULL;
	s = elfsym__load_fd(fd, host, debug_root);
	if (!s) {
		int err = errno;

		return err__set(e, err, "cannot read symbols of %s: %s", host,
				err == ENOEXEC ? "not an ELF file" : strerror(err));
	}
	*syms = s;
	if (elfsym__count(s) == 0)
		return err__set(e, ESRCH, "%s has no symbol table: the function's bounds are unknown",
				host);
	if (elfsym__offset_to_addr(s, off, &addr) ||
	    !(si = elfsym__lookup_addr(s, addr, &delta)))
		return err__set(e, ESRCH, "no function of %s holds file offset 0x%llx", host,
				(unsigned long long)off);
	if (si->size == 0 || delta >= si->size)
		return err__set(e, ESRCH, "%s has no size in the symbol table of %s", si->name, host);
	if (si->size > INSN_MAX_CODE)
		return err__set(e, E2BIG, "%s is larger than %u bytes", si->name, INSN_MAX_CODE);
	*code = malloc(si->size);
	if (!*code)
		return err__set(e, ENOMEM, "out of memory");
	*start = off - delta;
	*len = si->size;
	*name = si->name;
	got = pread(fd, *code, si->size, (off_t)*start);
	if (got < 0 || (uint64_t)got != si->size)
		return err__set(e, EIO, "cannot read the code of %s in %s", si->name, host);
	return 0;
}

int uptarget__ret_sites(int fd, const char *host, const char *debug_root, uint64_t off,
			uint64_t **offs, size_t *n, size_t *jumps_out, struct err *e)
{
	struct elf_syms *syms = NULL;
	struct insn_scan sc = { 0 };
	struct err why = { 0 };
	const char *name = "";
	uint8_t *code = NULL;
	uint64_t len = 0, start = 0;
	int r;

	*offs = NULL;
	*n = 0;
	if (jumps_out)
		*jumps_out = 0;
	r = gobin__is_go(fd);
	if (r <= 0)
		return 0;	/* not Go (PE images and the like included) */
	if (!is_x86_64(fd))
		return err__set(e, ENOEXEC, "%s is Go code for another machine than x86-64, "
				"whose RET instructions cannot be found here: refusing a return "
				"probe (a uretprobe would kill a Go program)", host);
	r = function_code(fd, host, debug_root, off, &code, &len, &start, &name, &syms, &why);
	if (r) {
		r = err__set(e, -r, "%s is Go code, and its RETs cannot be found (%s): refusing "
			     "a return probe (a uretprobe would kill a Go program)", host, why.msg);
		goto cleanup;
	}
	r = insn__scan(code, len, start, &sc);
	if (r == -ENOEXEC)
		r = err__set(e, ENOEXEC, "%s is Go code and %s does not disassemble at +0x%llx: "
			     "refusing a return probe (a uretprobe would kill a Go program)",
			     name, host, (unsigned long long)(sc.bad_at - start));
	else if (r)
		r = err__set(e, -r, "%s is Go code and cannot be disassembled (%s): refusing a "
			     "return probe (a uretprobe would kill a Go program)", name,
			     r == -ENOSYS ? insn__why() : strerror(-r));
	else if (sc.nrets == 0)
		r = err__set(e, ENOENT, "%s is Go code with no RET instruction (it never returns, "
			     "or only by tail jumps): refusing a return probe (a uretprobe would "
			     "kill a Go program)", name);
	if (r)
		goto cleanup;
	*offs = sc.rets;
	*n = sc.nrets;
	sc.rets = NULL;
	if (jumps_out)
		*jumps_out = sc.njumps_out;
cleanup:
	free(sc.rets);
	free(code);
	elfsym__free(syms);
	return r;
}

int uptarget__check_offset(int fd, const char *host, const char *debug_root, uint64_t off,
			   struct err *e)
{
	struct elf_syms *syms = NULL;
	const char *name = "";
	uint8_t *code = NULL;
	uint64_t len = 0, start = 0, prev = 0, next = 0;
	struct err ignored;
	int r;

	if (uptarget__is_pe(fd) != 0 || !is_x86_64(fd))
		return 0;
	/* nothing known about the offset: the kernel decides */
	if (function_code(fd, host, debug_root, off, &code, &len, &start, &name, &syms,
			  &ignored)) {
		r = 0;
		goto cleanup;
	}
	r = insn__is_boundary(code, len, off - start, &prev, &next);
	if (r == 1 || r == -ENOEXEC || r == -ENOSYS) {
		r = 0;
	} else if (r == 0) {
		r = err__set(e, EINVAL, "file offset 0x%llx is inside an instruction of %s "
			     "(%s+0x%llx); the instructions around it start at +0x%llx and +0x%llx (see "
			     "'objdump -d')", (unsigned long long)off, name, name,
			     (unsigned long long)(off - start), (unsigned long long)prev,
			     (unsigned long long)next);
	} else {
		r = err__set(e, -r, "cannot check file offset 0x%llx of %s: %s",
			     (unsigned long long)off, host, strerror(-r));
	}
cleanup:
	free(code);
	elfsym__free(syms);
	return r;
}
