// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process's snapshot as a thread dump (stacks/dump.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/hash.h"
#include "core/json.h"
#include "core/proc.h"
#include "core/util.h"
#include "stacks/dump.h"
#include "sym/symbolize.h"

/* futex(2) operations (linux/futex.h) */
#define FUTEX_CMD(op) ((op) & ~(uint64_t)(128 | 256))
#define FUTEX_WAIT_ 0
#define FUTEX_LOCK_PI_ 6
#define FUTEX_WAIT_BITSET_ 9
#define FUTEX_LOCK_PI2_ 13
#define SYS_FUTEX_ 202
/* a thread's chain of lock owners is followed this far for a cycle */
#define MAX_CHAIN 64

static void read_wchan(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[96];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%d/task/%d/wchan", proc__root(), (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (!strcmp(buf, "0"))
		buf[0] = '\0';
}

int stk_dump__add(struct stk_dump *d, const struct stacks_rec *r, const uint64_t *ips, int nu,
		  const char *why)
{
	struct stk_th *t;
	int nk = r->klen > 0 ? r->klen / 8 : 0, i;

	if (nk > STACKS_KSTACK_MAX)
		nk = STACKS_KSTACK_MAX;
	if (array__room(&d->th, &d->cap, d->n + 1, sizeof(*d->th), 64))
		return -ENOMEM;
	t = &d->th[d->n];
	memset(t, 0, sizeof(*t));
	t->r = *r;
	t->ips = malloc(((size_t)nk + (size_t)nu + 1) * sizeof(*t->ips));
	if (!t->ips)
		return -ENOMEM;
	for (i = 0; i < nk; i++)
		t->ips[i] = r->kstack[i];
	memcpy(t->ips + nk, ips, (size_t)nu * sizeof(*ips));
	t->nk = nk;
	t->nu = nu;
	t->cut = why;
	if (stk__state_letter(r) != 'R')
		read_wchan(d->pid, (pid_t)r->tid, t->wchan, sizeof(t->wchan));
	d->n++;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

static int cmp_tid(const void *a, const void *b)
{
	const struct stk_th *const *x = a, *const *y = b;

	return (*x)->r.tid < (*y)->r.tid ? -1 : (*x)->r.tid > (*y)->r.tid;
}

/* The thread TID, by the index stk_dump__name makes: a chain of lock
 * owners is followed for each of up to 100,000 threads */
static struct stk_th *by_tid(const struct stk_dump *d, pid_t tid)
{
	struct stk_th key, *kp = &key, **hit;

	if (!d->by_tid)
		return NULL;
	key.r.tid = (__u32)tid;
	hit = bsearch(&kp, d->by_tid, d->n, sizeof(*d->by_tid), cmp_tid);
	return hit ? *hit : NULL;
}

/* Each thread's TID in the app's own PID namespace (what a mutex holds):
 * ours when the namespaces are one, else its status's NSpid, read once. */
static void find_nstids(struct stk_dump *d)
{
	struct proc_status st;
	int same = proc__read_status(d->pid, &st) == 0 && st.nspid == d->pid;
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct stk_th *t = &d->th[i];

		t->nstid = (pid_t)t->r.tid;
		if (!same)
			t->nstid = proc__read_status((pid_t)t->r.tid, &st) == 0 ? st.nspid : 0;
	}
}

static int cmp_nstid(const void *a, const void *b)
{
	const struct stk_th *const *x = a, *const *y = b;

	return (*x)->nstid < (*y)->nstid ? -1 : (*x)->nstid > (*y)->nstid;
}

/* The thread of the process whose TID in the app's own namespace is
 * NSTID, as ours numbers it; 0 when none */
static pid_t our_tid(const struct stk_dump *d, pid_t nstid)
{
	struct stk_th key, *kp = &key, **hit;

	if (nstid <= 0 || !d->by_nstid)
		return 0;
	key.nstid = nstid;
	hit = bsearch(&kp, d->by_nstid, d->n, sizeof(*d->by_nstid), cmp_nstid);
	return hit ? (pid_t)(*hit)->r.tid : 0;
}

/* The lock a thread waits for in futex(2), and its owner where the futex
 * says: a PI futex holds its owner's TID; a glibc mutex (lock word 1 or
 * 2) has it 8 bytes further. Only a live thread of the process counts. */
static void find_owner(const struct stk_dump *d, struct stk_th *t)
{
	const struct stacks_rec *r = &t->r;
	uint64_t cmd = FUTEX_CMD(r->args[1]);
	pid_t nstid = 0;

	if (r->nr != SYS_FUTEX_ || !(r->flags & STACKS_F_FUTEX))
		return;
	if (cmd == FUTEX_LOCK_PI_ || cmd == FUTEX_LOCK_PI2_)
		nstid = (pid_t)(r->futex[0] & 0x3fffffffu);
	else if ((cmd == FUTEX_WAIT_ || cmd == FUTEX_WAIT_BITSET_) &&
		 (r->futex[0] == 1 || r->futex[0] == 2))
		nstid = (pid_t)r->futex[2];
	t->owner = our_tid(d, nstid);
	if (t->owner == (pid_t)r->tid)
		t->owner = 0;
}

static void find_cycles(struct stk_dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct stk_th *t = &d->th[i], *o = t;
		int k;

		for (k = 0; k < MAX_CHAIN && o && o->owner; k++) {
			o = by_tid(d, o->owner);
			if (o == t) {
				t->deadlock = 1;
				break;
			}
		}
	}
}

static uint64_t key_of(const struct stk_th *t)
{
	uint64_t h = HASH_SEED;
	char c = stk__state_letter(&t->r);
	int i;

	h = hash__more(h, &c, 1);
	h = hash__more(h, t->wchan, strlen(t->wchan));
	for (i = 0; i < t->nk + t->nu; i++) {
		h = hash__more(h, t->fr[i].name, strlen(t->fr[i].name) + 1);
		h = hash__more(h, t->fr[i].module, strlen(t->fr[i].module) + 1);
	}
	if (t->r.nr == SYS_FUTEX_)	/* the same futex, or another */
		h = hash__more(h, &t->r.args[0], sizeof(t->r.args[0]));
	if (t->owner || t->deadlock)
		h = hash__more(h, &t->r.tid, sizeof(t->r.tid));	/* each its own */
	return hash__u64(h);
}

int stk_dump__name(struct stk_dump *d, struct symbolizer *sz)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		struct stk_th *t = &d->th[i];
		int k;

		free(t->fr);
		t->fr = calloc((size_t)(t->nk + t->nu) + 1, sizeof(*t->fr));
		if (!t->fr)
			return -ENOMEM;
		for (k = 0; k < t->nk + t->nu; k++) {
			struct sym_frame f;

			if (k < t->nk) {
				symbolizer__kernel(sz, t->ips[k], &f);
				t->fr[k].module = "[kernel]";
			} else if (k == t->nk) {
				symbolizer__user_at(sz, d->pid, t->ips[k], 0, &f);
				t->fr[k].module = base_name(f.module);
			} else {
				symbolizer__user_at(sz, d->pid, t->ips[k] - 1, SYM_CALLER, &f);
				t->fr[k].module = base_name(f.module);
			}
			t->fr[k].name = f.name ? f.name : "[unknown]";
		}
	}
	free(d->by_tid);
	free(d->by_nstid);
	d->by_tid = malloc((d->n + 1) * sizeof(*d->by_tid));
	d->by_nstid = malloc((d->n + 1) * sizeof(*d->by_nstid));
	if (!d->by_tid || !d->by_nstid)
		return -ENOMEM;
	find_nstids(d);
	for (i = 0; i < d->n; i++)
		d->by_tid[i] = d->by_nstid[i] = &d->th[i];
	qsort(d->by_tid, d->n, sizeof(*d->by_tid), cmp_tid);
	qsort(d->by_nstid, d->n, sizeof(*d->by_nstid), cmp_nstid);
	for (i = 0; i < d->n; i++)
		find_owner(d, &d->th[i]);
	find_cycles(d);
	for (i = 0; i < d->n; i++)
		d->th[i].key = key_of(&d->th[i]);
	return 0;
}

void stk_dump__reset(struct stk_dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->th[i].ips);
		free(d->th[i].fr);
	}
	free(d->th);
	free(d->by_tid);
	free(d->by_nstid);
	memset(d, 0, sizeof(*d));
}

/* ---- text ---- */

static void put_esc(FILE *f, const char *s)
{
	escape__fwrite(f, s, strlen(s), ESCAPE_KEEP_BACKSLASH);
}

static void put_since(FILE *f, const struct stk_th *t)
{
	double s = (double)t->r.since_ns / 1e9;

	if (!(t->r.flags & STACKS_F_SINCE) || (t->r.flags & STACKS_F_ON_CPU))
		return;
	if (s >= 1)
		fprintf(f, " for %.1f s", s);
	else if (s >= 1e-3)
		fprintf(f, " for %.1f ms", s * 1e3);
	else
		fprintf(f, " for %.0f us", s * 1e6);
}

static void put_thread_name(FILE *f, const struct stk_dump *d, pid_t tid)
{
	const struct stk_th *o = by_tid(d, tid);

	fprintf(f, "TID %d", (int)tid);
	if (o) {
		fputs(" \"", f);
		put_esc(f, o->r.comm);
		fputc('"', f);
	}
}

static void put_state(FILE *f, const struct stk_th *t)
{
	fputs(stk__state_name(&t->r), f);
	if (t->wchan[0]) {
		fputs(" in ", f);
		put_esc(f, t->wchan);
	}
	put_since(f, t);
	fprintf(f, ", CPU %u", t->r.cpu);
}

static void put_frames(FILE *f, const struct stk_th *t)
{
	int k;

	for (k = 0; k < t->nk + t->nu; k++) {
		fputs("    ", f);
		put_esc(f, t->fr[k].name);
		if (t->fr[k].module[0]) {
			fputs("  (", f);
			put_esc(f, t->fr[k].module);
			fputc(')', f);
		}
		fputc('\n', f);
	}
	if (!(t->r.flags & STACKS_F_USER) && !(t->r.flags & STACKS_F_KTHREAD))
		fputs("    (no user registers: the thread was exiting or caught in the kernel "
		      "without them)\n", f);
	else if (t->cut && t->nu)
		fprintf(f, "    ... (the walk stopped: %s)\n", t->cut);
	else if (t->cut)
		fprintf(f, "    (no user stack: %s)\n", t->cut);
}

static void put_hints(FILE *f, const struct stk_dump *d, const struct stk_th *t)
{
	if (t->owner) {
		fputs("  waits for a lock held by ", f);
		put_thread_name(f, d, t->owner);
		fputs(t->deadlock ? " (deadlock: see above)\n" : "\n", f);
	} else if (t->r.nr == SYS_FUTEX_ && stk__state_letter(&t->r) == 'S' &&
		   (FUTEX_CMD(t->r.args[1]) == FUTEX_WAIT_ ||
		    FUTEX_CMD(t->r.args[1]) == FUTEX_WAIT_BITSET_)) {
		fprintf(f, "  waits on the futex at 0x%llx\n", (unsigned long long)t->r.args[0]);
	}
	if (stk__state_letter(&t->r) == 'D')
		fputs("  in uninterruptible sleep: no signal reaches it until the kernel is done "
		      "(I/O, a kernel lock, a vfork child)\n", f);
	if ((t->r.flags & STACKS_F_ON_CPU) && !(t->r.flags & STACKS_F_CAUGHT))
		fputs("  (on a CPU and not caught there: its registers are from its last entry "
		      "into the kernel)\n", f);
}

/* A group's state: the first's, with the range of times off the CPU
 * and the CPUs they last ran on */
static void put_group_state(FILE *f, struct stk_th *const *t, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0, cpus = 0;
	size_t i;
	int known = 1, c, first = 1;

	fputs(stk__state_name(&t[0]->r), f);
	if (t[0]->wchan[0]) {
		fputs(" in ", f);
		put_esc(f, t[0]->wchan);
	}
	for (i = 0; i < n; i++) {
		if (!(t[i]->r.flags & STACKS_F_SINCE) || (t[i]->r.flags & STACKS_F_ON_CPU))
			known = 0;
		lo = t[i]->r.since_ns < lo ? t[i]->r.since_ns : lo;
		hi = t[i]->r.since_ns > hi ? t[i]->r.since_ns : hi;
		if (t[i]->r.cpu < 64)
			cpus |= 1ull << t[i]->r.cpu;
	}
	if (known && hi - lo <= hi / 20) {
		struct stk_th one = *t[0];

		one.r.since_ns = hi;
		put_since(f, &one);
	} else if (known && hi >= 1000000000ull)
		fprintf(f, " for %.1f-%.1f s", (double)lo / 1e9, (double)hi / 1e9);
	else if (known)
		fprintf(f, " for %.1f-%.1f ms", (double)lo / 1e6, (double)hi / 1e6);
	fputs(", CPU", f);
	for (c = 0; c < 64; c++)
		if (cpus & (1ull << c)) {
			fprintf(f, "%s%d", first ? " " : ",", c);
			first = 0;
		}
	fputc('\n', f);
}

/* A group's TIDs (sorted) as runs: "TIDs 7-1006 "pool", 1010 "x"" */
static void put_tid_runs(FILE *f, struct stk_th *const *t, size_t n)
{
	size_t i = 0, runs = 0;

	fputs("  TIDs ", f);
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && t[j + 1]->r.tid == t[j]->r.tid + 1 &&
		       !strcmp(t[j + 1]->r.comm, t[i]->r.comm))
			j++;
		if (runs == 16) {
			fprintf(f, ", ... (%zu more)", n - i);
			break;
		}
		fprintf(f, "%s%u", runs ? ", " : "", t[i]->r.tid);
		if (j > i)
			fprintf(f, "-%u", t[j]->r.tid);
		fputs(" \"", f);
		put_esc(f, t[i]->r.comm);
		fputc('"', f);
		runs++;
		i = j + 1;
	}
	fputc('\n', f);
}

static int cmp_group(const void *a, const void *b, void *arg)
{
	const struct stk_th *const *x = a, *const *y = b;
	const size_t *count = arg;

	(void)count;
	if ((*x)->key != (*y)->key)
		return (*x)->key < (*y)->key ? -1 : 1;
	return (*x)->r.tid < (*y)->r.tid ? -1 : (*x)->r.tid > (*y)->r.tid;
}

struct group {
	struct stk_th **t;	/* its threads, by TID */
	size_t n;
};

static int cmp_groups(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->t[0]->deadlock != y->t[0]->deadlock)
		return y->t[0]->deadlock - x->t[0]->deadlock;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return x->t[0]->r.tid < y->t[0]->r.tid ? -1 : x->t[0]->r.tid > y->t[0]->r.tid;
}

/* Each cycle of lock waits once, from its lowest TID: "deadlock: TID 7
 * "a" -> TID 8 "b" -> TID 7 "a"" (each waits for a lock the next holds). */
static void put_deadlocks(FILE *f, const struct stk_dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct stk_th *t = &d->th[i], *o;
		int k, lowest = 1;

		if (!t->deadlock)
			continue;
		for (k = 0, o = by_tid(d, t->owner); k < MAX_CHAIN && o && o != t; k++) {
			if (o->r.tid < t->r.tid)
				lowest = 0;
			o = by_tid(d, o->owner);
		}
		if (!lowest || o != t)
			continue;
		fputs("deadlock: ", f);
		put_thread_name(f, d, (pid_t)t->r.tid);
		for (k = 0, o = by_tid(d, t->owner); k < MAX_CHAIN && o; k++) {
			fputs(" -> ", f);
			put_thread_name(f, d, (pid_t)o->r.tid);
			if (o == t)
				break;
			o = by_tid(d, o->owner);
		}
		fputs(" (each waits for a lock the next holds)\n", f);
	}
}

void stk_dump__text(const struct stk_dump *d, FILE *f)
{
	struct stk_th **ord = calloc(d->n + 1, sizeof(*ord));
	struct group *g = calloc(d->n + 1, sizeof(*g));
	size_t i, ng = 0;
	char when[64];
	time_t sec = (time_t)(d->when_ns / 1000000000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "PID %d \"", (int)d->pid);
	put_esc(f, d->comm);
	fprintf(f, "\": %zu thread%s at %s, read in %.1f ms", d->n, d->n == 1 ? "" : "s", when,
		(double)d->took_ns / 1e6);
	if (d->st.on_cpu)
		fprintf(f, " (%zu on a CPU, %zu caught there)", d->st.on_cpu, d->st.caught);
	fputc('\n', f);
	if (d->threads_now > d->n && d->st.left_out)
		fprintf(f, "(%zu more threads left out: the limit of threads or of time; see "
			"--max-threads)\n", d->threads_now - d->n);
	if (!ord || !g) {
		free(ord);
		free(g);
		fputs("(out of memory)\n", f);
		return;
	}
	put_deadlocks(f, d);
	for (i = 0; i < d->n; i++)
		ord[i] = &d->th[i];
	qsort_r(ord, d->n, sizeof(*ord), cmp_group, NULL);
	for (i = 0; i < d->n; i++) {
		if (!i || ord[i]->key != ord[i - 1]->key)
			g[ng++] = (struct group){ .t = &ord[i] };
		g[ng - 1].n++;
	}
	qsort(g, ng, sizeof(*g), cmp_groups);
	for (i = 0; i < ng; i++) {
		const struct stk_th *t = g[i].t[0];

		fputc('\n', f);
		if (g[i].n == 1) {
			put_thread_name(f, d, (pid_t)t->r.tid);
			fputs("  ", f);
			put_state(f, t);
			fputc('\n', f);
		} else {
			fprintf(f, "%zu threads  ", g[i].n);
			put_group_state(f, g[i].t, g[i].n);
		}
		if (g[i].n > 1)
			put_tid_runs(f, g[i].t, g[i].n);
		put_hints(f, d, t);
		put_frames(f, t);
	}
	free(ord);
	free(g);
}

/* ---- JSON ---- */

static void json_frames(struct json *j, const struct stk_th *t, int from, int to, int user)
{
	int k;

	json__arr(j);
	for (k = from; k < to; k++) {
		json__obj(j);
		json__key(j, "name");
		json__str(j, t->fr[k].name);
		if (user) {
			json__key(j, "module");
			json__str(j, t->fr[k].module);
		}
		json__key(j, "addr");
		json__num(j, "\"0x%llx\"", (unsigned long long)t->ips[k]);
		json__end(j);
	}
	json__end(j);
}

void stk_dump__json(const struct stk_dump *d, struct json *j)
{
	size_t i;
	char s[2] = { 0 };

	json__obj(j);
	json__key(j, "pid");
	json__u64(j, (uint64_t)d->pid);
	json__key(j, "comm");
	json__str(j, d->comm);
	json__key(j, "time_ns");
	json__i64(j, d->when_ns);
	json__key(j, "took_ms");
	json__num(j, "%.3f", (double)d->took_ns / 1e6);
	json__key(j, "on_cpu");
	json__u64(j, d->st.on_cpu);
	json__key(j, "caught");
	json__u64(j, d->st.caught);
	json__key(j, "left_out");
	json__u64(j, d->threads_now > d->n && d->st.left_out ? d->threads_now - d->n : 0);
	json__key(j, "threads");
	json__arr(j);
	for (i = 0; i < d->n; i++) {
		const struct stk_th *t = &d->th[i];

		json__obj(j);
		json__key(j, "tid");
		json__u64(j, t->r.tid);
		json__key(j, "comm");
		json__str(j, t->r.comm);
		s[0] = stk__state_letter(&t->r);
		json__key(j, "state");
		json__str(j, s);
		json__key(j, "state_name");
		json__str(j, stk__state_name(&t->r));
		json__key(j, "cpu");
		json__u64(j, t->r.cpu);
		json__key(j, "on_cpu");
		json__bool(j, t->r.flags & STACKS_F_ON_CPU);
		json__key(j, "caught_on_cpu");
		json__bool(j, t->r.flags & STACKS_F_CAUGHT);
		json__key(j, "wchan");
		json__str(j, t->wchan);
		if ((t->r.flags & STACKS_F_SINCE) && !(t->r.flags & STACKS_F_ON_CPU)) {
			json__key(j, "off_cpu_ms");
			json__num(j, "%.3f", (double)t->r.since_ns / 1e6);
		}
		if (t->r.nr != (uint64_t)-1 && (t->r.flags & STACKS_F_USER) &&
		    !(t->r.flags & STACKS_F_CAUGHT)) {
			json__key(j, "syscall");
			json__u64(j, t->r.nr);
		}
		if (t->owner) {
			json__key(j, "waits_for_tid");
			json__u64(j, (uint64_t)t->owner);
		}
		json__key(j, "deadlock");
		json__bool(j, t->deadlock);
		json__key(j, "kernel");
		json_frames(j, t, 0, t->nk, 0);
		json__key(j, "user");
		json_frames(j, t, t->nk, t->nk + t->nu, 1);
		if (t->cut) {
			json__key(j, "user_cut");
			json__str(j, t->cut);
		}
		json__end(j);
	}
	json__end(j);
	json__end(j);
}
