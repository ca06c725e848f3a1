// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// HotRate: a plain Java program for bench/jitnames.sh: two hot methods in a
// loop for SECONDS, then the number of rounds it ran.
//   java HotRate SECONDS READY
public class HotRate {
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
			s ^= s << 13 ^ s >>> 7 ^ i;
		return s;
	}

	public static void main(String[] args) throws Exception {
		long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9), rounds = 0;

		java.nio.file.Files.writeString(java.nio.file.Path.of(args[1]),
			ProcessHandle.current().pid() + "\n");
		while (System.nanoTime() < end) {
			sink += hotAlpha(rounds) + hotBeta(rounds);
			rounds++;
		}
		System.out.println(rounds);
	}
}
