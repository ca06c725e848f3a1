// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One snapshot of every thread of a process (stacks/snap.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/log.h"
#include "core/privhint.h"
#include "core/run.h"
#include "core/util.h"
#include "prof/target.h"
#include "stacks.skel.h"
#include "stacks/snap.h"

struct stk_snap {
	struct stacks_bpf *skel;
	const uint8_t *iter_stacks;	/* the maps' slots, mmap'd */
	const uint8_t *caught_stacks;
	size_t iter_len, caught_len;
	pid_t self;
};

static const void *map_slots(struct bpf_map *m, size_t *len)
{
	void *p;

	*len = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	p = mmap(NULL, *len, PROT_READ, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

struct stk_snap *stk_snap__open(unsigned int max_pages)
{
	struct target_clock tc;
	struct stk_snap *s;
	int err;

	if (target__clock(&tc))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		p_err("out of memory");
		return NULL;
	}
	s->self = getpid();
	s->skel = stacks_bpf__open();
	if (!s->skel) {
		err = errno;
		p_err("failed to open BPF object: %s%s", strerror(err), privhint__msg(PRIVHINT_BPF, err));
		free(s);
		return NULL;
	}
	s->skel->rodata->pidns_dev = tc.pidns_dev;
	s->skel->rodata->pidns_ino = tc.pidns_ino;
	s->skel->rodata->max_pages = max_pages > STACKS_MAX_PAGES ? STACKS_MAX_PAGES : max_pages;
	err = stacks_bpf__load(s->skel);
	if (err) {
		p_err("failed to load BPF program: %s%s", strerror(-err),
		      privhint__msg(PRIVHINT_BPF, -err));
		if (err == -EINVAL || err == -ENOTSUP)
			p_err("(sidescope stacks needs a kernel with sleepable task iterators "
			      "and bpf_copy_from_user_task: 5.18 or newer)");
		stk_snap__close(s);
		return NULL;
	}
	s->iter_stacks = map_slots(s->skel->maps.iter_stacks, &s->iter_len);
	s->caught_stacks = map_slots(s->skel->maps.caught_stacks, &s->caught_len);
	if (!s->iter_stacks || !s->caught_stacks) {
		p_err("cannot map the BPF stack copies: %s", strerror(errno));
		stk_snap__close(s);
		return NULL;
	}
	return s;
}

void stk_snap__close(struct stk_snap *s)
{
	if (!s)
		return;
	if (s->iter_stacks)
		munmap((void *)s->iter_stacks, s->iter_len);
	if (s->caught_stacks)
		munmap((void *)s->caught_stacks, s->caught_len);
	stacks_bpf__destroy(s->skel);
	free(s);
}

/* An iterator over process PID's threads (TID: that thread alone), read
 * record by record into FN. 0, or a negative errno. */
struct iter_run {
	struct stk_snap *s;
	size_t max, got;
	uint64_t deadline_ns;
	stk_thread_fn fn;
	void *ctx;
	/* on-CPU threads put aside for catching (NULL: hand them over) */
	struct stacks_rec *aside;
	size_t naside, cap;
	int stopped;	/* by FN, the limit or the deadline */
};

static int hand_over(struct iter_run *ir, const struct stacks_rec *r)
{
	const uint8_t *us = ir->s->iter_stacks + (size_t)(r->slot % STACKS_ITER_SLOTS) *
						    sizeof(struct stacks_ustack);

	ir->got++;
	return ir->fn(ir->ctx, r, r->sp & ~(uint64_t)(STACKS_PAGE - 1), us);
}

static int run_iter(struct iter_run *ir, pid_t pid, pid_t tid)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info li;
	struct bpf_link *link;
	struct stacks_rec r;
	int fd, err = 0;
	ssize_t n;

	memset(&li, 0, sizeof(li));
	if (tid)
		li.task.tid = (__u32)tid;
	else
		li.task.pid = (__u32)pid;
	opts.link_info = &li;
	opts.link_info_len = sizeof(li);
	link = bpf_program__attach_iter(ir->s->skel->progs.dump_task, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bpf_link__destroy(link);
		return err;
	}
	/* a read of one record's size reads one thread (bpf_seq_read stops
	 * once it has what was asked), so its stack slot is still whole */
	while ((n = read(fd, &r, sizeof(r))) == (ssize_t)sizeof(r)) {
		if (r.magic != STACKS_MAGIC)
			continue;
		if (tid && (pid_t)r.tid != tid)
			continue;
		if (ir->got + ir->naside >= ir->max || run__stop ||
		    (ir->deadline_ns && now_ns() >= ir->deadline_ns)) {
			ir->stopped = 1;
			break;
		}
		if (ir->aside && (r.flags & STACKS_F_ON_CPU) && (pid_t)r.tid != ir->s->self &&
		    ir->naside < STACKS_CATCH_SLOTS) {
			if (!array__room(&ir->aside, &ir->cap, ir->naside + 1, sizeof(r), 8))
				ir->aside[ir->naside++] = r;
			continue;
		}
		if (hand_over(ir, &r)) {
			ir->stopped = 1;
			break;
		}
	}
	if (n < 0 && errno != EAGAIN)
		err = -errno;
	close(fd);
	bpf_link__destroy(link);
	return err;
}

static int perf_open_tid(pid_t tid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;	/* time the thread runs */
	a.sample_period = 100000;		/* 0.1 ms of it */
	a.disabled = 1;
	return (int)syscall(__NR_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The on-CPU threads put aside caught on their CPU (STK_CATCH_MS at
 * most), then handed over; those not caught read once more. */
static int catch_on_cpu(struct iter_run *ir, pid_t pid, struct stk_snap_stats *st)
{
	int want_fd = bpf_map__fd(ir->s->skel->maps.want);
	int recs_fd = bpf_map__fd(ir->s->skel->maps.caught_recs);
	int prog_fd = bpf_program__fd(ir->s->skel->progs.on_sample);
	int fds[STACKS_CATCH_SLOTS];
	char done[STACKS_CATCH_SLOTS] = { 0 };
	struct stacks_rec r;
	uint64_t t0 = now_ns(), end = t0 + STK_CATCH_MS * 1000000ull;
	size_t i, left;

	for (i = 0; i < ir->naside; i++) {
		__u32 tid = ir->aside[i].tid, slot = (__u32)i, v = slot + 1;

		fds[i] = -1;
		memset(&r, 0, sizeof(r));
		bpf_map_update_elem(recs_fd, &slot, &r, BPF_ANY);
		if (bpf_map_update_elem(want_fd, &tid, &v, BPF_ANY))
			continue;
		fds[i] = perf_open_tid((pid_t)tid);
		if (fds[i] >= 0 && (ioctl(fds[i], PERF_EVENT_IOC_SET_BPF, prog_fd) ||
				    ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0))) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	left = ir->naside;
	while (left && now_ns() < end && !run__stop) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
		for (i = 0; i < ir->naside; i++) {
			__u32 slot = (__u32)i;

			if (done[i] || fds[i] < 0 || bpf_map_lookup_elem(recs_fd, &slot, &r) ||
			    r.magic != STACKS_MAGIC)
				continue;
			done[i] = 1;
			left--;
		}
	}
	for (i = 0; i < ir->naside; i++) {
		__u32 tid = ir->aside[i].tid;

		if (fds[i] >= 0)
			close(fds[i]);
		bpf_map_delete_elem(want_fd, &tid);
	}
	st->catch_ns += now_ns() - t0;
	for (i = 0; i < ir->naside; i++) {
		__u32 slot = (__u32)i;
		const uint8_t *us = ir->s->caught_stacks + (size_t)slot * sizeof(struct stacks_ustack);
		size_t before = ir->got;

		if (done[i] && !bpf_map_lookup_elem(recs_fd, &slot, &r) && r.magic == STACKS_MAGIC) {
			st->caught++;
			ir->got++;
			if (ir->fn(ir->ctx, &r, r.sp & ~(uint64_t)(STACKS_PAGE - 1), us))
				return -1;
			continue;
		}
		/* left its CPU before a sample: read it again, as it is now */
		{
			struct stacks_rec *keep = ir->aside;

			ir->aside = NULL;
			run_iter(ir, pid, (pid_t)keep[i].tid);
			ir->aside = keep;
		}
		if (ir->got > before) {
			st->reread++;
			continue;
		}
		if (ir->stopped)
			return -1;
		/* gone (exited), or on a CPU again: as first read */
		st->uncaught++;
		ir->got++;
		if (ir->fn(ir->ctx, &ir->aside[i], 0, NULL))
			return -1;
	}
	return 0;
}

int stk_snap__take(struct stk_snap *s, pid_t pid, size_t max_threads, uint64_t deadline_ns,
		   stk_thread_fn fn, void *ctx, struct stk_snap_stats *st)
{
	struct iter_run ir = { .s = s, .max = max_threads ? max_threads : (size_t)-1,
			       .deadline_ns = deadline_ns, .fn = fn, .ctx = ctx };
	uint64_t t0 = now_ns();
	int err;

	memset(st, 0, sizeof(*st));
	ir.cap = 8;
	ir.aside = malloc(ir.cap * sizeof(*ir.aside));
	if (!ir.aside)
		return -ENOMEM;
	err = run_iter(&ir, pid, 0);
	st->iter_ns = now_ns() - t0;
	st->on_cpu = ir.naside;
	if (ir.stopped)
		st->left_out = 1;	/* at least: the caller counts them */
	if (!err && ir.naside) {
		/* the threads put aside are within the limit already */
		ir.max = (size_t)-1;
		ir.stopped = 0;
		catch_on_cpu(&ir, pid, st);
	}
	st->threads = ir.got;
	free(ir.aside);
	return err;
}

char stk__state_letter(const struct stacks_rec *r)
{
	if (r->exit_state & 0x20)
		return 'Z';
	if (r->exit_state & 0x10)
		return 'X';
	if (r->state == 0)
		return 'R';
	if ((r->state & 0x402) == 0x402)
		return 'I';
	if (r->state & 0x2)
		return 'D';
	if (r->state & 0x1)
		return 'S';
	if (r->state & 0x4)
		return 'T';
	if (r->state & 0x8)
		return 't';
	if (r->state & 0x40)
		return 'P';
	return '?';
}

const char *stk__state_name(const struct stacks_rec *r)
{
	switch (stk__state_letter(r)) {
	case 'R':
		return (r->flags & STACKS_F_ON_CPU) ? "running" : "runnable";
	case 'S':
		return "sleeping";
	case 'D':
		return "disk wait";
	case 'I':
		return "idle";
	case 'T':
		return "stopped";
	case 't':
		return "traced";
	case 'Z':
		return "zombie";
	case 'X':
		return "dead";
	case 'P':
		return "parked";
	}
	return "unknown";
}
