#!/bin/sh
# Benchmark 'sidescope flame' on generated folded stacks: 10,000 and
# 1,000,000 lines of deep stacks (16 to 64 frames). Prints wall time, peak
# RSS and SVG size for each; docs/performance.md records the numbers.
# Usage: sh bench/flame.sh [BUILD_DIR]   (needs cc and GNU time or /proc)
set -eu
build=${1:-${SIDESCOPE_BUILD:-build}}
sidescope=$build/sidescope
dir=$build/bench/flame
mkdir -p "$dir"

# The generator walks a call tree the way sorted folded output does: each
# line keeps a prefix of the previous stack and pushes new frames, so the
# tree has a few new nodes per line, as real profiles of big services do.
cat > "$dir/gen.c" <<'GEN'
#include <stdio.h>
#include <stdlib.h>
static unsigned long long s = 88172645463325252ull;
static unsigned rnd(unsigned n) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s % n; }
int main(int argc, char **argv)
{
	long lines = atol(argv[1]), i;
	unsigned stack[64], depth = 0, keep, want, j;
	static const char *suffix[] = { "", "", "", "", "_[j]", "_[j]", "_[k]", "_[r]" };
	for (i = 0; i < lines; i++) {
		/* pop a few frames, push a few: depth wanders between 16 and 64 */
		keep = depth ? depth - 1 - rnd(depth < 4 ? depth : 4) : 0;
		want = keep + 1 + rnd(5);
		if (want < 16)
			want = 16 + rnd(8);
		if (want > 64)
			want = 48;
		for (depth = keep; depth < want; depth++)
			stack[depth] = depth * 131 + rnd(depth < 4 ? 2 : 40);
		for (j = 0; j < depth; j++)
			printf("%smod%u::fn%u%s", j ? ";" : "", stack[j] % 97,
			       stack[j], j < depth - 3 ? "" : suffix[stack[j] & 7]);
		printf(" %u\n", 1 + rnd(100));
	}
	return 0;
}
GEN
cc -O2 -o "$dir/gen" "$dir/gen.c"

# one run: "SECONDS PEAK_RSS_KB"
run_once() {
	/usr/bin/time -f '%e %M' -o "$dir/time.out" "$@"
	cat "$dir/time.out"
}

if [ ! -x /usr/bin/time ]; then
	echo "flame.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2
	exit 1
fi

# Three runs of each: the machine is shared, so the best and the worst are
# both reported; the sorted case is what profilers and stackcollapse write,
# the shuffled one is the worst case (no prefix shared between lines).
printf '%-18s %8s %7s %7s %8s %7s %9s\n' INPUT LINES MB BEST_S WORST_S RSS_MB SVG_KB
for n in 10000 1000000; do
	in=$dir/stacks-$n.folded
	[ -s "$in" ] || "$dir/gen" "$n" > "$in"
	shuffled=$dir/shuffled-$n.folded
	[ -s "$shuffled" ] || awk 'BEGIN { srand(1) } { printf "%.8f\t%s\n", rand(), $0 }' "$in" |
		sort -k1,1 | cut -f2- > "$shuffled"
	for kind in sorted shuffled; do
		f=$in
		[ "$kind" = shuffled ] && f=$shuffled
		out=$dir/flame-$kind-$n.svg
		cat "$f" > /dev/null	# page cache: time the tool, not the disk
		best=; worst=; rss=0
		for _ in 1 2 3; do
			read -r s kb <<-EOF
			$(run_once "$sidescope" flame "$f" -o "$out")
			EOF
			best=$(echo "${best:-$s} $s" | awk '{ print ($2 < $1) ? $2 : $1 }')
			worst=$(echo "${worst:-$s} $s" | awk '{ print ($2 > $1) ? $2 : $1 }')
			[ "$kb" -gt "$rss" ] && rss=$kb
		done
		printf '%-18s %8s %7s %7s %8s %7s %9s\n' "$kind" "$n" \
			"$(($(wc -c < "$f") / 1048576))" "$best" "$worst" "$((rss / 1024))" \
			"$(($(wc -c < "$out") / 1024))"
	done
	sed -n 's/^<!-- sidescope flame graph: \(.*\) -->$/  \1/p' "$out"
done
