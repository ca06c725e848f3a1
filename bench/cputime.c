// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cputime: run a command and write the CPU it and its children used, to the
 * microsecond (GNU time rounds to 10 ms, which is the whole cost of a short
 * capture). The benchmarks' timer; the options are GNU time's that they use.
 *
 *   cputime -o FILE -f FORMAT CMD [ARG...]   FORMAT of %U (user seconds),
 *                                            %S (system), %M (peak RSS, KB),
 *                                            %e (elapsed seconds), %%
 *   cputime -o FILE -v CMD [ARG...]          "User time (seconds): ..." lines
 *
 * Exits with CMD's status (128 + N when a signal N ended it; 127 when it
 * could not be run). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void put_format(FILE *f, const char *fmt, const struct rusage *ru, double elapsed)
{
	for (; *fmt; fmt++) {
		if (*fmt != '%' || !fmt[1]) {
			fputc(*fmt, f);
			continue;
		}
		switch (*++fmt) {
		case 'U': fprintf(f, "%.6f", secs(ru->ru_utime)); break;
		case 'S': fprintf(f, "%.6f", secs(ru->ru_stime)); break;
		case 'M': fprintf(f, "%ld", ru->ru_maxrss); break;
		case 'e': fprintf(f, "%.6f", elapsed); break;
		case '%': fputc('%', f); break;
		default: fputc('%', f); fputc(*fmt, f); break;
		}
	}
	fputc('\n', f);
}

static void usage(void)
{
	fprintf(stderr, "USAGE: cputime -o FILE (-f FORMAT | -v) CMD [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *outpath = NULL, *fmt = NULL;
	struct timespec t0, t1;
	struct rusage ru;
	int c, verbose = 0, status;
	pid_t pid;
	FILE *f;

	while ((c = getopt(argc, argv, "+o:f:v")) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'f': fmt = optarg; break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (!outpath || optind >= argc || (!fmt && !verbose))
		usage();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("cputime: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "cputime: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("cputime: wait4");
			return 127;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f = fopen(outpath, "w");
	if (!f) {
		fprintf(stderr, "cputime: %s: %s\n", outpath, strerror(errno));
		return 127;
	}
	if (verbose)
		fprintf(f, "\tUser time (seconds): %.6f\n\tSystem time (seconds): %.6f\n"
			   "\tMaximum resident set size (kbytes): %ld\n"
			   "\tElapsed (wall clock) time (seconds): %.6f\n",
			secs(ru.ru_utime), secs(ru.ru_stime), ru.ru_maxrss,
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	else
		put_format(f, fmt, &ru,
			   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (fclose(f)) {
		fprintf(stderr, "cputime: %s: %s\n", outpath, strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
