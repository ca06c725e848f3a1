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

#include "core/appfile.h"
#include "sym/perfmap.h"
#include "core/util.h"

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
	size_t skipped;		/* bytes at the start left out (over the cap) */
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
	if (pm->n && pm->n < cap) {
		/* a small map (a short-lived process's) keeps no spare room */
		struct pm_entry *ne = realloc(pm->e, pm->n * sizeof(*ne));

		if (ne)
			pm->e = ne;
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

static size_t max_bytes = PERFMAP_DEFAULT_MAX;

void perfmap__set_max(size_t max)
{
	max_bytes = max ? max : PERFMAP_DEFAULT_MAX;
}

size_t perfmap__max(void)
{
	return max_bytes;
}

/* Read at most MAX bytes of FD from offset FROM into a malloc'd buffer (NUL
 * at *LEN): a file that grows while we read ends at MAX. */
static int read_range(int fd, off_t from, size_t hint, size_t max, char **out, size_t *out_len)
{
	size_t len = 0, cap = hint ? hint + 4096 : 65536;
	char *buf, *nb;
	ssize_t r;

	if (cap > max)
		cap = max;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			size_t ncap = cap * 2 > max ? max : cap * 2;

			if (ncap == cap)
				break;
			nb = realloc(buf, ncap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = pread(fd, buf + len, cap - len, from + (off_t)len);
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

static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Read FD (a regular file, see appfile.h): all of it, or its newest
 * max_bytes from the first whole line on (later lines win, so the end of a
 * map is what matters). LIVE: a writer may be at work, so a read that the
 * file changed under is retried and a last line without its newline is
 * left out. */
static struct perfmap *load_fd(int fd, bool live, struct stat *version)
{
	struct stat before, after;
	struct perfmap *pm;
	char *buf = NULL;
	size_t len = 0, skip = 0;
	off_t from = 0;
	int err = -EAGAIN, tries;

	for (tries = 0; tries < (live ? 4 : 1); tries++) {
		if (fstat(fd, &before)) {
			err = -errno;
			break;
		}
		from = before.st_size > (off_t)max_bytes ? before.st_size - (off_t)max_bytes : 0;
		err = read_range(fd, from, before.st_size > 0 ? (size_t)(before.st_size - from) : 0,
				 max_bytes, &buf, &len);
		if (err)
			break;
		if (!live)
			break;
		if (fstat(fd, &after)) {
			err = -errno;
			break;
		}
		/* a writer that truncated or rewrote the file while we read
		 * would leave lines spliced from two versions: read again */
		if (same_version(&before, &after) && from + (off_t)len == after.st_size)
			break;
		free(buf);
		buf = NULL;
		err = -EAGAIN;
	}
	if (err) {
		free(buf);
		errno = -err;
		return NULL;
	}
	if (from > 0) {
		/* the cut fell inside a line: start at the next one */
		char *nl = memchr(buf, '\n', len);

		skip = nl ? (size_t)(nl + 1 - buf) : len;
		memmove(buf, buf + skip, len - skip + 1);
		len -= skip;
	}
	/* a last line without its newline is still being written */
	if (live)
		while (len && buf[len - 1] != '\n')
			len--;
	buf[len] = '\0';
	{
		/* an entry costs 32 bytes however short its line: at most
		 * max_bytes / 32 of them, the newest */
		size_t keep = max_bytes / 32, lines = 0, at = 0;
		char *p = buf, *nl;

		while ((nl = memchr(p, '\n', len - (size_t)(p - buf)))) {
			lines++;
			p = nl + 1;
		}
		for (p = buf; lines > keep && (nl = memchr(p, '\n', len - (size_t)(p - buf))); lines--)
			p = nl + 1;
		at = (size_t)(p - buf);
		if (at) {
			memmove(buf, buf + at, len - at + 1);
			skip += at;
			len -= at;
		}
	}
	if (version)
		*version = live ? after : before;
	pm = perfmap__parse(buf, len);
	if (pm)
		pm->skipped = (size_t)from + skip;
	return pm;
}

static struct perfmap *load_path(const char *path, bool live, struct stat *version)
{
	struct perfmap *pm;
	int fd = appfile__open(path, 0, NULL);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	pm = load_fd(fd, live, version);
	{
		int err = errno;

		close(fd);
		errno = err;
	}
	return pm;
}

struct perfmap *perfmap__load(const char *path)
{
	return load_path(path, false, NULL);
}

struct perfmap *perfmap__load_live(const char *path, struct stat *version)
{
	return load_path(path, true, version);
}

struct perfmap *perfmap__load_live_fd(int fd, struct stat *version)
{
	return load_fd(fd, true, version);
}

size_t perfmap__skipped(const struct perfmap *pm)
{
	return pm ? pm->skipped : 0;
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
