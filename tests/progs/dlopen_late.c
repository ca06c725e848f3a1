// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CFLAGS: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
// LDLIBS: -ldl
/* dlopen_late: opens a shared library after a delay, then spins in its
 * function FUNC through a chain of its own frames, none with frame
 * pointers; for the test that unwind tables follow new mappings.
 *   dlopen_late LIB FUNC [-w MS] [-s] [-d SECONDS] [-r PIDFILE]
 * -s: spin while waiting (so that a profiler sees the process before the
 * dlopen), instead of sleeping.
 * FUNC is unsigned long FUNC(unsigned long) in LIB. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long (*spin_fn)(unsigned long);

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long late_outer(spin_fn f, unsigned long n)
{
	volatile char pad[56];

	pad[n % sizeof(pad)] = (char)n;
	return f(n) + (unsigned long)pad[0];
}

int main(int argc, char **argv)
{
	double secs = 5, end;
	long wait_ms = 1000;
	const char *pidfile = NULL;
	unsigned long n = 0;
	int spin = 0;
	void *h;
	spin_fn f;
	int c;

	if (argc < 3) {
		fprintf(stderr, "USAGE: dlopen_late LIB FUNC [-w MS] [-s] [-d SECONDS] [-r PIDFILE]\n");
		return 2;
	}
	optind = 3;
	while ((c = getopt(argc, argv, "w:sd:r:")) != -1) {
		switch (c) {
		case 's': spin = 1; break;
		case 'w': wait_ms = atol(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'r': pidfile = optarg; break;
		default: return 2;
		}
	}
	if (pidfile) {
		FILE *p = fopen(pidfile, "w");

		if (!p || fprintf(p, "%d\n", (int)getpid()) < 0 || fclose(p))
			return 1;
	}
	if (spin) {
		end = now_s() + (double)wait_ms / 1000;
		while (now_s() < end)
			sink++;
	} else {
		usleep((useconds_t)wait_ms * 1000);
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_late: %s\n", dlerror());
		return 1;
	}
	*(void **)&f = dlsym(h, argv[2]);
	if (!f) {
		fprintf(stderr, "dlopen_late: no %s in %s\n", argv[2], argv[1]);
		return 1;
	}
	end = now_s() + secs;
	while (now_s() < end)
		sink += late_outer(f, n++);
	printf("%lu calls\n", n);
	return 0;
}
