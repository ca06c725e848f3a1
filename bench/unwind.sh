#!/bin/sh
# bench/unwind.sh: how many native stacks reach main when the code has no
# frame pointers: sidescope profile --unwind tables (unwind tables walked
# in BPF) and --unwind fp, against perf record -g (frame pointers) and
# perf record --call-graph dwarf (the user stack copied at each sample and
# unwound afterwards), side by side on the same process, one after the
# other. Also the BPF program's run time per sample of both sidescope
# modes (kernel.bpf_stats_enabled, on for those runs only).
#
# Workloads: tests/progs/nofp_chain -m chain (main -> chain_a -> chain_b ->
# chain_c -> spin_leaf, built -fomit-frame-pointer), -m qsort (main ->
# sort_round -> libc's qsort -> cmp_slow), and Debian's redis-server under
# redis-benchmark when both are installed (apt install redis-server
# redis-tools). For each profiler: the samples of the target, the share
# whose stack holds main (for redis: main or aeMain, its event loop), the
# profiler's CPU seconds (user+sys of record, script and folding) and, for
# sidescope, the BPF run time per sample.
#
# Each profiler runs REPS times on each workload, interleaved (a round is
# every profiler once): the table gives the median CPU and BPF time of the
# runs (a VM's single runs scatter by a factor of two), the samples and
# the share of the last.
#
# USAGE: sh bench/unwind.sh [SECONDS [HZ [REPS]]]   (default 10 99 3;
#                                                  root, linux-perf, jq)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench)
set -eu
build=${SIDESCOPE_BUILD:-build}
out=${BENCH_OUT:-$build/bench}
secs=${1:-10}
hz=${2:-99}
reps=${3:-3}
mkdir -p "$out"
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

for f in "$build/sidescope" "$build/tests/progs/nofp_chain"; do
	[ -x "$f" ] || { echo "unwind.sh: $f missing; run make first" >&2; exit 1; }
done
command -v perf > /dev/null || { echo "unwind.sh: perf missing (apt install linux-perf)" >&2; exit 1; }

cpu_of() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }

# share FOLDED COMM PATTERN: "samples share%" of COMM's lines (the first
# field) whose frames match the awk regex PATTERN (a whole frame)
share() {
	awk -v c="$2" -v p="$3" '
	{ n = split($0, f, ";"); if (f[1] != c) next
	  cnt = $NF; all += cnt
	  for (i = 2; i <= n; i++) { x = f[i]; if (i == n) sub(/ [0-9]+$/, "", x)
		if (x ~ ("^(" p ")$")) { hit += cnt; break } } }
	END { printf "%d %.1f", all, all ? 100 * hit / all : 0 }' "$1"
}

# profile_with NAME PID -> $res "samples share cpu"; COMM and PAT set by the caller
profile_with() {
	bpfns=-
	case $1 in
	sidescope-tables|sidescope-fp)
		sysctl -q kernel.bpf_stats_enabled=1
		$T -f '%U %S' -o "$out/uw.cpu" "$build/sidescope" profile -p "$2" -F "$hz" \
			-d "$secs" --user-only --unwind "${1#sidescope-}" -o "$out/uw-$1.folded" \
			2>/dev/null & sj=$!
		# the program's statistics just before it is unloaded
		sleep "$secs"
		bpfns=$(bpftool -j prog show name do_sample 2>/dev/null |
			jq -r 'if .run_cnt > 0 then (.run_time_ns / .run_cnt | floor) else "-" end' \
			2>/dev/null || echo -)
		wait "$sj"
		sysctl -q kernel.bpf_stats_enabled=0
		cpu=$(cpu_of "$out/uw.cpu") ;;
	perf-fp|perf-dwarf)
		if [ "$1" = perf-fp ]; then cg=-g; else cg="--call-graph dwarf"; fi
		# shellcheck disable=SC2086 # $cg is two words for dwarf
		$T -f '%U %S' -o "$out/uw.cpu" perf record -q -F "$hz" $cg -p "$2" \
			-o "$out/uw.data" -- sleep "$secs" > /dev/null 2>&1 || true
		$T -f '%U %S' -o "$out/uw2.cpu" perf script -i "$out/uw.data" -F comm,ip,sym,dso \
			> "$out/uw.script" 2>/dev/null
		$T -f '%U %S' -o "$out/uw3.cpu" awk "$fold_awk" "$out/uw.script" > "$out/uw-$1.folded"
		cpu=$(cat "$out/uw.cpu" "$out/uw2.cpu" "$out/uw3.cpu" |
			awk '{ s += $1 + $2 } END { printf "%.3f", s }') ;;
	esac
	res="$(share "$out/uw-$1.folded" "$COMM" "$PAT") $cpu $bpfns"
}

echo "unwinding without frame pointers: $secs s at $hz Hz; $(nproc) CPUs;" \
	"kernel $(uname -r); $(perf --version)"
echo "($reps rounds: the medians of the CPU and BPF times)"
# note WORKLOAD PROFILER: this round's $res ("samples share cpu bpfns"),
# a line of $out/uw.rows
note() {
	# shellcheck disable=SC2086 # four words
	printf '%s|%s|%s|%s|%s|%s\n' "$1" "$2" $res >> "$out/uw.rows"
}
: > "$out/uw.rows"
for mode in chain qsort; do
	COMM=nofp_chain PAT=main
	for _ in $(seq "$reps"); do
		for p in sidescope-tables sidescope-fp perf-fp perf-dwarf; do
			rm -f "$out/uw.pid"
			"$build/tests/progs/nofp_chain" -m "$mode" -d $((secs + 2)) \
				-r "$out/uw.pid" > /dev/null & job=$!
			while [ ! -s "$out/uw.pid" ]; do sleep 0.01; done
			profile_with "$p" "$(cat "$out/uw.pid")"
			wait "$job"
			note "nofp_chain -m $mode" "$p"
		done
	done
done

if command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null; then
	COMM=redis-server PAT='main|aeMain'
	port=6390
	redis-server --port "$port" --save '' --appendonly no --daemonize no \
		> "$out/redis.log" 2>&1 & rs=$!
	sleep 1
	for _ in $(seq "$reps"); do
		for p in sidescope-tables sidescope-fp perf-fp perf-dwarf; do
			redis-benchmark -p "$port" -q -n 100000000 -c 20 -t set,get,incr,lpush \
				> /dev/null 2>&1 & rb=$!
			sleep 1
			profile_with "$p" "$rs"
			kill "$rb" 2> /dev/null; wait "$rb" 2> /dev/null || true
			note "redis-server under redis-benchmark" "$p"
		done
	done
	kill "$rs"; wait "$rs" 2> /dev/null || true
else
	echo "(redis-server and redis-benchmark not installed: apt install redis-server redis-tools)"
fi

# a row per workload and profiler, in the order run: the median CPU and
# BPF time of its rounds, the samples and share of its last
echo
echo "| workload | profiler | samples | reaching main % | profiler CPU s | BPF ns a sample |"
echo "|---|---|---|---|---|---|"
awk -F'|' '
function median(list,   a, n, i, j, t) {
	n = split(substr(list, 2), a, " ")
	for (i = 2; i <= n; i++)	# insertion sort: a few rounds
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return a[int((n + 1) / 2)]
}
{ k = $1 "|" $2; if (!(k in cpu)) order[++n] = k
  cpu[k] = cpu[k] " " $5; bpf[k] = bpf[k] " " $6; last[k] = $3 " | " $4 }
END { for (i = 1; i <= n; i++) { k = order[i]; split(k, w, "|")
	b = bpf[k] ~ /-/ ? "-" : median(bpf[k])
	printf "| %s | %s | %s | %s | %s |\n", w[1], w[2], last[k], median(cpu[k]), b } }' "$out/uw.rows"
