// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Perf-map parser and lookup. Maps can hold millions of lines, so entries
 * are 24 bytes pointing into the file's own buffer, sorted once; overlap is
 * resolved at lookup time by scanning back while an earlier entry could
 * still cover the address (a prefix maximum of the ends bounds the scan). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"
#include "util.h"

struct pm_entry {
	uint64_t start;
	uint64_t end;
	uint32_t name;	/* offset into buf */
	uint32_t seq;	/* line order: a higher one wins */
};

struct perfmap {
	char *buf;
	size_t len;
	struct pm_entry *e;
	uint64_t *max_end;	/* max_end[i] = max(e[0..i].end) */
	size_t n;
	size_t bad;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse a hex number at *p (optional 0x); advance *p. Return 0 or -1. */
static int parse_hex(char **p, char *end, uint64_t *out)
{
	char *s = *p;
	uint64_t v = 0;
	int digits = 0, d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end && (d = hexval((unsigned char)*s)) >= 0) {
		if (v >> 60)
			return -1;	/* overflow */
		v = v << 4 | (uint64_t)d;
		s++;
		digits++;
	}
	if (!digits)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

struct perfmap *perfmap__parse(char *buf, size_t len)
{
	struct perfmap *pm;
	size_t cap = 0, i;
	char *line = buf, *end = buf + len;

	pm = calloc(1, sizeof(*pm));
	if (!pm) {
		free(buf);
		return NULL;
	}
	pm->buf = buf;
	pm->len = len;
	while (line < end) {
		char *nl = memchr(line, '\n', end - line), *eol = nl ? nl : end, *p = line;
		uint64_t start, size;

		if (eol > line && eol[-1] == '\r')
			eol--;
		*eol = '\0';
		if (p == eol) {
			line = nl ? nl + 1 : end;
			continue;
		}
		while (p < eol && is_blank(*p))
			p++;
		if (parse_hex(&p, eol, &start) || p >= eol || !is_blank(*p))
			goto bad;
		while (p < eol && is_blank(*p))
			p++;
		if (parse_hex(&p, eol, &size) || p >= eol || !is_blank(*p))
			goto bad;
		while (p < eol && is_blank(*p))
			p++;
		if (p >= eol || size == 0 || start + size < start || (size_t)(p - buf) > UINT32_MAX)
			goto bad;
		if (pm->n == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct pm_entry *ne = realloc(pm->e, ncap * sizeof(*ne));

			if (!ne)
				goto nomem;
			pm->e = ne;
			cap = ncap;
		}
		pm->e[pm->n] = (struct pm_entry){ start, start + size, (uint32_t)(p - buf),
						  (uint32_t)pm->n };
		pm->n++;
		line = nl ? nl + 1 : end;
		continue;
bad:
		pm->bad++;
		line = nl ? nl + 1 : end;
	}
	if (pm->n) {
		/* runtimes mostly append increasing addresses: skip the sort then */
		for (i = 1; i < pm->n && pm->e[i - 1].start <= pm->e[i].start; i++)
			;
		if (i < pm->n)
			qsort(pm->e, pm->n, sizeof(*pm->e), cmp_entry);
		pm->max_end = malloc(pm->n * sizeof(*pm->max_end));
		if (!pm->max_end)
			goto nomem;
		for (i = 0; i < pm->n; i++)
			pm->max_end[i] = i && pm->max_end[i - 1] > pm->e[i].end ?
					 pm->max_end[i - 1] : pm->e[i].end;
	}
	return pm;
nomem:
	perfmap__free(pm);
	errno = ENOMEM;
	return NULL;
}

/* Read what FD holds from offset 0 into a malloc'd buffer (NUL at *LEN). */
static int read_all(int fd, size_t hint, char **out, size_t *out_len)
{
	size_t len = 0, cap = hint ? hint + 4096 : 65536;
	char *buf, *nb;
	ssize_t r;

	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = pread(fd, buf + len, cap - len, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

struct perfmap *perfmap__load(const char *path)
{
	struct stat sb;
	char *buf = NULL;
	size_t len = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* one allocation of the file's size (maps reach tens of MB); the
	 * file may still grow while we read it */
	err = read_all(fd, fstat(fd, &sb) == 0 && sb.st_size > 0 ? (size_t)sb.st_size : 0,
		       &buf, &len);
	close(fd);
	if (err) {
		errno = -err;
		return NULL;
	}
	return perfmap__parse(buf, len);
}

static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

struct perfmap *perfmap__load_live(const char *path, struct stat *version)
{
	struct stat before, after;
	char *buf = NULL;
	size_t len = 0;
	int fd, err = -EAGAIN, tries;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (tries = 0; tries < 4; tries++) {
		if (fstat(fd, &before)) {
			err = -errno;
			break;
		}
		err = read_all(fd, before.st_size > 0 ? (size_t)before.st_size : 0, &buf, &len);
		if (err)
			break;
		if (fstat(fd, &after)) {
			err = -errno;
			break;
		}
		/* a writer that truncated or rewrote the file while we read
		 * would leave lines spliced from two versions: read again */
		if (same_version(&before, &after) && (off_t)len == after.st_size) {
			err = 0;
			break;
		}
		free(buf);
		buf = NULL;
		err = -EAGAIN;
	}
	close(fd);
	if (err) {
		free(buf);
		errno = -err;
		return NULL;
	}
	/* a last line without its newline is still being written */
	while (len && buf[len - 1] != '\n')
		len--;
	buf[len] = '\0';
	if (version)
		*version = after;
	return perfmap__parse(buf, len);
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->e);
	free(pm->max_end);
	free(pm->buf);
	free(pm);
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *start)
{
	const struct pm_entry *best = NULL;
	size_t lo = 0, hi, i;

	if (!pm || !pm->n)
		return NULL;
	/* last entry with start <= addr */
	hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		if (pm->max_end[i] <= addr)
			break;	/* nothing at or before i reaches addr */
		if (addr < pm->e[i].end && (!best || pm->e[i].seq > best->seq))
			best = &pm->e[i];
	}
	if (!best)
		return NULL;
	if (start)
		*start = best->start;
	return pm->buf + best->name;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return pm ? pm->n : 0;
}

size_t perfmap__bad_lines(const struct perfmap *pm)
{
	return pm ? pm->bad : 0;
}

size_t perfmap__size(const struct perfmap *pm)
{
	return pm ? pm->len : 0;
}
