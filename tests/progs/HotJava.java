// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// HotJava: a plain Java program for the attach tests, started with no flag.
// Two hot methods run from the start; a third is first called once the
// file LATE_GO exists, so that it is compiled after a first perf-map dump.
//
//   java HotJava READY [LATE_GO LATE_READY]
//
// READY gets the PID (as the process sees itself) once the hot loop has run
// long enough for both hot methods to be compiled; LATE_READY gets "1"
// after lateGamma has run as many times. The test compiles this file with
// javac (the Makefile builds tests/progs/*.c only).
import java.nio.file.Files;
import java.nio.file.Path;

public class HotJava {
	static volatile long sink;

	static long hotAlpha(long x) {
		long s = x;
		for (int i = 0; i < 2000; i++)
			s = s * 6364136223846793005L + 1442695040888963407L;
		return s;
	}

	static long hotBeta(long x) {
		long s = x;
		for (int i = 0; i < 2000; i++)
			s ^= (s << 13) ^ (s >>> 7) ^ (s << 17);
		return s;
	}

	static long lateGamma(long x) {
		long s = x | 1;
		for (int i = 0; i < 2000; i++)
			s = s * 31 + (s >>> 3);
		return s;
	}

	public static void main(String[] args) throws Exception {
		Path ready = Path.of(args[0]);
		Path lateGo = args.length > 2 ? Path.of(args[1]) : null;
		Path lateReady = args.length > 2 ? Path.of(args[2]) : null;
		boolean late = false;
		long lateCalls = 0;

		for (long i = 0; ; i++) {
			sink += hotAlpha(i) + hotBeta(i);
			if (i == 20000)
				Files.writeString(ready, ProcessHandle.current().pid() + "\n");
			if (lateGo != null && !late && (i & 1023) == 0 && Files.exists(lateGo))
				late = true;
			if (late) {
				sink += lateGamma(i);
				if (++lateCalls == 20000)
					Files.writeString(lateReady, "1\n");
			}
		}
	}
}
