// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: what a .NET app's diagnostics socket may answer
 * (rt/dotnetipc.h), and its environment block. The first byte chooses how
 * the rest arrives: bit 0 set, the "server" closes after its bytes (an
 * end of file); clear, it keeps the connection open and says nothing more
 * (the client's deadline ends the exchange). The rest is the reply, also
 * parsed directly and as ProcessInfo(2), and read as an environment.
 *
 * An exchange waits at most its deadline, FUZZ_DOTNETIPC_DEADLINE_MS: one
 * that returns later than FUZZ_DOTNETIPC_MS is a failure (a read or a wait
 * that the deadline does not bound). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/util.h"
#include "rt/dotnetipc.h"

#define FUZZ_DOTNETIPC_DEADLINE_MS	20
/* 150 times the deadline: a wait the deadline does not end takes for ever,
 * while a machine shared by two cores and a load of 5 was seen to hold one
 * 20 ms poll for 1.6 s */
#define FUZZ_DOTNETIPC_MS		3000

static void parse_payload(const struct dotnetipc_reply *r)
{
	struct dotnet_info info;

	dotnetipc__parse_process_info(r->payload, r->len, true, &info, NULL);
	dotnetipc__parse_process_info(r->payload, r->len, false, &info, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dotnetipc_reply r;
	struct dotnetipc_env env;
	const uint8_t *rest = data + 1;
	size_t len = size ? size - 1 : 0;
	uint8_t *reply = NULL;
	uint64_t t0;
	int sv[2], err;

	if (size == 0)
		return 0;
	if (dotnetipc__parse_reply(rest, len, &r, NULL) == 0)
		parse_payload(&r);
	dotnetipc__parse_environ((const char *)rest, len, &env);
	if (!memchr(env.tmpdir, '\0', sizeof(env.tmpdir)) ||
	    !memchr(env.perfmap_dir, '\0', sizeof(env.perfmap_dir)))
		__builtin_trap();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		return 0;
	/* what does not fit in the socket's buffer is not sent: a server
	 * that announces more than it sends */
	if (len && write(sv[1], rest, len) < 0 && errno != EAGAIN) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	if (data[0] & 1)
		shutdown(sv[1], SHUT_WR);
	t0 = now_ns();
	err = dotnetipc__call_fd(sv[0], DOTNETIPC_SET_PROCESS, DOTNETIPC_PROCESS_INFO2, NULL, 0,
				 t0 + FUZZ_DOTNETIPC_DEADLINE_MS * 1000000ull, &reply, &r, NULL);
	if (now_ns() - t0 > FUZZ_DOTNETIPC_MS * 1000000ull) {
		fprintf(stderr, "fuzz_dotnetipc: an exchange of %zu bytes took %llu ms (%d), over %d ms\n",
			len, (unsigned long long)((now_ns() - t0) / 1000000), err, FUZZ_DOTNETIPC_MS);
		abort();
	}
	if (err == 0) {
		/* a reply is handed back whole, its payload right after its header */
		if (!reply || r.payload != reply + DOTNETIPC_HEADER_SIZE ||
		    r.len + DOTNETIPC_HEADER_SIZE > UINT16_MAX)
			__builtin_trap();
		parse_payload(&r);
	} else if (reply) {
		__builtin_trap();	/* no reply is handed back with an error */
	}
	free(reply);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
