// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -ldl
/* lib_once: opens a shared library, says so, and once told spins in it for
 * a while and exits: a process whose library a profiler first names after
 * it is gone, for the test that a gone process's debug link is not
 * followed (its PID may name a process of another container by then).
 *   lib_once LIB FUNC TRIGGER [-r PIDFILE] [-m MS]
 * FUNC is void FUNC(unsigned long ms) in LIB; TRIGGER a FIFO: the spin
 * starts once a writer opens it. PIDFILE gets the PID after the dlopen. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef void (*run_fn)(unsigned long ms);

int main(int argc, char **argv)
{
	const char *pidfile = NULL;
	unsigned long ms = 200;
	void *h;
	run_fn f;
	int c, fd;
	char b;

	if (argc < 4) {
		fprintf(stderr, "USAGE: lib_once LIB FUNC TRIGGER [-r PIDFILE] [-m MS]\n");
		return 2;
	}
	optind = 4;
	while ((c = getopt(argc, argv, "r:m:")) != -1) {
		switch (c) {
		case 'r': pidfile = optarg; break;
		case 'm': ms = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	h = dlopen(argv[1], RTLD_NOW);
	f = h ? (run_fn)(uintptr_t)dlsym(h, argv[2]) : NULL;
	if (!f) {
		fprintf(stderr, "lib_once: %s\n", dlerror());
		return 1;
	}
	if (pidfile) {
		FILE *pf = fopen(pidfile, "w");

		if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 || fclose(pf))
			return 1;
	}
	/* blocks until the test opens the FIFO to write */
	fd = open(argv[3], O_RDONLY);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	if (read(fd, &b, 1) < 0)
		b = 0;
	close(fd);
	f(ms);
	return 0;
}
