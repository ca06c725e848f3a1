// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Target for the pprof address, line and thread tests: four threads, each
 * spinning in code whose profile is known.
 *   lines_target READY_FILE [SECONDS]
 *  - the main thread: lines_outer, which spins in lines_inlined_work, a
 *    function always inlined into it (pprof: two lines at one address);
 *  - "lt-worker": worker_spin (a thread label of its own);
 *  - "lt-vdso": clock_gettime in a loop (the vDSO);
 *  - "lt-badframe" (x86-64): a loop run with the frame pointer aimed at a
 *    fake frame whose return address points into this program's data, as
 *    a frame-pointer walk through code built without frame pointers finds.
 * READY_FILE is written once every thread runs; the program exits after
 * SECONDS (default 30) or at SIGTERM. Built without PLT stubs: an address
 * in one has no line, and every address of this program should. */
// LDLIBS: -pthread -fno-plt
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define PROBE __attribute__((noinline, used, optnone))
#else
#define PROBE __attribute__((noinline, noipa, used))
#endif

static volatile long sink;
static volatile int running;
/* in the data segment: the fake frame's return address points here */
long lt_data_word = 42;
static long fake_frame[2];

/* the line the test looks for: where the inlined loop spends its time */
static inline __attribute__((always_inline)) void lines_inlined_work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += i * 7;	/* LT_INLINED_LINE */
}

PROBE void lines_outer(void)
{
	for (;;)
		lines_inlined_work();	/* LT_CALL_LINE */
}

PROBE void worker_spin(void)
{
	for (;;)
		sink += 3;
}

PROBE void vdso_spin(void)
{
	struct timespec ts;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

PROBE void bad_frame_spin(void)
{
#if defined(__x86_64__)
	fake_frame[0] = 0;	/* no frame further out */
	fake_frame[1] = (long)&lt_data_word + 1;
	/* no call and no memory access through %rbp while it is replaced */
	__asm__ volatile("push %%rbp\n\t"
			 "mov %0, %%rbp\n\t"
			 "1: pause\n\t"
			 "jmp 1b\n\t"
			 :
			 : "r"(fake_frame)
			 : "memory");
#else
	worker_spin();
#endif
}

static void *thread_main(void *arg)
{
	void (*fn)(void) = (void (*)(void))arg;

	__sync_fetch_and_add(&running, 1);
	fn();
	return NULL;
}

static void start(const char *name, void (*fn)(void))
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_main, (void *)fn)) {
		perror("pthread_create");
		exit(1);
	}
	pthread_setname_np(t, name);
}

int main(int argc, char **argv)
{
	unsigned int secs = argc > 2 ? (unsigned int)atoi(argv[2]) : 30;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: lines_target READY_FILE [SECONDS]\n");
		return 2;
	}
	alarm(secs ? secs : 30);
	start("lt-worker", worker_spin);
	start("lt-vdso", vdso_spin);
	start("lt-badframe", bad_frame_spin);
	while (running < 3)
		usleep(1000);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	lines_outer();
	return 0;
}
