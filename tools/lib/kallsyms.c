// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/kallsyms: "ADDR TYPE NAME [MODULE]" a line. Names and modules point
 * into the file's buffer; entries are sorted once by address. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "util.h"

struct ks_entry {
	uint64_t addr;
	const char *name;
	const char *module;
};

struct kallsyms {
	char *buf;
	struct ks_entry *e;
	size_t n;
	size_t zero;	/* symbols read with address 0 */
	size_t lines;
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

struct kallsyms *kallsyms__load(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = read_file(path ? path : "/proc/kallsyms", &buf, &len, 0);
	if (err) {
		errno = -err;
		return NULL;
	}
	return kallsyms__parse(buf, len);
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->e);
	free(ks->buf);
	free(ks);
}

const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr,
			     const char **module, uint64_t *delta)
{
	size_t lo = 0, hi;

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
	return ks ? ks->n : 0;
}

bool kallsyms__hidden(const struct kallsyms *ks)
{
	return ks && ks->n == 0 && ks->zero > 0;
}
