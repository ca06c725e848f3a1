// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof reader: a profile built with protobuf-c's generated code, gzip'd
 * and plain, must give the same flame graph as the same stacks folded;
 * kinds from mapping names; sample type choice; hostile input refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "flame/flamegraph.h"
#include "prof/folded.h"
#include "prof/pprof_read.h"
#include "profile.pb-c.h"
#include "tap.h"
#include "core/util.h"

typedef Perftools__Profiles__Profile Profile;

static const char *strings[] = {
	"", "samples", "count", "cpu", "nanoseconds",
	"[kernel.kallsyms]", "/tmp/perf-42.map", "/app/App.dll", "/usr/lib/libc.so.6",
	"do_syscall_64", "App.Program::Main()", "App.Work::Run()", "memcpy",
	"inlined_helper", "main", "/app/server", "comm", "app", "pid",
};

/* The same profile as folded stacks (kinds as suffixes). */
static const char folded_text[] =
	"main;App.Program::Main()_[j];App.Work::Run()_[r];inlined_helper_[r];memcpy 7\n"
	"main;App.Program::Main()_[j];do_syscall_64_[k] 3\n"
	"main;libc.so.6+0x1234 2\n"
	"app;main 1\n";

static size_t pack_profile(uint8_t **out)
{
	static Perftools__Profiles__ValueType vt[2];
	static Perftools__Profiles__Mapping m[5];
	static Perftools__Profiles__Function fn[6];
	static Perftools__Profiles__Location loc[6];
	static Perftools__Profiles__Line ln[7];
	static Perftools__Profiles__Sample s[4];
	static Perftools__Profiles__Label lab[2], *labp[2];
	static Perftools__Profiles__ValueType *vtp[2];
	static Perftools__Profiles__Mapping *mp[5];
	static Perftools__Profiles__Function *fp[6];
	static Perftools__Profiles__Location *lp[6];
	static Perftools__Profiles__Line *l0[1], *l1[1], *l2[2], *l3[1], *l5[1];
	static uint64_t s0[] = { 4, 3, 2, 1 }, s1[] = { 6, 2, 1 }, s2[] = { 5, 1 }, s3[] = { 1 };
	static int64_t v0[] = { 7, 70 }, v1[] = { 3, 30 }, v2[] = { 2, 20 }, v3[] = { 1, 10 };
	/* function ids deliberately not 1..n in order */
	static const uint64_t fid[6] = { 10, 20, 30, 40, 50, 60 };
	static const int64_t fname[6] = { 14, 10, 11, 13, 12, 9 };
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t i, len;

	for (i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = i ? 3 : 1;
		vt[i].unit = i ? 4 : 2;
		vtp[i] = &vt[i];
	}
	for (i = 0; i < 5; i++) {
		perftools__profiles__mapping__init(&m[i]);
		m[i].id = i + 1;
		m[i].filename = (int64_t[]){ 15, 5, 6, 7, 8 }[i];
		m[i].memory_start = 0x1000 * (i + 1);
		m[i].memory_limit = 0x1000 * (i + 2);
		mp[i] = &m[i];
	}
	m[4].file_offset = 0x200;
	for (i = 0; i < 6; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = fid[i];
		fn[i].name = fname[i];
		fp[i] = &fn[i];
	}
	for (i = 0; i < 7; i++)
		perftools__profiles__line__init(&ln[i]);
	ln[0].function_id = 10;	/* main */
	ln[1].function_id = 20;	/* Main() */
	ln[2].function_id = 40;	/* inlined_helper, inlined into ... */
	ln[3].function_id = 30;	/* Run(), the caller: last line */
	ln[4].function_id = 50;	/* memcpy */
	ln[5].function_id = 60;	/* do_syscall_64 */
	l0[0] = &ln[0];
	l1[0] = &ln[1];
	l2[0] = &ln[2];
	l2[1] = &ln[3];
	l3[0] = &ln[4];
	l5[0] = &ln[5];
	for (i = 0; i < 6; i++) {
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		lp[i] = &loc[i];
	}
	loc[0].mapping_id = 1, loc[0].n_line = 1, loc[0].line = l0;	/* main: /app/server */
	loc[1].mapping_id = 3, loc[1].n_line = 1, loc[1].line = l1;	/* perf map: JIT */
	loc[2].mapping_id = 4, loc[2].n_line = 2, loc[2].line = l2;	/* App.dll: R2R */
	loc[3].mapping_id = 1, loc[3].n_line = 1, loc[3].line = l3;	/* memcpy: native */
	loc[4].mapping_id = 5, loc[4].address = 0x5000 + 0x1034;	/* libc, no symbol */
	loc[5].mapping_id = 2, loc[5].n_line = 1, loc[5].line = l5;	/* kernel */
	for (i = 0; i < 4; i++)
		perftools__profiles__sample__init(&s[i]);
	s[0].n_location_id = 4, s[0].location_id = s0, s[0].n_value = 2, s[0].value = v0;
	s[1].n_location_id = 3, s[1].location_id = s1, s[1].n_value = 2, s[1].value = v1;
	s[2].n_location_id = 2, s[2].location_id = s2, s[2].n_value = 2, s[2].value = v2;
	s[3].n_location_id = 1, s[3].location_id = s3, s[3].n_value = 2, s[3].value = v3;
	/* the process name as a label: folded stacks carry it as the root */
	for (i = 0; i < 2; i++) {
		perftools__profiles__label__init(&lab[i]);
		labp[i] = &lab[i];
	}
	lab[0].key = 18, lab[0].num = 42;	/* pid: a number, ignored */
	lab[1].key = 16, lab[1].str = 17;	/* comm = app */
	s[3].n_label = 2, s[3].label = labp;
	Perftools__Profiles__Sample *sp[4] = { &s[0], &s[1], &s[2], &s[3] };

	p.n_sample_type = 2, p.sample_type = vtp;
	p.n_sample = 4, p.sample = sp;
	p.n_mapping = 5, p.mapping = mp;
	p.n_location = 6, p.location = lp;
	p.n_function = 6, p.function = fp;
	p.n_string_table = ARRAY_SIZE(strings), p.string_table = (char **)strings;
	len = perftools__profiles__profile__get_packed_size(&p);
	*out = malloc(len);
	perftools__profiles__profile__pack(&p, *out);
	return len;
}

static size_t gzip_buf(const uint8_t *in, size_t len, uint8_t **out)
{
	z_stream zs = { 0 };
	size_t cap = len + 1024;

	*out = malloc(cap);
	deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	zs.next_out = *out;
	zs.avail_out = cap;
	deflate(&zs, Z_FINISH);
	deflateEnd(&zs);
	return cap - zs.avail_out;
}

static int to_flame(void *ctx, const char *const *names, const enum frame_kind *kinds,
		    size_t depth, uint64_t count, size_t same)
{
	return flame__add_stack_shared(ctx, names, kinds, depth, count, same, false);
}

static char *svg_of(struct flamegraph *fg)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	flame__write_svg(fg, f, &(struct flame_opts){ .title = "same" });
	fclose(f);
	return buf;
}

static void write_fixture(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ok(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0, "fixture %s written", path);
}

int main(void)
{
	struct pprof_read_stats st;
	struct flamegraph *a = flame__new(), *b = flame__new(), *c = flame__new();
	uint8_t *raw, *gz;
	size_t raw_len = pack_profile(&raw), gz_len = gzip_buf(raw, raw_len, &gz);
	char *text = strdup(folded_text), *sa, *sb, *sc;
	int err;

	if (getenv("SIDESCOPE_UPDATE_GOLDEN")) {
		char path[4096];

		snprintf(path, sizeof(path), "%s", fixture("flame/same.pb.gz"));
		write_fixture(path, gz, gz_len);
		snprintf(path, sizeof(path), "%s", fixture("flame/same.folded"));
		write_fixture(path, folded_text, strlen(folded_text));
	}

	ok(pprof__is_gzip(gz, gz_len) && !pprof__is_gzip(raw, raw_len), "gzip magic");
	err = pprof__read(gz, gz_len, NULL, to_flame, a, &st);
	is_int(err, 0, "gzip'd profile read");
	is_str(st.value_type, "samples", "'samples' chosen over the last sample type");
	is_int(st.samples, 4, "four samples");
	is_int(st.total, 13, "total of the samples value");
	err = pprof__read(raw, raw_len, NULL, to_flame, c, NULL);
	is_int(err, 0, "plain profile read");
	err = folded__parse(text, strlen(text), 0, to_flame, b, NULL);
	is_int(err, 0, "folded read");
	sa = svg_of(a);
	sb = svg_of(b);
	sc = svg_of(c);
	ok(sa && sb && strcmp(sa, sb) == 0, "pprof and folded give the same graph");
	ok(sa && sc && strcmp(sa, sc) == 0, "gzip'd or not, the same graph");
	ok(sa && strstr(sa, "<title>libc.so.6+0x1234</title>"), "unsymbolized: module+offset");
	free(sa);
	free(sb);
	free(sc);
	flame__free(a);
	flame__free(b);
	flame__free(c);

	a = flame__new();
	err = pprof__read(gz, gz_len, "cpu", to_flame, a, &st);
	is_int(err, 0, "explicit sample type");
	is_int(flame__total(a), 130, "cpu values summed");
	is_int(pprof__read(gz, gz_len, "nope", to_flame, a, NULL), -EINVAL, "unknown type refused");
	flame__free(a);

	is_int(pprof__mapping_kind("[kernel.kallsyms]"), FRAME_KERNEL, "kernel mapping");
	is_int(pprof__mapping_kind("/tmp/perf-123.map"), FRAME_JIT, "perf map: JIT");
	is_int(pprof__mapping_kind("[jit]"), FRAME_JIT, "[jit]");
	is_int(pprof__mapping_kind("/app/System.Private.CoreLib.DLL"), FRAME_R2R, ".dll: R2R");
	is_int(pprof__mapping_kind("/app/tool.exe"), FRAME_R2R, ".exe: R2R");
	is_int(pprof__mapping_kind("/tmp/perf-x.map"), FRAME_NATIVE, "not a perf map name");
	is_int(pprof__mapping_kind("/usr/bin/app"), FRAME_NATIVE, "native");
	is_int(pprof__mapping_kind(NULL), FRAME_UNKNOWN, "no mapping");

	/* hostile input: garbage, truncated gzip, a gzip bomb cap */
	a = flame__new();
	is_int(pprof__read("\x0a\xff\xff\xff\xff\x0f", 6, NULL, to_flame, a, NULL), -EINVAL,
	       "garbage refused");
	is_int(pprof__read(gz, gz_len / 2, NULL, to_flame, a, NULL), -EINVAL, "truncated gzip refused");
	{
		char *out = NULL;
		size_t out_len;

		is_int(pprof__gunzip(gz, gz_len, &out, &out_len, 16), -EFBIG, "size cap on inflating");
		free(out);
	}
	is_int(flame__total(a), 0, "nothing added from bad input");
	flame__free(a);
	free(raw);
	free(gz);
	free(text);
	return done_testing();
}
