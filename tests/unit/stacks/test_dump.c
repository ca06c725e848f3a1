// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stacks/dump without BPF: records made here, their user frames this
 * test's own functions (named by the symbolizer from our own process).
 * Threads with the same stack and state are one entry (TIDs as runs), the
 * rarest first; a glibc mutex's owner is read from the futex words (lock
 * word 1 or 2, owner at +8) only when it is a thread of the process; a PI
 * futex's owner from its word; a cycle of waits is a deadlock, said once;
 * states by letter; names escaped in text, JSON-escaped in JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "stacks/dump.h"
#include "sym/symbolize.h"
#include "tap.h"

__attribute__((noinline)) void stk_test_outer(void) { __asm__ volatile(""); }
__attribute__((noinline)) void stk_test_inner(void) { __asm__ volatile(""); }
__attribute__((noinline)) void stk_test_other(void) { __asm__ volatile(""); }

static struct stacks_rec rec(unsigned int tid, const char *comm, unsigned int state)
{
	struct stacks_rec r;

	memset(&r, 0, sizeof(r));
	r.magic = STACKS_MAGIC;
	r.tid = tid;
	r.tgid = (unsigned int)getpid();
	r.state = state;
	r.flags = STACKS_F_USER | STACKS_F_ARGS | STACKS_F_SINCE;
	r.since_ns = 2500000000ull;
	r.nr = (uint64_t)-1;
	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	return r;
}

/* a futex wait on a glibc mutex held by OWNER (its TID) */
static void mutex_wait(struct stacks_rec *r, unsigned int owner)
{
	r->nr = 202;
	r->args[0] = 0x1000;
	r->args[1] = 128;	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
	r->flags |= STACKS_F_FUTEX;
	r->futex[0] = 2;
	r->futex[2] = owner;
}

static char *text_of(struct stk_dump *d)
{
	/* static: the stream writes them until fclose */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);
	stk_dump__text(d, f);
	fclose(f);
	return buf;
}

static char *json_of(struct stk_dump *d)
{
	static char *buf;
	static size_t len;
	struct json j;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);
	json__init(&j, f);
	stk_dump__json(d, &j);
	fclose(f);
	return buf;
}

int main(void)
{
	uint64_t a[2] = { (uint64_t)(uintptr_t)&stk_test_inner, (uint64_t)(uintptr_t)&stk_test_outer + 1 };
	uint64_t b[1] = { (uint64_t)(uintptr_t)&stk_test_other };
	struct symbolizer *sz = symbolizer__new();
	struct stk_dump d = { 0 };
	struct stacks_rec r;
	char *t, *j, *p;
	unsigned int i;

	ok(sz != NULL, "a symbolizer");
	ok(symbolizer__watch(sz, getpid()) == 0, "of our own process");
	d.pid = getpid();
	snprintf(d.comm, sizeof(d.comm), "test");
	/* a deadlock: 101 waits for 102, 102 for 101 */
	r = rec(101, "locker-a", 1);
	mutex_wait(&r, 102);
	stk_dump__add(&d, &r, a, 2, NULL);
	r = rec(102, "locker-b", 1);
	mutex_wait(&r, 101);
	stk_dump__add(&d, &r, a, 2, NULL);
	/* 103 waits for a lock whose owner is no thread of ours: no owner */
	r = rec(103, "stray", 1);
	mutex_wait(&r, 4242);
	stk_dump__add(&d, &r, a, 2, NULL);
	/* 104 waits on a PI futex held by 105 */
	r = rec(104, "pi", 1);
	mutex_wait(&r, 0);
	r.args[1] = 6 | 128;	/* FUTEX_LOCK_PI_PRIVATE */
	r.futex[0] = 105 | 0x80000000u;	/* FUTEX_WAITERS */
	stk_dump__add(&d, &r, b, 1, NULL);
	/* a pool of three alike, 200-202, and 105 in D state */
	for (i = 200; i < 203; i++) {
		r = rec(i, "pool", 1);
		mutex_wait(&r, 0);
		r.futex[0] = 0;	/* a condition variable's sequence: no lock */
		stk_dump__add(&d, &r, b, 1, NULL);
	}
	r = rec(105, "io\033[2J", 2);
	stk_dump__add(&d, &r, b, 1, "the end of the stack copy (see --stack-kb)");
	is_int((int)d.n, 8, "eight threads kept");
	ok(stk_dump__name(&d, sz) == 0, "named");
	is_int((int)d.th[0].owner, 102, "101's mutex is held by 102");
	is_int((int)d.th[1].owner, 101, "102's by 101");
	ok(d.th[0].deadlock && d.th[1].deadlock, "both in a deadlock");
	is_int((int)d.th[2].owner, 0, "an owner that is no thread of ours is not taken");
	is_int((int)d.th[3].owner, 105, "a PI futex's owner from its word");
	ok(!d.th[3].deadlock, "104 is in no cycle");

	t = text_of(&d);
	if (getenv("STK_DUMP_SHOW"))
		fputs(t, stderr);
	ok(t && strstr(t, "deadlock: TID 101 \"locker-a\" -> TID 102 \"locker-b\" -> TID 101 \"locker-a\""),
	   "the deadlock said, from its lowest TID");
	ok(t && !strstr(t, "deadlock: TID 102"), "once");
	ok(t && strstr(t, "waits for a lock held by TID 105 \"io\\x1b[2J\""), "104 waits for 105");
	ok(t && strstr(t, "3 threads  sleeping for 2.5 s"), "the pool is one entry");
	ok(t && strstr(t, "  waits on the futex at 0x1000\n"), "waiting on a futex with no owner");
	ok(t && strstr(t, "TIDs 200-202 \"pool\""), "its TIDs as one run");
	ok(t && strstr(t, "stk_test_inner") && strstr(t, "stk_test_outer"), "frames by name");
	ok(t && strstr(t, "disk wait") && strstr(t, "uninterruptible sleep"), "D state, with its hint");
	ok(t && strstr(t, "the walk stopped: the end of the stack copy"), "a walk cut short says why");
	ok(t && !strchr(t, '\033'), "no escape byte in the text");
	p = t ? strstr(t, "3 threads") : NULL;
	ok(p && !strstr(p, "\nTID "), "the most common entry comes last");
	p = t ? strstr(t, "TID 101 \"locker-a\"  sleeping") : NULL;
	ok(p && p < strstr(t, "TID 103"), "deadlocked threads come first");
	free(t);

	j = json_of(&d);
	ok(j && strstr(j, "\"tid\":101,") && strstr(j, "\"waits_for_tid\":102"), "JSON: the owner");
	ok(j && strstr(j, "\"comm\":\"io\\u001b[2J\""), "JSON: the name escaped");
	ok(j && strstr(j, "\"state\":\"D\""), "JSON: the state letter");
	ok(j && strstr(j, "\"user_cut\":\"the end of the stack copy"), "JSON: why a walk stopped");
	free(j);

	r = rec(1, "x", 0);
	is_int(stk__state_letter(&r), 'R', "state 0: R");
	is_str(stk__state_name(&r), "runnable", "runnable when not on a CPU");
	r.flags |= STACKS_F_ON_CPU;
	is_str(stk__state_name(&r), "running", "running on one");
	r.state = 0x402;
	is_int(stk__state_letter(&r), 'I', "TASK_IDLE: I");
	r.state = 4;
	is_int(stk__state_letter(&r), 'T', "stopped: T");
	r.state = 8;
	is_int(stk__state_letter(&r), 't', "traced: t");
	r.exit_state = 0x20;
	is_int(stk__state_letter(&r), 'Z', "zombie: Z");

	stk_dump__reset(&d);
	symbolizer__free(sz);
	return done_testing();
}
