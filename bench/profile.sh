#!/bin/sh
# bench/profile.sh: sidescope profile against perf record -g + perf script +
# folding, on the bundled workload, at 99 Hz and 999 Hz. Reports the
# workload's throughput loss, the pipeline's CPU time (user+sys), bytes
# written and peak RSS; then the load time of a 1,000,000-line perf map.
#
# USAGE: sh bench/profile.sh [SECONDS]     (default 10; needs root)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench)
set -eu
build=${SIDESCOPE_BUILD:-build}
secs=${1:-10}
out=${BENCH_OUT:-$build/bench}
mkdir -p "$out"
T=/usr/bin/time

# Fold perf script output into "comm;outer;...;leaf count": a sample is a
# header line (comm first) then one frame a line, innermost first, then a
# blank line. Kernel frames get _[k] as in sidescope's output.
# shellcheck disable=SC2016 # awk program, not shell
fold_awk='
function flush() {
	if (comm != "") {
		s = comm
		for (i = n; i >= 1; i--) s = s ";" f[i]
		count[s]++
	}
	comm = ""; n = 0
}
/^[^ \t]/ { flush(); comm = $1; next }
/^[ \t]*$/ { flush(); next }
{
	sym = $2
	for (i = 3; i < NF; i++) sym = sym " " $i
	sub(/\+0x[0-9a-f]+$/, "", sym)
	if ($NF ~ /kernel\.kallsyms/) sym = sym "_[k]"
	f[++n] = sym
}
END { flush(); for (s in count) print s, count[s] }'

# start_workload SECONDS: $wl is the waitable job, $target the workload's PID
start_workload() {
	rm -f "$out/wl.pid"
	$T -f '%U %S' -o "$out/wl.cpu" "$build/workload" -t 2 -d "$1" -r "$out/wl.pid" \
		> "$out/wl.rate" &
	wl=$!
	while [ ! -s "$out/wl.pid" ]; do sleep 0.01; done
	target=$(cat "$out/wl.pid")
}
rate() { awk '{ print $6 }' "$out/wl.rate"; }
# iterations per CPU second of the workload: robust against other load on
# the machine, which changes the wall-clock rate but not this one
cpurate() {
	echo "$(awk '{ print $2 }' "$out/wl.rate") $(cat "$out/wl.cpu")" |
		awk '{ printf "%.1f", $1 / ($2 + $3) }'
}
loss() { echo "$1 $2" | awk '{ printf "%.2f", 100 * ($1 - $2) / $1 }'; }
# GNU time -v fields
tv() { # FILE FIELD
	awk -F': ' -v k="$2" '$1 ~ k { print $2 }' "$1" | head -1
}
cpu_s() { # FILE -> user+sys seconds
	echo "$(tv "$1" "User time") $(tv "$1" "System time")" | awk '{ printf "%.2f", $1 + $2 }'
}

start_workload "$secs"
wait "$wl"
base=$(rate)
basecpu=$(cpurate)
echo "baseline: $base iterations/s, $basecpu iterations/CPU-s (2 threads, ${secs}s)"
echo "loss %: wall-clock rate; loss/CPU %: iterations per CPU second of the target"
printf '\n%-24s %4s %7s %10s %6s %10s %7s\n' "pipeline" "Hz" "loss %" "loss/CPU %" \
	"CPU s" "bytes" "RSS MB"

for hz in 99 999; do
	# sidescope
	start_workload "$secs"
	$T -v -o "$out/ss.time" "$build/sidescope" profile -p "$target" -F "$hz" -d "$secs" \
		-o "$out/ss-$hz.folded" 2>/dev/null
	wait "$wl"
	ss_rate=$(rate)
	ss_cpurate=$(cpurate)
	ss_cpu=$(cpu_s "$out/ss.time")
	ss_bytes=$(wc -c < "$out/ss-$hz.folded")
	ss_rss=$(tv "$out/ss.time" "Maximum resident")
	printf '%-24s %4s %7s %10s %6s %10s %7s\n' "sidescope profile" "$hz" \
		"$(loss "$base" "$ss_rate")" "$(loss "$basecpu" "$ss_cpurate")" \
		"$ss_cpu" "$ss_bytes" "$(echo "$ss_rss" | awk '{ printf "%.1f", $1 / 1024 }')"

	# perf record -g + perf script + fold
	start_workload "$secs"
	$T -v -o "$out/pr.time" perf record -q -F "$hz" -g -p "$target" -o "$out/perf.data" \
		-- sleep "$secs" 2>/dev/null || true
	wait "$wl"
	pf_rate=$(rate)
	pf_cpurate=$(cpurate)
	$T -v -o "$out/ps.time" perf script -i "$out/perf.data" -F comm,ip,sym,dso \
		> "$out/perf.script" 2>/dev/null
	$T -v -o "$out/fold.time" awk "$fold_awk" "$out/perf.script" > "$out/perf-$hz.folded"
	pf_cpu=$(echo "$(cpu_s "$out/pr.time") $(cpu_s "$out/ps.time") $(cpu_s "$out/fold.time")" |
		awk '{ printf "%.2f", $1 + $2 + $3 }')
	pf_bytes=$(( $(wc -c < "$out/perf.data") + $(wc -c < "$out/perf.script") + \
		$(wc -c < "$out/perf-$hz.folded") ))
	pf_rss=$(tv "$out/pr.time" "Maximum resident")
	printf '%-24s %4s %7s %10s %6s %10s %7s\n' "perf record+script+fold" "$hz" \
		"$(loss "$base" "$pf_rate")" "$(loss "$basecpu" "$pf_cpurate")" \
		"$pf_cpu" "$pf_bytes" "$(echo "$pf_rss" | awk '{ printf "%.1f", $1 / 1024 }')"
	printf '%-24s %4s %7s %10s %6s\n' "  CPU sidescope/perf" "$hz" "" "" \
		"$(echo "$ss_cpu $pf_cpu" | awk '{ if ($2 > 0) printf "%.3f", $1 / $2; else print "-" }')"
	echo "  samples: sidescope $(awk '{ n += $NF } END { print n }' "$out/ss-$hz.folded")," \
		"perf $(awk '{ n += $NF } END { print n }' "$out/perf-$hz.folded")"
done

# a perf map of 1,000,000 lines
cc -O2 -D_GNU_SOURCE -Itools/lib -o "$out/perfmap_load" bench/perfmap_load.c \
	"$build/libsidescope.a"
awk 'BEGIN { for (i = 0; i < 1000000; i++)
	printf "%x %x Namespace.Type%d::Method%d(System.String, int)\n", 140000000000 + i * 64, 48, i % 977, i }' \
	> "$out/perf-1M.map"
echo
echo "1,000,000-line perf map ($(wc -c < "$out/perf-1M.map") bytes):"
"$out/perfmap_load" "$out/perf-1M.map"
