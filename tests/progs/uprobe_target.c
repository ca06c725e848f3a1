// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Target for the uprobe tests: functions that take integers, char*,
 * NUL-terminated char16_t*, counted UTF-16 and a .NET-like string object,
 * called on commands read from stdin (one a line), so tests decide when
 * each call happens without sleeping.
 *   uprobe_target READY_FILE < commands
 * Commands: ints, strings, edge, flood N, floodstr N, quit. Each done
 * command is acknowledged on stdout with the time it took. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uchar.h>
#include <unistd.h>

#ifdef __clang__
#define PROBE __attribute__((noinline, used, optnone))
#else
#define PROBE __attribute__((noinline, noipa, used))
#endif

/* laid out like a .NET System.String on x64: length at +8, chars at +12 */
struct dn_string {
	void *method_table;
	int32_t length;
	char16_t chars[];
};

volatile long sink;

PROBE long add_ints(int a, long b, unsigned char c)
{
	sink = a;
	return a + b + c;
}

PROBE size_t take_str(const char *s)
{
	return strlen(s);
}

PROBE size_t take_u16z(const char16_t *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

PROBE int take_u16n(const char16_t *s, int len)
{
	sink = (long)s;
	return len;
}

PROBE int take_dotnet(const struct dn_string *s)
{
	return s ? s->length : -1;
}

/* takes an address it never reads: for faults in the tracer */
PROBE long take_addr(const void *p)
{
	return (long)p;
}

PROBE int flood_fn(int i)
{
	sink = i;
	return i;
}

PROBE int flood_str(const struct dn_string *s, int i)
{
	sink = i;
	return s->length;
}

struct tstr {
	const char *utf8;
	const char16_t *u16;
};

static char16_t lone[] = { u'a', 0xd800, u'b', 0 };

static const struct tstr tstrs[] = {
	{ "hello, world", u"hello, world" },
	{ "h\xc3\xa9llo w\xc3\xb6rld \xc3\x87\xc3\x80", u"h\u00e9llo w\u00f6rld \u00c7\u00c0" },
	{ "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c", u"\u4f60\u597d\uff0c\u4e16\u754c" },
	{ "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd!", u"\U0001F600\U0001F44D\U0001F3FD!" },
	{ NULL, lone },
	{ "", u"" },
};

static size_t u16len(const char16_t *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static struct dn_string *dn_new(const char16_t *s, int32_t len)
{
	size_t n = u16len(s);
	struct dn_string *d = calloc(1, sizeof(*d) + (n + 1) * sizeof(char16_t));

	if (!d)
		exit(1);
	d->method_table = (void *)0x7f0000001234;
	d->length = len;
	memcpy(d->chars, s, (n + 1) * sizeof(char16_t));
	return d;
}

static void call_string(const char *utf8, const char16_t *u16)
{
	struct dn_string *d = dn_new(u16, (int32_t)u16len(u16));

	if (utf8)
		sink += (long)take_str(utf8);
	sink += (long)take_u16z(u16);
	sink += take_u16n(u16, (int)u16len(u16));
	sink += take_dotnet(d);
	free(d);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t0 = 0;
	char line[256];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: uprobe_target READY_FILE < commands\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		t0 = now_ns();
		if (strncmp(line, "ints", 4) == 0) {
			sink += add_ints(7, -3, 200);
			sink += add_ints(-1, 1L << 40, 0);
		} else if (strncmp(line, "strings", 7) == 0) {
			char16_t longs[301];
			char long8[301];
			size_t i;

			for (i = 0; i < sizeof(tstrs) / sizeof(tstrs[0]); i++)
				call_string(tstrs[i].utf8, tstrs[i].u16);
			/* longer than the default limit of 256 */
			for (i = 0; i < 300; i++) {
				longs[i] = (char16_t)u"0123456789"[i % 10];
				long8[i] = "0123456789"[i % 10];
			}
			longs[300] = 0;
			long8[300] = 0;
			call_string(long8, longs);
		} else if (strncmp(line, "edge", 4) == 0) {
			struct dn_string *bad = dn_new(u"abc", -5);
			struct dn_string *huge = dn_new(u"abc", 0x7fffffff);

			sink += take_dotnet(NULL);
			sink += take_dotnet(bad);
			sink += take_addr((const void *)16);
			sink += take_u16n(u"abc", -1);
			/* a length far past the object: the copy is bounded and may fault */
			sink += take_dotnet(huge);
			free(bad);
			free(huge);
		} else if (strncmp(line, "flood ", 6) == 0) {
			int n = atoi(line + 6), i;

			for (i = 0; i < n; i++)
				sink += flood_fn(i);
		} else if (strncmp(line, "floodstr ", 9) == 0) {
			struct dn_string *d = dn_new(u"h\u00e9llo, w\u00f6rld \U0001F600", 15);
			int n = atoi(line + 9), i;

			for (i = 0; i < n; i++)
				sink += flood_str(d, i);
			free(d);
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		}
		/* the time each command took, for benchmarks */
		line[strcspn(line, "\n")] = '\0';
		printf("done %s ns=%lld\n", line, now_ns() - t0);
		fflush(stdout);
	}
	return 0;
}
