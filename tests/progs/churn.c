// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* churn: a stream of short-lived processes, for leak and growth tests.
 *   churn READY_FILE [SHORT_PER_SEC [LONG]]
 * Writes its PID to READY_FILE, then until SIGTERM/SIGINT keeps spawning:
 *  - short children (SHORT_PER_SEC a second, default 50), in turn: exec
 *    /bin/true, exit at once, spin 2-20 ms in native code, or spin in JIT
 *    code named by /tmp/perf-PID.map;
 *  - LONG long children (default 12), each living 1-3 s and spinning about
 *    4% of the time, half of them in JIT code with a perf map.
 * Perf maps of reaped children are removed 256 children later (so that
 * a profiler can still read them for a while) and all at the end. On exit
 * it kills and reaps its children and prints "children N jit M" on stdout. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING 256
#define MAX_LONG 64

static volatile sig_atomic_t stop;
static volatile long sink;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* push %rbp; mov %rsp,%rbp; mov $N,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x20, 0xa1, 0x07, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

__attribute__((noinline)) static void churn_native_leaf(void)
{
	long i;

	for (i = 0; i < 100000; i++)
		sink += i;
}

__attribute__((noinline)) static void churn_native_outer(long long until)
{
	while (now_ms() < until)
		churn_native_leaf();
}

typedef void (*jit_fn)(void);

/* Copy the spin code into fresh executable memory and name it in the perf
 * map, like a JIT. NULL on failure. */
static jit_fn make_jit(void)
{
	unsigned char *mem;
	char path[64];
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	memcpy(mem + 0x100, spin_code, sizeof(spin_code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "%llx %zx Churn::JitSpin(int)\n",
		(unsigned long long)(uintptr_t)(mem + 0x100), sizeof(spin_code));
	if (fclose(f))
		return NULL;
	return (jit_fn)(mem + 0x100);
}

__attribute__((noinline)) static void churn_jit_outer(jit_fn fn, long long until)
{
	while (now_ms() < until)
		fn();
}

static void spin(int jit, long ms)
{
	long long until = now_ms() + ms;
	jit_fn fn = jit ? make_jit() : NULL;

	if (fn)
		churn_jit_outer(fn, until);
	else
		churn_native_outer(until);
}

static void short_child(unsigned long n)
{
	switch (n % 4) {
	case 0:
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	case 1:
		_exit(0);
	default:
		spin(n % 4 == 3, 2 + (long)(n * 7 % 19));
		_exit(0);
	}
}

static void long_child(unsigned long n)
{
	long long end = now_ms() + 1000 + (long long)(n * 131 % 2000);
	jit_fn fn = n % 2 ? make_jit() : NULL;

	while (now_ms() < end) {
		long long until = now_ms() + 2;

		if (fn)
			churn_jit_outer(fn, until);
		else
			churn_native_outer(until);
		sleep_ms(48);
	}
	_exit(0);
}

static void remove_map(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
}

int main(int argc, char **argv)
{
	pid_t ring[RING] = { 0 }, longs[MAX_LONG] = { 0 };
	unsigned long children = 0, jit = 0, nring = 0;
	long per_sec = 50, nlong = 12;
	struct sigaction sa;
	int i, status;
	pid_t pid;
	FILE *f;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: churn READY_FILE [SHORT_PER_SEC [LONG]]\n");
		return 2;
	}
	if (argc > 2)
		per_sec = strtol(argv[2], NULL, 10);
	if (argc > 3)
		nlong = strtol(argv[3], NULL, 10);
	if (per_sec < 1 || per_sec > 1000 || nlong < 0 || nlong > MAX_LONG) {
		fprintf(stderr, "churn: SHORT_PER_SEC 1-1000, LONG 0-%d\n", MAX_LONG);
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		perror("churn: ready file");
		return 1;
	}
	while (!stop) {
		/* reap; a reaped child's perf map goes RING children later */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < nlong; i++)
				if (longs[i] == pid)
					longs[i] = 0;
			remove_map(ring[nring % RING]);
			ring[nring++ % RING] = pid;
		}
		pid = fork();
		if (pid == 0)
			short_child(children);
		if (pid > 0) {
			jit += children % 4 == 3;
			children++;
		}
		for (i = 0; i < nlong && !stop; i++) {
			if (longs[i])
				continue;
			pid = fork();
			if (pid == 0)
				long_child(children);
			if (pid > 0) {
				longs[i] = pid;
				jit += children % 2;
				children++;
			}
		}
		sleep_ms(1000 / per_sec);
	}
	for (i = 0; i < nlong; i++)
		if (longs[i]) {
			kill(longs[i], SIGKILL);
			remove_map(longs[i]);
		}
	while ((pid = wait(&status)) > 0)
		remove_map(pid);
	for (i = 0; i < RING; i++)
		remove_map(ring[i]);
	printf("children %lu jit %lu\n", children, jit);
	return 0;
}
