// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/util.h"

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno == ERANGE)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mult = 1ull << 10;
		break;
	case 'm': case 'M':
		mult = 1ull << 20;
		break;
	case 'g': case 'G':
		mult = 1ull << 30;
		break;
	default:
		return -EINVAL;
	}
	if (*end) {
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_long(const char *s, long min, long max, long *out)
{
	long v;
	char *end;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_pid_list(const char *s, pid_t **pids)
{
	pid_t *arr = NULL;
	char *copy, *tok, *save = NULL;
	int n = 0, err = 0;

	*pids = NULL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		pid_t *tmp;

		err = parse_u64(tok, 1, INT_MAX, &v);
		if (err)
			goto cleanup;
		tmp = realloc(arr, (n + 1) * sizeof(*arr));
		if (!tmp) {
			err = -ENOMEM;
			goto cleanup;
		}
		arr = tmp;
		arr[n++] = (pid_t)v;
	}
	if (n == 0)
		err = -EINVAL;
cleanup:
	free(copy);
	if (err) {
		free(arr);
		return err;
	}
	*pids = arr;
	return n;
}

int read_file(const char *path, char **buf, size_t *len, size_t max)
{
	int fd, err;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = appfile__read(fd, max ? max : READ_FILE_MAX, false, buf, len, NULL);
	close(fd);
	return err;
}

bool str_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int array__room(void *arrp, size_t *cap, size_t n, size_t elem, size_t first)
{
	void *a, *na;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : first;
	if (nc <= n || nc > SIZE_MAX / elem)
		return -ENOMEM;
	/* the caller's pointer, whatever it points to, as a void * */
	memcpy(&a, arrp, sizeof(a));
	na = realloc(a, nc * elem);
	if (!na)
		return -ENOMEM;
	memcpy(arrp, &na, sizeof(na));
	*cap = nc;
	return 0;
}

bool str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

const char *utf8_cut(const char *s, size_t max, char *buf)
{
	size_t len = strnlen(s, max + 1);

	if (len <= max)
		return s;
	len = max;
	/* back off while the first byte left out continues a sequence */
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	memcpy(buf, s, len);
	memcpy(buf + len, "...", 4);
	return buf;
}

bool kernel_at_least(unsigned int major, unsigned int minor)
{
	struct utsname u;
	unsigned int ma, mi;

	if (uname(&u) || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
