#!/bin/sh
# bench/loss.sh: the target's loss under sidescope profile and under perf
# record -g, at one frequency, measured in interleaved rounds so that drift
# of the machine cancels out: each round runs the bundled workload (2
# threads) unprofiled, under sidescope, under sidescope --kernel-only (the
# cost of the sampling interrupt alone: no user stack is taken) and under
# perf, for SECONDS each. Loss is the drop of the workload's iterations per
# CPU second of its own against the unprofiled runs; the table gives the
# mean and the standard deviation of the single runs over the rounds.
#
# USAGE: sh bench/loss.sh [ROUNDS [SECONDS [HZ]]]   (default 8 8 999; root,
#                                                  linux-perf)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench)
set -eu
build=${SIDESCOPE_BUILD:-build}
out=${BENCH_OUT:-$build/bench}
rounds=${1:-8}
secs=${2:-8}
hz=${3:-999}
mkdir -p "$out"

# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

# one_run LABEL: the workload under LABEL's profiler; prints "LABEL RATE"
one_run() {
	start_workload "$secs" loss
	case $1 in
	unprofiled) ;;
	sidescope) "$build/sidescope" profile -p "$target" -F "$hz" -d "$secs" \
			-o "$out/loss.folded" 2>/dev/null ;;
	interrupt) "$build/sidescope" profile -p "$target" -F "$hz" -d "$secs" --kernel-only \
			-o "$out/loss.folded" 2>/dev/null ;;
	perf) perf record -q -F "$hz" -g -p "$target" -o "$out/loss.data" -- sleep "$secs" \
			>/dev/null 2>&1 || true ;;
	esac
	wait "$wl"
	echo "$1 $(cpurate loss)"
}

echo "target loss at $hz Hz: $rounds rounds of $secs s; $(nproc) CPUs;" \
	"kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$out/loss.runs"
i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	for p in unprofiled sidescope interrupt perf; do
		one_run "$p" >> "$out/loss.runs"
	done
	echo "  round $i: $(tail -n 4 "$out/loss.runs" | tr '\n' ' ')"
done
echo
echo "| profiler | iterations per CPU s (mean) | loss % (mean) | loss % (std dev of runs) |"
echo "|---|---|---|---|"
awk '
{ v[$1, ++n[$1]] = $2; s[$1] += $2 }
END {
	base = s["unprofiled"] / n["unprofiled"]
	split("unprofiled sidescope interrupt perf", order, " ")
	name["unprofiled"] = "none"; name["sidescope"] = "sidescope profile"
	name["interrupt"] = "sidescope --kernel-only (the interrupt alone)"
	name["perf"] = "perf record -g"
	for (k = 1; k <= 4; k++) {
		p = order[k]; m = s[p] / n[p]; ss = 0
		for (j = 1; j <= n[p]; j++) {
			l = 100 * (base - v[p, j]) / base; ml = 100 * (base - m) / base
			ss += (l - ml) ^ 2
		}
		printf "| %s | %.0f | %.2f | %.2f |\n", name[p], m, 100 * (base - m) / base,
			sqrt(ss / (n[p] > 1 ? n[p] - 1 : 1))
	}
}' "$out/loss.runs"
