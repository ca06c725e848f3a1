// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the pairing of trace events into Chrome trace events
 * (ctf/ctfpair, for the timeline's LTTng events and 'ctf chrome'), the
 * part of the readers that the app's events drive: which names, on which
 * threads, in which order, with which payloads. The events are decoded
 * from the input, not read by babeltrace2, which aborts and loops on
 * damaged streams (sidescope reads traces in a child process it kills on
 * time: ctf/child, checked by tests/unit/timeline/test_tlread.c).
 *
 * Input: one byte of mode (bit 0: the default budgets, else small ones that
 * short inputs reach; bits 1-2: how many times the events are replayed, 1
 * to 4; bit 3: the options of 'ctf chrome', else the timeline's), then
 * 4-byte events: name (of the table below), thread, time step, payload
 * length (its bytes follow). Every input has a time budget: one that takes
 * longer fails the target (abort). Work per event that grows with the
 * begins kept takes more events than an input holds to show:
 * tests/unit/timeline/test_tlread.c times that.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "ctf/ctfpair.h"

/* per input: a hundred times what the largest take here (10 ms; 80 ms
 * with ASan), under libFuzzer's -timeout of 10 s */
#if defined(__SANITIZE_ADDRESS__)
#define BUDGET_NS 8000000000ull
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUDGET_NS 8000000000ull
#endif
#endif
#ifndef BUDGET_NS
#define BUDGET_NS 1000000000ull
#endif

static const char *const names[] = {
	"app:x_begin", "app:x_end", "app:y_end", "app:RequestStart", "app:RequestStop",
	"app:note", "DotNETRuntime:GCStart_V2", "DotNETRuntime:GCEnd_V1",
};

static struct {
	int kind;
	char *base;
} classes[sizeof(names) / sizeof(names[0])];

struct payload {
	const uint8_t *s;
	size_t n;
	unsigned i;
};

static void write_payload(struct json *j, const void *arg)
{
	const struct payload *p = arg;

	json__obj(j);
	json__key(j, "i"); json__u64(j, p->i);
	json__key(j, "s"); json__strn(j, (const char *)p->s, p->n);
	json__end(j);
}

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctfpair_opts o = { .origin = 1000, .cat = "lttng", .payload = write_payload };
	struct ctfpair_stats st = { 0 };
	uint8_t seen[256 / 8] = { 0 };
	struct ctfpair *p;
	uint64_t t0, took, ts = 1000;
	unsigned rep, reps, i = 0;
	size_t k, at;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			classes[k].kind = ctfpair__classify(names[k], &classes[k].base);
		if (!devnull)
			abort();
	}
	if (size < 1)
		return 0;
	ctfpair__default_limits(&o.lim);
	o.lim.max_bytes = 64 << 20;
	if (!(data[0] & 1)) {
		o.lim.max_bytes = 64 << 10;
		o.lim.max_open = 16;
		o.lim.max_depth = 4;
		o.lim.max_args = 48;
	}
	if (data[0] & 8) {
		o.origin_first = o.process_names = o.no_payload_null = o.open_by_thread = true;
		o.cat = NULL;
	}
	reps = 1 + ((data[0] >> 1) & 3);
	p = ctfpair__new(fileno(devnull), &o, &st);
	if (!p)
		return 0;
	t0 = now_ns();
	for (rep = 0; rep < reps; rep++) {
		for (at = 1; at + 4 <= size; at += 4) {
			const uint8_t *r = data + at;
			size_t c = r[0] % (sizeof(names) / sizeof(names[0]));
			struct payload pl = { data + at + 4, r[3] & 63, i++ };
			struct ctfpair_event e = {
				.kind = classes[c].kind, .name = names[c], .base = classes[c].base,
				.thread = r[1], .pid = 1000 + (r[1] & 0xf0), .tid = 1000 + r[1],
				.procname = "app", .payload = &pl,
			};

			if (pl.n > size - at - 4)
				pl.n = size - at - 4;
			at += pl.n;
			e.new_thread = !(seen[r[1] / 8] & (1u << (r[1] % 8)));
			seen[r[1] / 8] |= 1u << (r[1] % 8);
			/* time mostly goes forward; 0xff steps back */
			ts = r[2] == 0xff ? (ts > 5000 ? ts - 5000 : 0) : ts + r[2];
			e.ts = ts;
			if (r[0] & 0x80)
				e.payload = NULL;
			if (ctfpair__event(p, &e))
				break;
		}
	}
	ctfpair__finish(p);
	ctfpair__free(p);
	took = now_ns() - t0;
	if (took > BUDGET_NS) {
		fprintf(stderr, "fuzz_ctfpair: an input of %zu bytes (%u events) took %llu ms, "
			"over its budget of %llu ms\n", size, i, (unsigned long long)(took / 1000000),
			(unsigned long long)(BUDGET_NS / 1000000));
		abort();
	}
	return 0;
}
