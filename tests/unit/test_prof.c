// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Profile model and writers: folded (golden file), top (80 columns),
 * JSON, and pprof decoded back with protobuf-c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "prof.h"
#include "profile.pb-c.h"
#include "util.h"
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
	return done_testing();
}
