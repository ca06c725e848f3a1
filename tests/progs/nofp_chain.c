// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CFLAGS: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
/* nofp_chain: native code without frame pointers, as most release builds
 * and Debian's libraries are, for the unwinding tests and bench/unwind.sh.
 *   nofp_chain [-d SECONDS] [-m chain|qsort|both|vdso|block] [-r PIDFILE]
 * chain: main -> chain_a -> chain_b -> chain_c -> spin_leaf, each frame
 * with locals of its own (CFA = RSP + n, no RBP chain). qsort: main ->
 * sort_round -> libc's qsort -> cmp_slow, the comparison spinning, so
 * that the stack crosses libc's frames. both (the default) alternates.
 * vdso: only the clock, read through the vDSO (code the kernel maps).
 * block: the chain, spin_leaf sleeping 1 ms in libc's nanosleep instead of
 * spinning (for off-CPU profiles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int blocking;	/* -m block */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long spin_leaf(unsigned long n)
{
	volatile unsigned long local[4] = { n, 1, 2, 3 };
	unsigned long i;

	if (blocking) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);	/* off the CPU under libc's frames */
		return n;
	}
	for (i = 0; i < 200000; i++)
		local[i & 3] += i * 7;
	return local[0] + local[1];
}

__attribute__((noinline)) unsigned long chain_c(unsigned long n)
{
	volatile char pad[48];

	pad[n % sizeof(pad)] = (char)n;
	return spin_leaf(n) + (unsigned long)pad[0];
}

__attribute__((noinline)) unsigned long chain_b(unsigned long n)
{
	volatile char pad[80];

	pad[n % sizeof(pad)] = (char)n;
	return chain_c(n + 1) + (unsigned long)pad[0];
}

__attribute__((noinline)) unsigned long chain_a(unsigned long n)
{
	volatile char pad[24];

	pad[n % sizeof(pad)] = (char)n;
	return chain_b(n + 1) + (unsigned long)pad[0];
}

__attribute__((noinline)) int cmp_slow(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	unsigned long i;

	for (i = 0; i < 2000; i++)
		sink += i ^ x;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void sort_round(unsigned long seed)
{
	unsigned long v[256];
	size_t i;

	for (i = 0; i < 256; i++) {
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		v[i] = seed >> 17;
	}
	qsort(v, 256, sizeof(v[0]), cmp_slow);
	sink += v[0];
}

int main(int argc, char **argv)
{
	double secs = 10, end;
	const char *mode = "both", *pidfile = NULL;
	unsigned long n = 0;
	int c;

	while ((c = getopt(argc, argv, "d:m:r:")) != -1) {
		switch (c) {
		case 'd': secs = atof(optarg); break;
		case 'm': mode = optarg; break;
		case 'r': pidfile = optarg; break;
		default:
			fprintf(stderr, "USAGE: nofp_chain [-d SECONDS] [-m chain|qsort|both|vdso|block] [-r PIDFILE]\n");
			return 2;
		}
	}
	if (strcmp(mode, "chain") && strcmp(mode, "qsort") && strcmp(mode, "both") &&
	    strcmp(mode, "vdso") && strcmp(mode, "block")) {
		fprintf(stderr, "nofp_chain: -m chain, qsort, both, vdso or block\n");
		return 2;
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 1;
	}
	if (!strcmp(mode, "block")) {
		blocking = 1;
		mode = "chain";
	}
	end = now_s() + secs;
	while (now_s() < end) {
		if (!strcmp(mode, "vdso"))	/* all but the loop in the vDSO */
			continue;
		if (strcmp(mode, "qsort"))
			sink += chain_a(n);
		if (strcmp(mode, "chain"))
			sort_round(n);
		n++;
	}
	printf("%lu rounds\n", n);
	return 0;
}
