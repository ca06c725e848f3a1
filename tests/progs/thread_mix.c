// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A target for sidescope stacks: threads each doing one known thing.
 *   deadlock_a / deadlock_b   two threads that take two mutexes in opposite
 *                             order and deadlock (lock_first, lock_second)
 *   sleeper                   nanosleep in nap_forever (named as -s NAME
 *                             says, any bytes: an app's chosen name)
 *   reader                    read(2) of a pipe nobody writes, in wait_pipe
 *   spinner                   a busy loop in spin_forever
 *   ticker                    wakes every millisecond and keeps the longest
 *                             gap between two wakes (the pause a snapshot
 *                             causes), written to the file given as -t FILE
 *                             on SIGUSR1 (reset after)
 *   vforker                   vfork(2)s a child that only sleeps: the thread
 *                             waits for it in uninterruptible sleep (D)
 *                             in wait_child (the child exits with us)
 *                             (not with -V: ptrace tools wait for ever for
 *                             such a thread to stop)
 *   pool (-n N)               N threads idle on one condition variable
 * Built without frame pointers: the stacks are walked by unwind tables.
 * Writes "ready" to stdout when every thread is in place. */
// CFLAGS: -fomit-frame-pointer -mno-omit-leaf-frame-pointer -pthread
// LDLIBS: -pthread
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;
static pthread_mutex_t pool_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_c = PTHREAD_COND_INITIALIZER;
static volatile int in_place;
static volatile unsigned long spins;
static int pipefd[2];
static const char *tick_file;
static const char *sleeper_name = "sleeper";
static volatile sig_atomic_t dump_ticks;

static void name(const char *n)
{
	prctl(PR_SET_NAME, n, 0, 0, 0);
}

__attribute__((noinline)) static void lock_second(pthread_mutex_t *m)
{
	__sync_fetch_and_add(&in_place, 1);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) static void lock_first(pthread_mutex_t *a, pthread_mutex_t *b)
{
	pthread_mutex_lock(a);
	pthread_barrier_wait(&both);
	lock_second(b);
	pthread_mutex_unlock(a);
}

static void *deadlock_a(void *arg)
{
	name("deadlock_a");
	lock_first(&m1, &m2);
	return arg;
}

static void *deadlock_b(void *arg)
{
	name("deadlock_b");
	lock_first(&m2, &m1);
	return arg;
}

__attribute__((noinline)) static void nap_forever(void)
{
	struct timespec ts = { 3600, 0 };

	__sync_fetch_and_add(&in_place, 1);
	for (;;)
		nanosleep(&ts, NULL);
}

static void *sleeper(void *arg)
{
	name(sleeper_name);
	nap_forever();
	return arg;
}

__attribute__((noinline)) static void wait_pipe(void)
{
	char c;

	__sync_fetch_and_add(&in_place, 1);
	while (read(pipefd[0], &c, 1) != 0)
		;
}

static void *reader(void *arg)
{
	name("reader");
	wait_pipe();
	return arg;
}

__attribute__((noinline)) static void spin_forever(void)
{
	__sync_fetch_and_add(&in_place, 1);
	for (;;)
		spins++;
}

static void *spinner(void *arg)
{
	name("spinner");
	spin_forever();
	return arg;
}

__attribute__((noinline)) static void wait_child(void)
{
	pid_t parent = getpid();

	__sync_fetch_and_add(&in_place, 1);
	if (vfork() == 0) {
		/* the child borrows our memory: system calls only */
		struct timespec ts = { 0, 100000000 };

		while (syscall(SYS_getppid) == parent)
			syscall(SYS_nanosleep, &ts, NULL);
		syscall(SYS_exit, 0);
	}
}

static void *vforker(void *arg)
{
	name("vforker");
	wait_child();
	return arg;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_usr1(int sig)
{
	(void)sig;
	dump_ticks = 1;
}

static void *ticker(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	uint64_t last = mono_ns(), gap = 0;

	name("ticker");
	__sync_fetch_and_add(&in_place, 1);
	for (;;) {
		uint64_t now;

		nanosleep(&ms, NULL);
		now = mono_ns();
		if (now - last > gap)
			gap = now - last;
		last = now;
		if (dump_ticks && tick_file) {
			FILE *f = fopen(tick_file, "w");

			if (f) {
				fprintf(f, "%llu\n", (unsigned long long)(gap / 1000));
				fclose(f);
			}
			gap = 0;
			dump_ticks = 0;
		}
	}
	return arg;
}

__attribute__((noinline)) static void pool_idle(void)
{
	pthread_mutex_lock(&pool_m);
	__sync_fetch_and_add(&in_place, 1);
	for (;;)
		pthread_cond_wait(&pool_c, &pool_m);
}

static void *pool(void *arg)
{
	name("pool");
	pool_idle();
	return arg;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { deadlock_a, deadlock_b, sleeper, reader, spinner, ticker };
	int npool = 0, opt, i, want, nfns = 6, vfork_too = 1;
	pthread_attr_t attr;
	pthread_t t;

	while ((opt = getopt(argc, argv, "n:t:s:V")) != -1) {
		if (opt == 's')
			sleeper_name = optarg;
		else if (opt == 'V')
			vfork_too = 0;
		else if (opt == 'n')
			npool = atoi(optarg);
		else if (opt == 't')
			tick_file = optarg;
		else
			return 2;
	}
	signal(SIGUSR1, on_usr1);
	if (pipe(pipefd) || pthread_barrier_init(&both, NULL, 2))
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < nfns; i++)
		if (pthread_create(&t, &attr, fns[i], NULL))
			return 1;
	for (i = 0; i < npool; i++)
		if (pthread_create(&t, &attr, pool, NULL)) {
			fprintf(stderr, "thread %d: cannot create\n", i);
			return 1;
		}
	/* last, so that its child's PID does not fall among the pool's TIDs */
	if (vfork_too && pthread_create(&t, &attr, vforker, NULL))
		return 1;
	/* deadlock_a and b count once each in lock_second */
	want = 2 + (nfns - 2) + vfork_too + npool;
	while (in_place < want)
		usleep(1000);
	usleep(100000);	/* into their waits */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
