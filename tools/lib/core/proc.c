// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/escape.h"
#include "core/hash.h"
#include "core/proc.h"
#include "core/util.h"

static const char *root = "/proc";

void proc__set_root(const char *r)
{
	root = r;
}

const char *proc__root(void)
{
	return root;
}

static int proc_path(char *buf, size_t size, pid_t pid, const char *file)
{
	int n = snprintf(buf, size, "%s/%d/%s", root, (int)pid, file);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Bounds on what one /proc file of another process may cost us: the
 * process chooses its command line, its mappings' names and their number. */
#define PROC_FILE_MAX	(1u << 20)
#define PROC_MAPS_MAX	(64u << 20)

/* Read /proc/PID/FILE, at most MAX bytes: the first MAX with TRUNCATED
 * (which then reports whether it was cut), else -EFBIG past MAX. */
static int read_proc_file_max(pid_t pid, const char *file, size_t max, char **buf,
			      size_t *len, bool *truncated)
{
	char path[PATH_MAX];
	int err = proc_path(path, sizeof(path), pid, file), fd;

	*buf = NULL;
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = appfile__read(fd, max, truncated != NULL, buf, len, truncated);
	close(fd);
	return err;
}

static int read_proc_file(pid_t pid, const char *file, char **buf, size_t *len)
{
	bool cut;

	return read_proc_file_max(pid, file, PROC_FILE_MAX, buf, len, &cut);
}

/* Last whitespace-separated number on a "Key:\tA\tB\tC" line. */
static int last_field(const char *val, pid_t *out, int *count)
{
	long v = -1;
	int n = 0;
	char *end;

	for (;;) {
		while (*val == ' ' || *val == '\t')
			val++;
		if (*val == '\n' || *val == '\0')
			break;
		errno = 0;
		v = strtol(val, &end, 10);
		if (end == val || errno || v < 0 || v > INT_MAX)
			return -EINVAL;
		n++;
		val = end;
	}
	if (n == 0)
		return -EINVAL;
	*out = (pid_t)v;
	if (count)
		*count = n;
	return 0;
}

int proc__parse_status(const char *buf, struct proc_status *st)
{
	const char *line = buf;
	bool have_pid = false;

	memset(st, 0, sizeof(*st));
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *val = strchr(line, ':');

		if (val && (!nl || val < nl)) {
			size_t klen = val - line;

			val++;
#define KEY(k) (klen == sizeof(k) - 1 && memcmp(line, k, klen) == 0)
			if (KEY("Name")) {
				size_t n;

				while (*val == ' ' || *val == '\t')
					val++;
				n = nl ? (size_t)(nl - val) : strlen(val);
				if (n >= sizeof(st->name))
					n = sizeof(st->name) - 1;
				memcpy(st->name, val, n);
				st->name[n] = '\0';
			} else if (KEY("Pid")) {
				if (last_field(val, &st->pid, NULL))
					return -EINVAL;
				have_pid = true;
			} else if (KEY("Tgid")) {
				last_field(val, &st->tgid, NULL);
			} else if (KEY("PPid")) {
				last_field(val, &st->ppid, NULL);
			} else if (KEY("NSpid")) {
				last_field(val, &st->nspid, &st->ns_depth);
			} else if (KEY("NStgid")) {
				last_field(val, &st->nstgid, NULL);
			} else if (KEY("Threads")) {
				st->threads = atoi(val);
			} else if (KEY("Uid")) {
				pid_t uid;

				/* real uid is the first field */
				if (sscanf(val, "%d", &uid) == 1)
					st->uid = uid;
			}
#undef KEY
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!have_pid)
		return -EINVAL;
	/* kernels before 4.1 have no NSpid: the process is in our namespace */
	if (!st->nspid) {
		st->nspid = st->pid;
		st->ns_depth = 1;
	}
	if (!st->tgid)
		st->tgid = st->pid;
	if (!st->nstgid)
		st->nstgid = st->tgid == st->pid ? st->nspid : st->tgid;
	return 0;
}

int proc__read_status(pid_t pid, struct proc_status *st)
{
	char *buf;
	int err;

	err = read_proc_file(pid, "status", &buf, NULL);
	if (err)
		return err;
	err = proc__parse_status(buf, st);
	free(buf);
	return err;
}

/* Numeric field N (1-based, N >= 3) of /proc/PID/stat. */
static int stat_field(const char *buf, int n, unsigned long long *out)
{
	/* comm may hold spaces and parentheses: fields count from the last ')' */
	const char *p = strrchr(buf, ')');
	int field;

	if (!p)
		return -EINVAL;
	p++;
	/* after ')' comes field 3 (state) */
	for (field = 2; field < n - 1; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		while (*p && *p != ' ')
			p++;
	}
	if (sscanf(p, " %llu", out) != 1)
		return -EINVAL;
	return 0;
}

int proc__parse_stat_starttime(const char *buf, uint64_t *start)
{
	unsigned long long v;
	int err = stat_field(buf, 22, &v);

	if (!err)
		*start = v;
	return err;
}

int proc__parse_stat_flags(const char *buf, unsigned long *flags)
{
	unsigned long long v;
	int err = stat_field(buf, 9, &v);

	if (!err)
		*flags = v;
	return err;
}

bool proc__is_kernel_thread(pid_t pid)
{
	unsigned long flags = 0;
	char *buf;
	bool kthread = false;

	if (read_proc_file(pid, "stat", &buf, NULL))
		return false;
	if (proc__parse_stat_flags(buf, &flags) == 0)
		kthread = flags & 0x00200000;	/* PF_KTHREAD */
	free(buf);
	return kthread;
}

enum proc_target proc__target_kind(pid_t pid, struct proc_status *st)
{
	char *buf;
	bool zombie = false;

	if (proc__read_status(pid, st))
		return PROC_TARGET_NONE;
	if (st->tgid != pid)
		return PROC_TARGET_THREAD;
	if (proc__is_kernel_thread(pid))
		return PROC_TARGET_KTHREAD;
	if (read_proc_file(pid, "stat", &buf, NULL) == 0) {
		const char *p = strrchr(buf, ')');

		zombie = p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
		free(buf);
	}
	return zombie ? PROC_TARGET_EXITED : PROC_TARGET_OK;
}

int proc__check_target(pid_t pid, struct err *e)
{
	struct proc_status st, leader;
	char name[ESCAPE_MAX(sizeof(st.name)) + 1], lname[sizeof(name)];
	enum proc_target kind = proc__target_kind(pid, &st);

	if (kind == PROC_TARGET_NONE)
		return err__set(e, ESRCH, "no process with PID %d in this PID namespace (see "
				"'sidescope ps')", (int)pid);
	if (kind == PROC_TARGET_OK)
		return 0;
	/* the name is the app's: escaped for the terminal */
	escape__str(name, sizeof(name), st.name, strlen(st.name), 0, 0);
	if (kind == PROC_TARGET_THREAD) {
		if (proc__read_status(st.tgid, &leader))
			leader.name[0] = '\0';
		escape__str(lname, sizeof(lname), leader.name, strlen(leader.name), 0, 0);
		return err__set(e, ECHILD, "PID %d is a thread (%s) of process %d (%s), not a "
				"process; use -p %d", (int)pid, name, (int)st.tgid, lname,
				(int)st.tgid);
	}
	if (kind == PROC_TARGET_KTHREAD)
		return err__set(e, EPERM, "PID %d is a kernel thread (%s): it has no user space "
				"(kernel work: profile -a --kernel-only)", (int)pid, name);
	return err__set(e, ESRCH, "PID %d (%s) has exited", (int)pid, name);
}

bool proc__alive(pid_t pid, uint64_t start)
{
	char path[64], *buf = NULL, *p;
	uint64_t now = 0;
	bool alive;

	snprintf(path, sizeof(path), "%s/%d/stat", proc__root(), (int)pid);
	if (read_file(path, &buf, NULL, 4096))
		return false;
	p = strrchr(buf, ')');
	alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X' &&
		proc__parse_stat_starttime(buf, &now) == 0 && (!start || now == start);
	free(buf);
	return alive;
}

int proc__start_time(pid_t pid, uint64_t *start)
{
	char *buf;
	int err;

	err = read_proc_file(pid, "stat", &buf, NULL);
	if (err)
		return err;
	err = proc__parse_stat_starttime(buf, start);
	free(buf);
	return err;
}

int proc__cmdline(pid_t pid, char *buf, size_t size)
{
	struct proc_status st;
	char *data;
	size_t len, i;
	int err;

	if (size == 0)
		return -EINVAL;
	err = read_proc_file(pid, "cmdline", &data, &len);
	if (err)
		return err;
	while (len > 0 && data[len - 1] == '\0')
		len--;
	if (len == 0) {
		free(data);
		err = proc__read_status(pid, &st);
		if (err)
			return err;
		snprintf(buf, size, "[%s]", st.name);
		return 0;
	}
	for (i = 0; i < len; i++)
		if (data[i] == '\0' || data[i] == '\n')
			data[i] = ' ';
	snprintf(buf, size, "%.*s", (int)len, data);
	free(data);
	return 0;
}

int proc__parse_cgroup(const char *buf, char *out, size_t size)
{
	const char *line = buf, *first = NULL;
	size_t first_len = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len), *c2;

		if (c1 && (c2 = memchr(c1 + 1, ':', len - (c1 + 1 - line)))) {
			const char *path = c2 + 1;
			size_t plen = len - (path - line);

			if (line[0] == '0' && c1 == line + 1 && c2 == c1 + 1) {
				/* the v2 hierarchy: "0::/path" */
				if (plen > 1 || !first) {
					first = path;
					first_len = plen;
				}
				if (plen > 1)
					break;
			} else if (!first || (first_len <= 1 && plen > 1)) {
				first = path;
				first_len = plen;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!first)
		return -EINVAL;
	snprintf(out, size, "%.*s", (int)first_len, first);
	return 0;
}

void proc__cgroup_dir(const char *cg, char *buf, size_t size)
{
	struct stat u;

	snprintf(buf, size, "%s%s",
		 cg[0] == '/' ? "" :
		 stat("/sys/fs/cgroup/unified/cgroup.procs", &u) == 0 ?
		 "/sys/fs/cgroup/unified/" : "/sys/fs/cgroup/", cg);
}

int proc__cgroup(pid_t pid, char *buf, size_t size)
{
	char *data;
	int err;

	err = read_proc_file(pid, "cgroup", &data, NULL);
	if (err)
		return err;
	err = proc__parse_cgroup(data, buf, size);
	free(data);
	return err;
}

static bool is_hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

void proc__container_hint(const char *cgroup, char *buf, size_t size)
{
	const char *last = strrchr(cgroup, '/');
	const char *p;
	size_t n;

	last = last ? last + 1 : cgroup;
	/* "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope",
	 * "libpod-<id>.scope" or a bare 64-hex id: show the id like docker ps */
	for (p = last; *p; p++) {
		n = strspn(p, "0123456789abcdef");
		if (n >= 32 && is_hex_run(p, n) && (p == last || p[-1] == '-')) {
			snprintf(buf, size, "%.12s", p);
			return;
		}
	}
	if (*last == '\0')
		last = "/";
	snprintf(buf, size, "%s", last);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int proc__list(pid_t **pids)
{
	struct dirent *de;
	pid_t *arr = NULL, *tmp;
	size_t n = 0, cap = 0;
	DIR *d;

	*pids = NULL;
	d = opendir(root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t v;

		if (parse_u64(de->d_name, 1, INT_MAX, &v))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(arr, cap * sizeof(*arr));
			if (!tmp) {
				free(arr);
				closedir(d);
				return -ENOMEM;
			}
			arr = tmp;
		}
		arr[n++] = (pid_t)v;
	}
	closedir(d);
	if (n)
		qsort(arr, n, sizeof(*arr), cmp_pid);
	*pids = arr;
	return (int)n;
}

int proc__pidns(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[PATH_MAX];
	struct stat sb;

	if (pid)
		snprintf(path, sizeof(path), "%s/%d/ns/pid", root, (int)pid);
	else
		snprintf(path, sizeof(path), "%s/self/ns/pid", root);
	if (stat(path, &sb) < 0)
		return -errno;
	*dev = sb.st_dev;
	*ino = sb.st_ino;
	return 0;
}

int proc__exe(pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int err;

	err = proc_path(path, sizeof(path), pid, "exe");
	if (err)
		return err;
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

bool proc__core_object(const char *path, const char *exe)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return (exe[0] && !strcmp(path, exe)) || !strncmp(base, "libc.so", 7) ||
	       !strncmp(base, "libc-", 5) || !strncmp(base, "ld-musl-", 8) ||
	       !strncmp(base, "libc.musl-", 10);
}

static int parse_maps_line(const char *line, size_t len, struct proc_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[5];
	int consumed = 0;
	char tmp[160];
	const char *path;
	size_t plen;

	/* the fixed-width head of the line fits in tmp; the path may not */
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(len < sizeof(tmp) - 1 ? len : sizeof(tmp) - 1), line);
	if (sscanf(tmp, "%llx-%llx %4s %llx %x:%x %llu%n", &start, &end, perms, &off,
		   &maj, &min, &ino, &consumed) != 7)
		return -EINVAL;
	if (end < start || strlen(perms) != 4)
		return -EINVAL;
	path = line + consumed;
	plen = len - consumed;
	while (plen && (*path == ' ' || *path == '\t'))
		path++, plen--;
	while (plen && (path[plen - 1] == '\r' || path[plen - 1] == ' '))
		plen--;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->dev_major = maj;
	m->dev_minor = min;
	m->inode = ino;
	memcpy(m->perms, perms, 5);
	m->path = strndup(path, plen);
	return m->path ? 0 : -ENOMEM;
}

static int cmp_map(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

int proc_maps__parse(const char *buf, size_t len, struct proc_maps **out)
{
	struct proc_maps *pm;
	const char *p = buf, *end = buf + len;
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct proc_map m;

		if (l == 0) {
			p = nl ? nl + 1 : end;
			continue;
		}
		err = parse_maps_line(p, l, &m);
		if (err == -ENOMEM)
			goto fail;
		if (err) {
			pm->bad_lines++;
			err = 0;
		} else {
			if (pm->n == cap) {
				struct proc_map *tmp;

				cap = cap ? cap * 2 : 64;
				tmp = realloc(pm->maps, cap * sizeof(*tmp));
				if (!tmp) {
					free(m.path);
					err = -ENOMEM;
					goto fail;
				}
				pm->maps = tmp;
			}
			pm->maps[pm->n++] = m;
		}
		p = nl ? nl + 1 : end;
	}
	if (pm->n)
		qsort(pm->maps, pm->n, sizeof(*pm->maps), cmp_map);
	*out = pm;
	return 0;
fail:
	proc_maps__free(pm);
	return err;
}

/* The hash of the first PROC_MAPS_MAX bytes of the maps FD reads from its
 * start, read in pieces (no buffer the size of the file) into *HASH, and
 * their number into *TOTAL: 0 or a negative errno */
static int hash_maps_fd(int fd, uint64_t *hash, size_t *total)
{
	char piece[65536];
	uint64_t h = HASH_SEED;
	size_t fill = 0;
	ssize_t r;

	*total = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	/* each piece filled before it is hashed: the same text, the same
	 * pieces, however the kernel splits its reads */
	while (*total < PROC_MAPS_MAX) {
		r = read(fd, piece + fill, sizeof(piece) - fill);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		fill += (size_t)r;
		*total += (size_t)r;
		if (r == 0 || fill == sizeof(piece)) {
			h = hash__more_words(h, piece, fill);
			fill = 0;
		}
		if (r == 0)
			break;
	}
	if (fill)
		h = hash__more_words(h, piece, fill);
	*hash = hash__u64(h) | 1;
	return 0;
}

/* The maps text FD reads from its start, parsed. NULL with errno set. */
static struct proc_maps *maps_from_fd(int fd)
{
	struct proc_maps *m = NULL;
	char *buf;
	size_t len;
	int err;
	bool cut;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	err = appfile__read(fd, PROC_MAPS_MAX, true, &buf, &len, &cut);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (cut) {
		/* a process with more mappings than any real one: keep the
		 * whole lines that fit, and say they are not all */
		while (len && buf[len - 1] != '\n')
			len--;
	}
	err = proc_maps__parse(buf, len, &m);
	free(buf);
	if (err) {
		errno = -err;
		return NULL;
	}
	m->truncated = cut;
	return m;
}

int proc_maps__open(pid_t pid)
{
	char path[PATH_MAX];
	int err = proc_path(path, sizeof(path), pid, "maps"), fd;

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct proc_maps *proc_maps__load_changed_fd(int fd, uint64_t last, uint64_t *hash)
{
	size_t total;
	int err = hash_maps_fd(fd, hash, &total);

	if (!err && total == 0)
		err = -ESRCH;	/* its process has exited */
	if (err) {
		*hash = 0;
		errno = -err;
		return NULL;
	}
	if (*hash == last) {
		errno = 0;
		return NULL;
	}
	return maps_from_fd(fd);
}

struct proc_maps *proc_maps__load(pid_t pid)
{
	struct proc_maps *m;
	int fd = proc_maps__open(pid), err;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	m = maps_from_fd(fd);
	err = errno;
	close(fd);
	errno = err;
	return m;
}

const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_map *e = &m->maps[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool proc_maps__has_lib(const struct proc_maps *m, const char *prefix)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->maps[i].path[0] == '/' &&
		    str_has_prefix(base_name(m->maps[i].path), prefix))
			return true;
	return false;
}

void proc_maps__free(struct proc_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->maps[i].path);
	free(m->maps);
	free(m);
}

/* Whether base name B is NAME, bare or with the version distributions
 * append ("ruby3.1", "php-fpm8.2", "perl5.36.0"): digits and dots. */
static bool named_versioned(const char *b, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(b, name, n) != 0)
		return false;
	for (b += n; *b; b++)
		if (!isdigit((unsigned char)*b) && *b != '.')
			return false;
	return true;
}

enum proc_runtime proc__detect_runtime(const struct proc_maps *m, const char *exe)
{
	static const struct {
		enum proc_runtime rt;
		const char *names[3];	/* executables, named_versioned */
		const char *prefix;	/* or an executable's name starts so */
		const char *lib;	/* what an embedding program maps */
	} interp[] = {
		{ RUNTIME_RUBY, { "ruby" }, NULL, "libruby" },
		{ RUNTIME_PHP, { "php", "php-fpm", "php-cgi" }, NULL, "libphp" },
		{ RUNTIME_PERL, { "perl" }, NULL, "libperl" },
		/* beam.smp, beam.debug.smp...: statically linked */
		{ RUNTIME_BEAM, { "beam" }, "beam.", NULL },
	};
	const char *b = exe ? base_name(exe) : "";
	size_t i, k;

	if (m && proc_maps__has_lib(m, "libcoreclr.so"))
		return RUNTIME_DOTNET;
	if (m && proc_maps__has_lib(m, "libjvm.so"))
		return RUNTIME_JVM;
	/* node is usually one static executable; some distros ship libnode */
	if (strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0 ||
	    (m && proc_maps__has_lib(m, "libnode.so")))
		return RUNTIME_NODE;
	/* python, python3, python3.11; an embedding program maps libpython */
	if ((str_has_prefix(b, "python") &&
	     (b[6] == '\0' || isdigit((unsigned char)b[6]))) ||
	    (m && proc_maps__has_lib(m, "libpython")))
		return RUNTIME_PYTHON;
	for (i = 0; i < sizeof(interp) / sizeof(interp[0]); i++) {
		for (k = 0; k < 3 && interp[i].names[k]; k++)
			if (named_versioned(b, interp[i].names[k]))
				return interp[i].rt;
		if (interp[i].prefix && str_has_prefix(b, interp[i].prefix))
			return interp[i].rt;
		if (m && interp[i].lib && proc_maps__has_lib(m, interp[i].lib))
			return interp[i].rt;
	}
	return RUNTIME_NATIVE;
}

const char *proc__runtime_name(enum proc_runtime rt)
{
	switch (rt) {
	case RUNTIME_DOTNET:
		return "dotnet";
	case RUNTIME_NODE:
		return "node";
	case RUNTIME_JVM:
		return "jvm";
	case RUNTIME_GO:
		return "go";
	case RUNTIME_PYTHON:
		return "python";
	case RUNTIME_RUBY:
		return "ruby";
	case RUNTIME_PHP:
		return "php";
	case RUNTIME_PERL:
		return "perl";
	case RUNTIME_BEAM:
		return "beam";
	default:
		return "native";
	}
}

int proc__perfmap_open(pid_t pid, pid_t nstgid, char *buf, size_t size, struct stat *st)
{
	int fd;

	/* the process's own /tmp, resolved inside its root */
	snprintf(buf, size, "%s/%d/root/tmp/perf-%d.map", root, (int)pid, (int)nstgid);
	fd = appfile__open(buf, 0, st);
	if (fd >= 0 || fd == -APPFILE_ENOTREG)
		return fd;
	/* the pod shares /tmp as an emptyDir: the name uses the app's PID;
	 * nothing in a shared directory is followed */
	snprintf(buf, size, "/tmp/perf-%d.map", (int)nstgid);
	fd = appfile__open(buf, APPFILE_NOFOLLOW, st);
	if (fd < 0)
		buf[0] = '\0';
	return fd;
}

int proc__perfmap_path(pid_t pid, pid_t nstgid, char *buf, size_t size)
{
	int fd = proc__perfmap_open(pid, nstgid, buf, size, NULL);

	if (fd < 0) {
		buf[0] = '\0';
		return -ENOENT;
	}
	close(fd);
	return 0;
}

static bool base_matches(const char *path, size_t len, const char *name)
{
	const char *b = path, *p;
	size_t blen, nlen = strlen(name);

	for (p = path; p < path + len; p++)
		if (*p == '/')
			b = p + 1;
	blen = len - (b - path);
	if (blen == nlen && memcmp(b, name, nlen) == 0)
		return true;
	return blen == nlen + 4 && memcmp(b, name, nlen) == 0 &&
	       memcmp(b + nlen, ".dll", 4) == 0;
}

bool proc__matches_name(pid_t pid, const char *comm, const char *name)
{
	char exe[PATH_MAX], *args;
	size_t len, off = 0;
	int i;

	/* comm is cut at 15 bytes by the kernel */
	if (comm && (strcmp(comm, name) == 0 ||
		     (strlen(comm) == 15 && strncmp(comm, name, 15) == 0)))
		return true;
	if (proc__exe(pid, exe, sizeof(exe)) == 0 && base_matches(exe, strlen(exe), name))
		return true;
	if (read_proc_file(pid, "cmdline", &args, &len))
		return false;
	for (i = 0; i < 2 && off < len; i++) {
		size_t l = strnlen(args + off, len - off);

		if (base_matches(args + off, l, name)) {
			free(args);
			return true;
		}
		off += l + 1;
	}
	free(args);
	return false;
}

int proc__find_by_name(const char *name, pid_t **pids)
{
	pid_t *all, *out;
	pid_t self = getpid();
	int n, i, k = 0;

	*pids = NULL;
	n = proc__list(&all);
	if (n < 0)
		return n;
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!out) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct proc_status st;

		if (all[i] == self || proc__read_status(all[i], &st))
			continue;
		if (proc__matches_name(all[i], st.name, name))
			out[k++] = all[i];
	}
	free(all);
	*pids = out;
	return k;
}

/* The offset of CLOCK (its name in timens_offsets) in ns, 0 when none. */
static long long timens_offset(const char *clock)
{
	char *buf = NULL, *line, *save = NULL, name[16];
	long long sec, nsec, off = 0;

	if (read_file("/proc/self/timens_offsets", &buf, NULL, 4096))
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%15s %lld %lld", name, &sec, &nsec) == 3 && !strcmp(name, clock))
			off = sec * 1000000000ll + nsec;
	free(buf);
	return off;
}

uint64_t proc__bpf_clock_ns(void)
{
	long long off = timens_offset("monotonic");
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)((long long)ts.tv_sec * 1000000000ll + ts.tv_nsec - off);
}

uint64_t proc__timens_boot_ticks(uint64_t ns_per_tick)
{
	long long off = timens_offset("boottime");

	return off > 0 && ns_per_tick ? (uint64_t)off / ns_per_tick : 0;
}

int proc__self_vdso(uintptr_t *base, size_t *len)
{
	uintptr_t b = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	struct proc_maps *maps = NULL;
	const struct proc_map *m;
	char *buf = NULL;
	size_t n;
	int ret = -1;

	if (!b || read_file("/proc/self/maps", &buf, &n, 64u << 20) ||
	    proc_maps__parse(buf, n, &maps))
		goto out;
	m = proc_maps__find(maps, b);
	if (m && m->start == b && strcmp(m->path, "[vdso]") == 0) {
		*base = b;
		*len = (size_t)(m->end - m->start);
		ret = 0;
	}
out:
	proc_maps__free(maps);
	free(buf);
	return ret;
}
