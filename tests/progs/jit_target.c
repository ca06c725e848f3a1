// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jit_target: a process that JITs its own code, for perf-map tests. It
 * copies two small functions (machine code with a frame pointer) into
 * anonymous executable memory, writes /tmp/perf-PID.map naming them, then
 * writes READY_FILE and spins in them until SIGTERM/SIGINT. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* push %rbp; mov %rsp,%rbp; mov $N,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x40, 0x42, 0x0f, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

__attribute__((noinline)) static void run_jitted(void (*hot)(void), void (*cold)(void))
{
	while (!stop) {
		hot();
		hot();
		hot();
		cold();
	}
}

int main(int argc, char **argv)
{
	unsigned char *mem;
	char path[64];
	struct sigaction sa;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: jit_target READY_FILE\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit_target: mmap");
		return 1;
	}
	memcpy(mem + 0x100, spin_code, sizeof(spin_code));
	memcpy(mem + 0x200, spin_code, sizeof(spin_code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || fprintf(f, "%llx %zx JitHot::Spin(int)\n%llx %zx Jit Cold Path [tier1]\n",
			  (unsigned long long)(uintptr_t)(mem + 0x100), sizeof(spin_code),
			  (unsigned long long)(uintptr_t)(mem + 0x200), sizeof(spin_code)) < 0 ||
	    fclose(f)) {
		perror("jit_target: perf map");
		return 1;
	}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		perror("jit_target: ready file");
		return 1;
	}
	run_jitted((void (*)(void))(mem + 0x100), (void (*)(void))(mem + 0x200));
	unlink(path);
	return 0;
}
