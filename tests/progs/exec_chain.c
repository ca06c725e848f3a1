// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CFLAGS: -Wl,--build-id=none
/* exec_chain: a process that keeps becoming a new executable, for the test
 * that the profiler's memory stays bounded whatever the app maps. It spins
 * for MS milliseconds in exec_chain_spin, copies its own executable to
 * DIR/chain.N+1, execs the copy and, running as the copy, deletes the file
 * it ran from before (not the first, the caller's): the same process, a
 * new file (a new inode) every MS.
 *   exec_chain DIR [-i MS] [-r PIDFILE] [-d SECONDS]
 * PIDFILE gets the PID at the first start; the chain ends after SECONDS in
 * all (default 60). The executable carries a large symbol table (30,000
 * functions with names of 400 bytes: 12 MB of names, made by the assembler
 * below in a blink), so that every new file costs a reader of its symbols
 * that much: what a profiler keeps of the files shows in its memory. No
 * build id: the copies are files alike in all but their identity. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define F10 "ffffffffff"
#define F100 F10 F10 F10 F10 F10 F10 F10 F10 F10 F10
/* with "chain_fill_", the number and "_": 400 bytes */
#define FILL_NAME "chain_fill_" F100 F100 F100 F10 F10 F10 F10 F10 F10 F10 F10 "_\\n"

__asm__(".pushsection .text\n"
	".altmacro\n"
	".macro chain_fill_fn n\n"
	".globl " FILL_NAME "\n"
	".type " FILL_NAME ", @function\n"
	FILL_NAME ":\n"
	"ret\n"
	".size " FILL_NAME ", 1\n"
	".endm\n"
	".set chain_fill_i, 0\n"
	".rept 30000\n"
	"chain_fill_fn %chain_fill_i\n"
	".set chain_fill_i, chain_fill_i + 1\n"
	".endr\n"
	".noaltmacro\n"
	".popsection\n");

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void exec_chain_spin(double until)
{
	unsigned long i;

	while (now_s() < until)
		for (i = 0; i < 20000; i++)
			sink += i * 7;
}

/* Copy the running executable to TO (mode 0755). */
static int copy_self(const char *to)
{
	char buf[1 << 16];
	ssize_t n;
	int in, out, err = 0;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

int main(int argc, char **argv)
{
	const char *dir, *pidfile = NULL, *prev = NULL;
	char next[4096], self[4096], a_ms[32], a_end[64], a_gen[32];
	double secs = 60, end = 0, start;
	long ms = 300, gen = 0;
	ssize_t len;
	int c;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "USAGE: exec_chain DIR [-i MS] [-r PIDFILE] [-d SECONDS]\n");
		return 2;
	}
	dir = argv[1];
	optind = 2;
	/* -E END -g GEN -p PREV: how the chain hands itself on */
	while ((c = getopt(argc, argv, "i:r:d:E:g:p:")) != -1) {
		switch (c) {
		case 'i': ms = atol(optarg); break;
		case 'r': pidfile = optarg; break;
		case 'd': secs = atof(optarg); break;
		case 'E': end = atof(optarg); break;
		case 'g': gen = atol(optarg); break;
		case 'p': prev = optarg; break;
		default: return 2;
		}
	}
	start = now_s();
	if (!end)
		end = start + secs;
	if (prev)
		unlink(prev);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 1;
	}
	exec_chain_spin(start + ms / 1000.0 < end ? start + ms / 1000.0 : end);
	if (now_s() >= end)
		return 0;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	snprintf(next, sizeof(next), "%s/chain.%ld", dir, gen + 1);
	if (copy_self(next)) {
		perror("exec_chain: copy");
		return 1;
	}
	snprintf(a_ms, sizeof(a_ms), "%ld", ms);
	snprintf(a_end, sizeof(a_end), "%.6f", end);
	snprintf(a_gen, sizeof(a_gen), "%ld", gen + 1);
	/* the next one deletes this one's file, unless it is the first */
	execl(next, next, dir, "-i", a_ms, "-E", a_end, "-g", a_gen, gen ? "-p" : NULL, self,
	      (char *)NULL);
	perror("exec_chain: exec");
	return 1;
}
