// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Profile model and writers: folded (golden file; one line per stack, or
 * per process or thread), top (80 columns), JSON, and pprof decoded back
 * with protobuf-c (addresses, mappings, lines, labels). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "prof/pprof_read.h"
#include "prof/prof.h"
#include "profile.pb-c.h"
#include "core/util.h"
#include "tap.h"

#define F(n, k, m) { n, k, m, "" }

/* One thread of a process, both named NAME. */
static int add(struct prof *p, uint32_t pid, const char *name, const struct prof_frame *f,
	       size_t n, uint64_t count)
{
	struct prof_sample s = { .pid = pid, .tid = pid, .comm = name, .thread = name };

	return prof__add(p, &s, f, n, count);
}

static struct prof *build(void)
{
	struct prof *p = prof__new();
	struct prof_frame a[] = { F("main", FRAME_NATIVE, "/app/bin"),
				  F("compute", FRAME_NATIVE, "/app/bin"),
				  F("leaf", FRAME_NATIVE, "/app/bin"),
				  F("do_syscall_64", FRAME_KERNEL, "[kernel.kallsyms]"),
				  F("sys_read", FRAME_KERNEL, "[kernel.kallsyms]") };
	struct prof_frame b[] = { F("main", FRAME_NATIVE, "/app/bin"),
				  F("jit;Method(a, b)", FRAME_JIT, "[jit]"),
				  F("Sample.Fib(int)", FRAME_R2R, "/app/Sample.dll") };
	struct prof_frame c[] = { F("main", FRAME_NATIVE, "/app/bin"),
				  F("libc.so.6+0x1234", FRAME_UNKNOWN, "/lib/libc.so.6") };
	struct prof_frame d[] = { F("[unknown]", FRAME_UNKNOWN, "") };
	struct prof_meta m = { .hz = 99, .period_ns = 10101010, .duration_ns = 2000000000,
			       .samples = 15, .lost_ustack = 1 };

	a[0].build_id = "abcdef";
	ok(p != NULL, "prof__new");
	ok(add(p, 10, "app", a, 3, 2) == 0, "add");
	add(p, 10, "app", a, 3, 3);	/* merges with the first */
	add(p, 10, "app", a, 5, 2);
	add(p, 10, "app", b, 3, 3);
	add(p, 10, "app", c, 2, 1);
	add(p, 11, "other", d, 1, 4);
	prof__set_meta(p, &m);
	return p;
}

static char *write_mem(struct prof *p, int (*fn)(const struct prof *, FILE *), size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (fn(p, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static int write_top(const struct prof *p, FILE *f)
{
	return prof__write_top(p, f, 20);
}

static void test_pprof(struct prof *p)
{
	Perftools__Profiles__Profile *pr;
	unsigned char out[1 << 16];
	size_t len, i;
	char *gz = write_mem(p, prof__write_pprof, &len);
	z_stream zs = { 0 };
	int64_t total = 0;
	bool leaf_first = false;

	ok(gz && len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
	   "pprof: gzip");
	inflateInit2(&zs, 15 + 16);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	is_int(inflate(&zs, Z_FINISH), Z_STREAM_END, "pprof: gunzips");
	inflateEnd(&zs);
	pr = perftools__profiles__profile__unpack(NULL, sizeof(out) - zs.avail_out, out);
	ok(pr != NULL, "pprof: protobuf decodes");
	if (!pr)
		goto cleanup;
	is_int(pr->n_sample_type, 2, "pprof: two sample types");
	is_str(pr->string_table[pr->sample_type[0]->type], "samples", "samples/count");
	is_str(pr->string_table[pr->sample_type[1]->unit], "nanoseconds", "cpu/nanoseconds");
	ok(pr->period == 10101010, "pprof: period");
	is_str(pr->string_table[0], "", "string table starts with \"\"");
	is_int(pr->n_sample, 5, "pprof: one sample per stack");
	for (i = 0; i < pr->n_sample; i++) {
		total += pr->sample[i]->value[0];
		if (pr->sample[i]->n_location_id == 3 && pr->sample[i]->value[0] == 5) {
			uint64_t loc = pr->sample[i]->location_id[0];
			uint64_t fn = pr->location[loc - 1]->line[0]->function_id;

			leaf_first = !strcmp(pr->string_table[pr->function[fn - 1]->name], "leaf");
		}
	}
	is_int(total, 15, "pprof: counts add up");
	ok(leaf_first, "pprof: location ids leaf first");
	for (i = 0; i < pr->n_mapping; i++)
		if (!strcmp(pr->string_table[pr->mapping[i]->filename], "/app/bin") &&
		    !strcmp(pr->string_table[pr->mapping[i]->build_id], "abcdef"))
			break;
	ok(i < pr->n_mapping, "pprof: mapping with its build id");
	ok(pr->n_comment >= 2, "pprof: loss counters as comments");
	perftools__profiles__profile__free_unpacked(pr, NULL);
cleanup:
	free(gz);
}

static Perftools__Profiles__Profile *decode(struct prof *p)
{
	Perftools__Profiles__Profile *pr = NULL;
	size_t len, rawlen;
	char *gz = write_mem(p, prof__write_pprof, &len), *raw = NULL;

	if (gz && pprof__gunzip(gz, len, &raw, &rawlen, 0) == 0)
		pr = perftools__profiles__profile__unpack(NULL, rawlen, (const uint8_t *)raw);
	free(gz);
	free(raw);
	return pr;
}

static const char *str_of(const Perftools__Profiles__Profile *pr, int64_t i)
{
	return i >= 0 && (size_t)i < pr->n_string_table ? pr->string_table[i] : "?";
}

static const Perftools__Profiles__Location *loc_at(const Perftools__Profiles__Profile *pr,
						    uint64_t addr)
{
	size_t i;

	for (i = 0; i < pr->n_location; i++)
		if (pr->location[i]->address == addr)
			return pr->location[i];
	return NULL;
}

static const Perftools__Profiles__Mapping *map_of(const Perftools__Profiles__Profile *pr,
						   uint64_t id)
{
	size_t i;

	for (i = 0; i < pr->n_mapping; i++)
		if (pr->mapping[i]->id == id)
			return pr->mapping[i];
	return NULL;
}

static const Perftools__Profiles__Function *func_of(const Perftools__Profiles__Profile *pr,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->function[i];
	return NULL;
}

/* Lines looked up when pprof is written, as the symbolizer's DWARF does. */
static int lookups;
static const struct frame_line dwarf_lines[] = {
	{ "inlined_helper", "/src/app.c", 42, 40 },
	{ NULL, "/src/app.c", 17, 10 },
};

static int lookup_lines(void *src, uint64_t vaddr, const struct frame_line **out)
{
	lookups++;
	if (src != (void *)dwarf_lines || vaddr != 0x1234)
		return 0;
	*out = dwarf_lines;
	return 2;
}

/* Addresses, mappings, lines and threads: pprof keeps them all, folded
 * stacks one line per stack unless split. */
static void test_where(void)
{
	static const struct frame_line main_line[] = { { NULL, "/src/main.c", 99, 90 } };
	struct prof_frame f[] = {
		{ .name = "main", .kind = FRAME_NATIVE, .module = "/app/bin", .build_id = "abcdef",
		  .addr = 0x401232, .map_start = 0x401000, .map_limit = 0x402000,
		  .map_offset = 0x1000, .lines = main_line, .nlines = 1 },
		{ .name = "compute", .kind = FRAME_NATIVE, .module = "/app/bin",
		  .build_id = "abcdef", .addr = 0x401456, .map_start = 0x401000,
		  .map_limit = 0x402000, .map_offset = 0x1000,
		  .lines_ref = { lookup_lines, (void *)dwarf_lines, 0x1234 } },
		{ .name = "libc.so.6+0x1233", .kind = FRAME_UNKNOWN, .module = "/lib/libc.so.6",
		  .build_id = "beef", .addr = 0x7f0000001233, .map_start = 0x7f0000000000,
		  .map_limit = 0x7f0000100000, .unresolved = true },
		{ .name = "sys_read", .kind = FRAME_KERNEL, .module = "[kernel.kallsyms]",
		  .addr = 0xffffffff81000010, .map_start = 0x8000000000000000ull,
		  .map_limit = UINT64_MAX },
	};
	struct prof_sample a = { 10, 11, "app", "worker" }, b = { 12, 12, "app", "worker" };
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Mapping *m;
	const Perftools__Profiles__Function *fn;
	Perftools__Profiles__Profile *pr;
	struct prof *p = prof__new();
	char *got;
	size_t len, i, j;
	int labels = 0, before;

	ok(p && prof__add(p, &a, f, 4, 1) == 0, "add a stack with addresses and lines");
	prof__add(p, &b, f, 4, 2);	/* the same stack in another process */
	f[1].addr = 0x401460;		/* another address on the same line */
	prof__add(p, &a, f, 4, 3);
	is_int(prof__nstacks(p), 3, "the model keeps processes, threads and addresses apart");
	before = lookups;
	got = write_mem(p, prof__write_folded, &len);
	is_str(got, "worker;main;compute;libc.so.6+0x1233;sys_read_[k] 6\n",
	       "folded: one line for the stack of two processes, two threads, two addresses");
	free(got);
	is_int(lookups, before, "folded: no line looked up");
	prof__set_split(p, PROF_SPLIT_PID);
	got = write_mem(p, prof__write_folded, &len);
	is_str(got, "worker-10;main;compute;libc.so.6+0x1233;sys_read_[k] 4\n"
	       "worker-12;main;compute;libc.so.6+0x1233;sys_read_[k] 2\n",
	       "folded split per process: NAME-PID");
	free(got);
	prof__set_split(p, PROF_SPLIT_TID);
	got = write_mem(p, prof__write_folded, &len);
	is_str(got, "worker-10/11;main;compute;libc.so.6+0x1233;sys_read_[k] 4\n"
	       "worker-12/12;main;compute;libc.so.6+0x1233;sys_read_[k] 2\n",
	       "folded split per thread: NAME-PID/TID");
	free(got);
	prof__set_split(p, 0);
	got = write_mem(p, prof__write_json, &len);
	ok(got && strstr(got, "{\"pid\":10,\"tid\":11,\"comm\":\"app\",\"thread\":\"worker\",\"count\":4,") &&
	   strstr(got, "{\"pid\":12,\"tid\":12,\"comm\":\"app\",\"thread\":\"worker\",\"count\":2,"),
	   "json: one stack per thread, addresses merged, with tid, comm and thread");
	free(got);

	pr = decode(p);
	ok(pr != NULL, "pprof decodes");
	if (!pr)
		goto cleanup;
	ok(lookups > before, "pprof: lines looked up when written");
	is_int(pr->n_sample, 3, "pprof: one sample per process, thread and addresses");
	l = loc_at(pr, 0x401456);
	m = l ? map_of(pr, l->mapping_id) : NULL;
	ok(m && m->memory_start == 0x401000 && m->memory_limit == 0x402000 &&
	   m->file_offset == 0x1000 && !strcmp(str_of(pr, m->filename), "/app/bin") &&
	   !strcmp(str_of(pr, m->build_id), "abcdef"),
	   "pprof: the location's mapping has start, limit, offset, file and build id");
	ok(m && m->has_functions && m->has_filenames && m->has_line_numbers &&
	   m->has_inline_frames, "pprof: has_* true for a mapping whose every address has lines");
	ok(m == map_of(pr, 1), "pprof: the program's mapping first");
	ok(l && l->n_line == 2, "pprof: an inlined function and its caller at one address");
	if (l && l->n_line == 2) {
		fn = func_of(pr, l->line[0]->function_id);
		ok(fn && !strcmp(str_of(pr, fn->name), "inlined_helper") &&
		   !strcmp(str_of(pr, fn->filename), "/src/app.c") && fn->start_line == 40 &&
		   l->line[0]->line == 42, "pprof: the inlined function, innermost first, file:line");
		fn = func_of(pr, l->line[1]->function_id);
		ok(fn && !strcmp(str_of(pr, fn->name), "compute") && l->line[1]->line == 17 &&
		   fn->start_line == 10, "pprof: then the frame's own function at the call's line");
	}
	l = loc_at(pr, 0x401232);
	ok(l && l->n_line == 1 && l->line[0]->line == 99 &&
	   !strcmp(str_of(pr, func_of(pr, l->line[0]->function_id)->filename), "/src/main.c"),
	   "pprof: lines given with the frame");
	l = loc_at(pr, 0x7f0000001233);
	m = l ? map_of(pr, l->mapping_id) : NULL;
	ok(l && l->n_line == 0 && m && !strcmp(str_of(pr, m->build_id), "beef"),
	   "pprof: an unresolved address has no function, its mapping its build id");
	ok(m && !m->has_functions && !m->has_filenames, "pprof: so its mapping says it lacks them");
	l = loc_at(pr, 0xffffffff81000010);
	m = l ? map_of(pr, l->mapping_id) : NULL;
	ok(m && !strcmp(str_of(pr, m->filename), "[kernel.kallsyms]") && l->n_line == 1,
	   "pprof: a kernel address in the kernel's mapping");
	for (i = 0; i < pr->n_sample; i++)
		for (j = 0; j < pr->sample[i]->n_label; j++) {
			const Perftools__Profiles__Label *lb = pr->sample[i]->label[j];
			const char *k = str_of(pr, lb->key);

			labels += (!strcmp(k, "pid") && (lb->num == 10 || lb->num == 12)) +
				  (!strcmp(k, "tid") && (lb->num == 11 || lb->num == 12)) +
				  (!strcmp(k, "comm") && !strcmp(str_of(pr, lb->str), "app")) +
				  (!strcmp(k, "thread") && !strcmp(str_of(pr, lb->str), "worker"));
		}
	is_int(labels, 12, "pprof: pid, tid, comm and thread labels on every sample");
	perftools__profiles__profile__free_unpacked(pr, NULL);
cleanup:
	prof__free(p);
}

int main(void)
{
	struct prof *p = build();
	char *got, *want = NULL, *line, *save = NULL;
	size_t len, wlen;
	int wide = 0;

	is_int(prof__total(p), 15, "total");
	is_int(prof__nstacks(p), 5, "identical stacks merged");
	got = write_mem(p, prof__write_folded, &len);
	read_file(fixture("profile/small.folded"), &want, &wlen, 0);
	is_str(got ? got : "", want ? want : "-", "folded output matches the golden file");
	free(got);
	free(want);

	got = write_mem(p, write_top, &len);
	ok(got && strstr(got, "SELF%") && strstr(got, "leaf"), "top table");
	ok(got && strstr(got, "sys_read_[k]"), "top table marks kernel frames");
	for (line = got ? strtok_r(got, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		wide += strlen(line) > 80;
	is_int(wide, 0, "top table fits 80 columns");
	free(got);

	got = write_mem(p, prof__write_json, &len);
	ok(got && strstr(got, "\"kind\":\"r2r\"") && strstr(got, "\"user_stack_errors\":1"),
	   "json: kinds and loss counters");
	ok(got && strstr(got, "\"name\":\"jit;Method(a, b)\""), "json keeps names as they are");
	free(got);

	test_pprof(p);
	prof__free(p);
	prof__free(NULL);
	test_where();
	return done_testing();
}
