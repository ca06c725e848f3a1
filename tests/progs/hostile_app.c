// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -lpthread
/* hostile_app: an application that attacks the sidecar watching it, for the
 * hostile-app tests. It is busy on the CPU (native code and JIT code named
 * by its perf map), calls hostile_greet() with strings full of terminal
 * escapes, names itself and a thread with escapes, and does what a
 * compromised container can do to the files the sidecar reads:
 *
 *   --perfmap MODE  its /tmp/perf-PID.map is: valid (names with escapes and
 *                   a 4 KiB name), fifo, devzero (a link to /dev/zero),
 *                   secret (an absolute link to SECRET, a sidecar file that
 *                   names the JIT code SIDECAR_SECRET_LEAKED), sparse (2 GiB
 *                   of holes), grow (appended to without end), cycle (all of
 *                   them in turn, 5 times a second)
 *   --secret PATH   the sidecar file the links aim at
 *   --watch DIR     every file that appears in DIR (and directories made
 *                   there) is rewritten: shell commands and options that
 *                   run or write CANARY appended, or the file replaced by a
 *                   link to SECRET or a FIFO, in turn (inotify)
 *   --canary PATH   the file the injected commands would create
 *   --maps N        N extra mappings of a file with a 4000-byte path
 *   --dll PATH      PATH copied to /tmp/App.dll, mapped executable, then
 *                   truncated and rewritten without end (a reader that had
 *                   it mapped would get SIGBUS)
 *   --ready FILE    written once set up: the PID (in its namespace), then
 *                   the address of its JIT code
 *
 * Runs until SIGTERM or SIGINT. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static const char *secret = "/nonexistent-secret";
static const char *canary = "/nonexistent-canary";
static char map_path[64];
static unsigned char *jit;

/* push %rbp; mov %rsp,%rbp; mov $N,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char spin_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0x40, 0x42, 0x0f, 0x00,
	0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The uprobe target: its argument is a string the app chose. The store
 * keeps the call from being optimized away. */
static volatile size_t greeted;

__attribute__((noinline)) int hostile_greet(const char *s)
{
	greeted += strlen(s);
	return (int)greeted;
}

__attribute__((noinline)) static void hostile_spin(void)
{
	for (volatile int i = 0; i < 200000; i++)
		;
}

static void write_valid_map(const char *path)
{
	char longname[4097];
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	memset(longname, 'L', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	fprintf(f, "%llx %zx \033]0;pwned\007Jit\033[2J\xc2\x9b" "31mEvil\n",
		(unsigned long long)(uintptr_t)jit, sizeof(spin_code));
	fprintf(f, "%llx %zx %s\n", (unsigned long long)(uintptr_t)(jit + 0x100),
		sizeof(spin_code), longname);
	fclose(f);
}

static int grow_fd = -1;
static int dll_fd = -1;
static char *dll_bytes;
static size_t dll_len;

/* /tmp/App.dll: a copy of SRC, mapped like an assembly the runtime loads. */
static int map_dll(const char *src)
{
	FILE *f = fopen(src, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		return -1;
	dll_len = (size_t)n;
	dll_bytes = malloc(dll_len);
	if (!dll_bytes || fread(dll_bytes, 1, dll_len, f) != dll_len)
		return -1;
	fclose(f);
	dll_fd = open("/tmp/App.dll", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (dll_fd < 0 || pwrite(dll_fd, dll_bytes, dll_len, 0) != (ssize_t)dll_len)
		return -1;
	return mmap(NULL, dll_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, dll_fd, 0) == MAP_FAILED ?
	       -1 : 0;
}

/* Put the mapped assembly back, then truncate it for a moment: over and
 * over, so that a reader finds it whole and then loses it under its feet. */
static void *dll_churn(void *arg)
{
	(void)arg;
	while (!stop) {
		if (pwrite(dll_fd, dll_bytes, dll_len, 0) < 0)
			break;
		usleep(20000);
		if (ftruncate(dll_fd, 0))
			break;
		usleep(500);
	}
	return NULL;
}

static void set_perfmap(const char *mode)
{
	char tmp[80];

	if (grow_fd >= 0) {
		close(grow_fd);
		grow_fd = -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", map_path);
	unlink(tmp);
	if (!strcmp(mode, "valid")) {
		write_valid_map(tmp);
	} else if (!strcmp(mode, "fifo")) {
		mkfifo(tmp, 0644);
	} else if (!strcmp(mode, "devzero")) {
		symlink("/dev/zero", tmp);
	} else if (!strcmp(mode, "secret")) {
		symlink(secret, tmp);
	} else if (!strcmp(mode, "sparse")) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			if (ftruncate(fd, 2ll << 30))
				perror("hostile_app: ftruncate");
			close(fd);
		}
	} else if (!strcmp(mode, "grow")) {
		grow_fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	}
	rename(tmp, map_path);
}

/* The writer of --perfmap grow: a line at a time, as fast as it can. */
static void *grower(void *arg)
{
	char line[128];
	int n;

	(void)arg;
	/* a thread name with escapes too */
	prctl(PR_SET_NAME, "\033[7mthr\xc2\x9b" "7m", 0, 0, 0);
	while (!stop) {
		int fd = grow_fd;

		if (fd < 0) {
			usleep(10000);
			continue;
		}
		n = snprintf(line, sizeof(line), "%llx %zx Grow::Line\n",
			     (unsigned long long)(uintptr_t)jit, sizeof(spin_code));
		if (write(fd, line, (size_t)n) < 0)
			usleep(1000);
	}
	return NULL;
}

struct watch {
	int fd;
	int wd[256];
	char dir[256][PATH_MAX];
	int n;
	unsigned long events;
};

static void watch_add(struct watch *w, const char *dir)
{
	if (w->n >= 256)
		return;
	w->wd[w->n] = inotify_add_watch(w->fd, dir, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
	if (w->wd[w->n] < 0)
		return;
	snprintf(w->dir[w->n], PATH_MAX, "%s", dir);
	w->n++;
}

/* Rewrite what just appeared at PATH. */
static void attack(struct watch *w, const char *path)
{
	struct stat sb;
	char payload[PATH_MAX * 2];
	int fd;

	if (lstat(path, &sb))
		return;
	if (S_ISDIR(sb.st_mode)) {
		watch_add(w, path);
		return;
	}
	if (!S_ISREG(sb.st_mode))
		return;
	w->events++;
	switch (w->events % 3) {
	case 0:
		/* what a sourced file or an argument list would run or take */
		snprintf(payload, sizeof(payload), "\ntouch %s\n-o%s\n`touch %s`\n$(touch %s)\n",
			 canary, canary, canary, canary);
		fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0) {
			if (write(fd, payload, strlen(payload)) < 0)
				perror("hostile_app: append");
			close(fd);
		}
		break;
	case 1:
		unlink(path);
		symlink(secret, path);
		break;
	default:
		unlink(path);
		mkfifo(path, 0666);
		break;
	}
}

static void watch_poll(struct watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			struct inotify_event *e = (struct inotify_event *)p;
			char path[PATH_MAX * 2];

			for (int i = 0; i < w->n; i++)
				if (w->wd[i] == e->wd && e->len) {
					snprintf(path, sizeof(path), "%s/%s", w->dir[i], e->name);
					attack(w, path);
				}
			p += sizeof(*e) + e->len;
		}
	}
}

/* N mappings of a file whose path is about 4000 bytes: /proc/PID/maps
 * grows by that much per mapping. */
static int many_maps(int n)
{
	char path[PATH_MAX] = "/tmp";
	int fd, i;

	while (strlen(path) < 3800) {
		size_t l = strlen(path);

		snprintf(path + l, sizeof(path) - l, "/%0200d", 0);
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
	}
	strcat(path, "/mapped");
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096))
		return -1;
	for (i = 0; i < n; i++)
		/* alternating protections keep the kernel from merging them */
		if (mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE, fd, 0) ==
		    MAP_FAILED)
			return -1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const cycle[] = { "valid", "fifo", "devzero", "secret", "sparse",
					     "grow" };
	static const char *const greetings[] = {
		"\033[31mred\033[0m", "\xc2\x9b\x32J", "\033]52;c;cHduZWQ=\007", "ok",
		"\xff\xfe bad utf-8", "line\nbreak\rreturn",
	};
	const char *mode = "valid", *ready = NULL, *dll = NULL;
	struct watch w = { .fd = -1 };
	struct sigaction sa;
	pthread_t th, dth;
	uint64_t tick = 0;
	int i, nmaps = 0;
	FILE *f;

	w.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (i = 1; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "hostile_app: %s needs a value\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--perfmap"))
			mode = argv[++i];
		else if (!strcmp(argv[i], "--secret"))
			secret = argv[++i];
		else if (!strcmp(argv[i], "--canary"))
			canary = argv[++i];
		else if (!strcmp(argv[i], "--watch"))
			watch_add(&w, argv[++i]);
		else if (!strcmp(argv[i], "--maps"))
			nmaps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dll"))
			dll = argv[++i];
		else if (!strcmp(argv[i], "--ready"))
			ready = argv[++i];
		else {
			fprintf(stderr, "hostile_app: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* a process name that would paint a terminal: ESC, then C1 CSI; the
	 * command line (argv[0] rewritten in place) too */
	prctl(PR_SET_NAME, "\033[1m\xc2\x9b" "1mhostile", 0, 0, 0);
	if (strlen(argv[0]) >= 8)
		memcpy(argv[0], "\033[1m\xc2\x9b" "1m", 8);
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (jit == MAP_FAILED)
		return 1;
	memcpy(jit, spin_code, sizeof(spin_code));
	memcpy(jit + 0x100, spin_code, sizeof(spin_code));
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	if (nmaps && many_maps(nmaps)) {
		perror("hostile_app: many maps");
		return 1;
	}
	if (dll && map_dll(dll)) {
		perror("hostile_app: dll");
		return 1;
	}
	set_perfmap(strcmp(mode, "cycle") ? mode : "valid");
	if (pthread_create(&th, NULL, grower, NULL))
		return 1;
	if (dll && pthread_create(&dth, NULL, dll_churn, NULL))
		return 1;
	if (ready) {
		f = fopen(ready, "w");
		if (!f || fprintf(f, "%d\n%llx\n", (int)getpid(),
				  (unsigned long long)(uintptr_t)jit) < 0 || fclose(f))
			return 1;
	}
	while (!stop) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			hostile_spin();
			((void (*)(void))jit)();
			((void (*)(void))(jit + 0x100))();
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while (!stop && (t1.tv_sec - t0.tv_sec) * 1000000000L +
			 (t1.tv_nsec - t0.tv_nsec) < 10000000L);
		hostile_greet(greetings[tick % (sizeof(greetings) / sizeof(greetings[0]))]);
		if (w.n)
			watch_poll(&w);
		if (!strcmp(mode, "cycle") && tick % 20 == 0)
			set_perfmap(cycle[(tick / 20) % (sizeof(cycle) / sizeof(cycle[0]))]);
		tick++;
	}
	pthread_join(th, NULL);
	if (dll)
		pthread_join(dth, NULL);
	unlink(map_path);
	return 0;
}
