// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Folded-stack reader: leniency, bad-line accounting, kinds from suffixes,
 * frames shared with the previous line, streaming across buffer refills. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/folded.h"
#include "tap.h"

struct rec {
	char out[8192];		/* "a;b;c=N|" per stack, kinds as :K */
	size_t len;
	size_t shared_total;
	char prev[64][128];	/* names of the last stack, for shared frames */
	size_t prev_depth;
	int stop_after;		/* return -ECANCELED after this many, 0: never */
	int calls;
};

static const char kind_ch[] = { 'u', 'n', 'k', 'j', 'r' };

static int rec_cb(void *ctx, const char *const *names, const enum frame_kind *kinds,
		  size_t depth, uint64_t count, size_t same)
{
	struct rec *r = ctx;
	size_t i;

	if (r->stop_after && r->calls >= r->stop_after)
		return -ECANCELED;
	r->calls++;
	r->shared_total += same;
	if (same > r->prev_depth)
		return -EINVAL;
	for (i = 0; i < depth && i < 64; i++) {
		if (i >= same)
			snprintf(r->prev[i], sizeof(r->prev[i]), "%s", names[i]);
		else if (names[i])
			return -EINVAL;	/* shared names must be left out */
		r->len += snprintf(r->out + r->len, sizeof(r->out) - r->len, "%s%s:%c",
				   i ? ";" : "", r->prev[i], kind_ch[kinds[i]]);
	}
	r->prev_depth = depth;
	r->len += snprintf(r->out + r->len, sizeof(r->out) - r->len, "=%llu|",
			   (unsigned long long)count);
	return 0;
}

static void parse(const char *text, unsigned int flags, struct rec *r, struct folded_stats *st,
		  int *err)
{
	char *buf = strdup(text);

	memset(r, 0, sizeof(*r));
	*err = folded__parse(buf, strlen(buf), flags, rec_cb, r, st);
	free(buf);
}

static void test_lenient(void)
{
	struct folded_stats st;
	struct rec r;
	int err;

	parse("main;work 3\r\n\n# comment\n  main;idle\t 2  \nmain;;work 1\n", 0, &r, &st, &err);
	is_int(err, 0, "lenient input parses");
	is_str(r.out, "main:n;work:n=3|main:n;idle:n=2|main:n;work:n=1|",
	       "CRLF, blanks, tabs and empty frames");
	is_int(st.lines, 5, "every line counted");
	is_int(st.stacks, 3, "three stacks");
	is_int(st.bad, 0, "no bad lines");
	is_int(st.samples, 6, "samples summed");

	parse("a;b 1\nno count here\na;b x\n;;; 4\n-5\na;b -1\na;b 2", 0, &r, &st, &err);
	is_int(err, 0, "bad lines do not stop the reader");
	is_int(st.bad, 5, "bad lines counted: no count, not a number, no frames, negative");
	is_int(st.first_bad, 2, "first bad line number");
	is_str(r.out, "a:n;b:n=1|a:n;b:n=2|", "good lines kept; last line without newline");

	parse("x;y 0\nx;y 5\n", 0, &r, &st, &err);
	is_str(r.out, "x:n;y:n=5|", "zero counts are not passed on");
	is_int(st.stacks, 2, "but they are stacks");
}

static void test_kinds(void)
{
	struct folded_stats st;
	struct rec r;
	int err;
	size_t len;

	parse("start_kernel_[k];Foo::Bar()_[j];Sys.Linq_[r];libc.so.6+0x1a2b;[unknown];"
	      "x_[i];plain+0xzz 1\n", 0, &r, &st, &err);
	is_str(r.out, "start_kernel:k;Foo::Bar():j;Sys.Linq:r;libc.so.6+0x1a2b:u;"
	       "[unknown]:u;x_[i]:n;plain+0xzz:n=1|", "kinds from suffixes, suffixes stripped");
	len = 4;
	is_int(folded__kind("_[k]", &len), FRAME_NATIVE, "a bare suffix is a name");
	len = 3;
	is_int(folded__kind("+0x", &len), FRAME_NATIVE, "no hex digits: a name");
}

static void test_shared(void)
{
	struct folded_stats st;
	struct rec r, full;
	int err;
	const char *text = "a;b;c 1\na;b;c 2\na;b;d 3\na;bb;c 4\nbad\na;bb;c 5\na;bb 6\n";

	parse(text, 0, &r, &st, &err);
	parse(text, FOLDED_FULL, &full, &st, &err);
	is_str(r.out, full.out, "shared prefixes give the same stacks");
	is_str(r.out, "a:n;b:n;c:n=1|a:n;b:n;c:n=2|a:n;b:n;d:n=3|a:n;bb:n;c:n=4|"
	       "a:n;bb:n;c:n=5|a:n;bb:n=6|", "stacks");
	/* 3 (same) + 2 (a;b) + 1 (a; b vs bb) + 0 (after a bad line) + 1 (a;bb) */
	is_int(r.shared_total, 7, "frames shared with the previous line");
	is_int(full.shared_total, 0, "FOLDED_FULL shares nothing");
}

static void test_stream(void)
{
	struct folded_stats st;
	struct rec r;
	FILE *f = tmpfile();
	char *big;
	size_t i, n = (1 << 20) + 5000;
	int err;

	/* one line longer than the reader's buffer, then an ordinary one */
	big = malloc(n + 1);
	for (i = 0; i < n; i++)
		big[i] = i % 2 ? ';' : 'f';
	big[n] = '\0';
	fprintf(f, "%s 7\nlast;one 1\n", big);
	rewind(f);
	memset(&r, 0, sizeof(r));
	err = folded__read(f, "head;x 2\nhead;", 14, 0, rec_cb, &r, &st);
	is_int(err, 0, "stream read");
	is_int(st.stacks, 3, "head, a line across the head and the file, and one more");
	ok(strncmp(r.out, "head:n;x:n=2|head:n;f:n;f:n;", 28) == 0, "head joined to the file");
	ok(strstr(r.out, "last:n;one:n=1|") != NULL, "line after the long one");
	is_int(st.samples, 10, "samples");
	fclose(f);

	memset(&r, 0, sizeof(r));
	r.stop_after = 1;
	err = folded__read(NULL, "a 1\nb 2\n", 8, 0, rec_cb, &r, &st);
	is_int(err, -ECANCELED, "callback error stops the reader");
	free(big);
}

int main(void)
{
	test_lenient();
	test_kinds();
	test_shared();
	test_stream();
	return done_testing();
}
