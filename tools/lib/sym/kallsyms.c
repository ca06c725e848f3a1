// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/kallsyms: "ADDR TYPE NAME [MODULE]" a line. Names and modules point
 * into the file's buffer; entries are sorted once by address.
 *
 * The running kernel is asked one address at a time instead, when it can
 * be: bpf/ksym.bpf.c formats the address with the kernel's "%pS". Reading
 * the whole of /proc/kallsyms costs tens of milliseconds of system time
 * (the kernel formats every symbol, ~120,000 of them), far more than the
 * rest of a short capture; a profile needs a few hundred names. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sym/kallsyms.h"
#include "ksym.h"
#include "ksym.skel.h"
#include "core/util.h"

struct ks_entry {
	uint64_t addr;
	const char *name;
	const char *module;
};

/* One address the kernel was asked about. */
struct ks_asked {
	uint64_t addr;	/* 0: empty slot */
	char *name;	/* NULL: no symbol there; then the module */
	const char *module;
	uint64_t delta;
};

/* The running kernel, asked address by address; the whole file read
 * instead once asking fails. */
struct ks_live {
	struct ksym_bpf *skel;
	struct ks_asked *slots;	/* open addressing, at most half full */
	size_t cap, n;
	struct kallsyms *file;
	bool failed;
};

struct kallsyms {
	char *buf;
	struct ks_entry *e;
	size_t n;
	size_t zero;	/* symbols read with address 0 */
	size_t lines;
	struct ks_live *live;	/* NULL: a file read whole */
};

static int cmp_ks(const void *a, const void *b)
{
	const struct ks_entry *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct kallsyms *kallsyms__parse(char *buf, size_t len)
{
	struct kallsyms *ks;
	char *line = buf, *end = buf + len;
	size_t cap = 0;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(buf);
		return NULL;
	}
	ks->buf = buf;
	while (line < end) {
		char *nl = memchr(line, '\n', end - line), *eol = nl ? nl : end;
		char *p = line, *name, *mod = "", *q;
		uint64_t addr = 0;
		char type;

		*eol = '\0';
		line = nl ? nl + 1 : end;
		ks->lines++;
		while (*p && *p != ' ') {
			char c = *p++;
			int d = c >= '0' && c <= '9' ? c - '0' :
				c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (d < 0)
				goto next;
			addr = addr << 4 | (uint64_t)d;
		}
		if (*p != ' ' || !p[1] || p[2] != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		q = strchr(name, '\t');
		if (q) {
			*q++ = '\0';
			if (*q == '[') {
				mod = q + 1;
				q = strchr(mod, ']');
				if (q)
					*q = '\0';
			}
		}
		if (!*name)
			continue;
		if (addr == 0) {
			ks->zero++;
			continue;
		}
		if (ks->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ks_entry *ne = realloc(ks->e, ncap * sizeof(*ne));

			if (!ne) {
				kallsyms__free(ks);
				errno = ENOMEM;
				return NULL;
			}
			ks->e = ne;
			cap = ncap;
		}
		ks->e[ks->n++] = (struct ks_entry){ addr, name, mod };
next:;
	}
	if (ks->n)
		qsort(ks->e, ks->n, sizeof(*ks->e), cmp_ks);
	return ks;
}

static struct kallsyms *load_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = read_file(path, &buf, &len, 0);
	if (err) {
		errno = -err;
		return NULL;
	}
	return kallsyms__parse(buf, len);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Whether the kernel shows us its addresses (kptr_restrict, CAP_SYSLOG),
 * from the first lines of /proc/kallsyms: asking through BPF would name
 * frames that the kernel's own policy hides. 1 yes, 0 no, -errno. */
static int addresses_shown(void)
{
	char buf[4096], *p, *end;
	ssize_t n;
	int fd;

	fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	end = buf + n;
	/* whole lines "ADDR T NAME": every ADDR is zero when hidden */
	for (p = buf; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			break;
		for (; p < nl && *p != ' '; p++)
			if (*p != '0')
				return 1;
		p = nl + 1;
	}
	return 0;
}

static struct kallsyms *load_live(void)
{
	libbpf_print_fn_t old;
	struct kallsyms *ks;
	int shown = addresses_shown();

	if (shown <= 0)
		return load_file("/proc/kallsyms");	/* hidden: as the file says */
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	ks->live = calloc(1, sizeof(*ks->live));
	if (!ks->live) {
		free(ks);
		errno = ENOMEM;
		return NULL;
	}
	/* a kernel without syscall programs or %pS: the whole file */
	old = libbpf_set_print(quiet);
	ks->live->skel = ksym_bpf__open_and_load();
	libbpf_set_print(old);
	if (!ks->live->skel) {
		ks->live->file = load_file("/proc/kallsyms");
		if (!ks->live->file) {
			int err = errno;

			kallsyms__free(ks);
			errno = err;
			return NULL;
		}
	}
	return ks;
}

struct kallsyms *kallsyms__load(const char *path)
{
	return path ? load_file(path) : load_live();
}

void kallsyms__free(struct kallsyms *ks)
{
	size_t i;

	if (!ks)
		return;
	if (ks->live) {
		for (i = 0; i < ks->live->cap; i++)
			free(ks->live->slots[i].name);
		free(ks->live->slots);
		ksym_bpf__destroy(ks->live->skel);
		kallsyms__free(ks->live->file);
		free(ks->live);
	}
	free(ks->e);
	free(ks->buf);
	free(ks);
}

static size_t addr_slot(uint64_t addr, size_t cap)
{
	addr ^= addr >> 29;
	addr *= 0xbf58476d1ce4e5b9ull;
	addr ^= addr >> 32;
	return (size_t)addr & (cap - 1);
}

static int live_grow(struct ks_live *l)
{
	size_t ncap = l->cap ? l->cap * 2 : 256, i, j;
	struct ks_asked *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < l->cap; i++) {
		if (!l->slots[i].addr)
			continue;
		for (j = addr_slot(l->slots[i].addr, ncap); ns[j].addr; j = (j + 1) & (ncap - 1))
			;
		ns[j] = l->slots[i];
	}
	free(l->slots);
	l->slots = ns;
	l->cap = ncap;
	return 0;
}

/* "name+0xOFF/0xSIZE [module buildid]" -> A's name, module and delta; an
 * address without a symbol prints as "0x...". */
static void parse_text(struct ks_asked *a, const char *text)
{
	const char *mod = strstr(text, " ["), *plus, *end = mod ? mod : text + strlen(text);
	char *name;
	size_t nlen;

	for (plus = end; plus > text && *plus != '+'; plus--)
		;
	if (plus == text || strncmp(plus, "+0x", 3))
		return;
	nlen = (size_t)(plus - text);
	a->delta = strtoull(plus + 3, NULL, 16);
	name = malloc(nlen + 1 + (mod ? strlen(mod) : 0) + 1);
	if (!name)
		return;
	memcpy(name, text, nlen);
	name[nlen] = '\0';
	a->module = name + nlen;	/* "" */
	if (mod) {
		char *m = name + nlen + 1;
		size_t mlen = strcspn(mod + 2, " ]");

		memcpy(m, mod + 2, mlen);
		m[mlen] = '\0';
		a->module = m;
	}
	a->name = name;
}

/* The kernel's answer for ADDR, asked once; NULL when asking failed. */
static const struct ks_asked *live_ask(struct ks_live *l, uint64_t addr)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct ks_asked *a;
	size_t i;

	if (l->cap) {
		for (i = addr_slot(addr, l->cap); l->slots[i].addr; i = (i + 1) & (l->cap - 1))
			if (l->slots[i].addr == addr)
				return &l->slots[i];
	}
	if ((l->n + 1) * 2 > l->cap && live_grow(l))
		return NULL;
	l->skel->bss->addr = addr;
	l->skel->bss->text_len = -1;
	if (bpf_prog_test_run_opts(bpf_program__fd(l->skel->progs.ksym_name), &opts) ||
	    l->skel->bss->text_len < 0) {
		l->failed = true;
		return NULL;
	}
	for (i = addr_slot(addr, l->cap); l->slots[i].addr; i = (i + 1) & (l->cap - 1))
		;
	a = &l->slots[i];
	*a = (struct ks_asked){ .addr = addr, .module = "" };
	l->skel->bss->text[sizeof(l->skel->bss->text) - 1] = '\0';
	parse_text(a, l->skel->bss->text);
	l->n++;
	return a;
}

static const char *live_lookup(struct ks_live *l, uint64_t addr, const char **module,
			       uint64_t *delta)
{
	const struct ks_asked *a;

	if (!l->file && !l->failed) {
		a = addr ? live_ask(l, addr) : NULL;
		if (a || !addr) {
			if (a && a->name) {
				if (module)
					*module = a->module;
				if (delta)
					*delta = a->delta;
			}
			return a ? a->name : NULL;
		}
	}
	if (!l->file) {
		/* asking failed (out of memory, a refused run): the file */
		l->file = load_file("/proc/kallsyms");
		if (!l->file)
			return NULL;
	}
	return kallsyms__lookup(l->file, addr, module, delta);
}

const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr,
			     const char **module, uint64_t *delta)
{
	size_t lo = 0, hi;

	if (ks && ks->live)
		return live_lookup(ks->live, addr, module, delta);
	if (!ks || !ks->n || addr < ks->e[0].addr)
		return NULL;
	hi = ks->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->e[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (module)
		*module = ks->e[lo - 1].module;
	if (delta)
		*delta = addr - ks->e[lo - 1].addr;
	return ks->e[lo - 1].name;
}

size_t kallsyms__count(const struct kallsyms *ks)
{
	if (ks && ks->live)
		return ks->live->file ? kallsyms__count(ks->live->file) : ks->live->n;
	return ks ? ks->n : 0;
}

bool kallsyms__hidden(const struct kallsyms *ks)
{
	return ks && ks->n == 0 && ks->zero > 0;
}
