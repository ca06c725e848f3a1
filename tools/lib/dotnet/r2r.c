// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ReadyToRun reader, written from ECMA-335 (partition II: PE file format,
 * metadata tables, signatures) and the ReadyToRun format description of the
 * .NET runtime (READYTORUN_HEADER, NativeArray, NativeHashtable, method
 * entry points). This file opens an image and frees it, caches images by
 * file identity, and adapts the reader to the profiler's and uprobe's
 * hooks; r2r_int.h lists the other parts. The whole file is read into
 * memory; every access goes through bounds-checked helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/log.h"
#include "core/util.h"
#include "dotnet/r2r_int.h"
#include "sym/symbolize.h"

/* The file at PATH into img->data: opened safely, read (not mapped:
 * truncating it must not raise SIGBUS here), bounded. */
static int read_image_file(struct r2r_image *img, const char *path, struct err *e)
{
	struct stat st;
	char *buf;
	size_t len;
	int fd, err;

	fd = appfile__open(path, 0, &st);
	if (fd < 0)
		return err__set(e, fd == -APPFILE_ENOTREG ? ENOEXEC : -fd, "cannot open %s: %s",
				path, appfile__strerror(fd));
	if (st.st_size == 0) {
		close(fd);
		return err__set(e, ENOEXEC, "not a PE file: empty file");
	}
	err = appfile__read(fd, R2R_FILE_MAX, false, &buf, &len, NULL);
	close(fd);
	if (err) {
		err__set(e, -err, "cannot read %s: %s", path, err == -EFBIG ?
			 "larger than " R2R_FILE_MAX_TEXT : appfile__strerror(err));
		return err == -EFBIG ? -ENOEXEC : err;
	}
	img->data = (const uint8_t *)buf;
	img->size = len;
	return 0;
}

/* The file's headers, metadata and ReadyToRun sections into IMG. */
static int parse_image(struct r2r_image *img, struct err *e)
{
	uint32_t cli_rva, cli_size, md_rva, md_size, flags, nh_rva, nh_size;
	uint64_t cli;
	int err;

	err = r2r_pe_parse(img, &cli_rva, &cli_size, e);
	if (err)
		return err;
	if (!r2r_rva_range(img, cli_rva, 72, &cli))
		return err__set(e, ENOEXEC, "corrupt .NET assembly: CLI header outside the file");
	md_rva = rd32(img->data + cli + 8);
	md_size = rd32(img->data + cli + 12);
	flags = rd32(img->data + cli + 16);
	nh_rva = rd32(img->data + cli + 64);	/* ManagedNativeHeader */
	nh_size = rd32(img->data + cli + 68);
	err = r2r_meta_parse(img, md_rva, md_size, e);
	if (!err)
		err = r2r_meta_index_types(img);
	if (err)
		return err == -ENOMEM ? err__set(e, ENOMEM, "out of memory") : err;
	/* COMIMAGE_FLAGS_IL_LIBRARY marks ReadyToRun code */
	if (!(flags & 4) || !nh_rva || nh_size < 16)
		return err__set(e, ENOEXEC, "no ReadyToRun code: IL-only assembly (publish it with "
				"-p:PublishReadyToRun=true)");
	img->machine = r2r_pe_arch(img->machine);
	err = r2r_native_parse(img, nh_rva, nh_size, e);
	if (err == -ENOMEM)
		err__set(e, ENOMEM, "out of memory");
	return err;
}

struct r2r_image *r2r__open(const char *path, struct err *e)
{
	struct r2r_image *img;
	int err;

	err__clear(e);
	img = calloc(1, sizeof(*img));
	if (!img) {
		err__set(e, ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	err = read_image_file(img, path, e);
	if (!err)
		err = parse_image(img, e);
	if (err) {
		r2r__free(img);
		errno = -err;
		return NULL;
	}
	return img;
}

void r2r__free(struct r2r_image *img)
{
	if (!img)
		return;
	free((void *)img->data);
	free(img->rf_b);
	free(img->rf_e);
	free(img->sec);
	free(img->method_owner);
	free(img->enclosing);
	free(img->rf_owner);
	free(img->meths);
	free(img->arena);
	free(img);
}

void r2r__release_file(struct r2r_image *img)
{
	free((void *)img->data);
	img->data = NULL;
	img->size = 0;
}

/* ---- images by file identity ------------------------------------------- */

struct cache_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct r2r_image *img;	/* NULL: not readable as ReadyToRun */
	int err;
	char *why;
};

struct r2r_cache {
	struct cache_entry *e;
	size_t n, cap;
};

struct r2r_cache *r2r_cache__new(void)
{
	return calloc(1, sizeof(struct r2r_cache));
}

void r2r_cache__free(struct r2r_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		r2r__free(c->e[i].img);
		free(c->e[i].why);
	}
	free(c->e);
	free(c);
}

static struct cache_entry *cache_find(struct r2r_cache *c, const struct stat *st)
{
	for (size_t i = 0; i < c->n; i++) {
		struct cache_entry *e = &c->e[i];

		if (e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
		    e->mtime.tv_sec == st->st_mtim.tv_sec &&
		    e->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return e;
	}
	return NULL;
}

/* A new entry for the file ST describes, its image opened from PATH (or
 * the reason it could not be). NULL: out of memory. */
static struct cache_entry *cache_add(struct r2r_cache *c, const char *path,
				     const struct stat *st)
{
	struct cache_entry *e;
	struct err why;

	if (array__room(&c->e, &c->cap, c->n, sizeof(*c->e), 16))
		return NULL;
	e = &c->e[c->n++];
	memset(e, 0, sizeof(*e));
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
	e->img = r2r__open(path, &why);
	if (!e->img) {
		e->err = errno;
		e->why = strdup(why.msg);
	}
	return e;
}

struct r2r_image *r2r_cache__get(struct r2r_cache *c, const char *path, const char **why)
{
	struct cache_entry *e;
	struct stat st;

	if (stat(path, &st) < 0) {
		if (why)
			*why = strerror(errno);
		return NULL;
	}
	e = cache_find(c, &st);
	if (!e)
		e = cache_add(c, path, &st);
	if (!e) {
		errno = ENOMEM;
		if (why)
			*why = "out of memory";
		return NULL;
	}
	if (!e->img) {
		errno = e->err;
		if (why)
			*why = e->why ? e->why : "out of memory";
	}
	return e->img;
}

/* ---- the profiler's and uprobe's hooks ------------------------------------ */

void *r2r__pe_open(const char *path)
{
	struct r2r_image *img;
	struct err why;

	img = r2r__open(path, &why);
	if (!img)
		p_debug("no ReadyToRun names for %s: %s", path, why.msg);
	else
		r2r__release_file(img);	/* names by offset need no file data */
	return img;
}

int r2r__pe_lookup(void *image, uint64_t file_offset, char *name, size_t size)
{
	const char *n;

	if (!image || r2r__lookup_file_offset(image, file_offset, &n, NULL, NULL))
		return -ENOENT;
	snprintf(name, size, "%s", n);
	return 0;
}

void r2r__pe_close(void *image)
{
	r2r__free(image);
}

const struct pe_resolver r2r__pe_resolver = {
	.open = r2r__pe_open,
	.lookup = r2r__pe_lookup,
	.close = r2r__pe_close,
};

/* MSG for a METHOD that N (> 1) methods match: the first of them listed. */
static void say_ambiguous(char *msg, size_t msgsize, const char *path, const char *method,
			  const struct r2r_method_info *hits, size_t nhits, size_t n)
{
	size_t len;

	len = (size_t)snprintf(msg, msgsize, "'%s' matches %zu methods in %s; name one "
			       "with its parameter list or instantiation:", method, n, path);
	for (size_t i = 0; i < n && i < nhits && len < msgsize; i++)
		len += (size_t)snprintf(msg + len, msgsize - len, "\n  %s%s (offset 0x%llx)",
					hits[i].name, hits[i].signature,
					(unsigned long long)hits[i].file_offset);
	if (n > nhits && len < msgsize)
		snprintf(msg + len, msgsize - len, "\n  ...");
}

int r2r__uprobe_resolve(const char *path, const char *method, uint64_t *file_offset,
			struct err *e)
{
	char *msg = e ? e->msg : NULL;
	size_t msgsize = e ? sizeof(e->msg) : 0;
	struct r2r_method_info hits[8];
	struct r2r_image *img;
	struct err why;
	size_t n;
	int err;

	img = r2r__open(path, &why);
	if (!img) {
		err = -errno;
		snprintf(msg, msgsize, "cannot use %s: %s", path, why.msg);
		return err;
	}
	n = r2r__find_method(img, method, hits, ARRAY_SIZE(hits));
	if (n == 0 && r2r__in_metadata(img, method)) {
		snprintf(msg, msgsize, "'%s' is in %s but has no precompiled code (crossgen2 "
			 "left it to the JIT: AggressiveOptimization, or a generic without that "
			 "instantiation); JIT code cannot take uprobes", method, path);
		err = -ENOENT;
	} else if (n == 0) {
		snprintf(msg, msgsize, "no method '%s' with precompiled code in %s (list them "
			 "with 'sidescope dotnet-methods %s')", method, path, path);
		err = -ENOENT;
	} else if (n > 1) {
		say_ambiguous(msg, msgsize, path, method, hits, ARRAY_SIZE(hits), n);
		err = -EEXIST;
	} else {
		*file_offset = hits[0].file_offset;
		snprintf(msg, msgsize, "%s%s: %s method at file offset 0x%llx (RVA 0x%x)",
			 hits[0].name, hits[0].signature,
			 hits[0].is_static ? "static" : "instance ('this' in arg1)",
			 (unsigned long long)hits[0].file_offset, hits[0].rva);
		err = 0;
	}
	r2r__free(img);
	return err;
}
