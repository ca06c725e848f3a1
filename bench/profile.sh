#!/bin/sh
# bench/profile.sh: sidescope profile against perf record -g + perf script +
# folding, side by side in one run, on the bundled workload (2 threads): at
# 99 Hz and 999 Hz, over captures of each length given (default 10 s and
# 60 s). For each: CPU seconds (user+sys) of each whole pipeline and their
# ratio, the workload's loss under each, bytes written, peak RSS, samples.
# Then the load time of a 1,000,000-line perf map.
#
# USAGE: sh bench/profile.sh [SECONDS...]   (default: 10 60; root, linux-perf; about 6 minutes)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench)
#
# Loss: the workload's iterations per CPU second of its own (user+sys)
# against unprofiled runs just before and after (their mean), so other load
# on the machine cancels out; the wall-clock rate's loss is shown too (it
# also counts the profiler competing for the workload's CPUs).
set -eu
build=${SIDESCOPE_BUILD:-build}
out=${BENCH_OUT:-$build/bench}
[ "$#" -gt 0 ] || set -- 10 60
mkdir -p "$out"

# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

rate() { awk '{ print $6 }' "$out/wl.rate"; }
loss() { echo "$1 $2" | awk '{ printf "%.2f", 100 * ($1 - $2) / $1 }'; }
mean() { echo "$1 $2" | awk '{ printf "%.1f", ($1 + $2) / 2 }'; }
ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.3f", $1 / $2; else print "-" }'; }
sum() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
# the timer's -v fields
tv() { # FILE FIELD
	awk -F': ' -v k="$2" '$1 ~ k { print $2 }' "$1" | head -1
}
cpu_s() { # FILE -> user+sys seconds
	echo "$(tv "$1" "User time") $(tv "$1" "System time")" | awk '{ printf "%.3f", $1 + $2 }'
}
mb() { echo "$1" | awk '{ printf "%.1f", $1 / 1024 }'; }

baseline() { # SECONDS -> $b_rate $b_cpurate
	start_workload "$1"
	wait "$wl"
	b_rate=$(rate)
	b_cpurate=$(cpurate)
}

# sidescope_run SECONDS HZ -> ss_*
sidescope_run() {
	start_workload "$1"
	$T -v -o "$out/ss.time" "$build/sidescope" profile -p "$target" -F "$2" -d "$1" \
		-o "$out/ss-$1-$2.folded" 2>/dev/null
	wait "$wl"
	ss_rate=$(rate)
	ss_cpurate=$(cpurate)
	ss_cpu=$(cpu_s "$out/ss.time")
	ss_bytes=$(wc -c < "$out/ss-$1-$2.folded")
	ss_rss=$(mb "$(tv "$out/ss.time" "Maximum resident")")
	ss_samples=$(sum "$out/ss-$1-$2.folded")
}

# perf_run SECONDS HZ -> pf_*
perf_run() {
	start_workload "$1"
	$T -v -o "$out/pr.time" perf record -q -F "$2" -g -p "$target" -o "$out/perf.data" \
		-- sleep "$1" 2>/dev/null || true
	wait "$wl"
	pf_rate=$(rate)
	pf_cpurate=$(cpurate)
	$T -v -o "$out/ps.time" perf script -i "$out/perf.data" -F comm,ip,sym,dso \
		> "$out/perf.script" 2>/dev/null
	$T -v -o "$out/fold.time" awk "$fold_awk" "$out/perf.script" > "$out/perf-$1-$2.folded"
	pf_record=$(cpu_s "$out/pr.time")
	pf_script=$(cpu_s "$out/ps.time")
	pf_fold=$(cpu_s "$out/fold.time")
	pf_cpu=$(echo "$pf_record $pf_script $pf_fold" | awk '{ printf "%.3f", $1 + $2 + $3 }')
	pf_bytes=$(( $(wc -c < "$out/perf.data") + $(wc -c < "$out/perf.script") + \
		$(wc -c < "$out/perf-$1-$2.folded") ))
	pf_rss=$(mb "$(tv "$out/pr.time" "Maximum resident")")
	pf_samples=$(sum "$out/perf-$1-$2.folded")
}

# row SECONDS HZ then sidescope's and perf's: CPU RATE CPURATE BYTES RSS SAMPLES
row() {
	printf '| %s s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$1" "$2" "$3" "$9" "$(ratio "$3" "$9")" \
		"$(loss "$base_cpurate" "$5")" "$(loss "$base_cpurate" "${11}")" \
		"$(loss "$base_rate" "$4")" "$(loss "$base_rate" "${10}")" \
		"$6 / ${12}" "$7 / ${13}" "$8 / ${14}" "$(ratio "$8" "${14}")"
}

echo "sidescope profile -p PID vs perf record -g -p PID + perf script + fold;"
echo "workload: 2 threads; $(nproc) CPUs; kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$out/table.md"
for secs in "$@"; do
	echo
	echo "== ${secs} s captures"
	baseline "$secs"
	b1_rate=$b_rate b1_cpurate=$b_cpurate
	for hz in 99 999; do
		sidescope_run "$secs" "$hz"
		echo "$ss_cpu $ss_rate $ss_cpurate $ss_bytes $ss_rss $ss_samples" > "$out/ss-$hz.row"
		perf_run "$secs" "$hz"
		echo "$pf_cpu $pf_rate $pf_cpurate $pf_bytes $pf_rss $pf_samples" > "$out/pf-$hz.row"
		echo "  $hz Hz: sidescope ${ss_cpu} s CPU; perf ${pf_cpu} s (record $pf_record," \
			"script $pf_script, fold $pf_fold)"
	done
	baseline "$secs"
	base_rate=$(mean "$b1_rate" "$b_rate")
	base_cpurate=$(mean "$b1_cpurate" "$b_cpurate")
	echo "  unprofiled: $b1_cpurate and $b_cpurate iterations/CPU-s (mean $base_cpurate)"
	for hz in 99 999; do
		# shellcheck disable=SC2046 # six numbers each
		row "$secs" "$hz" $(cat "$out/ss-$hz.row") $(cat "$out/pf-$hz.row") >> "$out/table.md"
	done
done
echo
echo "| capture | Hz | sidescope CPU s | perf CPU s | CPU sidescope/perf |" \
	"loss/CPU % sidescope | loss/CPU % perf | wall loss % sidescope | wall loss % perf |" \
	"bytes written sidescope / perf | peak RSS MB sidescope / perf |" \
	"samples sidescope / perf | samples ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
cat "$out/table.md"

# a perf map of 1,000,000 lines
cc -O2 -D_GNU_SOURCE -Itools/lib -o "$out/perfmap_load" bench/perfmap_load.c \
	"$build/libsidescope.a"
awk 'BEGIN { for (i = 0; i < 1000000; i++)
	printf "%x %x Namespace.Type%d::Method%d(System.String, int)\n", 140000000000 + i * 64, 48, i % 977, i }' \
	> "$out/perf-1M.map"
echo
echo "1,000,000-line perf map ($(wc -c < "$out/perf-1M.map") bytes):"
"$out/perfmap_load" "$out/perf-1M.map"
