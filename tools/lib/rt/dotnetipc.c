// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The .NET diagnostics IPC client: the socket found inside the app's root,
 * one command a connection, replies parsed strictly, every step within the
 * handle's deadline. See dotnetipc.h for the protocol and the contract. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/escape.h"
#include "core/proc.h"
#include "core/util.h"
#include "rt/dotnetipc.h"
#include "rt/rtsock.h"
#include "uprobe/utf16.h"

/* The app's environment block is read up to this much: TMPDIR past it is
 * not seen (said in -v terms by env.cut). */
#define ENVIRON_MAX	(1u << 20)
/* Entries of its TMPDIR looked at, at most: a /tmp of millions of files
 * must not cost a listing of them all. */
#define LIST_MAX	65536
#define SOCKET_PREFIX	"dotnet-diagnostic-"
#define SOCKET_SUFFIX	"-socket"

struct dotnetipc {
	pid_t pid;		/* in our PID namespace */
	pid_t nspid;		/* as it sees itself: the socket's name */
	uint64_t start;		/* its start time: the socket's key */
	int timeout_ms;
	struct dotnetipc_env env;
	char name[96];		/* the socket's name in env.tmpdir */
	char path[256 + 96];	/* env.tmpdir/name, for messages */
};

static const char HINT_RESTART[] = "set DOTNET_PerfMapEnabled=1 in its environment at its next start";

/* ---- the wire ---- */

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int dotnetipc__encode(uint8_t set, uint8_t id, const void *payload, size_t plen,
		      uint8_t *buf, size_t size)
{
	size_t total = DOTNETIPC_HEADER_SIZE + plen;

	if (total > UINT16_MAX)
		return -EMSGSIZE;
	if (total > size)
		return -ENOSPC;
	memcpy(buf, DOTNETIPC_MAGIC, sizeof(DOTNETIPC_MAGIC));	/* with its NUL */
	put_le16(buf + 14, (uint16_t)total);
	buf[16] = set;
	buf[17] = id;
	put_le16(buf + 18, 0);
	if (plen)
		memcpy(buf + DOTNETIPC_HEADER_SIZE, payload, plen);
	return (int)total;
}

int dotnetipc__parse_header(const uint8_t *buf, size_t len, uint16_t *size, struct err *e)
{
	if (len < DOTNETIPC_HEADER_SIZE)
		return err__set(e, EPROTO, "a header of %zu bytes", len);
	if (memcmp(buf, DOTNETIPC_MAGIC, sizeof(DOTNETIPC_MAGIC)) != 0)
		return err__set(e, EPROTO, "no DOTNET_IPC_V1 magic");
	*size = get_le16(buf + 14);
	if (*size < DOTNETIPC_HEADER_SIZE)
		return err__set(e, EPROTO, "a message size of %u bytes, less than its header",
				*size);
	return 0;
}

int dotnetipc__parse_reply(const uint8_t *buf, size_t len, struct dotnetipc_reply *r,
			   struct err *e)
{
	uint16_t size;
	int err;

	memset(r, 0, sizeof(*r));
	err = dotnetipc__parse_header(buf, len, &size, e);
	if (err)
		return err;
	if (size != len)
		return err__set(e, EPROTO, "a message size of %u bytes in %zu", size, len);
	/* the reserved field is ignored: the protocol reserves it for later */
	if (buf[16] != DOTNETIPC_SET_SERVER ||
	    (buf[17] != DOTNETIPC_SERVER_OK && buf[17] != DOTNETIPC_SERVER_ERROR))
		return err__set(e, EPROTO, "command 0x%02x%02x where a reply (0xff00, 0xffff) belongs",
				buf[16], buf[17]);
	r->error = buf[17] == DOTNETIPC_SERVER_ERROR;
	r->payload = buf + DOTNETIPC_HEADER_SIZE;
	r->len = len - DOTNETIPC_HEADER_SIZE;
	if (r->len == 4 || r->len == 8) {
		r->hresult = get_le32(r->payload);
		r->has_hresult = true;
	}
	if (r->error && !r->has_hresult)
		return err__set(e, EPROTO, "an error reply of %zu payload bytes (an HRESULT has 4)",
				r->len);
	return 0;
}

/* One "string" of the protocol: a u32 count of UTF-16 code units, the last
 * of them a NUL, or a count of 0 (no string). */
static int take_string(const uint8_t **p, size_t *left, char *out, size_t outsz,
		       const char *what, struct err *e)
{
	uint32_t units;
	uint64_t bytes;

	if (*left < 4)
		return err__set(e, EPROTO, "ProcessInfo cut short in its %s", what);
	units = get_le32(*p);
	*p += 4;
	*left -= 4;
	out[0] = '\0';
	if (units == 0)
		return 0;
	bytes = (uint64_t)units * 2;
	if (bytes > *left)
		return err__set(e, EPROTO, "a %s of %u code units in %zu bytes", what, units, *left);
	if ((*p)[bytes - 2] != 0 || (*p)[bytes - 1] != 0)
		return err__set(e, EPROTO, "a %s without its terminating NUL", what);
	utf16__to_utf8(*p, (size_t)bytes, units, UTF16_STOP_NUL | UTF16_MARK_CUT, out, outsz, NULL);
	*p += bytes;
	*left -= (size_t)bytes;
	return 0;
}

int dotnetipc__parse_process_info(const uint8_t *buf, size_t len, bool v2,
				  struct dotnet_info *info, struct err *e)
{
	const uint8_t *p = buf;
	size_t left = len;
	int err;

	memset(info, 0, sizeof(*info));
	if (left < 24)
		return err__set(e, EPROTO, "ProcessInfo of %zu bytes", len);
	info->pid = (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
	memcpy(info->cookie, p + 8, 16);
	p += 24;
	left -= 24;
	err = take_string(&p, &left, info->cmdline, sizeof(info->cmdline), "command line", e);
	if (!err)
		err = take_string(&p, &left, info->os, sizeof(info->os), "OS name", e);
	if (!err)
		err = take_string(&p, &left, info->arch, sizeof(info->arch), "architecture", e);
	if (!err && v2)
		err = take_string(&p, &left, info->assembly, sizeof(info->assembly),
				  "entry assembly", e);
	if (!err && v2)
		err = take_string(&p, &left, info->version, sizeof(info->version),
				  "runtime version", e);
	if (err)
		return err;
	if (left)
		return err__set(e, EPROTO, "%zu bytes after the last field of ProcessInfo", left);
	info->v2 = v2;
	return 0;
}

const char *dotnetipc__hresult_name(uint32_t hr)
{
	switch (hr) {
	case 0x80131384u: return "bad encoding";
	case DOTNETIPC_E_UNKNOWN_COMMAND: return "unknown command";
	case 0x80131386u: return "unknown magic";
	case DOTNETIPC_E_NOTSUPPORTED: return "not supported";
	case 0x80004005u: return "failure";
	case 0x8013135bu: return "not yet available";
	case 0x80131371u: return "runtime not initialized";
	case 0x80070057u: return "invalid argument";
	case 0x8007007au: return "insufficient buffer";
	case 0x800000cbu: return "environment variable not found";
	case 0x8007000eu: return "out of memory";
	}
	return NULL;
}

int dotnetipc__call_fd(int fd, uint8_t set, uint8_t id, const void *payload, size_t plen,
		       uint64_t deadline_ns, uint8_t **reply, struct dotnetipc_reply *r,
		       struct err *e)
{
	uint8_t req[64], hdr[DOTNETIPC_HEADER_SIZE], *buf = NULL;
	uint16_t size;
	size_t got = 0;
	int len, err;

	*reply = NULL;
	memset(r, 0, sizeof(*r));
	len = dotnetipc__encode(set, id, payload, plen, req, sizeof(req));
	if (len < 0)
		return err__set(e, -len, "a request too long");
	err = rtsock__send(fd, req, (size_t)len, deadline_ns);
	if (err == -ETIMEDOUT)
		return err__set(e, ETIMEDOUT, "the request not taken");
	if (err)
		return err__set(e, EPROTO, "the connection closed before the request was taken (%s)",
				strerror(-err));
	err = rtsock__recv(fd, hdr, sizeof(hdr), deadline_ns, &got);
	if (err == -ETIMEDOUT)
		return err__set(e, ETIMEDOUT, got ? "only %zu bytes of a reply" :
				"no reply from its diagnostics socket", got);
	if (err == -ENODATA)
		return err__set(e, EPROTO, got ? "a reply cut short after %zu bytes" :
				"the connection closed without a reply", got);
	if (err)
		return err__set(e, EPROTO, "the reply not read (%s)", strerror(-err));
	err = dotnetipc__parse_header(hdr, sizeof(hdr), &size, e);
	if (err)
		return err;
	buf = malloc(size);
	if (!buf)
		return err__set(e, ENOMEM, "no memory for a reply of %u bytes", size);
	memcpy(buf, hdr, sizeof(hdr));
	err = rtsock__recv(fd, buf + sizeof(hdr), size - sizeof(hdr), deadline_ns, &got);
	if (err == -ETIMEDOUT)
		err = err__set(e, ETIMEDOUT, "only %zu of the %u bytes of a reply",
			       got + sizeof(hdr), size);
	else if (err == -ENODATA)
		err = err__set(e, EPROTO, "a reply cut short: %zu of the %u bytes it announced",
			       got + sizeof(hdr), size);
	else if (err)
		err = err__set(e, EPROTO, "the reply not read (%s)", strerror(-err));
	else
		err = dotnetipc__parse_reply(buf, size, r, e);
	if (err) {
		free(buf);
		memset(r, 0, sizeof(*r));
		return err;
	}
	*reply = buf;
	return 0;
}

/* ---- the app's environment ---- */

static int config_value(const char *v)
{
	unsigned long n;
	char *end;

	/* the runtime reads its DWORD settings as hexadecimal */
	errno = 0;
	n = strtoul(v, &end, 16);
	if (end == v || *end || errno || n > INT_MAX)
		return -1;
	return (int)n;
}

/* Whether to take a setting's value, as the runtime's getenv does: the
 * first DOTNET_X, else the first COMPlus_X. SEEN: [0] a DOTNET_ one was
 * taken, [1] a COMPlus_ one. */
static bool take(bool dotnet, bool seen[2])
{
	if (seen[0] || (!dotnet && seen[1]))
		return false;
	seen[dotnet ? 0 : 1] = true;
	return true;
}

void dotnetipc__parse_environ(const char *buf, size_t len, struct dotnetipc_env *env)
{
	bool diag[2] = { false }, ipc[2] = { false }, pm[2] = { false }, dir[2] = { false };
	bool tmpdir_seen = false;
	size_t off = 0;

	memset(env, 0, sizeof(*env));
	env->diagnostics = env->diagnostics_ipc = env->perfmap = -1;
	while (off < len) {
		const char *entry = buf + off, *eq, *val, *name;
		size_t elen = strnlen(entry, len - off), nlen, vlen;
		char v[256];	/* a setting's value, NUL-terminated and bounded */
		bool dotnet;

		off += elen + 1;
		eq = memchr(entry, '=', elen);
		if (!eq)
			continue;
		nlen = (size_t)(eq - entry);
		val = eq + 1;
		vlen = elen - nlen - 1;
		if (nlen == 6 && memcmp(entry, "TMPDIR", 6) == 0) {
			/* the first one is getenv's; an empty one means /tmp */
			if (tmpdir_seen)
				continue;
			tmpdir_seen = true;
			if (vlen == 0)
				continue;
			env->tmpdir_set = true;
			env->tmpdir_long = vlen >= sizeof(env->tmpdir);
			if (!env->tmpdir_long) {
				memcpy(env->tmpdir, val, vlen);
				env->tmpdir[vlen] = '\0';
			}
			continue;
		}
		if (nlen > 7 && memcmp(entry, "DOTNET_", 7) == 0) {
			dotnet = true;
			name = entry + 7;
			nlen -= 7;
		} else if (nlen > 8 && memcmp(entry, "COMPlus_", 8) == 0) {
			dotnet = false;
			name = entry + 8;
			nlen -= 8;
		} else {
			continue;
		}
		if (vlen >= sizeof(v))
			vlen = sizeof(v) - 1;
		memcpy(v, val, vlen);
		v[vlen] = '\0';
#define SETTING(lit) (nlen == sizeof(lit) - 1 && memcmp(name, lit, nlen) == 0)
		if (SETTING("EnableDiagnostics")) {
			if (take(dotnet, diag))
				env->diagnostics = config_value(v);
		} else if (SETTING("EnableDiagnostics_IPC")) {
			if (take(dotnet, ipc))
				env->diagnostics_ipc = config_value(v);
		} else if (SETTING("PerfMapEnabled")) {
			if (take(dotnet, pm))
				env->perfmap = config_value(v);
		} else if (SETTING("PerfMapJitDumpPath")) {
			if (take(dotnet, dir))
				snprintf(env->perfmap_dir, sizeof(env->perfmap_dir), "%s", v);
		}
#undef SETTING
	}
	if (!env->tmpdir_set || env->tmpdir_long)
		snprintf(env->tmpdir, sizeof(env->tmpdir), "/tmp");
}

static void read_environ(pid_t pid, struct dotnetipc_env *env)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0;
	bool cut = false;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/environ", proc__root(), (int)pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || appfile__read(fd, ENVIRON_MAX, true, &buf, &len, &cut)) {
		/* unreadable: the defaults, as for an app that sets nothing */
		buf = NULL;
		len = 0;
	}
	if (fd >= 0)
		close(fd);
	dotnetipc__parse_environ(buf ? buf : "", len, env);
	env->cut = cut;
	free(buf);
}

/* ---- finding the socket ---- */

struct find {
	char prefix[48];	/* "dotnet-diagnostic-NSPID-" */
	size_t prefix_len;
	uint64_t start;
	bool found, exact;
	uint64_t key;
	char name[96];
};

/* A decimal key of 1 to 20 digits within u64, then "-socket", then the end. */
static bool parse_key(const char *s, uint64_t *key)
{
	uint64_t v = 0;
	size_t n = 0;

	for (; s[n] >= '0' && s[n] <= '9'; n++) {
		unsigned d = (unsigned)(s[n] - '0');

		if (n == 20 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (n == 0 || strcmp(s + n, SOCKET_SUFFIX) != 0)
		return false;
	*key = v;
	return true;
}

static int find_one(const char *name, void *arg)
{
	struct find *f = arg;
	uint64_t key;

	if (strncmp(name, f->prefix, f->prefix_len) != 0 || !parse_key(name + f->prefix_len, &key))
		return 0;
	/* the runtime's key is its start time: that one is it; else the
	 * newest (a time namespace shifts what we read of its start) */
	if (!f->found || key == f->start || (!f->exact && key > f->key)) {
		f->found = true;
		f->exact = key == f->start;
		f->key = key;
		snprintf(f->name, sizeof(f->name), "%s", name);
	}
	return f->exact ? 1 : 0;	/* the runtime's own: no need to look further */
}

/* NAME of the app's choosing, escaped for a message. */
static const char *esc(char *buf, size_t size, const char *name)
{
	escape__str(buf, size, name, strlen(name), 80, 0);
	return buf;
}

static int not_found(const struct dotnetipc *d, struct err *e)
{
	const struct dotnetipc_env *env = &d->env;
	char dir[128];

	if (env->diagnostics == 0)
		return err__set(e, ENOENT, "the .NET diagnostics of process %d are off "
				"(DOTNET_EnableDiagnostics=0 in its environment): for names of its JIT "
				"code %s", (int)d->pid, HINT_RESTART);
	if (env->diagnostics_ipc == 0)
		return err__set(e, ENOENT, "the .NET diagnostics socket of process %d is off "
				"(DOTNET_EnableDiagnostics_IPC=0 in its environment): for names of its "
				"JIT code %s", (int)d->pid, HINT_RESTART);
	if (env->tmpdir_long)
		return err__set(e, ENOENT, "process %d has a TMPDIR too long for a .NET diagnostics "
				"socket: for names of its JIT code %s", (int)d->pid, HINT_RESTART);
	return err__set(e, ENOENT, "process %d has no .NET diagnostics socket in its TMPDIR %s "
			"(not a .NET process, or DOTNET_EnableDiagnostics=0): for names of its JIT "
			"code %s", (int)d->pid, esc(dir, sizeof(dir), env->tmpdir), HINT_RESTART);
}

struct dotnetipc *dotnetipc__open(pid_t pid, int timeout_ms, struct err *e)
{
	struct dotnetipc *d = NULL;
	struct proc_status st;
	struct find f = { 0 };
	char dir[128];
	uint64_t deadline;
	int dirfd = -1, err;

	d = calloc(1, sizeof(*d));
	if (!d) {
		err = err__set(e, ENOMEM, "out of memory");
		goto fail;
	}
	d->pid = pid;
	d->timeout_ms = timeout_ms > 0 ? timeout_ms : DOTNETIPC_TIMEOUT_MS;
	deadline = now_ns() + (uint64_t)d->timeout_ms * 1000000u;
	if (proc__read_status(pid, &st) || proc__start_time(pid, &d->start)) {
		err = err__set(e, ESRCH, "no process %d", (int)pid);
		goto fail;
	}
	d->nspid = st.nstgid > 0 ? st.nstgid : pid;
	read_environ(pid, &d->env);
	if (d->env.tmpdir_long) {
		err = not_found(d, e);
		goto fail;
	}
	if (d->env.tmpdir[0] != '/') {
		err = err__set(e, ENOENT, "process %d has a TMPDIR that is not an absolute path (%s): "
			       "for names of its JIT code %s", (int)pid,
			       esc(dir, sizeof(dir), d->env.tmpdir), HINT_RESTART);
		goto fail;
	}
	dirfd = rtsock__open_dir(pid, d->env.tmpdir);
	if (dirfd == -ENOENT || dirfd == -ENOTDIR) {
		err = not_found(d, e);
		goto fail;
	}
	if (dirfd < 0) {
		err = err__set(e, -dirfd, "cannot open the TMPDIR %s of process %d: %s%s",
			       esc(dir, sizeof(dir), d->env.tmpdir), (int)pid, appfile__strerror(dirfd),
			       dirfd == -EACCES || dirfd == -EPERM ? " (another process's root needs "
			       "CAP_SYS_PTRACE, and its capabilities within ours)" : "");
		goto fail;
	}
	snprintf(f.prefix, sizeof(f.prefix), SOCKET_PREFIX "%d-", (int)d->nspid);
	f.prefix_len = strlen(f.prefix);
	f.start = d->start;
	err = rtsock__list(dirfd, LIST_MAX, deadline, find_one, &f);
	if (err < 0 && !f.exact) {
		if (err == -E2BIG)
			err = err__set(e, E2BIG, "the TMPDIR %s of process %d holds more than %u entries: "
				       "its .NET diagnostics socket not looked for past them",
				       esc(dir, sizeof(dir), d->env.tmpdir), (int)pid, LIST_MAX);
		else if (err == -ETIMEDOUT)
			err = err__set(e, ETIMEDOUT, "the TMPDIR %s of process %d not listed within %d ms",
				       esc(dir, sizeof(dir), d->env.tmpdir), (int)pid, d->timeout_ms);
		else
			err = err__set(e, -err, "cannot list the TMPDIR %s of process %d: %s",
				       esc(dir, sizeof(dir), d->env.tmpdir), (int)pid, strerror(-err));
		goto fail;
	}
	if (!f.found) {
		err = not_found(d, e);
		goto fail;
	}
	snprintf(d->name, sizeof(d->name), "%s", f.name);
	snprintf(d->path, sizeof(d->path), "%s%s%s", d->env.tmpdir,
		 str_has_suffix(d->env.tmpdir, "/") ? "" : "/", d->name);
	close(dirfd);
	return d;
fail:
	if (dirfd >= 0)
		close(dirfd);
	free(d);
	errno = -err;
	return NULL;
}

void dotnetipc__free(struct dotnetipc *d)
{
	free(d);
}

const char *dotnetipc__socket(const struct dotnetipc *d)
{
	return d->path;
}

pid_t dotnetipc__nspid(const struct dotnetipc *d)
{
	return d->nspid;
}

const struct dotnetipc_env *dotnetipc__env(const struct dotnetipc *d)
{
	return &d->env;
}

void dotnetipc__set_timeout(struct dotnetipc *d, int timeout_ms)
{
	d->timeout_ms = timeout_ms > 0 ? timeout_ms : DOTNETIPC_TIMEOUT_MS;
}

bool dotnetipc__should_disable(const struct dotnetipc *d, bool map_existed)
{
	/* PerfMapEnabled 1 (all), 2 (jitdump), 3 (map): the app asked for them
	 * itself, and DisablePerfMap would stop jitdump too */
	return !map_existed && d->env.perfmap <= 0;
}

/* ---- commands ---- */

static uint64_t deadline_of(const struct dotnetipc *d)
{
	return now_ns() + (uint64_t)d->timeout_ms * 1000000u;
}

/* One command on a new connection: the socket opened again inside the
 * app's root (no link followed), connected, the exchange, all by DEADLINE
 * (one for everything a public call does). E gets the cause alone; the
 * callers say what failed. */
static int command(struct dotnetipc *d, uint64_t deadline, uint8_t id, const void *payload,
		   size_t plen, uint8_t **reply, struct dotnetipc_reply *r, struct err *e)
{
	char name[128];
	int dirfd = -1, pathfd = -1, fd = -1, err;

	*reply = NULL;
	/* a PID reused since the lookup is another process */
	if (!proc__alive(d->pid, d->start)) {
		err = err__set(e, ESRCH, "the process has exited");
		goto out;
	}
	dirfd = rtsock__open_dir(d->pid, d->env.tmpdir);
	if (dirfd < 0) {
		err = err__set(e, -dirfd, "its TMPDIR: %s", appfile__strerror(dirfd));
		goto out;
	}
	pathfd = rtsock__open_socket(dirfd, d->name, NULL);
	if (pathfd == -ELOOP || pathfd == -ENOTSOCK) {
		err = err__set(e, -pathfd, "%s is %s: refused", esc(name, sizeof(name), d->path),
			       pathfd == -ELOOP ? "a symbolic link, not a socket" : "not a socket");
		goto out;
	}
	if (pathfd < 0) {
		err = err__set(e, -pathfd, "%s: %s", esc(name, sizeof(name), d->path), strerror(-pathfd));
		goto out;
	}
	fd = rtsock__connect(pathfd, deadline);
	if (fd == -ECONNREFUSED) {
		err = err__set(e, ECONNREFUSED, "nobody listens on %s (left by an exited process?)",
			       esc(name, sizeof(name), d->path));
		goto out;
	}
	if (fd == -EACCES) {
		err = err__set(e, EACCES, "no permission to connect to %s (the runtime makes it "
			       "0600: only its owner, or CAP_DAC_OVERRIDE, may)",
			       esc(name, sizeof(name), d->path));
		goto out;
	}
	if (fd == -ETIMEDOUT) {
		err = err__set(e, ETIMEDOUT, "its diagnostics server not accepting connections");
		goto out;
	}
	if (fd < 0) {
		err = err__set(e, fd == -EPROTOTYPE ? EPROTO : -fd, "cannot connect to %s: %s",
			       esc(name, sizeof(name), d->path), strerror(-fd));
		goto out;
	}
	err = dotnetipc__call_fd(fd, DOTNETIPC_SET_PROCESS, id, payload, plen, deadline, reply, r, e);
out:
	if (fd >= 0)
		close(fd);
	if (pathfd >= 0)
		close(pathfd);
	if (dirfd >= 0)
		close(dirfd);
	return err;
}

/* An error reply, or an OK one whose HRESULT is not 0, as a cause in E. */
static int refused(const struct dotnetipc_reply *r, const char *cmd, struct err *e)
{
	const char *name = dotnetipc__hresult_name(r->hresult);

	if (r->error && r->hresult == DOTNETIPC_E_UNKNOWN_COMMAND)
		return err__set(e, EOPNOTSUPP, "its runtime does not know %s", cmd);
	return err__set(e, EREMOTEIO, "its runtime refused %s: HRESULT 0x%08x%s%s%s", cmd,
			r->hresult, name ? " (" : "", name ? name : "", name ? ")" : "");
}

/* Reword E (a cause) into "WHAT: CAUSE[ within N ms]; HINT". */
static int say(const struct dotnetipc *d, int err, const char *what, const char *hint,
	       struct err *e)
{
	char cause[ERR_MSG_MAX], within[48] = "";

	if (!e)
		return err;
	if (err == -EPROTO)
		snprintf(cause, sizeof(cause), "its socket answered outside the .NET diagnostics "
			 "protocol (%s)", e->msg);
	else
		snprintf(cause, sizeof(cause), "%s", e->msg);
	if (err == -ETIMEDOUT)
		snprintf(within, sizeof(within), " within %d ms", d->timeout_ms);
	if (err == -ESRCH)
		hint = NULL;	/* nothing left to do */
	return err__set(e, -err, "%s: %s%s%s%s", what, cause, within, hint ? "; " : "",
			hint ? hint : "");
}

static int ask_info(struct dotnetipc *d, uint64_t deadline, uint8_t id, struct dotnet_info *info,
		    struct err *e)
{
	struct dotnetipc_reply r;
	uint8_t *buf = NULL;
	int err;

	err = command(d, deadline, id, NULL, 0, &buf, &r, e);
	if (!err && r.error)
		err = refused(&r, id == DOTNETIPC_PROCESS_INFO2 ? "ProcessInfo2" : "ProcessInfo", e);
	if (!err)
		err = dotnetipc__parse_process_info(r.payload, r.len, id == DOTNETIPC_PROCESS_INFO2,
						    info, e);
	if (!err && info->pid != (uint64_t)d->nspid)
		err = err__set(e, EPROTO, "it answered for process %llu, not %d",
			       (unsigned long long)info->pid, (int)d->nspid);
	free(buf);
	return err;
}

int dotnetipc__process_info(struct dotnetipc *d, struct dotnet_info *info, struct err *e)
{
	uint64_t deadline = deadline_of(d);
	char what[96];
	int err;

	err = ask_info(d, deadline, DOTNETIPC_PROCESS_INFO2, info, e);
	/* ProcessInfo2 came with .NET 6 */
	if (err == -EOPNOTSUPP)
		err = ask_info(d, deadline, DOTNETIPC_PROCESS_INFO, info, e);
	if (!err)
		return 0;
	snprintf(what, sizeof(what), "cannot ask the .NET runtime of process %d", (int)d->pid);
	return say(d, err, what, NULL, e);
}

/* A command whose reply is an HRESULT: 0 only for an OK reply with 0. */
static int hresult_command(struct dotnetipc *d, uint64_t deadline, uint8_t id,
			   const void *payload, size_t plen, const char *cmd, struct err *e)
{
	struct dotnetipc_reply r;
	uint8_t *buf = NULL;
	int err;

	err = command(d, deadline, id, payload, plen, &buf, &r, e);
	if (!err && !r.error && !r.has_hresult)
		err = err__set(e, EPROTO, "an OK reply to %s with %zu payload bytes (an HRESULT has 4)",
			       cmd, r.len);
	if (!err && (r.error || r.hresult != 0))
		err = refused(&r, cmd, e);
	free(buf);
	return err;
}

int dotnetipc__enable_perfmap(struct dotnetipc *d, struct err *e)
{
	const uint8_t type[4] = { DOTNETIPC_PERFMAP_TYPE, 0, 0, 0 };
	uint64_t deadline = deadline_of(d);
	char what[96], dir[128];
	int err;

	snprintf(what, sizeof(what), "cannot switch on the perf map of .NET process %d", (int)d->pid);
	if (d->env.perfmap_dir[0] && strcmp(d->env.perfmap_dir, "/tmp") != 0 &&
	    strcmp(d->env.perfmap_dir, "/tmp/") != 0) {
		err__set(e, EXDEV, "it writes perf maps to %s (DOTNET_PerfMapJitDumpPath), where "
			 "they are not read", esc(dir, sizeof(dir), d->env.perfmap_dir));
		return say(d, -EXDEV, what, "unset DOTNET_PerfMapJitDumpPath at its next start", e);
	}
	err = hresult_command(d, deadline, DOTNETIPC_ENABLE_PERFMAP, type, sizeof(type),
			      "EnablePerfMap", e);
	if (err == -EOPNOTSUPP) {
		struct dotnet_info info;

		/* name the runtime that lacks it, when it says in the time left */
		if (ask_info(d, deadline, DOTNETIPC_PROCESS_INFO2, &info, NULL) == 0 &&
		    info.version[0])
			err__set(e, EOPNOTSUPP, "its runtime (%s) has no EnablePerfMap (.NET 8 added it)",
				 esc(dir, sizeof(dir), info.version));
		else
			err__set(e, EOPNOTSUPP, "its runtime has no EnablePerfMap (.NET 6 or 7; "
				 ".NET 8 added it)");
	}
	if (!err)
		return 0;
	return say(d, err, what, HINT_RESTART, e);
}

int dotnetipc__disable_perfmap(struct dotnetipc *d, struct err *e)
{
	char what[96];
	int err;

	err = hresult_command(d, deadline_of(d), DOTNETIPC_DISABLE_PERFMAP, NULL, 0,
			      "DisablePerfMap", e);
	if (!err)
		return 0;
	snprintf(what, sizeof(what), "cannot switch off the perf map of .NET process %d", (int)d->pid);
	return say(d, err, what, err == -ESRCH ? NULL : "it stays on until the process exits", e);
}
