// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Chrome writer's end of a file whose events another process wrote and
 * could not end (ctf/chrome.h, chrome__salvage): 'ctf chrome' kills a
 * reader that does not stop after a signal, and ends its file itself,
 * after the reader's last whole event, with the totals it left. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctf/chrome.h"
#include "tap.h"

#define HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"

/* The file of a writer begun on it, EVENTS written after the header as a
 * reader would have, then salvaged and ended ("killed"); NULL when the
 * salvage failed (its error in *ERR). */
static char *salvaged(const char *events, size_t len, int *err)
{
	struct chrome_totals tot = { .events = 7, .origin = 1000 };
	struct ctfpair_limits lim;
	struct chrome w;
	char *text = NULL;
	size_t size = 0;
	FILE *f = tmpfile();
	long end;

	ctfpair__default_limits(&lim);
	if (!f || chrome__begin(&w, f, &tot, &lim))
		abort();
	/* the reader's writes: through the descriptor, as the pairer's */
	if (write(fileno(f), events, len) != (ssize_t)len)
		abort();
	*err = chrome__salvage(&w);
	if (!*err)
		*err = chrome__end(&w, "killed");
	chrome__free(&w);
	if (*err) {
		fclose(f);
		return NULL;
	}
	end = ftell(f);
	text = calloc(1, (size_t)end + 1);
	if (!text || fseek(f, 0, SEEK_SET) || fread(text, 1, (size_t)end, f) != (size_t)end)
		abort();
	size = (size_t)end;
	fclose(f);
	text[size] = '\0';
	return text;
}

#define TAIL "],\"otherData\":{\"source\":\"sidescope ctf chrome\",\"clock_origin_ns\":1000," \
	"\"events\":7,\"discarded_events\":0,\"discarded_packets\":0,\"read_cut\":\"killed\"}}\n"

static void check(const char *what, const char *events, size_t len, const char *want)
{
	int err = 0;
	char *got = salvaged(events, len, &err);

	is_int(err, 0, "%s: salvaged", what);
	if (got)
		is_str(got, want, "%s: whole events, then the end", what);
	free(got);
}

int main(void)
{
	const char *a = "{\"ph\":\"i\",\"name\":\"a\"}", *b = "{\"ph\":\"i\",\"name\":\"b,\\n\"}";
	char *big, *want;
	size_t n, blen, wlen;
	FILE *m;
	int err;

	check("nothing written", "", 0, HEAD "\n" TAIL);
	check("one event, maybe cut", "{\"ph\":\"i\"", 9, HEAD "\n" TAIL);
	/* "b,\n" in a string is escaped: no separator */
	n = (size_t)asprintf(&big, "%s,\n%s,\n{\"ph\":\"X\",\"na", a, b);
	check("an event cut", big, n, HEAD "{\"ph\":\"i\",\"name\":\"a\"},\n"
	      "{\"ph\":\"i\",\"name\":\"b,\\n\"}\n" TAIL);
	free(big);
	n = (size_t)asprintf(&big, "%s,\n%s,\n", a, b);
	check("cut after a separator", big, n, HEAD "{\"ph\":\"i\",\"name\":\"a\"},\n"
	      "{\"ph\":\"i\",\"name\":\"b,\\n\"}\n" TAIL);
	free(big);

	/* the last separator across the reads' 64 KiB blocks: its ',' the last
	 * byte of one, its '\n' the first of the next */
	blen = 3 * 65536;
	big = malloc(blen + 1);
	if (!big)
		abort();
	memset(big, 'x', blen);
	big[0] = '"';
	n = blen - 65536 - 1;
	big[n] = ',';
	big[n + 1] = '\n';
	m = open_memstream(&want, &wlen);
	if (!m)
		abort();
	fputs(HEAD, m);
	fwrite(big, 1, blen - 65536 - 1, m);
	fputs("\n" TAIL, m);
	fclose(m);
	check("a separator across two blocks", big, blen, want);
	free(want);
	free(big);

	/* not a file: what was written stays, and is not ended */
	{
		struct chrome_totals tot = { 0 };
		struct ctfpair_limits lim;
		struct chrome w;
		int p[2];
		FILE *f;

		ctfpair__default_limits(&lim);
		if (pipe(p) || !(f = fdopen(p[1], "w")) || chrome__begin(&w, f, &tot, &lim))
			abort();
		err = chrome__salvage(&w);
		is_int(err, -ESPIPE, "a pipe: not salvaged");
		chrome__free(&w);
		fclose(f);
		close(p[0]);
	}
	return done_testing();
}
