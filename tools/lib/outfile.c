// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

struct outfile {
	FILE *fp;
	char *path;
	char *tmp;	/* NULL for stdout */
};

struct outfile *outfile__open(const char *path)
{
	struct outfile *o;
	const char *slash;
	int fd = -1, err;
	size_t dirlen;

	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->path = strdup(path);
	if (!o->path)
		goto fail_nomem;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout;
		return o;
	}
	/* a device or FIFO (/dev/null, /dev/stdout, a pipe) is written in
	 * place: renaming over it would replace the device with a file */
	{
		struct stat sb;

		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			if (S_ISDIR(sb.st_mode)) {
				errno = EISDIR;
				goto fail;
			}
			o->fp = fopen(path, "w");
			if (!o->fp)
				goto fail;
			return o;
		}
	}
	slash = strrchr(path, '/');
	dirlen = slash ? (size_t)(slash - path + 1) : 0;
	o->tmp = malloc(dirlen + strlen(slash ? slash + 1 : path) + 32);
	if (!o->tmp)
		goto fail_nomem;
	sprintf(o->tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, slash ? slash + 1 : path);
	fd = mkstemp(o->tmp);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0640) < 0)
		goto fail;
	o->fp = fdopen(fd, "w");
	if (!o->fp)
		goto fail;
	return o;
fail_nomem:
	errno = ENOMEM;
fail:
	err = errno;
	if (fd >= 0) {
		close(fd);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	free(o);
	errno = err;
	return NULL;
}

FILE *outfile__fp(struct outfile *o)
{
	return o->fp;
}

const char *outfile__path(const struct outfile *o)
{
	return o->path;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (fflush(o->fp) != 0 || ferror(o->fp))
		err = errno ? -errno : -EIO;
	if (!o->tmp) {
		if (o->fp != stdout && fclose(o->fp) != 0 && !err)
			err = errno ? -errno : -EIO;
		free(o->path);
		free(o);
		return err;
	}
	if (!err && fsync(fileno(o->fp)) < 0 && errno != EINVAL)
		err = -errno;
	if (fclose(o->fp) != 0 && !err)
		err = errno ? -errno : -EIO;
	if (!err && rename(o->tmp, o->path) < 0)
		err = -errno;
	if (err)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (!o)
		return;
	if (o->tmp) {
		fclose(o->fp);
		unlink(o->tmp);
	} else if (o->fp != stdout) {
		fclose(o->fp);
	} else {
		fflush(o->fp);
	}
	free(o->tmp);
	free(o->path);
	free(o);
}
