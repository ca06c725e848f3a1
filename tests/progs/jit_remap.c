// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -lpthread
/* jit_remap: a JIT-like process whose perf map changes under the profiler.
 * It spins in code it copied into anonymous executable memory, named by
 * /tmp/perf-PID.map, and on commands read from stdin (one a line) moves the
 * code and changes the map:
 *   move      code to new addresses; the map atomically replaced (rename)
 *   inplace   code to new addresses; the map rewritten in place, same size
 *   rename    code where it is, named anew; the map atomically replaced
 *   delete    the map unlinked (code stays)
 *   partial   the map rewritten in place ending with half a line naming the
 *             running hot code (no newline), as a runtime mid-write leaves it
 *   truncate  the map truncated to 0 bytes
 *   churn     rewrite the map in place again and again, in slow small
 *             writes, alternating two layouts of the same entries
 *   calm      stop churning; acknowledged once the map is whole
 *   quit      unlink the map and exit
 * Each command is acknowledged by a line "done CMD" appended to ACK_FILE.
 *   jit_remap READY_FILE ACK_FILE < commands */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* push %rbp; mov %rsp,%rbp; mov $N,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x40, 0x42, 0x0f, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

static unsigned char *mem;
static void (*volatile hot)(void);
static void (*volatile cold)(void);
static volatile int stop, churning, churn_idle = 1;
static char map_path[64], ack_path[4096];

/* Region R (0..3) of the code: hot at +0x100, cold at +0x200 of page R. */
static void use_region(int r)
{
	hot = (void (*)(void))(mem + r * 4096 + 0x100);
	cold = (void (*)(void))(mem + r * 4096 + 0x200);
}

static int map_text(char *buf, size_t size, const char *prefix, int layout)
{
	unsigned long long h = (unsigned long long)(uintptr_t)hot;
	unsigned long long c = (unsigned long long)(uintptr_t)cold;

	if (layout)	/* same entries, other offsets: torn reads misalign */
		return snprintf(buf, size, "0x1000 0x10 %s::Dummy\n0x%llx  0x%zx  %s::Hot(int)\n"
				"0x%llx  0x%zx  %s::Cold\n", prefix, h, sizeof(spin_code), prefix,
				c, sizeof(spin_code), prefix);
	return snprintf(buf, size, "%llx %zx %s::Hot(int)\n%llx %zx %s::Cold\n", h,
			sizeof(spin_code), prefix, c, sizeof(spin_code), prefix);
}

static void write_fd(int fd, const char *s, size_t n, size_t chunk)
{
	while (n) {
		ssize_t w = write(fd, s, n < chunk ? n : chunk);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
		if (n && chunk < 64)
			usleep(100);	/* a slow writer: readers see it mid-way */
	}
}

static void write_map(const char *text, size_t n, int atomic, size_t chunk)
{
	char tmp[80];
	int fd;

	if (atomic) {
		snprintf(tmp, sizeof(tmp), "%s.new", map_path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	} else {
		fd = open(map_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	if (fd < 0) {
		perror("jit_remap: perf map");
		exit(1);
	}
	write_fd(fd, text, n, chunk);
	close(fd);
	if (atomic && rename(tmp, map_path)) {
		perror("jit_remap: rename");
		exit(1);
	}
}

static void ack(const char *cmd)
{
	FILE *f = fopen(ack_path, "a");

	if (!f || fprintf(f, "done %s\n", cmd) < 0 || fclose(f)) {
		perror("jit_remap: ack");
		exit(1);
	}
}

static void *churn_thread(void *arg)
{
	char text[512];
	int layout = 0, n;

	(void)arg;
	while (!stop) {
		if (!churning) {
			churn_idle = 1;
			usleep(1000);
			continue;
		}
		churn_idle = 0;
		layout = !layout;
		n = map_text(text, sizeof(text), "JitChurn", layout);
		write_map(text, (size_t)n, 0, 7);
		usleep(2000);
	}
	return NULL;
}

static void *command_thread(void *arg)
{
	char line[128], text[512];
	int n;

	(void)arg;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "move")) {
			use_region(1);
			n = map_text(text, sizeof(text), "JitNew", 0);
			write_map(text, (size_t)n, 1, sizeof(text));
		} else if (!strcmp(line, "inplace")) {
			/* names of the same length: the file keeps its size */
			use_region(2);
			n = map_text(text, sizeof(text), "JitInp", 0);
			write_map(text, (size_t)n, 0, sizeof(text));
		} else if (!strcmp(line, "rename")) {
			/* the same addresses (the same stacks) under new names */
			n = map_text(text, sizeof(text), "JitRen", 0);
			write_map(text, (size_t)n, 1, sizeof(text));
		} else if (!strcmp(line, "delete")) {
			unlink(map_path);
		} else if (!strcmp(line, "partial")) {
			n = snprintf(text, sizeof(text), "%llx %zx JitPar::Cold\n%llx %zx JitPar",
				     (unsigned long long)(uintptr_t)cold, sizeof(spin_code),
				     (unsigned long long)(uintptr_t)hot, sizeof(spin_code));
			write_map(text, (size_t)n, 0, sizeof(text));
		} else if (!strcmp(line, "truncate")) {
			if (truncate(map_path, 0))
				perror("jit_remap: truncate");
		} else if (!strcmp(line, "churn")) {
			churning = 1;
		} else if (!strcmp(line, "calm")) {
			/* the map is whole again once the writer is idle */
			churning = 0;
			while (!churn_idle)
				usleep(1000);
		} else if (!strcmp(line, "quit")) {
			break;
		} else {
			fprintf(stderr, "jit_remap: unknown command '%s'\n", line);
			continue;
		}
		ack(line);
	}
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t cmd, churn;
	char text[512];
	FILE *f;
	int r, n;

	if (argc != 3) {
		fprintf(stderr, "usage: jit_remap READY_FILE ACK_FILE < commands\n");
		return 2;
	}
	snprintf(ack_path, sizeof(ack_path), "%s", argv[2]);
	mem = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit_remap: mmap");
		return 1;
	}
	for (r = 0; r < 4; r++) {
		memcpy(mem + r * 4096 + 0x100, spin_code, sizeof(spin_code));
		memcpy(mem + r * 4096 + 0x200, spin_code, sizeof(spin_code));
	}
	use_region(0);
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	n = map_text(text, sizeof(text), "JitOld", 0);
	write_map(text, (size_t)n, 0, sizeof(text));
	if (pthread_create(&cmd, NULL, command_thread, NULL) ||
	    pthread_create(&churn, NULL, churn_thread, NULL)) {
		fprintf(stderr, "jit_remap: cannot start threads\n");
		return 1;
	}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		perror("jit_remap: ready file");
		return 1;
	}
	while (!stop) {
		hot();
		hot();
		hot();
		cold();
	}
	pthread_join(churn, NULL);
	unlink(map_path);
	return 0;
}
