// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables kept between captures; see cficache.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"
#include "sym/cficache.h"

#define MAGIC "sscfi\0\0\1"
#define VERSION 3u

/* What a file is, as the kernel tells it */
struct key {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

struct header {
	char magic[8];
	uint32_t version, row_size;
	struct key key;
	uint64_t base, n;
	uint64_t fdes, bad_fdes, unsupported, fp_unknown, debug_frame;
	uint64_t check;		/* hash of the rows */
};

struct cficache {
	int dfd;
	uint64_t max_bytes;
	uint64_t total;		/* bytes of entries, as last counted plus stored since */
	int counted;		/* total holds: the directory was read once */
	struct cficache_stats st;
};

static void key_of(const struct stat *st, struct key *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = (uint64_t)st->st_dev;
	k->ino = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_s = st->st_mtim.tv_sec;
	k->mtime_ns = st->st_mtim.tv_nsec;
	k->ctime_s = st->st_ctim.tv_sec;
	k->ctime_ns = st->st_ctim.tv_nsec;
}

static void name_of(const struct key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 ".cfi", hash__bytes(k, sizeof(*k)));
}

static void say(char *why, size_t len, const char *fmt, const char *dir)
{
	if (why && len)
		snprintf(why, len, fmt, dir);
}

/* mkdir -p: the directories made on the way 0755, the last 0700 */
static int make_dirs(const char *dir)
{
	char buf[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, dir, n + 1);
	for (i = 1; i < n; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		buf[i] = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

struct cficache *cficache__open(const char *dir, uint64_t max_bytes, char *why, size_t len)
{
	struct cficache *c;
	struct stat st;
	int dfd, err;

	if (make_dirs(dir)) {
		err = errno;
		if (why && len)
			snprintf(why, len, "cannot create '%s': %s", dir, strerror(err));
		errno = err;
		return NULL;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		err = errno;
		if (err == ELOOP || err == ENOTDIR) {
			struct stat lst;

			err = !lstat(dir, &lst) && S_ISLNK(lst.st_mode) ? ELOOP : ENOTDIR;
			say(why, len, err == ELOOP ? "'%s' is a symbolic link" :
				      "'%s' is not a directory", dir);
		} else if (why && len) {
			snprintf(why, len, "cannot open '%s': %s", dir, strerror(err));
		}
		errno = err;
		return NULL;
	}
	if (fstat(dfd, &st) || st.st_uid != geteuid()) {
		say(why, len, "'%s' belongs to another user", dir);
		close(dfd);
		errno = EPERM;
		return NULL;
	}
	if ((st.st_mode & 077) != 0) {
		say(why, len, "'%s' is open to other users (its mode is not 0700)", dir);
		close(dfd);
		errno = EPERM;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(dfd);
		errno = ENOMEM;
		return NULL;
	}
	c->dfd = dfd;
	c->max_bytes = max_bytes;
	return c;
}

void cficache__close(struct cficache *c)
{
	if (!c)
		return;
	close(c->dfd);
	free(c);
}

void cficache__stats(const struct cficache *c, struct cficache_stats *st)
{
	*st = c->st;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Rows as cfitab makes them: sorted by pc, known rules. */
static int rows_ok(const struct cfi_row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (r[i].cfa > CFI_CFA_SP_RA_DI || r[i].fp > CFI_FP_UNKNOWN)
			return 0;
		if (i && r[i].pc <= r[i - 1].pc)
			return 0;
	}
	return 1;
}

/* Entry NAME opened, *ST its fstat and its first HLEN bytes in HEAD: the
 * descriptor; -ENOENT (a miss, counted) when there is none, -EINVAL when
 * it is no entry of ours (not a regular file of ours, too short). */
static int open_entry(struct cficache *c, const char *name, struct stat *st, void *head,
		      size_t hlen)
{
	int fd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		c->st.misses++;
		return -ENOENT;
	}
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (uint64_t)st->st_size < hlen || read_all(fd, head, hlen)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int cficache__get(struct cficache *c, const struct stat *fst, struct cfi_table *t)
{
	struct header h;
	struct key k;
	struct stat st;
	char name[32];
	size_t bytes;
	int fd;

	memset(t, 0, sizeof(*t));
	key_of(fst, &k);
	name_of(&k, name, sizeof(name));
	fd = open_entry(c, name, &st, &h, sizeof(h));
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd < 0)
		goto bad_name;
	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) || h.version != VERSION ||
	    h.row_size != sizeof(struct cfi_row) || memcmp(&h.key, &k, sizeof(k)) ||
	    h.n == 0 || h.n > CFITAB_MAX_ROWS ||
	    (uint64_t)st.st_size != sizeof(h) + h.n * sizeof(struct cfi_row))
		goto bad;
	bytes = (size_t)h.n * sizeof(struct cfi_row);
	/* mapped, not read: no copy, no fresh pages to fault in and zero.
	 * Entries are written once under a temporary name and renamed into
	 * place, never changed in place; the checks below read the mapping,
	 * all of it, so its pages are mapped at once (no fault a page) */
	t->map_len = sizeof(h) + bytes;
	t->map = mmap(NULL, t->map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		goto bad;
	}
	t->rows = (struct cfi_row *)((char *)t->map + sizeof(h));
	if (hash__words(t->rows, bytes) != h.check || !rows_ok(t->rows, (size_t)h.n))
		goto bad;
	t->n = (size_t)h.n;
	t->base = h.base;
	t->st.fdes = (size_t)h.fdes;
	t->st.bad_fdes = (size_t)h.bad_fdes;
	t->st.unsupported = (size_t)h.unsupported;
	t->st.fp_unknown = (size_t)h.fp_unknown;
	t->st.debug_frame = (int)h.debug_frame;
	futimens(fd, NULL);	/* used now: removed last */
	close(fd);
	c->st.hits++;
	return 0;
bad:
	cfitab__free(t);
	close(fd);
bad_name:
	unlinkat(c->dfd, name, 0);	/* rebuilt and stored again */
	c->st.bad++;
	c->st.misses++;
	return -ENOENT;
}

/* Remove entries, those used longest ago first, until the directory holds
 * at most max_bytes less ROOM; count what is left. */
static void prune(struct cficache *c, uint64_t room)
{
	struct ent { char name[32]; int64_t t; uint64_t size; } *e = NULL, tmp;
	size_t n = 0, cap = 0, i, j;
	uint64_t total = 0;
	struct dirent *d;
	int fd = dup(c->dfd);
	DIR *dir;

	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	rewinddir(dir);
	while ((d = readdir(dir))) {
		struct stat st;
		size_t nl = strlen(d->d_name);

		if (nl < 5 || nl >= sizeof(e->name) ||
		    (strcmp(d->d_name + nl - 4, ".cfi") && strcmp(d->d_name + nl - 4, ".blb")) ||
		    fstatat(c->dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct ent *ne = realloc(e, (cap = cap ? cap * 2 : 64) * sizeof(*e));

			if (!ne)
				break;
			e = ne;
		}
		memcpy(e[n].name, d->d_name, nl + 1);
		e[n].t = st.st_mtim.tv_sec;
		e[n].size = (uint64_t)st.st_size;
		total += e[n].size;
		n++;
	}
	closedir(dir);
	/* oldest first; a few hundred entries at most */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && e[j - 1].t > e[j].t; j--) {
			tmp = e[j];
			e[j] = e[j - 1];
			e[j - 1] = tmp;
		}
	for (i = 0; i < n && total + room > c->max_bytes; i++)
		if (!unlinkat(c->dfd, e[i].name, 0))
			total -= e[i].size;
	free(e);
	c->total = total;
	c->counted = 1;
}

/* Write HEAD then BODY as entry NAME: to a temporary name renamed into
 * place. 0 or a negative errno, nothing left behind on failure. */
static int store(struct cficache *c, const char *name, const void *head, size_t hlen,
		 const void *body, size_t blen)
{
	char tmp[48];
	int fd, err;

	/* the directory is read at the first store, then again only when the
	 * entries stored since may have filled it (an entry replaced is
	 * counted twice: an early prune, which counts afresh) */
	if (!c->counted || c->total + hlen + blen > c->max_bytes)
		prune(c, hlen + blen);
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write_all(fd, head, hlen) || write_all(fd, body, blen)) {
		err = errno;
		close(fd);
		unlinkat(c->dfd, tmp, 0);
		return -err;
	}
	if (close(fd) || renameat(c->dfd, tmp, c->dfd, name)) {
		err = errno;
		unlinkat(c->dfd, tmp, 0);
		return -err;
	}
	c->total += hlen + blen;
	c->st.stored++;
	return 0;
}

int cficache__put(struct cficache *c, const struct stat *fst, const struct cfi_table *t)
{
	struct header h;
	char name[32];
	size_t bytes = t->n * sizeof(struct cfi_row);

	if (!t->n || t->n > CFITAB_MAX_ROWS || sizeof(h) + bytes > c->max_bytes)
		return -EFBIG;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	h.version = VERSION;
	h.row_size = sizeof(struct cfi_row);
	key_of(fst, &h.key);
	h.base = t->base;
	h.n = t->n;
	h.fdes = t->st.fdes;
	h.bad_fdes = t->st.bad_fdes;
	h.unsupported = t->st.unsupported;
	h.fp_unknown = t->st.fp_unknown;
	h.debug_frame = (uint64_t)t->st.debug_frame;
	h.check = hash__words(t->rows, bytes);
	name_of(&h.key, name, sizeof(name));
	return store(c, name, &h, sizeof(h), t->rows, bytes);
}

/* A blob's header */
struct blob_header {
	char magic[8];
	uint64_t key, len, check;	/* check: a hash of the bytes */
};

#define BLOB_MAGIC "ssblob\0\1"

static void blob_name(uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 ".blb", key);
}

int cficache__get_blob(struct cficache *c, uint64_t key, size_t max, void **buf, size_t *len)
{
	struct blob_header h;
	struct stat st;
	char name[32];
	void *b = NULL;
	int fd;

	*buf = NULL;
	*len = 0;
	blob_name(key, name, sizeof(name));
	fd = open_entry(c, name, &st, &h, sizeof(h));
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd < 0)
		goto bad_name;
	if (memcmp(h.magic, BLOB_MAGIC, sizeof(h.magic)) || h.key != key || h.len == 0 ||
	    h.len > max || (uint64_t)st.st_size != sizeof(h) + h.len)
		goto bad;
	/* mapped as cficache__get maps a table */
	b = mmap(NULL, sizeof(h) + (size_t)h.len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (b == MAP_FAILED) {
		b = NULL;
		goto bad;
	}
	if (hash__words((char *)b + sizeof(h), (size_t)h.len) != h.check)
		goto bad;
	futimens(fd, NULL);
	close(fd);
	c->st.hits++;
	*buf = (char *)b + sizeof(h);
	*len = (size_t)h.len;
	return 0;
bad:
	if (b)
		munmap(b, sizeof(h) + (size_t)h.len);
	close(fd);
bad_name:
	cficache__drop_blob(c, key);
	c->st.bad++;
	c->st.misses++;
	return -ENOENT;
}

void cficache__blob_free(void *buf, size_t len)
{
	if (buf)
		munmap((char *)buf - sizeof(struct blob_header), sizeof(struct blob_header) + len);
}

int cficache__put_blob(struct cficache *c, uint64_t key, const void *buf, size_t len)
{
	struct blob_header h;
	char name[32];

	if (!len || sizeof(h) + len > c->max_bytes)
		return -EFBIG;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BLOB_MAGIC, sizeof(h.magic));
	h.key = key;
	h.len = len;
	h.check = hash__words(buf, len);
	blob_name(key, name, sizeof(name));
	return store(c, name, &h, sizeof(h), buf, len);
}

void cficache__drop_blob(struct cficache *c, uint64_t key)
{
	char name[32];

	blob_name(key, name, sizeof(name));
	unlinkat(c->dfd, name, 0);
}
