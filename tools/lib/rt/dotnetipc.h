/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A client of the .NET diagnostics IPC protocol (dotnet/diagnostics,
 * documentation/design-docs/ipc-protocol.md), for asking a running .NET 8+
 * process to write a perf map without a restart, and to stop again.
 *
 * The runtime listens on a Unix socket in its TMPDIR (/tmp unless its
 * environment sets one):
 *   dotnet-diagnostic-{PID as it sees itself}-{start time in ticks}-socket
 * Each command is one connection: a 20-byte header ("DOTNET_IPC_V1\0",
 * u16 size of the whole message, command set, command id, u16 reserved),
 * little-endian, then the payload; the reply has the same header with the
 * Server command set 0xFF and id 0x00 (OK) or 0xFF (error, an HRESULT).
 *
 * Everything on the other side of the socket is the app's (docs/security.md):
 * the directory and the name are resolved inside its root without following
 * a link at the socket (rt/rtsock.h), the connection is made by descriptor,
 * every exchange has a deadline (the handle's timeout, default
 * DOTNETIPC_TIMEOUT_MS, covering the lookup, connect, write and read), a
 * reply is at most 64 KiB by the protocol's u16 size and is parsed strictly.
 *
 * Contract with the profiler, "leave the app as it was found":
 *   1. Before enabling, look for its perf map as the symbolizer does
 *      (proc__perfmap_open(pid, nstgid, ...)); MAP_EXISTED = whether found.
 *   2. dotnetipc__enable_perfmap(): asks for the perf map alone (type 3,
 *      PERFMAP; never jitdump). The runtime opens /tmp/perf-PID.map with
 *      "w" (a map left by an earlier process of that PID is truncated),
 *      writes every method already compiled, then each new one. A map
 *      that is on already gets every compiled method once more (duplicate
 *      lines, harmless: later lines win): do not enable a map found on.
 *   3. At the end, call dotnetipc__disable_perfmap() only when
 *      dotnetipc__should_disable(d, MAP_EXISTED) says so: the map was not
 *      there before, and the app's environment does not ask for perf maps
 *      or jitdump itself (DisablePerfMap stops both). The runtime closes
 *      the file and leaves it where it is: the symbolizer may still read it.
 * The runtime writes the map to DOTNET_PerfMapJitDumpPath when the app sets
 * one; enabling is then refused here (-EXDEV), as the map would land where
 * sidescope does not read it.
 *
 * A .NET 10.0.12 runtime was seen to crash (SIGSEGV) on an EnablePerfMap
 * request without its 4-byte payload: requests are built only by
 * dotnetipc__encode, whose bytes the unit test pins.
 */
#ifndef SIDESCOPE_DOTNETIPC_H
#define SIDESCOPE_DOTNETIPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

#define DOTNETIPC_TIMEOUT_MS	3000
#define DOTNETIPC_HEADER_SIZE	20
#define DOTNETIPC_MAGIC		"DOTNET_IPC_V1"	/* and its NUL: 14 bytes */

/* Command sets and ids (ipc-protocol.md "Commands") */
#define DOTNETIPC_SET_PROCESS	0x04
#define DOTNETIPC_SET_SERVER	0xff
#define DOTNETIPC_PROCESS_INFO	0x00
#define DOTNETIPC_PROCESS_INFO2	0x04	/* adds the runtime's version (.NET 6+) */
#define DOTNETIPC_ENABLE_PERFMAP 0x05	/* .NET 8+ */
#define DOTNETIPC_DISABLE_PERFMAP 0x06	/* .NET 8+ */
#define DOTNETIPC_SERVER_OK	0x00
#define DOTNETIPC_SERVER_ERROR	0xff

#define DOTNETIPC_PERFMAP_TYPE	3	/* PerfMapType::PERFMAP: the map alone */

/* HRESULTs the diagnostics server answers with */
#define DOTNETIPC_E_UNKNOWN_COMMAND	0x80131385u	/* .NET 6 and 7: no such command */
#define DOTNETIPC_E_NOTSUPPORTED	0x80131515u

/* What the app's environment (/proc/PID/environ, the block it started
 * with) says about the diagnostics server and perf maps, read as the
 * runtime reads it: the first of a name (getenv's), DOTNET_X over
 * COMPlus_X, numbers in hexadecimal. */
struct dotnetipc_env {
	char tmpdir[256];	/* TMPDIR as the app sees it; "/tmp" unset or empty */
	bool tmpdir_set;
	bool tmpdir_long;	/* longer than the socket path allows: none can exist */
	int diagnostics;	/* DOTNET_EnableDiagnostics: -1 unset, else its value */
	int diagnostics_ipc;	/* DOTNET_EnableDiagnostics_IPC (.NET 8+) */
	int perfmap;		/* DOTNET_PerfMapEnabled */
	char perfmap_dir[256];	/* DOTNET_PerfMapJitDumpPath, "" unset */
	bool cut;		/* the environment was longer than what was read */
};

/* Parse an environment block (NAME=VALUE entries, each ended by a NUL; the
 * last one may lack it) of LEN bytes. Never fails: what is not understood
 * is left unset. */
void dotnetipc__parse_environ(const char *buf, size_t len, struct dotnetipc_env *env);

/* What ProcessInfo2 (or ProcessInfo, before .NET 6) answers. Strings are
 * the app's, decoded from UTF-16 (U+FFFD for lone surrogates, "..." where
 * cut to fit): escape them (core/escape.h) before printing. */
struct dotnet_info {
	uint64_t pid;		/* the process as it sees itself */
	uint8_t cookie[16];	/* the runtime instance's GUID */
	char cmdline[1024];
	char os[32];
	char arch[32];
	char assembly[256];	/* the entry assembly's name (ProcessInfo2) */
	char version[64];	/* the runtime's product version (ProcessInfo2) */
	bool v2;		/* assembly and version known */
};

/* A .NET process whose diagnostics socket was found; not connected. */
struct dotnetipc;

/* Find the diagnostics socket of PID (in our PID namespace): its NStgid
 * and start time, TMPDIR from its environment, the directory listed inside
 * its root (at most 65,536 entries, within TIMEOUT_MS; 0: the default), the
 * socket named for its NStgid whose key is its start time (else the newest
 * key). Nothing is connected yet. NULL with errno set and E saying why in
 * one line with what to do: ESRCH (no such process), ENOENT (no socket:
 * not .NET, or diagnostics disabled), ETIMEDOUT, E2BIG (TMPDIR too full to
 * list), ENAMETOOLONG, EACCES. */
struct dotnetipc *dotnetipc__open(pid_t pid, int timeout_ms, struct err *e);
void dotnetipc__free(struct dotnetipc *d);

/* The socket's path as the app sees it (for messages; the app chose part of
 * it: escape before printing), the PID the process sees itself by, and what
 * its environment says. */
const char *dotnetipc__socket(const struct dotnetipc *d);
pid_t dotnetipc__nspid(const struct dotnetipc *d);
const struct dotnetipc_env *dotnetipc__env(const struct dotnetipc *d);

/* The runtime's answer to ProcessInfo2 (ProcessInfo on a runtime that does
 * not know it). 0, or a negative errno with E saying why (below). */
int dotnetipc__process_info(struct dotnetipc *d, struct dotnet_info *info, struct err *e);

/* EnablePerfMap with the perf-map type alone, DisablePerfMap. 0 when the
 * runtime answered OK with HRESULT 0. Otherwise a negative errno, E saying
 * why and what to do in one line:
 *   EOPNOTSUPP   the runtime does not know the command (.NET 6, 7)
 *   EREMOTEIO    it refused: an error HRESULT (named in E)
 *   ETIMEDOUT    no whole answer by the deadline
 *   EPROTO       an answer that is not the protocol (garbage, truncated)
 *   ECONNREFUSED nobody listens (a socket left by an exited process)
 *   ELOOP, ENOTSOCK  a link or a file where the socket was: refused
 *   EACCES       no permission to connect (the socket is 0600, its owner's)
 *   ESRCH        the process exited (or its PID is another's now)
 *   EXDEV        (enable) the app writes its perf maps elsewhere
 *                (DOTNET_PerfMapJitDumpPath) */
int dotnetipc__enable_perfmap(struct dotnetipc *d, struct err *e);
int dotnetipc__disable_perfmap(struct dotnetipc *d, struct err *e);

/* Whether the perf map enabled by us should be switched off again at the
 * end (see the contract above): false when MAP_EXISTED (its perf map was
 * there before dotnetipc__enable_perfmap) or its environment turns perf
 * maps or jitdump on. */
bool dotnetipc__should_disable(const struct dotnetipc *d, bool map_existed);

/* The timeout of each later command, in milliseconds (0: the default). */
void dotnetipc__set_timeout(struct dotnetipc *d, int timeout_ms);

/* ---- the wire, for the tests and the fuzz target ---- */

/* Build a request: header and PLEN bytes of PAYLOAD into BUF (SIZE bytes).
 * Return its length, or -ENOSPC / -EMSGSIZE (over 64 KiB). */
int dotnetipc__encode(uint8_t set, uint8_t id, const void *payload, size_t plen,
		      uint8_t *buf, size_t size);

/* Check a header (LEN >= DOTNETIPC_HEADER_SIZE bytes at BUF): the magic
 * and a size of at least a header. *SIZE gets the whole message's size.
 * 0 or -EPROTO with E saying why. */
int dotnetipc__parse_header(const uint8_t *buf, size_t len, uint16_t *size, struct err *e);

struct dotnetipc_reply {
	bool error;		/* Server/Error: HRESULT is the error */
	uint32_t hresult;	/* the error, or an OK reply's result (if HAS_HRESULT) */
	bool has_hresult;
	const uint8_t *payload;	/* into the parsed buffer */
	size_t len;
};

/* Parse a whole reply of LEN bytes (its header's size must be LEN): the
 * Server command set, OK or Error; an error carries a 4-byte HRESULT (8
 * tolerated, as the document's example shows), an OK reply keeps its
 * payload (a 4- or 8-byte one also read as an HRESULT). 0 or -EPROTO. */
int dotnetipc__parse_reply(const uint8_t *buf, size_t len, struct dotnetipc_reply *r,
			   struct err *e);

/* Parse ProcessInfo's (V2 false) or ProcessInfo2's payload; every byte
 * must be used. 0 or -EPROTO. */
int dotnetipc__parse_process_info(const uint8_t *buf, size_t len, bool v2,
				  struct dotnet_info *info, struct err *e);

/* One command over the connected, non-blocking socket FD: the request
 * written and the reply read (at most 64 KiB) and parsed by DEADLINE_NS.
 * *REPLY (malloc'd, caller frees) and R describe it. 0, or -ETIMEDOUT,
 * -EPROTO (not the protocol, cut short), or the socket's negative errno;
 * E says which. An error reply is not an error here (R->error). */
int dotnetipc__call_fd(int fd, uint8_t set, uint8_t id, const void *payload, size_t plen,
		       uint64_t deadline_ns, uint8_t **reply, struct dotnetipc_reply *r,
		       struct err *e);

/* A name for an HRESULT the server sends ("unknown command"), or NULL. */
const char *dotnetipc__hresult_name(uint32_t hr);

#endif
