// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The capture engine: counts and stacks out of the BPF maps into the
 * profile model, symbolized (capture.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/log.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "prof/capture.h"
#include "prof/keymemo.h"
#include "sym/stackcache.h"
#include "sym/symbolize.h"

/* Entries a batch read of the count maps / the stack store asks for. The
 * kernel hands out whole hash buckets and refuses (ENOSPC) a batch smaller
 * than the first bucket; buckets rarely hold more than a few entries. */
#define COUNT_BATCH 1024
#define STACK_BATCH 64
#define OFF_BATCH 256

/* The stack of HASH: from the cache (take_stacks copied the store into it
 * at this drain), else looked up in the store (and deleted there). NULL
 * when lost. */
static const uint64_t *get_stack(struct capture *c, __u64 hash)
{
	struct profile_stack st;
	const uint64_t *ips;
	int depth;

	ips = stackcache__get(c->stacks, hash, c->drains);
	if (ips)
		return ips;
	if (bpf_map_lookup_elem(c->maps.stacks, &hash, &st))
		return NULL;
	for (depth = 0; depth < PROFILE_MAX_DEPTH && st.ips[depth]; depth++)
		;
	ips = stackcache__put(c->stacks, hash, (const uint64_t *)st.ips, (size_t)depth, c->drains);
	if (!ips)
		return NULL;	/* out of memory: keep it in the store */
	bpf_map_delete_elem(c->maps.stacks, &hash);
	return ips;
}

/* Whether the stack HASH (0: none) is at hand without the BPF store. */
static bool stack_at_hand(struct capture *c, __u64 hash)
{
	return !hash || stackcache__get(c->stacks, hash, c->drains);
}

/* Append the symbolized frames of stack HASH of PID to FRAMES (at *N),
 * outermost first; a lost stack is one frame saying so. */
static int add_stack_frames(struct capture *c, __u64 hash, bool kernel, pid_t pid,
			    struct prof_frame *frames, size_t *n)
{
	struct sym_frame sf;
	const uint64_t *ips;
	int i, err;

	if (!hash)
		return 0;
	ips = get_stack(c, hash);
	if (!ips) {
		c->meta.missing_stacks++;
		frames[(*n)++] = (struct prof_frame){ kernel ? "[lost kernel stack]" :
						      "[lost user stack]", FRAME_UNKNOWN, "", "" };
		return 0;
	}
	/* BPF gives the leaf first; the model wants the outermost first */
	for (i = (int)ips[0]; i >= 1; i--) {
		/* a caller's address is its return address, the instruction
		 * after the call: one byte back is inside the call, which names
		 * the right function and line when the call ends a function
		 * (noreturn) and is the address pprof and its symbolizers expect */
		uint64_t ip = i > 1 ? ips[i] - 1 : ips[i];

		err = kernel ? symbolizer__kernel(c->sz, ip, &sf) :
			       symbolizer__user_at(c->sz, pid, ip, i > 1 ? SYM_CALLER : 0, &sf);
		if (err)
			return err;
		frames[(*n)++] = (struct prof_frame){
			.name = sf.name, .kind = sf.kind, .module = sf.module,
			.build_id = sf.build_id, .addr = sf.addr, .map_start = sf.map_start,
			.map_limit = sf.map_limit, .map_offset = sf.map_offset,
			.lines_ref = sf.lines, .unresolved = sf.unresolved,
		};
	}
	return 0;
}

/* Room in c->keys/c->vals for CHUNK more entries after N. */
static int reserve_counts(struct capture *c, size_t n, __u32 chunk)
{
	size_t ncap = c->keys_cap + (c->keys_cap > chunk ? c->keys_cap : chunk);
	struct profile_key *nk;
	__u64 *nv;

	if (c->keys_cap - n >= chunk)
		return 0;
	nk = realloc(c->keys, ncap * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	c->keys = nk;
	nv = realloc(c->vals, ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	c->vals = nv;
	/* zeroed once: what the kernel writes, valgrind does not see (the
	 * buffers stay defined for it), and what it does not, is not read */
	memset(c->keys + c->keys_cap, 0, (ncap - c->keys_cap) * sizeof(*nk));
	memset(c->vals + c->keys_cap, 0, (ncap - c->keys_cap) * sizeof(*nv));
	c->keys_cap = ncap;
	return 0;
}

/* Read and delete every entry of hash map FD into c->keys/c->vals, in
 * batches (a few bpf() calls however many entries). Return how many, or a
 * negative errno. */
static ssize_t take_counts(struct capture *c, int fd)
{
	__u32 in = 0, out = 0, cnt, chunk = COUNT_BATCH;
	size_t n = 0;
	bool first = true;
	int err;

	for (;;) {
		if (reserve_counts(c, n, chunk))
			return -ENOMEM;
		cnt = chunk;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, c->keys + n,
						      c->vals + n, &cnt, NULL);
		err = err ? -errno : 0;
		n += cnt;
		if (err == -ENOENT || (!err && !cnt))
			return (ssize_t)n;	/* every bucket done */
		if (err == -ENOSPC && !cnt && chunk < (1u << 20)) {
			chunk *= 2;	/* a bucket larger than the batch */
			continue;
		}
		if (err)
			return err;
		in = out;
		first = false;
	}
}

/* Copy one batch of CNT stacks into the stack cache. */
static void cache_stacks(struct capture *c, __u32 cnt)
{
	__u32 i;
	int depth;

	for (i = 0; i < cnt; i++) {
		const __u64 *ips = c->stack_vals[i].ips;

		if (stackcache__get(c->stacks, c->stack_keys[i], c->drains))
			continue;	/* copied at an earlier drain */
		for (depth = 0; depth < PROFILE_MAX_DEPTH && ips[depth]; depth++)
			;
		/* without memory for it the stack is lost: counted as missing
		 * when a count names it */
		stackcache__put(c->stacks, c->stack_keys[i], (const uint64_t *)ips, (size_t)depth,
				c->drains);
	}
}

/* Copy the whole stack store into the stack cache and empty it, in batches.
 * The drained counts' stacks are all there or cached: a sample stores its
 * stacks before it counts, and no sample counts into the map being drained
 * any more. Stacks of samples still counting into the other map are copied
 * too and wait in the cache for the next drain. */
static int take_stacks(struct capture *c)
{
	__u32 in = 0, out = 0, cnt;
	bool first = true;
	int err;

	if (!c->stack_keys) {
		c->stack_keys = calloc(STACK_BATCH, sizeof(*c->stack_keys));
		c->stack_vals = calloc(STACK_BATCH, sizeof(*c->stack_vals));
		if (!c->stack_keys || !c->stack_vals)
			return -ENOMEM;
	}
	for (;;) {
		/* ENOSPC would need a bucket of over STACK_BATCH stacks: with as
		 * many buckets as entries, not seen. The buffers are zeroed
		 * once, when made (see reserve_counts) */
		cnt = STACK_BATCH;
		err = bpf_map_lookup_and_delete_batch(c->maps.stacks, first ? NULL : &in, &out,
						      c->stack_keys, c->stack_vals, &cnt, NULL);
		err = err ? -errno : 0;
		cache_stacks(c, cnt);
		if (err == -ENOENT || (!err && !cnt))
			return 0;	/* every bucket done */
		if (err)
			return err;
		in = out;
		first = false;
	}
}

/* The start time a -p/-n target had (0: not a target, or unknown). */
static uint64_t target_start(const struct capture *c, pid_t pid)
{
	int j;

	for (j = 0; j < c->npids; j++)
		if (c->pids[j] == pid)
			return c->starts[j];
	return 0;
}

/* Capture what symbolizes PID, now, while it lives. */
static void watch_pid(struct capture *c, pid_t pid)
{
	uint64_t start = target_start(c, pid);

	/* a target: only while the PID still names it */
	if (start)
		symbolizer__watch_start(c->sz, pid, start);
	else
		symbolizer__watch(c->sz, pid);
}

/* One report handled: a process sampled for the first time, or a walk
 * asking for a table. */
static void handle_news(struct capture *c, const struct capture_news *ev)
{
	if (ev->want) {
		if (c->on_want)
			c->on_want(c->on_new_arg, ev->pid, ev->want - 1);
	} else {
		watch_pid(c, ev->pid);
		if (c->on_new)
			c->on_new(c->on_new_arg, ev->pid);
	}
}

/* Ring buffer callback: the report queued, to be handled within the
 * poll's time (a report's handling reads the app's files: its time is the
 * app's to choose). The same report queued twice is handled once; past
 * CAPTURE_NEWS_MAX waiting, counted as lost. */
static int on_new_process(void *ctx, void *data, size_t size)
{
	const struct profile_new *ev = data;

	if (size >= sizeof(*ev) && ev->pid)
		capture__queue_news(ctx, (pid_t)ev->pid, ev->want);
	return 0;
}

void capture__queue_news(struct capture *c, pid_t pid, uint32_t want)
{
	size_t i;

	for (i = c->news_head; i < c->news_n; i++)
		if (c->pending[i].pid == pid && c->pending[i].want == want)
			return;
	if (c->news_n == c->news_cap && c->news_head) {
		/* handled ones out of the way */
		memmove(c->pending, c->pending + c->news_head,
			(c->news_n - c->news_head) * sizeof(*c->pending));
		c->news_n -= c->news_head;
		c->news_head = 0;
	}
	if (c->news_n == CAPTURE_NEWS_MAX ||
	    array__room(&c->pending, &c->news_cap, c->news_n, sizeof(*c->pending), 64)) {
		c->news_dropped++;
		return;
	}
	c->pending[c->news_n++] = (struct capture_news){ pid, want };
}

int capture__handle_news(struct capture *c, uint64_t until)
{
	int n = 0;

	while (c->news_head < c->news_n) {
		handle_news(c, &c->pending[c->news_head++]);
		n++;
		if (run__stop || now_ns() >= until)
			break;
	}
	if (c->news_head == c->news_n)
		c->news_head = c->news_n = 0;
	return n;
}

/* Before symbolizing K: PID watched, its maps holding the user stack. */
static void revisit(struct capture *c, const struct profile_key *k)
{
	const uint64_t *ips = k->ustack ? stackcache__get(c->stacks, k->ustack, c->drains) : NULL;

	symbolizer__revisit(c->sz, (pid_t)k->pid, target_start(c, (pid_t)k->pid),
			    ips ? ips + 1 : NULL, ips ? (size_t)ips[0] : 0);
}

/* A kernel stack taken by the sched_switch program ends in the frames of
 * its own call (the tracepoint's glue and BPF programs): N frames without
 * those, which end in the scheduler. */
static size_t drop_tracing_frames(const struct prof_frame *frames, size_t n)
{
	static const char *const glue[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					    "__traceiter_", "bpf_get_stack", "__bpf_get_stack" };
	size_t i;

	while (n && frames[n - 1].kind == FRAME_KERNEL) {
		for (i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
			if (!strncmp(frames[n - 1].name, glue[i], strlen(glue[i])))
				break;
		if (i == sizeof(glue) / sizeof(glue[0]))
			break;
		n--;
	}
	return n;
}

/* The outermost of FRAMES (N, outermost first) that enters an interrupt
 * or a softirq, or NULL. */
static const struct prof_frame *interrupt_entry(const struct prof_frame *frames, size_t n)
{
	static const char *const entry[] = { "asm_sysvec_", "asm_common_interrupt", "__do_softirq",
					     "handle_softirqs", "irq_exit" };
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (frames[i].kind != FRAME_KERNEL)
			continue;
		for (j = 0; j < sizeof(entry) / sizeof(entry[0]); j++)
			if (!strncmp(frames[i].name, entry[j], strlen(entry[j])))
				return &frames[i];
	}
	return NULL;
}

/* --wakers: after the woken thread's stack, "--", then the waker's stack
 * leaf first and its name, as bcc's offwaketime folds them: in a flame
 * graph the waker stands upside down on the stack it woke. */
static int add_waker_frames(struct capture *c, const struct profile_key *k,
			    struct prof_frame *frames, size_t *n)
{
	const struct prof_frame *irq;
	const uint64_t *ips;
	size_t from, i, j;
	int err;

	frames[(*n)++] = (struct prof_frame){ "--", FRAME_UNKNOWN, "", "" };
	from = *n;
	if (k->waker_pid) {
		ips = k->waker_ustack ? stackcache__get(c->stacks, k->waker_ustack, c->drains) : NULL;
		symbolizer__revisit(c->sz, (pid_t)k->waker_pid, 0, ips ? ips + 1 : NULL,
				    ips ? (size_t)ips[0] : 0);
	}
	err = add_stack_frames(c, k->waker_ustack, false, (pid_t)k->waker_pid, frames, n);
	if (!err)
		err = add_stack_frames(c, k->waker_kstack, true, (pid_t)k->waker_pid, frames, n);
	if (err)
		return err;
	*n = from + drop_tracing_frames(frames + from, *n - from);
	irq = interrupt_entry(frames + from, *n - from);
	if (irq) {
		/* woken in an interrupt: the task it interrupted did not wake
		 * anyone; from the interrupt's entry on only */
		memmove(frames + from, irq, (size_t)(frames + *n - irq) * sizeof(*frames));
		*n -= (size_t)(irq - (frames + from));
	}
	for (i = from, j = *n; i + 1 < j; i++, j--) {
		struct prof_frame t = frames[i];

		frames[i] = frames[j - 1];
		frames[j - 1] = t;
	}
	memcpy(c->waker_comm, k->waker_comm, PROFILE_COMM_LEN);
	c->waker_comm[PROFILE_COMM_LEN] = '\0';
	frames[(*n)++] = (struct prof_frame){ irq ? "[interrupt]" : c->waker_comm, FRAME_UNKNOWN,
					      "", "" };
	return 0;
}

/* Whether FRAMES name every frame: what lookups could name better later (an
 * address in no mapping yet, a JIT frame before its perf-map line, a lost
 * stack) is not kept in c->memo. */
static bool all_named(const struct prof_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (frames[i].kind == FRAME_UNKNOWN)
			return false;
	return true;
}

/* Add the COUNT samples (or nanoseconds) of key K to the profile. A key
 * named before (c->memo), its process's frames named the same way since,
 * adds its count to the same stack. */
/* K's count held back for the next drain (DRAINS it was held through so
 * far): 0, or -1 when it cannot be (too many held, too often) */
static int hold(struct capture *c, const struct profile_key *k, __u64 count, unsigned int drains)
{
	if (c->last || drains >= CAPTURE_HOLD_DRAINS || c->nheld_next >= CAPTURE_HOLD_MAX ||
	    array__room(&c->held_next, &c->held_next_cap, c->nheld_next, sizeof(*c->held_next), 64))
		return -1;
	c->held_next[c->nheld_next++] = (struct capture_held){ *k, count, drains + 1 };
	c->held_total += drains ? 0 : 1;
	return 0;
}

static int add_key_held(struct capture *c, const struct profile_key *k, __u64 count,
			unsigned int drains);

static int add_key(struct capture *c, const struct profile_key *k, __u64 count)
{
	return add_key_held(c, k, count, 0);
}

/* K's COUNT named into the profile, or held back (DRAINS: through how many
 * drains it was) when its JIT frames are unnamed and names are coming */
static int add_key_held(struct capture *c, const struct profile_key *k, __u64 count,
			unsigned int drains)
{
	struct prof_frame frames[4 * PROFILE_MAX_DEPTH + 8];
	char comm[PROFILE_COMM_LEN + 1];
	struct prof_sample smp;
	uint64_t gen = 0, misses;
	size_t n = 0, id;
	int err;

	revisit(c, k);
	/* a waker's frames are another process's: named every time */
	if (!k->waker_comm[0] && !k->waker_pid && (c->memo || (c->memo = keymemo__new())))
		gen = symbolizer__generation(c->sz, (pid_t)k->pid);
	if (gen && stack_at_hand(c, k->ustack) && stack_at_hand(c, k->kstack)) {
		long kept = keymemo__get(c->memo, k, gen);

		if (kept >= 0) {
			c->memo_hits++;
			return prof__add_count(c->prof, (size_t)kept, count);
		}
	}
	misses = symbolizer__jit_misses(c->sz, (pid_t)k->pid);
	err = add_stack_frames(c, k->ustack, false, (pid_t)k->pid, frames, &n);
	if (!err)
		err = add_stack_frames(c, k->kstack, true, (pid_t)k->pid, frames, &n);
	if (err)
		return err;
	if (symbolizer__jit_misses(c->sz, (pid_t)k->pid) != misses && c->names_coming &&
	    c->names_coming(c->on_new_arg, (pid_t)k->pid) && hold(c, k, count, drains) == 0)
		return 0;
	if (k->flags & PROFILE_KEY_OFFCPU)
		n = drop_tracing_frames(frames, n);
	if (k->waker_comm[0]) {
		err = add_waker_frames(c, k, frames, &n);
		if (err)
			return err;
	}
	/* wall-clock: time off the CPU shows as a leaf of its own */
	if (c->meta.mode == PROF_MODE_WALL && (k->flags & PROFILE_KEY_OFFCPU))
		frames[n++] = (struct prof_frame){ "[off-CPU]", FRAME_UNKNOWN, "", "" };
	memcpy(comm, k->comm, PROFILE_COMM_LEN);
	comm[PROFILE_COMM_LEN] = '\0';
	/* the key names the thread; the process's name is the one its maps
	 * were read with */
	smp = (struct prof_sample){ .pid = k->pid, .tid = k->tid, .thread = comm,
				    .comm = symbolizer__comm(c->sz, (pid_t)k->pid) };
	err = prof__add_id(c->prof, &smp, frames, n, count, &id);
	/* kept when nothing changed while its frames were named (a lookup
	 * may read a perf map again); without memory, named next time too */
	if (!err && gen && gen == symbolizer__generation(c->sz, (pid_t)k->pid) &&
	    all_named(frames, n))
		keymemo__put(c->memo, k, gen, id);
	return err;
}

/* Call FN on every entry of maps.offstart (the threads off the CPU now),
 * read in batches without deleting. 0, or a negative errno. */
static int foreach_offstart(struct capture *c,
			    int (*fn)(struct capture *c, const struct profile_offstart *st, void *arg),
			    void *arg)
{
	__u32 in = 0, out = 0, cnt, i;
	bool first = true;
	int err;

	if (c->maps.offstart < 0)
		return 0;
	if (!c->off_keys) {
		c->off_keys = calloc(OFF_BATCH, sizeof(*c->off_keys));
		c->off_vals = calloc(OFF_BATCH, sizeof(*c->off_vals));
		if (!c->off_keys || !c->off_vals)
			return -ENOMEM;
	}
	for (;;) {
		cnt = OFF_BATCH;	/* the buffers zeroed once, when made */
		err = bpf_map_lookup_batch(c->maps.offstart, first ? NULL : &in, &out,
					   c->off_keys, c->off_vals, &cnt, NULL);
		err = err ? -errno : 0;
		for (i = 0; i < cnt && (!err || err == -ENOENT); i++) {
			int e = fn(c, &c->off_vals[i], arg);

			if (e)
				return e;
		}
		if (err == -ENOENT || (!err && !cnt))
			return 0;
		if (err)
			return err;
		in = out;
		first = false;
	}
}

/* A thread off the CPU since before this drain keeps its stacks cached
 * until it runs again, however long that takes: the store gave them up. */
static int keep_offstart(struct capture *c, const struct profile_offstart *st, void *arg)
{
	if (st->ustack)
		stackcache__get(c->stacks, st->ustack, c->drains);
	if (st->kstack)
		stackcache__get(c->stacks, st->kstack, c->drains);
	return 0;
}

/* A thread still off the CPU at *NOW: its time so far. */
static int flush_one(struct capture *c, const struct profile_offstart *st, void *arg)
{
	uint64_t now = *(const uint64_t *)arg;
	struct profile_key k = {
		.pid = st->pid, .tid = st->tid, .ustack = st->ustack, .kstack = st->kstack,
		.flags = PROFILE_KEY_OFFCPU | st->state,
	};

	if (!st->ts || now <= st->ts || now - st->ts < c->meta.min_block_ns)
		return 0;
	memcpy(k.comm, st->comm, sizeof(k.comm));
	c->off_pending++;
	return add_key(c, &k, (now - st->ts) * (st->weight ? st->weight : 1));
}

int capture__flush_offstart(struct capture *c, uint64_t now)
{
	return foreach_offstart(c, flush_one, &now);
}

/* Move every count of map FD into the profile. */
/* Whether a stack of the first N keys is not in the stack cache: one the
 * store holds and this process has not copied yet. */
static bool stacks_wanted(struct capture *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct profile_key *k = &c->keys[i];

		if (!stack_at_hand(c, k->ustack) || !stack_at_hand(c, k->kstack) ||
		    !stack_at_hand(c, k->waker_ustack) || !stack_at_hand(c, k->waker_kstack))
			return true;
	}
	return false;
}

/* The counts held back at the drain before, named again (held once more
 * when their names are still to come) */
static int add_held(struct capture *c)
{
	struct capture_held *h = c->held;
	size_t n = c->nheld, i;
	int err = 0;

	/* what this round holds goes to held_next; the lists swap after */
	for (i = 0; i < n && !err; i++)
		err = add_key_held(c, &h[i].k, h[i].count, h[i].drains);
	c->held = c->held_next;
	c->nheld = c->nheld_next;
	c->held_next = h;
	c->nheld_next = 0;
	{
		size_t cap = c->held_cap;

		c->held_cap = c->held_next_cap;
		c->held_next_cap = cap;
	}
	return err;
}

static int drain_map(struct capture *c, int fd)
{
	size_t nkeys, i;
	ssize_t got;
	int err;

	got = take_counts(c, fd);
	if (got < 0)
		return (int)got;
	nkeys = (size_t)got;
	c->nkeys_last = nkeys;
	/* every stack counted already copied (a steady workload's): the
	 * store is left as it is, to be emptied when a new stack comes */
	c->store_read = stacks_wanted(c, nkeys);
	err = c->store_read ? take_stacks(c) : 0;
	if (!err)
		err = foreach_offstart(c, keep_offstart, NULL);
	if (err)
		return err;
	for (i = 0; i < nkeys; i++) {
		err = add_key(c, &c->keys[i], c->vals[i]);
		if (err)
			return err;
	}
	return add_held(c);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !run__stop)
		;
}

int capture__drain(struct capture *c)
{
	__u32 old = *c->maps.active;
	int err;

	*c->maps.active = !old;
	__sync_synchronize();
	/* a program that read the old index finishes within microseconds */
	sleep_ns(2000000);
	/* processes first sampled meanwhile: their maps before their stacks */
	if (c->news)
		ring_buffer__consume(c->news);
	c->drains++;
	c->memo_hits = 0;
	err = drain_map(c, c->maps.counts[old ? 1 : 0]);
	/* a stack still counted after its delete from the store is looked up
	 * at the next drain; older ones are not needed again */
	stackcache__sweep(c->stacks, c->drains, 2);
	if (c->memo)
		keymemo__age(c->memo);
	p_debug("drain %llu: %s map, %zu keys, %llu named before, stack store %s",
		(unsigned long long)c->drains, old ? "second" : "first", c->nkeys_last,
		(unsigned long long)c->memo_hits, c->store_read ? "read" : "left as it was");
	return err;
}

void capture__read_stats(struct capture *c)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 sum[PSTAT_MAX] = { 0 }, *vals;
	__u32 i;
	int cpu;

	if (ncpus <= 0)
		return;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return;
	for (i = 0; i < PSTAT_MAX; i++) {
		if (bpf_map_lookup_elem(c->maps.stats, &i, vals))
			continue;
		for (cpu = 0; cpu < ncpus; cpu++)
			sum[i] += vals[cpu];
	}
	free(vals);
	c->meta.samples = sum[PSTAT_SAMPLES];
	c->meta.lost_ustack = sum[PSTAT_USTACK_ERR];
	c->meta.lost_kstack = sum[PSTAT_KSTACK_ERR];
	c->meta.trunc_ustack = sum[PSTAT_USTACK_TRUNC];
	c->meta.trunc_kstack = sum[PSTAT_KSTACK_TRUNC];
	for (i = 0; i < MAP_FAIL_N; i++) {
		c->meta.lost_stacks[i] = sum[PSTAT_STACKS_LOST + i];
		c->meta.lost_counts[i] = sum[PSTAT_COUNTS_LOST + i];
	}
	c->meta.lost_counts[MAP_FAIL_OTHER] += sum[PSTAT_SCRATCH_ERR];
	c->meta.off_periods = sum[PSTAT_OFF_COUNTED];
	c->meta.lost_off_full = sum[PSTAT_OFF_FULL];
	c->meta.lost_wakers = sum[PSTAT_WAKER_FULL];
	c->meta.unwind_tables = sum[PSTAT_UNWIND_TABLES];
	c->meta.unwind_cut = sum[PSTAT_UNWIND_CUT];
	c->meta.unwind_wait = sum[PSTAT_UNWIND_WAIT];
	c->pid_reused = sum[PSTAT_PID_REUSED];
	c->news_lost = sum[PSTAT_NEW_LOST] + c->news_dropped;
}

void capture__say_fail_hints(const struct capture *c, const char *option, unsigned long long now)
{
	unsigned int i;

	for (i = 0; i < MAP_FAIL_N; i++) {
		char hint[256];

		if (c->meta.lost_stacks[i] + c->meta.lost_counts[i])
			p_warn("%s", prof__fail_advice(i, "the stack store or the count map", option,
						       now, hint, sizeof(hint)));
	}
}

int capture__start(struct capture *c)
{
	if (c->maps.news < 0)
		return 0;
	c->news = ring_buffer__new(c->maps.news, on_new_process, c, NULL);
	return c->news ? 0 : -errno;
}

int capture__poll(struct capture *c, int ms)
{
	uint64_t until = now_ns() + (uint64_t)(ms > CAPTURE_POLL_MIN_MS ? ms : CAPTURE_POLL_MIN_MS) *
				    1000000ull;
	int n;

	if (!c->news) {
		sleep_ns((uint64_t)ms * 1000000ull);
		return 0;
	}
	/* reports left from the last poll: no wait for new ones */
	n = ring_buffer__poll(c->news, c->news_head < c->news_n ? 0 : ms);
	if (n < 0)
		return n;
	return capture__handle_news(c, until);
}

bool capture__any_alive(const struct capture *c)
{
	int i;

	for (i = 0; i < c->npids; i++)
		if (proc__alive(c->pids[i], c->starts[i]))
			return true;
	return false;
}

void capture__free(struct capture *c)
{
	ring_buffer__free(c->news);
	c->news = NULL;
	free(c->pending);
	c->pending = NULL;
	free(c->held);
	free(c->held_next);
	c->held = c->held_next = NULL;
	c->nheld = c->nheld_next = c->held_cap = c->held_next_cap = 0;
	c->news_head = c->news_n = c->news_cap = 0;
	keymemo__free(c->memo);
	c->memo = NULL;
	free(c->keys);
	free(c->vals);
	c->keys = NULL;
	c->vals = NULL;
	c->keys_cap = 0;
	free(c->stack_keys);
	free(c->stack_vals);
	c->stack_keys = NULL;
	c->stack_vals = NULL;
	free(c->off_keys);
	free(c->off_vals);
	c->off_keys = NULL;
	c->off_vals = NULL;
}
