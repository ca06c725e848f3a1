// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprobe attachment through uprobe_multi links or perf events; see uplink.h.
 * libbpf 1.1 predates uprobe_multi, so the link is created with bpf(2)
 * directly, from the kernel's documented attribute layout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "uprobe/uplink.h"

#define ATTACH_UPROBE_MULTI	48	/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN	1U	/* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr for BPF_LINK_CREATE with uprobe_multi (linux 6.6+). */
struct link_create_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

struct uplink {
	int fd;			/* uprobe_multi link (all offsets), or -1 */
	struct bpf_link **perf;	/* perf event links, one per offset, or NULL */
	size_t nperf;
};

static int link_create(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, uint32_t cnt, uint32_t flags, pid_t pid)
{
	struct link_create_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offs;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = cnt;
	a.multi_flags = flags;
	a.pid = pid > 0 ? (uint32_t)pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -1 : (int)fd;
}

/* A minimal uprobe program loaded for uprobe_multi, linked to "/": a kernel
 * with uprobe_multi refuses the directory with EBADF, after checking the
 * attach type; one without refuses the attach type itself. */
static bool probe_multi(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = ATTACH_UPROBE_MULTI);
	uint64_t zero = 0;
	int prog, link, err;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "sidescope_probe", "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	link = link_create(prog, "/", &zero, &zero, 1, 0, 0);
	err = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && err == EBADF;
}

bool uplink__multi_supported(void)
{
	static int cached = -1;
	const char *force = getenv("SIDESCOPE_UPROBE_LINK");

	/* SIDESCOPE_UPROBE_LINK=perf selects perf events (tests, old habits) */
	if (force && !strcmp(force, "perf"))
		return false;
	if (cached < 0)
		cached = probe_multi();
	return cached;
}

int uplink__prepare(struct bpf_program *prog)
{
	if (!uplink__multi_supported())
		return 0;
	return bpf_program__set_expected_attach_type(prog, ATTACH_UPROBE_MULTI);
}

const char *uplink__strerror(int err)
{
	switch (err) {
	case 524:	/* ENOTSUPP, kernel-internal */
		return "the kernel cannot place a uprobe there (not at an instruction "
		       "boundary, or an instruction it cannot single-step; probe the "
		       "function's start or an offset 'objdump -d' shows)";
	case EINVAL:
	case ENOEXEC:
		return "the kernel refused the probe: not at the start of an instruction, "
		       "or past the file's end (give a symbol, or an offset from 'objdump -d')";
	case ENOENT:
		return "the file is gone";
	case EEXIST:
		return "a probe of another kind is already at that address";
	case 512:	/* ERESTARTSYS */
	case 513:
	case 514:
		return "interrupted by a signal";
	default:
		return strerror(err);
	}
}

const char *uplink__hint(int err)
{
	if (err != EPERM && err != EACCES)
		return "";
	return uplink__multi_supported() ?
	       " (uprobe_multi links need CAP_BPF and CAP_PERFMON; run 'doctor')" :
	       " (uprobe perf events need CAP_SYS_ADMIN besides CAP_BPF, CAP_PERFMON and "
	       "CAP_SYS_PTRACE; kernels from 6.6 avoid it with uprobe_multi links; run 'doctor')";
}

struct uplink *uplink__attach(struct bpf_program *prog, pid_t pid, const char *path,
			      uint64_t off, bool retprobe, uint64_t cookie)
{
	return uplink__attach_many(prog, pid, path, &off, 1, retprobe, cookie);
}

struct uplink *uplink__attach_many(struct bpf_program *prog, pid_t pid, const char *path,
				   const uint64_t *offs, size_t n, bool retprobe, uint64_t cookie)
{
	struct uplink *l = calloc(1, sizeof(*l));
	uint64_t *cookies = NULL;
	size_t i;
	int err;

	if (!l)
		return NULL;
	l->fd = -1;
	if (n == 0 || n > UPLINK_MAX_OFFSETS) {
		errno = E2BIG;
		goto fail;
	}
	if (bpf_program__expected_attach_type(prog) == ATTACH_UPROBE_MULTI) {
		cookies = malloc(n * sizeof(*cookies));
		if (!cookies)
			goto fail;
		for (i = 0; i < n; i++)
			cookies[i] = cookie;
		l->fd = link_create(bpf_program__fd(prog), path, offs, cookies, (uint32_t)n,
				    retprobe ? UPROBE_MULTI_RETURN : 0, pid);
		if (l->fd < 0)
			goto fail;
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie);

		l->perf = calloc(n, sizeof(*l->perf));
		if (!l->perf)
			goto fail;
		for (i = 0; i < n; i++) {
			l->perf[i] = bpf_program__attach_uprobe_opts(prog, pid > 0 ? pid : -1, path,
								     (size_t)offs[i], &opts);
			if (!l->perf[i])
				goto fail;
			l->nperf++;
		}
	}
	free(cookies);
	return l;
fail:
	err = errno;
	free(cookies);
	uplink__destroy(l);
	errno = err;
	return NULL;
}

void uplink__destroy(struct uplink *l)
{
	size_t i;

	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	for (i = 0; i < l->nperf; i++)
		bpf_link__destroy(l->perf[i]);
	free(l->perf);
	free(l);
}
