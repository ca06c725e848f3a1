// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* podapp: the application container of the pod tests. It stands for a JIT
 * runtime: it copies machine code into anonymous executable memory, names it
 * in /tmp/perf-PID.map as a .NET runtime would, and spins there; it also
 * calls a native function with a UTF-16 string now and then, for uprobes.
 *
 *   main -> run_app -> jit_driver -> [JIT] PodApp.Jit::Spin()
 *                   -> greet_utf16(const uint16_t *s, int len)
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

/* x86-64: push rbp; mov rbp,rsp; mov ecx,imm32; L: dec ecx; jnz L;
 * pop rbp; ret. A real frame, so frame-pointer unwinding walks through it. */
static const unsigned char spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x40, 0x42, 0x0f, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

NOINLINE int greet_utf16(const uint16_t *s, int len)
{
	int sum = 0;

	for (int i = 0; i < len; i++)
		sum += s[i];
	sink += (uint64_t)sum;
	return len;
}

NOINLINE void jit_driver(void (*fn)(void))
{
	for (int i = 0; i < 20; i++)
		fn();
}

NOINLINE void run_app(void (*fn)(void))
{
	/* "héllo wörld ✓" in UTF-16 */
	static const uint16_t msg[] = { 'h', 0xe9, 'l', 'l', 'o', ' ', 'w', 0xf6,
		'r', 'l', 'd', ' ', 0x2713 };

	while (!stop) {
		jit_driver(fn);
		greet_utf16(msg, (int)(sizeof(msg) / sizeof(msg[0])));
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *ready = argc > 1 ? argv[1] : NULL;
	char path[64];
	void *code;
	FILE *f;

#if !defined(__x86_64__)
	fprintf(stderr, "podapp: the JIT code is x86-64 only\n");
	return 1;
#endif
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		fprintf(stderr, "podapp: mmap: %s\n", strerror(errno));
		return 1;
	}
	memcpy(code, spin_code, sizeof(spin_code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || fprintf(f, "%lx %zx PodApp.Jit::Spin()\n", (unsigned long)code,
			  sizeof(spin_code)) < 0 || fclose(f)) {
		fprintf(stderr, "podapp: cannot write %s\n", path);
		return 1;
	}
	if (ready) {
		f = fopen(ready, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 1;
	}
	run_app((void (*)(void))code);
	return 0;
}
