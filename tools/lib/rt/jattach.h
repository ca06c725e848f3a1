/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* HotSpot's dynamic attach, as jcmd does it, to ask a running JVM for a
 * perf map (jcmd PID Compiler.perfmap, JDK 17 and later) with no flag and
 * no restart.
 *
 * The mechanism (Linux HotSpot): the JVM listens on the Unix socket
 * /tmp/.java_pidNSPID (NSPID: its PID in its own namespace; /tmp inside its
 * root, whatever java.io.tmpdir says) once its attach listener runs. The
 * listener starts when the JVM gets SIGQUIT while a file .attach_pidNSPID
 * owned by its euid or by root exists in its working directory or /tmp;
 * without that file SIGQUIT prints a thread dump on its stdout, and to a
 * process that does not handle SIGQUIT it is fatal. A request is
 * "1\0jcmd\0COMMAND\0\0\0" (protocol 1: version, operation, three
 * arguments); the reply is the status as a decimal line ("0\n" success,
 * "-1\n" failure) and the command's output, then the JVM closes. One
 * connection carries one command. The JVM serves a peer whose uid is 0 or
 * whose uid and gid are its euid and egid (SO_PEERCRED, in its user
 * namespace); it closes the connection on anyone else.
 *
 * What sidescope does, because the app controls its /tmp, its socket and
 * what answers (docs/security.md):
 * - nothing is signalled unless libjvm.so is mapped, SIGQUIT is caught and
 *   not ignored, no -XX:+DisableAttachMechanism is in the command line or
 *   the JVM's option variables, and the PID still names the process that
 *   was checked (its start time, through a pidfd opened before the check:
 *   the signal goes to exactly that process);
 * - the socket is found in /tmp resolved inside the app's root, opened
 *   O_PATH without following a link, checked to be a socket owned by the
 *   JVM's euid with no group or other access, and connected to through
 *   /proc/self/fd/N; the trigger file is created O_CREAT | O_EXCL |
 *   O_NOFOLLOW relative to that directory's descriptor and removed after;
 * - every wait has a deadline, the reply is read non-blocking up to a
 *   size, and what the reply says is escaped before it reaches a message.
 *
 * Credentials: a JVM of sidescope's own euid and egid, or root's JVM when
 * sidescope is root in the JVM's user namespace, is attached to directly.
 * A JVM of another user needs one of: CAP_SETUID and CAP_SETGID (a child
 * process takes the JVM's euid and egid, makes the trigger file, signals and
 * connects as that user, and hands the connected socket back; the only way
 * into a JVM whose user namespace does not map sidescope's root), or, root
 * in the JVM's user namespace, CAP_KILL (the signal) and CAP_DAC_OVERRIDE
 * (the socket is mode 0600). Without them the attach is refused with a line
 * that says so; nothing is signalled.
 *
 * Nothing is kept open between calls: a request opens the root, the
 * directory and the socket, and closes them. */
#ifndef SIDESCOPE_JATTACH_H
#define SIDESCOPE_JATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

/* The perf-map command: JDK 17 added it. */
#define JATTACH_PERFMAP_MIN_JDK 17

/* A call takes at most start_ms + reply_ms (and 2 s more when a child
 * attaches as the JVM's user): a capture loop that must not stall that long
 * passes shorter ones. */
struct jattach_opts {
	unsigned int start_ms;	/* for the socket after SIGQUIT, and the connect (0: 5000) */
	unsigned int reply_ms;	/* for a command's whole reply (0: 10000) */
	size_t max_reply;	/* bytes of a reply read (0: 64 KiB) */
};

/* How the attach is made (jattach__how). */
enum jattach_how {
	JATTACH_AS_SELF,	/* the JVM's euid and egid are ours */
	JATTACH_AS_ROOT,	/* root in its user namespace, CAP_KILL + CAP_DAC_OVERRIDE */
	JATTACH_AS_USER,	/* a child process with the JVM's euid and egid */
};

struct jattach;

/* Check that PID is a HotSpot JVM sidescope may attach to, without
 * signalling or writing anything. A handle (caller frees with
 * jattach__free), or NULL with errno set and E saying why in one line,
 * with what to do instead:
 *   ESRCH       no such process (or it exited)
 *   ENOEXEC     not a HotSpot JVM (no libjvm.so mapped; OpenJ9)
 *   EOPNOTSUPP  a JVM that cannot be asked now: attach disabled, JDK older
 *               than 17, SIGQUIT not handled and no socket open
 *   EPERM       a JVM of another user, and the capabilities it takes are
 *               missing
 * O may be NULL (defaults). */
struct jattach *jattach__probe(pid_t pid, const struct jattach_opts *o, struct err *e);

/* Ask the JVM to write its perf map now (jcmd Compiler.perfmap), starting
 * its attach listener first when its socket is not there, and check that
 * the map was written. The JVM writes the whole file before it answers:
 * the map is complete when this returns. It is a snapshot of the code
 * cache: call again for code compiled since (one connection each; nothing
 * is kept between calls, and a call on a listening JVM sends no signal). 0, or a negative errno with E saying why:
 * -ESRCH (exited, or the PID now names another process), -EOPNOTSUPP (JDK
 * without the command, attach disabled, SIGQUIT not handled), -ETIMEDOUT
 * (no socket after SIGQUIT within start_ms, no reply within reply_ms),
 * -EPROTO (not an attach listener's reply), -ECONNRESET (the JVM closed
 * without a reply: it refused our credentials), -EPERM, -EACCES, -ENOENT
 * (the JVM said it wrote the map, and there is none). */
int jattach__perfmap(struct jattach *j, struct err *e);

/* Run "jcmd COMMAND" in the JVM (COMMAND: a diagnostic command and its
 * arguments, at most 1024 bytes). *STATUS gets the JVM's status (0: done),
 * *OUT its output, NUL-terminated, at most max_reply bytes (caller frees),
 * *CUT whether there was more. 0 when a reply came (whatever its status),
 * or a negative errno as jattach__perfmap's. */
int jattach__jcmd(struct jattach *j, const char *command, int *status, char **out,
		  size_t *outlen, bool *cut, struct err *e);

/* Where the JVM writes its perf map, as sidescope reaches it:
 * PROCROOT/PID/root/tmp/perf-NSPID.map (proc__root()). */
const char *jattach__perfmap_path(const struct jattach *j);

/* The JVM's PID as sidescope sees it, and in its own namespace. */
pid_t jattach__pid(const struct jattach *j);
pid_t jattach__nspid(const struct jattach *j);
/* The JDK's feature version from its release file (8, 11, 17, 21...), 0
 * when unknown. */
int jattach__jdk(const struct jattach *j);
/* Whether the attach socket was already there when probed (no signal
 * needed), and how the attach is made. */
bool jattach__listening(const struct jattach *j);
enum jattach_how jattach__how(const struct jattach *j);

void jattach__free(struct jattach *j);

/* The parsers, over buffers (unit-tested and fuzzed). */

/* A reply: its status line (an optionally negative decimal number of at
 * most 9 digits and a newline) and where the output after it starts. 0,
 * -ENODATA (nothing, or an unfinished status line at the peer's end),
 * -EPROTO (anything else: not an attach listener's reply). */
int jattach__parse_reply(const char *buf, size_t len, int *status, size_t *out_off);

/* What a reply to Compiler.perfmap means: 0 (done), or a negative errno
 * with E saying why in one line (PID names the JVM in it): -EOPNOTSUPP (a
 * JDK without the command), -EPROTO (any other failure, its first line
 * quoted, escaped). OUT need not be NUL-terminated. */
int jattach__perfmap_reply(pid_t pid, int status, const char *out, size_t outlen,
			   struct err *e);

/* The fields of /proc/PID/status the attach needs. */
struct jattach_status {
	uid_t euid;
	gid_t egid;
	pid_t nstgid;		/* the last NStgid (or Tgid when there is none) */
	uint64_t sigign, sigcgt;	/* signal masks; bit N-1 is signal N */
	char name[64];
};
/* 0, or -EINVAL when Uid, Gid, Tgid or the signal masks are missing. */
int jattach__parse_status(const char *buf, size_t len, struct jattach_status *st);

/* Whether attach is disabled by the arguments and the environment (both
 * NUL-separated, as /proc/PID/cmdline and environ): the last of
 * -XX:+DisableAttachMechanism and -XX:-DisableAttachMechanism in the order
 * HotSpot reads them (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, the command line,
 * _JAVA_OPTIONS). Options files (-XX:Flags=, -XX:VMOptionsFile=, @argfiles)
 * are not read: a flag set there shows as no socket after SIGQUIT. */
bool jattach__attach_disabled(const char *cmdline, size_t clen, const char *environ,
			      size_t elen);

/* The feature version in a JDK's release file (JAVA_VERSION="17.0.15",
 * "1.8.0_392" -> 8, "25"), or 0. */
int jattach__parse_release(const char *buf, size_t len);

#endif
