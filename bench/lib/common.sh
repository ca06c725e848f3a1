# bench/lib/common.sh: helpers the benchmarks share, sourced after they set
# $build and $out. Not a benchmark itself (bench/run runs bench/*.sh only).

# The timer, $T: bench/cputime (GNU time's -f and -v, to the microsecond;
# GNU time's 10 ms steps are the whole cost of a short capture)
mkdir -p "$out"
cc -O2 -Wall -o "$out/cputime" "$(dirname "$0")/cputime.c" ||
	{ echo "$0: cannot build bench/cputime.c (cc)" >&2; exit 1; }
T=$out/cputime

# Fold perf script output (-F comm,ip,sym,dso) into "comm;outer;...;leaf
# count": a sample is a header line (comm first) then one frame a line,
# innermost first, then a blank line. Kernel frames get _[k] as in
# sidescope's output.
# shellcheck disable=SC2016,SC2034 # awk program, not shell; used by the sourcer
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

# start_workload SECONDS [NAME]: the bundled workload (2 threads) under
# $T; $wl is the waitable job, $target its PID; its rate line goes to
# $out/NAME.rate and its CPU to $out/NAME.cpu (NAME: wl)
start_workload() {
	_n=${2:-wl}
	rm -f "$out/$_n.pid"
	$T -f '%U %S' -o "$out/$_n.cpu" "$build/workload" -t 2 -d "$1" -r "$out/$_n.pid" \
		> "$out/$_n.rate" &
	wl=$!
	while [ ! -s "$out/$_n.pid" ]; do sleep 0.01; done
	target=$(cat "$out/$_n.pid")
}

# cpurate [NAME]: the workload's iterations per CPU second of its own
cpurate() {
	_n=${1:-wl}
	echo "$(awk '{ print $2 }' "$out/$_n.rate") $(cat "$out/$_n.cpu")" |
		awk '{ printf "%.1f", $1 / ($2 + $3) }'
}
