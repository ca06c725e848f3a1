/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For fuzz targets whose parser takes a path: the input as an in-memory
 * file. Return its descriptor (PATH gets /proc/self/fd/N), or -1. */
#ifndef SIDESCOPE_FUZZ_MEMFILE_H
#define SIDESCOPE_FUZZ_MEMFILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t pathsz)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, pathsz, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
