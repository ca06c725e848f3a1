// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Trace discovery and the metadata check (trace.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/trace.h"

/* The walk: the path being visited and the directories seen so far. */
struct walk {
	struct ctf_traces *t;
	char path[PATH_MAX];
	struct { dev_t dev; ino_t ino; } *seen;
	size_t n_seen, cap_seen;
};

/* Record directory ST; return 1 if it was seen before, 0, or -ENOMEM. */
static int seen_before(struct walk *w, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->n_seen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return 1;
	if (w->n_seen == w->cap_seen) {
		size_t cap = w->cap_seen ? w->cap_seen * 2 : 16;
		void *n = realloc(w->seen, cap * sizeof(*w->seen));

		if (!n)
			return -ENOMEM;
		w->seen = n;
		w->cap_seen = cap;
	}
	w->seen[w->n_seen].dev = st->st_dev;
	w->seen[w->n_seen].ino = st->st_ino;
	w->n_seen++;
	return 0;
}

static int add_trace(struct ctf_traces *t, const char *dir, size_t len)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		char **n = realloc(t->dirs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->dirs = n;
		t->cap = cap;
	}
	t->dirs[t->n] = strndup(dir, len);
	if (!t->dirs[t->n])
		return -ENOMEM;
	t->n++;
	return 0;
}

/* Visit the directory at w->path (LEN bytes, ST its status). */
static int walk_dir(struct walk *w, size_t len, const struct stat *st)
{
	/* the names below start after a '/': the root "/" has one already */
	size_t sep = len > 0 && w->path[len - 1] == '/' ? len : len + 1;
	struct dirent *de;
	struct stat est;
	int err, fd;
	DIR *d;

	err = seen_before(w, st);
	if (err)
		return err < 0 ? err : 0;
	fd = open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	err = 0;
	for (;;) {
		size_t nl;

		de = readdir(d);
		if (!de)
			break;	/* the end, or what could be read of it */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		nl = strlen(de->d_name);
		if (sep + nl >= sizeof(w->path)) {
			err = -ENAMETOOLONG;
			break;
		}
		w->path[len] = '/';
		memcpy(w->path + sep, de->d_name, nl + 1);
		if (fstatat(dirfd(d), de->d_name, &est, AT_SYMLINK_NOFOLLOW))
			continue;	/* gone meanwhile: nothing to read there */
		if (S_ISDIR(est.st_mode))
			err = walk_dir(w, sep + nl, &est);
		else if (S_ISREG(est.st_mode) && strcmp(de->d_name, "metadata") == 0)
			err = add_trace(w->t, w->path, sep - 1);
		if (err)
			break;
	}
	closedir(d);
	w->path[len] = '\0';
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ctf_traces__find(struct ctf_traces *t, const char *dir)
{
	struct walk *w;
	struct stat st;
	size_t len = strlen(dir);
	int err;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->t = t;
	memcpy(w->path, dir, len);
	w->path[len] = '\0';
	/* the walk does not follow links, DIR itself included (without its
	 * trailing slashes, a link to a directory is a link) */
	if (lstat(w->path, &st) || !S_ISDIR(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -errno : 0;
		free(w);
		return err;
	}
	err = walk_dir(w, len, &st);
	free(w->seen);
	free(w);
	if (err)
		return err;
	if (t->n > 1)
		qsort(t->dirs, t->n, sizeof(*t->dirs), cmp_str);
	return (int)t->n;
}

void ctf_traces__free(struct ctf_traces *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->dirs[i]);
	free(t->dirs);
	memset(t, 0, sizeof(*t));
}

/* ---- metadata packets ---------------------------------------------------
 * LTTng writes the metadata as packets, each with a 37-byte header (CTF 1.8
 * "metadata_packet_header": magic, uuid, checksum, content and packet size
 * in bits, schemes, version). Text metadata has no such header. */

#define CTF_META_MAGIC 0x75D11D57U
#define CTF_META_HDR 37

static uint32_t meta_u32(const unsigned char *p, bool swap)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return swap ? __builtin_bswap32(v) : v;
}

/* Check the packets of F (SIZE bytes, PATH for messages). */
static int check_packets(FILE *f, const char *path, uint64_t size, bool swap, char *why,
			 size_t whysize)
{
	unsigned char h[CTF_META_HDR];
	uint64_t off = 0;

	while (off < size) {
		uint32_t content, packet;

		if (fseeko(f, (off_t)off, SEEK_SET) || fread(h, 1, sizeof(h), f) != sizeof(h)) {
			snprintf(why, whysize, "'%s' is cut short in the packet header at byte %" PRIu64,
				 path, off);
			return -EBADMSG;
		}
		content = meta_u32(h + 24, swap);
		packet = meta_u32(h + 28, swap);
		if (meta_u32(h, swap) != CTF_META_MAGIC || packet % 8 || packet < CTF_META_HDR * 8 ||
		    content > packet || content < CTF_META_HDR * 8) {
			snprintf(why, whysize, "'%s' has a damaged packet header at byte %" PRIu64,
				 path, off);
			return -EBADMSG;
		}
		if (off + packet / 8 > size) {
			snprintf(why, whysize, "'%s' is cut short: its packet at byte %" PRIu64
				 " needs %u bytes, %" PRIu64 " are there", path, off, packet / 8,
				 size - off);
			return -EBADMSG;
		}
		off += packet / 8;
	}
	return 0;
}

int ctf_traces__check_metadata(const char *tdir, struct err *e)
{
	char *why = e ? e->msg : NULL;
	size_t size = e ? sizeof(e->msg) : 0;

	unsigned char h[4];
	char path[PATH_MAX];
	struct stat st;
	FILE *f;
	int err = -EBADMSG;

	if ((size_t)snprintf(path, sizeof(path), "%s/metadata", tdir) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st)) {
		err = -errno;
		goto cleanup;
	}
	if (st.st_size == 0) {
		snprintf(why, size, "'%s' is empty", path);
		goto cleanup;
	}
	if (fread(h, 1, 4, f) != 4 || (meta_u32(h, false) != CTF_META_MAGIC &&
				       meta_u32(h, true) != CTF_META_MAGIC)) {
		err = 0;	/* text metadata: babeltrace2 parses it */
		goto cleanup;
	}
	err = check_packets(f, path, (uint64_t)st.st_size, meta_u32(h, false) != CTF_META_MAGIC,
			    why, size);
cleanup:
	fclose(f);
	return err;
}
