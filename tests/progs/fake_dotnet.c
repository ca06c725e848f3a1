// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// LDLIBS: -ldl
/* fake_dotnet: a process that looks like .NET to a profiler (it maps a
 * library named libcoreclr.so, given as its first argument) and listens on
 * a diagnostics socket of its own that answers the wrong way, while it
 * spins in fake_spin:
 *   fake_dotnet LIBCORECLR silent|garbage SECONDS READY
 * silent: accepts and never answers; garbage: answers 4 KiB of noise.
 * READY gets the PID once the socket listens. For the tests of
 * sidescope's .NET client: it must end in bounded time, say so in one line
 * and still write the capture. */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void fake_spin(void)
{
	unsigned long i;

	for (i = 0; i < 1000000; i++)
		sink += i * 3;
}

/* the start time in clock ticks, the socket's key as .NET names it */
static unsigned long long start_ticks(void)
{
	char buf[4096], *p;
	unsigned long long t = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	int i;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int garbage, lfd, fd = -1;
	double secs;
	time_t end;
	FILE *f;

	if (argc != 5 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "USAGE: fake_dotnet LIBCORECLR silent|garbage SECONDS READY\n");
		return 2;
	}
	garbage = !strcmp(argv[2], "garbage");
	secs = atof(argv[3]);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/dotnet-diagnostic-%d-%llu-socket",
		 (int)getpid(), start_ticks());
	unlink(sa.sun_path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8))
		return 1;
	f = fopen(argv[4], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return 1;
	end = time(NULL) + (time_t)secs;
	while (time(NULL) < end) {
		int c = accept(lfd, NULL, NULL);

		if (c >= 0) {
			if (garbage) {
				char noise[4096];

				memset(noise, 'Z', sizeof(noise));
				if (write(c, noise, sizeof(noise)) < 0)
					perror("write");
				close(c);
			} else {
				if (fd >= 0)
					close(fd);
				fd = c;	/* kept open, never answered */
			}
		}
		fake_spin();
	}
	unlink(sa.sun_path);
	return 0;
}
