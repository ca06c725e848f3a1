// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: what a JVM's side of the attach can hand rt/jattach
 * (jattach.h): the reply on its socket, received through a socket pair
 * within a size and a deadline as from a JVM, then parsed and turned into
 * a message; its /proc/PID/status; its command line and environment (the
 * input cut in two); its JDK's release file. The input is copied to a
 * buffer of exactly its size (no NUL after it), so a read past the end is
 * ASan's. Every message made must be one escaped line. All of it is linear:
 * an input that takes more than FUZZ_JATTACH_MS is a failure. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "rt/jattach.h"
#include "rt/rtsock.h"

/* ~100 times what the largest input of a fuzzing run takes under ASan */
#define FUZZ_JATTACH_MS 1000
/* what jattach keeps of a reply by default */
#define MAX_REPLY (64u << 10)

static void check_line(const char *msg)
{
	const unsigned char *p;

	for (p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			__builtin_trap();	/* a raw control character in a message */
}

/* The input as a JVM's reply: sent on one end of a socket pair, received
 * on the other as jattach does, parsed. */
static void reply(const uint8_t *data, size_t size)
{
	char *buf = malloc(MAX_REPLY);
	struct err e = { 0 };
	size_t len = 0, off, sent = 0;
	int sp[2], status;

	if (!buf || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) {
		free(buf);
		return;
	}
	/* what the pair's buffer takes at once: the rest stays unsent, as a
	 * JVM that has not written it yet */
	while (sent < size) {
		ssize_t n = send(sp[1], data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n <= 0)
			break;
		sent += (size_t)n;
	}
	if (sent == size)
		shutdown(sp[1], SHUT_WR);
	/* a peer that has not ended: the receive ends at its deadline */
	rtsock__recv_upto(sp[0], buf, MAX_REPLY, &len, now_ns() + (sent == size ? 1000 : 20) * 1000000ull);
	if (len > sent)
		__builtin_trap();
	if (jattach__parse_reply(buf, len, &status, &off) == 0) {
		if (off > len)
			__builtin_trap();
		jattach__perfmap_reply(7, status, buf + off, len - off, &e);
		check_line(e.msg);
	}
	close(sp[0]);
	close(sp[1]);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jattach_status st;
	struct err e = { 0 };
	char *buf = malloc(size ? size : 1);
	uint64_t t0 = now_ns();
	size_t half = size / 2;
	int status;
	size_t off;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (jattach__parse_reply(buf, size, &status, &off) == 0) {
		if (off > size)
			__builtin_trap();
		jattach__perfmap_reply(7, status, buf + off, size - off, &e);
		check_line(e.msg);
	}
	if (jattach__parse_status(buf, size, &st) == 0)
		check_line(st.name);
	jattach__attach_disabled(buf, half, buf + half, size - half);
	status = jattach__parse_release(buf, size);
	if (status < 0 || status > 999)
		__builtin_trap();
	free(buf);
	reply(data, size);
	if (now_ns() - t0 > FUZZ_JATTACH_MS * 1000000ull) {
		fprintf(stderr, "fuzz_jattach: an input of %zu bytes took %llu ms, over %d ms\n", size,
			(unsigned long long)((now_ns() - t0) / 1000000), FUZZ_JATTACH_MS);
		abort();
	}
	return 0;
}
