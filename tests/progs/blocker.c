// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -lpthread
/* blocker: threads that block for known times, for the off-CPU and
 * wall-clock profiles and their benchmark.
 *   blocker MODE [-d SECONDS] [-r PIDFILE] [-t TRUTHFILE] [-w] [-k]
 * MODE (each in threads of its own, named as shown):
 *   sleep  "sleeper": blocker_burst (5 ms on the CPU), blocker_sleep
 *          (nanosleep 45 ms), again and again
 *   pipe   "reader": blocker_pipe_read, a read() of a pipe that "feeder"
 *          writes a byte to every 100 ms (its sleep: blocker_feed_sleep)
 *   lock   "holder" takes a mutex, spins 50 ms in blocker_hold, lets go and
 *          sleeps 10 ms in blocker_hold_sleep; "locker" waits in
 *          blocker_lock_sync (a read of a pipe the holder writes to) until
 *          the holder has the mutex, then in blocker_lock_wait:
 *          pthread_mutex_lock (a futex wait until the holder lets go) and
 *          unlock at once
 *   vfork  "vforker": blocker_vfork_wait, a vfork() whose child sleeps
 *          200 ms and exits (the parent waits in the kernel in state D),
 *          then the waitpid of it
 *   wall   "waller": blocker_wall_spin (10 ms on the CPU), blocker_wall_sleep
 *          (nanosleep 30 ms): 1:3 on and off the CPU
 *   all    all of them at once
 * It writes its PID to PIDFILE once its threads run, runs SECONDS (default
 * 5; 0: until a signal), then writes TRUTHFILE (stdout without -t): a line
 * "FUNCTION SECONDS" for each blocking function (the CLOCK_MONOTONIC time
 * around its blocking calls, summed) and "FUNCTION_cpu SECONDS" for each
 * CPU burst (its thread's CPU time). SIGTERM or SIGINT end the run early,
 * the truth written as well. With -w, the threads wait (in blocker_park,
 * not counted) for a SIGUSR1 before the run starts, so that a profiler can
 * attach first; with -k, the process stays (in blocker_linger) after
 * writing TRUTHFILE, its threads too, until SIGTERM, SIGINT or SIGUSR1, so
 * that a profiler can still read its symbols. Both files are written whole (a rename). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

enum {
	T_SLEEP, T_BURST_CPU, T_PIPE_READ, T_FEED_SLEEP, T_LOCK_SYNC, T_LOCK_WAIT,
	T_HOLD_CPU, T_HOLD_SLEEP, T_VFORK_WAIT, T_WALL_SLEEP, T_WALL_SPIN_CPU, NTRUTH
};

static const struct {
	const char *name;
	const char *mode;
} truths[NTRUTH] = {
	[T_SLEEP] = { "blocker_sleep", "sleep" },
	[T_BURST_CPU] = { "blocker_burst_cpu", "sleep" },
	[T_PIPE_READ] = { "blocker_pipe_read", "pipe" },
	[T_FEED_SLEEP] = { "blocker_feed_sleep", "pipe" },
	[T_LOCK_SYNC] = { "blocker_lock_sync", "lock" },
	[T_LOCK_WAIT] = { "blocker_lock_wait", "lock" },
	[T_HOLD_CPU] = { "blocker_hold_cpu", "lock" },
	[T_HOLD_SLEEP] = { "blocker_hold_sleep", "lock" },
	[T_VFORK_WAIT] = { "blocker_vfork_wait", "vfork" },
	[T_WALL_SLEEP] = { "blocker_wall_sleep", "wall" },
	[T_WALL_SPIN_CPU] = { "blocker_wall_spin_cpu", "wall" },
};

/* nanoseconds; each written by one thread only, read after the joins */
static uint64_t truth[NTRUTH];
static int stop;	/* __atomic */
static volatile unsigned long sink;
static pthread_barrier_t ready, go, finished, leave;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2], syncfd[2];	/* the pipe mode's, the lock mode's */

static int stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The blocking calls into libc go through these helpers. libc is built
 * without frame pointers: a walk of the frame-pointer chain from inside a
 * libc function goes on from the frame of libc's caller, whose own return
 * address is the next one read, so the function that called libc is not
 * in the stack (seen with bpftrace's ustack here). That function is one of
 * these helpers, and the blocker_* function above it stays in the stack.
 * None of them ends in a tail call. */
static __attribute__((noinline)) void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* 1 for a byte read, 0 at the end of the pipe or an error */
static __attribute__((noinline)) int read_byte(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n > 0;
}

static __attribute__((noinline)) void lock_mutex(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m);

	if (err) {
		fprintf(stderr, "blocker: pthread_mutex_lock: %s\n", strerror(err));
		abort();
	}
}

/* a vfork whose child sleeps NAP and exits: in the parent, once the child
 * has exited, its PID or -1 (the child never returns from here) */
static __attribute__((noinline)) pid_t vfork_napping_child(const struct timespec *nap)
{
	pid_t pid = vfork();

	if (pid == 0) {
		nanosleep(nap, NULL);
		_exit(0);
	}
	return pid < 0 ? -1 : pid;
}

static __attribute__((noinline)) void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* NS of this thread's CPU time, counted into truth[T] */
__attribute__((noinline)) void blocker_spin(uint64_t ns, int t)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now;
	unsigned long i;

	do {
		for (i = 0; i < 20000; i++)
			sink += i * 7;
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < ns);
	truth[t] += now - start;
}

/* a nanosleep of NS counted into truth[T] */
__attribute__((noinline)) void blocker_nap(uint64_t ns, int t)
{
	uint64_t t0 = mono_ns();

	sleep_ns(ns);
	truth[t] += mono_ns() - t0;
}

__attribute__((noinline)) void blocker_burst(void)
{
	blocker_spin(5 * MS, T_BURST_CPU);
}

__attribute__((noinline)) void blocker_sleep(void)
{
	blocker_nap(45 * MS, T_SLEEP);
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	while (!stopping()) {
		blocker_burst();
		blocker_sleep();
	}
	return NULL;
}

/* 1 for a byte read, 0 at the end of the pipe */
__attribute__((noinline)) int blocker_pipe_read(void)
{
	uint64_t t0 = mono_ns();
	int got = read_byte(pipefd[0]);

	truth[T_PIPE_READ] += mono_ns() - t0;
	return got;
}

static void *reader_main(void *arg)
{
	(void)arg;
	while (blocker_pipe_read())
		;
	return NULL;
}

__attribute__((noinline)) void blocker_feed_sleep(void)
{
	blocker_nap(100 * MS, T_FEED_SLEEP);
}

static void *feeder_main(void *arg)
{
	(void)arg;
	while (!stopping()) {
		blocker_feed_sleep();
		if (write(pipefd[1], "x", 1) < 0 && errno != EINTR)
			break;
	}
	close(pipefd[1]);	/* the reader's end of the pipe */
	return NULL;
}

__attribute__((noinline)) void blocker_hold(void)
{
	blocker_spin(50 * MS, T_HOLD_CPU);
}

__attribute__((noinline)) void blocker_hold_sleep(void)
{
	blocker_nap(10 * MS, T_HOLD_SLEEP);
}

static void *holder_main(void *arg)
{
	(void)arg;
	while (!stopping()) {
		lock_mutex(&mutex);
		/* the locker's lock now waits */
		if (write(syncfd[1], "x", 1) < 0 && errno != EINTR)
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		blocker_hold();
		pthread_mutex_unlock(&mutex);
		blocker_hold_sleep();
	}
	close(syncfd[1]);	/* the locker's last wait ends */
	return NULL;
}

/* 1 once the holder has the mutex, 0 once it is gone */
__attribute__((noinline)) int blocker_lock_sync(void)
{
	uint64_t t0 = mono_ns();
	int got = read_byte(syncfd[0]);

	truth[T_LOCK_SYNC] += mono_ns() - t0;
	return got;
}

__attribute__((noinline)) void blocker_lock_wait(void)
{
	uint64_t t0 = mono_ns();

	lock_mutex(&mutex);
	truth[T_LOCK_WAIT] += mono_ns() - t0;
	pthread_mutex_unlock(&mutex);
}

static void *locker_main(void *arg)
{
	(void)arg;
	while (blocker_lock_sync())
		blocker_lock_wait();
	return NULL;
}

__attribute__((noinline)) int blocker_vfork_wait(void)
{
	static const struct timespec nap = { 0, 200 * MS };
	uint64_t t0 = mono_ns();
	pid_t pid = vfork_napping_child(&nap);

	if (pid < 0)
		return -1;
	reap(pid);
	truth[T_VFORK_WAIT] += mono_ns() - t0;
	return 0;
}

static void *vforker_main(void *arg)
{
	(void)arg;
	while (!stopping())
		if (blocker_vfork_wait()) {
			perror("blocker: vfork");
			break;
		}
	return NULL;
}

__attribute__((noinline)) void blocker_wall_spin(void)
{
	blocker_spin(10 * MS, T_WALL_SPIN_CPU);
}

__attribute__((noinline)) void blocker_wall_sleep(void)
{
	blocker_nap(30 * MS, T_WALL_SLEEP);
}

static void *waller_main(void *arg)
{
	(void)arg;
	while (!stopping()) {
		blocker_wall_spin();
		blocker_wall_sleep();
	}
	return NULL;
}

static const struct {
	const char *mode, *name;
	void *(*fn)(void *);
} threads[] = {
	{ "sleep", "sleeper", sleeper_main },
	{ "pipe", "reader", reader_main },
	{ "pipe", "feeder", feeder_main },
	{ "lock", "holder", holder_main },
	{ "lock", "locker", locker_main },
	{ "vfork", "vforker", vforker_main },
	{ "wall", "waller", waller_main },
};
#define NTHREADS (sizeof(threads) / sizeof(threads[0]))

/* where the threads wait for the run to start (a -w wait) and, after it,
 * for the process to end (a -k wait): not counted */
__attribute__((noinline)) void blocker_park(pthread_barrier_t *b)
{
	pthread_barrier_wait(b);
}

static void *thread_start(void *arg)
{
	void *(*fn)(void *) = threads[(uintptr_t)arg].fn;

	pthread_setname_np(pthread_self(), threads[(uintptr_t)arg].name);
	pthread_barrier_wait(&ready);
	blocker_park(&go);
	fn(NULL);
	/* the truth is final; the thread stays while the process does (some
	 * profilers name the frames of a thread while it lives) */
	pthread_barrier_wait(&finished);
	blocker_park(&leave);
	return NULL;
}

/* wait for one of SET's signals, at most NS (0: no limit); the signal or 0 */
static int wait_signal(const sigset_t *set, uint64_t ns)
{
	struct timespec ts;
	uint64_t end = mono_ns() + ns, now;
	int sig;

	for (;;) {
		if (!ns)
			sig = sigwaitinfo(set, NULL);
		else {
			now = mono_ns();
			if (now >= end)
				return 0;
			ts.tv_sec = (time_t)((end - now) / 1000000000ull);
			ts.tv_nsec = (long)((end - now) % 1000000000ull);
			sig = sigtimedwait(set, NULL, &ts);
		}
		if (sig > 0)
			return sig;
		if (errno == EAGAIN)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

__attribute__((noinline)) void blocker_linger(const sigset_t *set)
{
	wait_signal(set, 0);
}

/* write TEXT to PATH whole: a temporary file, then a rename */
static int write_whole(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	if (fputs(text, f) < 0) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int in_mode(const char *mode, const char *what)
{
	return !strcmp(mode, "all") || !strcmp(mode, what);
}

static void usage(FILE *f)
{
	fprintf(f, "USAGE: blocker sleep|pipe|lock|vfork|wall|all [-d SECONDS] [-r PIDFILE]\n"
		   "               [-t TRUTHFILE] [-w] [-k]\n");
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *pidfile = NULL, *truthfile = NULL;
	int wait_start = 0, linger = 0, status = 0, c, n = 0, err;
	double seconds = 5;
	pthread_t tids[NTHREADS];
	size_t i, len = 0;
	sigset_t set;
	char text[2048], *end;

	/* the mode first (even with POSIXLY_CORRECT) or after the options */
	if (argc > 1 && argv[1][0] != '-') {
		mode = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	while ((c = getopt(argc, argv, "d:r:t:wkh")) != -1) {
		switch (c) {
		case 'd':
			seconds = strtod(optarg, &end);
			if (*end || end == optarg || !(seconds >= 0 && seconds <= 86400)) {
				fprintf(stderr, "blocker: invalid duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			pidfile = optarg;
			break;
		case 't':
			truthfile = optarg;
			break;
		case 'w':
			wait_start = 1;
			break;
		case 'k':
			linger = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!mode && optind < argc)
		mode = argv[optind++];
	if (!mode || optind < argc) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < NTHREADS; i++)
		n += in_mode(mode, threads[i].mode);
	if (!n) {
		fprintf(stderr, "blocker: unknown mode '%s'\n", mode);
		usage(stderr);
		return 2;
	}

	/* the signals are taken by the main thread alone, with sigwait: the
	 * threads (and the vfork children) have them blocked */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe(pipefd) || pipe(syncfd)) {
		perror("blocker");
		return 1;
	}
	pthread_barrier_init(&ready, NULL, (unsigned int)n + 1);
	pthread_barrier_init(&go, NULL, (unsigned int)n + 1);
	pthread_barrier_init(&finished, NULL, (unsigned int)n + 1);
	pthread_barrier_init(&leave, NULL, (unsigned int)n + 1);
	n = 0;
	for (i = 0; i < NTHREADS; i++) {
		if (!in_mode(mode, threads[i].mode))
			continue;
		err = pthread_create(&tids[n++], NULL, thread_start, (void *)(uintptr_t)i);
		if (err) {
			fprintf(stderr, "blocker: cannot start a thread: %s\n", strerror(err));
			return 1;
		}
	}
	pthread_barrier_wait(&ready);
	if (pidfile) {
		snprintf(text, sizeof(text), "%d\n", (int)getpid());
		if (write_whole(pidfile, text)) {
			fprintf(stderr, "blocker: cannot write %s: %s\n", pidfile, strerror(errno));
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
			status = 1;
		}
	}
	if (wait_start && !stopping() && wait_signal(&set, 0) != SIGUSR1)
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&go);
	if (!stopping()) {
		sigdelset(&set, SIGUSR1);	/* a late one is no stop */
		wait_signal(&set, (uint64_t)(seconds * 1e9));
		sigaddset(&set, SIGUSR1);
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	}
	pthread_barrier_wait(&finished);	/* every loop is over */

	for (i = 0; i < NTRUTH; i++)
		if (in_mode(mode, truths[i].mode))
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %.6f\n",
						truths[i].name, truth[i] / 1e9);
	if (!truthfile)
		fputs(text, stdout);
	else if (write_whole(truthfile, text)) {
		fprintf(stderr, "blocker: cannot write %s: %s\n", truthfile, strerror(errno));
		status = 1;
	}
	if (linger)
		blocker_linger(&set);
	pthread_barrier_wait(&leave);
	for (i = 0; i < (size_t)n; i++)
		pthread_join(tids[i], NULL);
	return status;
}
