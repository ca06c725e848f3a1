// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprobe event formatting: records as the BPF program writes them ->
 * text and JSON lines; malformed records refused. */
#include <errno.h>
#include <string.h>

#include "uprobe/probespec.h"
#include "tap.h"
#include "uprobe/upfmt.h"

static struct up_event ev;

/* Put UTF-16LE units at data[off]; return the byte count. */
static unsigned int put16(unsigned int off, const uint16_t *u, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ev.data[off + 2 * i] = (uint8_t)u[i];
		ev.data[off + 2 * i + 1] = (uint8_t)(u[i] >> 8);
	}
	return 2 * n;
}

static const char *text_part(const char *line)
{
	/* the text after "TIME PID TID COMM PROBE " */
	const char *p = strstr(line, "echo ");

	return p ? p + 5 : "";
}

int main(void)
{
	static const uint16_t hi[] = { 'h', 0xe9, 0xd83d, 0xde00, '\n' };
	struct probe_spec *ps;
	struct err err;
	struct upfmt *f, *j;
	const char *line;
	size_t len, size;
	char buf[512];

	ps = probespec__parse("p:/x:echo \"%d [%s] %c %x\", arg2, dotnet_string(arg1), arg3, arg2",
			      &err);
	if (!ok(ps != NULL, "spec parses"))
		return done_testing();
	probespec__finish(ps, 4, &err);
	f = upfmt__new(&ps, 1, false, 0);
	j = upfmt__new(&ps, 1, true, 0);
	ok(f && j, "formatters");

	memset(&ev, 0, sizeof(ev));
	ev.hdr.ts = 1000000000ULL * 3600 + 123456000;	/* 01:00:00.123456 */
	ev.hdr.pid = 42;
	ev.hdr.tid = 43;
	ev.hdr.probe = 0;
	ev.hdr.nslots = 4;
	memcpy(ev.hdr.comm, "app\x01", 4);
	ev.hdr.vals[0].value = (uint64_t)-5;
	ev.hdr.vals[1].value = 0x1000;
	ev.hdr.vals[1].off = 0;
	ev.hdr.vals[1].len = put16(0, hi, 5) - 2;	/* 4 units: the limit */
	ev.hdr.vals[1].count = 9;
	ev.hdr.vals[1].flags = UP_VF_CUT;
	ev.hdr.vals[2].value = 0xe9;
	ev.hdr.vals[3].value = (uint64_t)-5;
	size = sizeof(ev.hdr) + 8;
	ev.hdr.size = (uint32_t)size;

	line = upfmt__line(f, &ev, size, &len);
	ok(line != NULL, "text line");
	if (line) {
		is_str(text_part(line), "-5 [h\xc3\xa9\xf0\x9f\x98\x80\xe2\x80\xa6] \xc3\xa9 fffffffb\n",
		       "text: %d cast, UTF-16 pair, cut marker, %c as a code point, %x 32-bit");
		ok(strncmp(line, "01:00:00.123456 42      43      app\\x01", 39) == 0,
		   "text: time, PID, TID, comm with a control character escaped");
	}
	line = upfmt__line(j, &ev, size, &len);
	ok(line && line[len - 1] == '\n', "json line");
	if (line) {
		snprintf(buf, sizeof(buf), "%s", line);
		ok(strstr(buf, "\"pid\":42,\"tid\":43") != NULL, "json: pid and tid");
		ok(strstr(buf, "\"value\":\"h\xc3\xa9\xf0\x9f\x98\x80\",\"truncated\":true") != NULL,
		   "json: decoded string without the marker, truncated flag");
		ok(strstr(buf, "\"length\":9") != NULL, "json: .NET length field");
		ok(strstr(buf, "{\"expr\":\"arg2\",\"type\":\"int\",\"value\":-5}") != NULL,
		   "json: typed signed value");
		ok(strstr(buf, "\"comm\":\"app\\u0001\"") != NULL, "json: control character escaped");
	}

	/* a control character inside a string is escaped in text */
	ev.hdr.vals[1].len = put16(0, (const uint16_t[]){ 'a', '\n', 0x85, 'b' }, 4);
	ev.hdr.vals[1].count = 4;
	ev.hdr.vals[1].flags = 0;
	line = upfmt__line(f, &ev, size, &len);
	is_str(line ? text_part(line) : "", "-5 [a\\n\\u0085b] \xc3\xa9 fffffffb\n",
	       "text: newline and C1 control escaped");
	line = upfmt__line(j, &ev, size, &len);
	ok(line && strstr(line, "\"value\":\"a\\n\\u0085b\""), "json: C1 control escaped too");

	/* markers */
	ev.hdr.vals[1].flags = UP_VF_NULL;
	line = upfmt__line(f, &ev, size, &len);
	is_str(line ? text_part(line) : "", "-5 [(null)] \xc3\xa9 fffffffb\n", "NULL string");
	ev.hdr.vals[1].flags = UP_VF_FAULT;
	line = upfmt__line(f, &ev, size, &len);
	is_str(line ? text_part(line) : "", "-5 [<fault>] \xc3\xa9 fffffffb\n", "fault");
	ev.hdr.vals[1].flags = UP_VF_BADLEN;
	ev.hdr.vals[1].count = -3;
	line = upfmt__line(j, &ev, size, &len);
	ok(line && strstr(line, "\"length\":-3,\"value\":null,\"bad_length\":true"),
	   "json: negative length");
	ev.hdr.vals[1].flags = 0;

	/* malformed records are refused */
	ok(upfmt__line(f, &ev, sizeof(ev.hdr) - 1, &len) == NULL, "short record refused");
	ev.hdr.probe = 1;
	ok(upfmt__line(f, &ev, size, &len) == NULL, "unknown probe refused");
	ev.hdr.probe = 0;
	ev.hdr.nslots = 3;
	ok(upfmt__line(f, &ev, size, &len) == NULL, "slot count not the recipe's refused");
	ev.hdr.nslots = 4;
	ev.hdr.vals[1].len = 100;
	ok(upfmt__line(f, &ev, size, &len) == NULL, "string beyond the record refused");
	ev.hdr.vals[1].len = 8;
	ev.hdr.size = (uint32_t)size + 1;
	ok(upfmt__line(f, &ev, size, &len) == NULL, "size field beyond the record refused");
	ev.hdr.size = (uint32_t)size;
	{
		FILE *null = fopen("/dev/null", "w");

		ok(null && upfmt__event(f, &ev, size, null) == 0, "a valid record writes");
		if (null)
			fclose(null);
	}

	upfmt__free(f);
	upfmt__free(j);
	upfmt__free(NULL);
	probespec__free(ps);
	return done_testing();
}
