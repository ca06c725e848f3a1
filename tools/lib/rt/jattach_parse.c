// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The parsers of rt/jattach, over buffers the app controls (the reply on
 * its socket, /proc/PID/status, its command line and environment, its
 * JDK's release file): bounded, never past LEN, no NUL needed. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/escape.h"
#include "core/util.h"
#include "rt/jattach.h"

int jattach__parse_reply(const char *buf, size_t len, int *status, size_t *out_off)
{
	size_t i = 0, digits = 0;
	long v = 0;
	bool neg = false;

	if (len == 0)
		return -ENODATA;
	if (buf[0] == '-') {
		neg = true;
		i++;
	}
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (++digits > 9)
			return -EPROTO;
		v = v * 10 + (buf[i] - '0');
	}
	if (i == len)
		return -ENODATA;	/* the line is not over */
	if (!digits || buf[i] != '\n')
		return -EPROTO;
	*status = (int)(neg ? -v : v);
	*out_off = i + 1;
	return 0;
}

/* The first line of OUT, escaped, at most 200 columns, into BUF. */
static const char *first_line(const char *out, size_t len, char *buf, size_t size)
{
	const char *nl = memchr(out, '\n', len);

	escape__str(buf, size, out, nl ? (size_t)(nl - out) : len, 200, 0);
	return buf;
}

int jattach__perfmap_reply(pid_t pid, int status, const char *out, size_t outlen,
			   struct err *e)
{
	static const char unknown[] = "Unknown diagnostic command";
	char line[1024];

	if (status == 0)
		return 0;
	if (outlen >= sizeof(unknown) - 1 && memmem(out, outlen, unknown, sizeof(unknown) - 1))
		return err__set(e, EOPNOTSUPP,
				"the JVM %d has no Compiler.perfmap command (JDK %d or later has it): "
				"upgrade its JDK, or load a perf-map agent into it at start",
				(int)pid, JATTACH_PERFMAP_MIN_JDK);
	return err__set(e, EPROTO, "the JVM %d refused Compiler.perfmap (status %d): %s",
			(int)pid, status,
			outlen ? first_line(out, outlen, line, sizeof(line)) : "no message");
}

/* Lines of BUF (LEN bytes, maybe without a NUL) one at a time: *LINE and
 * *N for the next, false after the last. */
static bool next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = buf + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + 1;
	return true;
}

/* The numbers of a "Key:\tA\tB..." value: up to MAX of them into V.
 * Return how many were read; a field that is not a number ends the list. */
static int numbers(const char *s, size_t n, unsigned long long *v, int max, int base)
{
	size_t i = 0;
	int count = 0;

	while (count < max) {
		unsigned long long x = 0;
		size_t start;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		start = i;
		for (; i < n; i++) {
			int d;

			if (s[i] >= '0' && s[i] <= '9')
				d = s[i] - '0';
			else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
				d = s[i] - 'a' + 10;
			else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
				d = s[i] - 'A' + 10;
			else
				break;
			if (x > (~0ull - (unsigned)d) / (unsigned)base)
				return count;	/* too large: not a field of ours */
			x = x * (unsigned)base + (unsigned)d;
		}
		if (i == start || (i < n && s[i] != ' ' && s[i] != '\t'))
			break;
		v[count++] = x;
	}
	return count;
}

int jattach__parse_status(const char *buf, size_t len, struct jattach_status *st)
{
	enum { UID = 1, GID = 2, TGID = 4, SIGIGN = 8, SIGCGT = 16 };
	unsigned int have = 0;
	size_t pos = 0, n;
	const char *line;

	memset(st, 0, sizeof(*st));
	while (next_line(buf, len, &pos, &line, &n)) {
		const char *colon = memchr(line, ':', n);
		unsigned long long v[8];
		size_t klen, vlen;
		const char *val;
		int k;

		if (!colon)
			continue;
		klen = (size_t)(colon - line);
		val = colon + 1;
		vlen = n - klen - 1;
#define KEY(s) (klen == sizeof(s) - 1 && memcmp(line, s, klen) == 0)
		if (KEY("Name")) {
			while (vlen && (*val == ' ' || *val == '\t')) {
				val++;
				vlen--;
			}
			escape__str(st->name, sizeof(st->name), val, vlen, 32, 0);
		} else if (KEY("Uid") || KEY("Gid")) {
			/* real, effective, saved, filesystem: the JVM checks its effective ids */
			if (numbers(val, vlen, v, 4, 10) < 2 || v[1] > UINT32_MAX)
				return -EINVAL;
			if (KEY("Uid")) {
				st->euid = (uid_t)v[1];
				have |= UID;
			} else {
				st->egid = (gid_t)v[1];
				have |= GID;
			}
		} else if (KEY("Tgid")) {
			if (numbers(val, vlen, v, 1, 10) != 1 || v[0] > INT_MAX)
				return -EINVAL;
			if (!st->nstgid)
				st->nstgid = (pid_t)v[0];
			have |= TGID;
		} else if (KEY("NStgid")) {
			/* one PID per namespace, outermost first: the JVM's own is last */
			k = numbers(val, vlen, v, 8, 10);
			if (k < 1 || k > 32 || v[k - 1] > INT_MAX || !v[k - 1])
				return -EINVAL;
			st->nstgid = (pid_t)v[k - 1];
		} else if (KEY("SigIgn") || KEY("SigCgt")) {
			if (numbers(val, vlen, v, 1, 16) != 1)
				return -EINVAL;
			if (KEY("SigIgn")) {
				st->sigign = v[0];
				have |= SIGIGN;
			} else {
				st->sigcgt = v[0];
				have |= SIGCGT;
			}
		}
#undef KEY
	}
	return have == (UID | GID | TGID | SIGIGN | SIGCGT) && st->nstgid > 0 ? 0 : -EINVAL;
}

/* The setting of DisableAttachMechanism that TOKEN makes: 1 on, 0 off,
 * -1 none. */
static int disable_token(const char *t, size_t n)
{
	static const char flag[] = "DisableAttachMechanism";
	const size_t fl = sizeof(flag) - 1;

	if (n < 4 || memcmp(t, "-XX:", 4) != 0)
		return -1;
	t += 4;
	n -= 4;
	if (n == fl + 1 && (t[0] == '+' || t[0] == '-') && memcmp(t + 1, flag, fl) == 0)
		return t[0] == '+';
	if (n > fl + 1 && memcmp(t, flag, fl) == 0 && t[fl] == '=') {
		t += fl + 1;
		n -= fl + 1;
		if ((n == 4 && memcmp(t, "true", 4) == 0) || (n == 1 && t[0] == '1'))
			return 1;
		if ((n == 5 && memcmp(t, "false", 5) == 0) || (n == 1 && t[0] == '0'))
			return 0;
	}
	return -1;
}

/* The last setting in the blank-separated options S (N bytes), or -1. */
static int disable_in_options(const char *s, size_t n)
{
	int last = -1;
	size_t i = 0;

	while (i < n) {
		size_t start;
		int v;

		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			i++;
		start = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			i++;
		v = disable_token(s + start, i - start);
		if (v >= 0)
			last = v;
	}
	return last;
}

/* The value of NAME in the NUL-separated environment ENV, or NULL. */
static const char *env_value(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name), pos = 0;

	while (pos < len) {
		const char *s = env + pos, *end = memchr(s, '\0', len - pos);
		size_t n = end ? (size_t)(end - s) : len - pos;

		if (n > nl && memcmp(s, name, nl) == 0 && s[nl] == '=') {
			*vlen = n - nl - 1;
			return s + nl + 1;
		}
		pos += n + 1;
	}
	return NULL;
}

/* The launcher's options that take the next argument as their value. */
static bool takes_value(const char *t, size_t n)
{
	static const char *const opts[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path",
		"--upgrade-module-path", "--add-modules", "--limit-modules", "--add-reads",
		"--add-exports", "--add-opens", "--patch-module", "--enable-native-access",
		"--source",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opts); i++)
		if (strlen(opts[i]) == n && memcmp(opts[i], t, n) == 0)
			return true;
	return false;
}

bool jattach__attach_disabled(const char *cmdline, size_t clen, const char *environ,
			      size_t elen)
{
	static const char *const before[] = { "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS" };
	const char *v;
	size_t pos = 0, vlen, i;
	bool first = true;
	int last = -1, x;

	for (i = 0; i < ARRAY_SIZE(before); i++) {
		v = env_value(environ, elen, before[i], &vlen);
		if (v && (x = disable_in_options(v, vlen)) >= 0)
			last = x;
	}
	/* the JVM's options come before the main class (or -jar JAR, -m
	 * MODULE): what follows is the program's */
	while (pos < clen) {
		const char *t = cmdline + pos, *end = memchr(t, '\0', clen - pos);
		size_t n = end ? (size_t)(end - t) : clen - pos;

		pos += n + 1;
		if (first) {
			first = false;	/* the launcher's own name */
			continue;
		}
		if (n == 0)
			continue;
		if (t[0] != '-')
			break;
		if ((n == 4 && memcmp(t, "-jar", 4) == 0) || (n == 2 && memcmp(t, "-m", 2) == 0) ||
		    (n >= 8 && memcmp(t, "--module", 8) == 0 && (n == 8 || t[8] == '=')))
			break;
		if (takes_value(t, n)) {
			if (pos >= clen)
				break;
			end = memchr(cmdline + pos, '\0', clen - pos);
			pos = end ? (size_t)(end - cmdline) + 1 : clen;
			continue;
		}
		if ((x = disable_token(t, n)) >= 0)
			last = x;
	}
	v = env_value(environ, elen, "_JAVA_OPTIONS", &vlen);
	if (v && (x = disable_in_options(v, vlen)) >= 0)
		last = x;
	return last == 1;
}

int jattach__parse_release(const char *buf, size_t len)
{
	static const char key[] = "JAVA_VERSION=";
	size_t pos = 0, n;
	const char *line;

	while (next_line(buf, len, &pos, &line, &n)) {
		size_t i = sizeof(key) - 1, digits = 0;
		int v = 0;

		if (n < i || memcmp(line, key, i) != 0)
			continue;
		if (i < n && line[i] == '"')
			i++;
		/* "1.8.0_392" is JDK 8; "17.0.15", "21-ea", "25" their first number */
		if (n - i >= 2 && line[i] == '1' && line[i + 1] == '.')
			i += 2;
		for (; i < n && line[i] >= '0' && line[i] <= '9' && digits < 4; i++, digits++)
			v = v * 10 + (line[i] - '0');
		return digits && digits < 4 ? v : 0;
	}
	return 0;
}
