/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* babeltrace2 in a child process. It aborts on an internal check on some
 * damaged stream packets and loops on others (a packet that says its size
 * is 0 is indexed over and over, growing), so every reading of a trace
 * (ctf summary, ctf chrome, the timeline's LTTng events) runs in a child
 * that its parent ends on time:
 *   - the child dies with its parent, its data memory is limited, and
 *     SIGINT and SIGTERM set run__stop there (SA_RESTART: babeltrace2's
 *     reads go on), for the reading to stop at its next message;
 *   - the parent passes a signal of its own (run__stop) on as SIGTERM, and
 *     kills a child still there grace_ms after that signal or its
 *     deadline; it collects what the child writes to its pipe (up to
 *     max_out: past it, killed) and its stderr (keep_stderr) or lets it
 *     through;
 *   - what the child keeps in its result, memory shared with the parent,
 *     is the parent's however the child ended.
 *
 *   ctf_child__init(&c, sizeof(result));  c.result: shared, zeroed
 *   ctf_child__run(&c, &opts, fn, arg);   FN(ARG, OUT_FD, RESULT) in the
 *                                         child: its return is the exit
 *   ... c.result, c.out, c.err, c.end, c.status ...
 *   ctf_child__free(&c);
 */
#ifndef SIDESCOPE_CTF_CHILD_H
#define SIDESCOPE_CTF_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The child's data memory (RLIMIT_DATA; not under ASan, whose shadow
 * counts): ours is bounded by the readers' budgets, babeltrace2's grows
 * with the packets it indexes (some MiB for a trace of a GiB). */
#define CTF_CHILD_MAX_MEM ((size_t)256 << 20)

struct ctf_child_opts {
	uint64_t deadline_ns;	/* now_ns() at which the child stops by itself
				 * (FN's to see); 0: none */
	unsigned int grace_ms;	/* how long it has past that or a signal */
	size_t max_mem;		/* RLIMIT_DATA; 0: none */
	bool out_pipe;		/* OUT_FD a pipe the parent collects... */
	size_t max_out;		/* ...up to this many bytes */
	bool keep_stderr;	/* its stderr collected (1 MiB kept), not passed */
};

/* How the child ended. */
enum ctf_child_end {
	CTF_CHILD_EXITED,	/* by itself: status says how */
	CTF_CHILD_KILLED,	/* still there grace_ms past its deadline or a signal */
	CTF_CHILD_FULL,		/* killed: it wrote more than max_out */
};

struct ctf_child {
	void *result;		/* shared: the child's to write, ours after */
	bool done;		/* the child's function returned */
	int end;		/* enum ctf_child_end */
	int status;		/* waitpid's */
	bool told;		/* a signal was passed on to it */
	char *out;		/* what it wrote to OUT_FD; ctf_child__free frees
				 * it unless taken (set to NULL) */
	size_t out_len;
	char *err;		/* its stderr with keep_stderr */
	size_t err_len;
	size_t shared;		/* bytes mapped for the result */
};

/* Runs in the child: its exit status (0 to 255). OUT_FD is the pipe with
 * out_pipe, else -1. */
typedef int (*ctf_child_fn)(void *arg, int out_fd, void *result);

/* C zeroed, with RESULT_SIZE bytes of zeroed memory shared with the
 * child to come. Return 0 or -ENOMEM (said). */
int ctf_child__init(struct ctf_child *c, size_t result_size);

/* Run FN(ARG, ...) in a child as above, until it ends, and fill C. Return
 * 0, or a negative errno (said) when the child could not run or its pipes
 * not be read (it is killed then). */
int ctf_child__run(struct ctf_child *c, const struct ctf_child_opts *o, ctf_child_fn fn,
		   void *arg);

/* Free what C holds (after a failed ctf_child__init too). */
void ctf_child__free(struct ctf_child *c);

#endif
