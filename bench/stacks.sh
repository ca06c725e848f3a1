#!/bin/sh
# Benchmark: a thread dump of a running process, 'sidescope stacks' against
# eu-stack (elfutils; Debian's elfutils package), the tool that walks every
# thread with ptrace. The target is tests/progs/thread_mix with N idle pool
# threads (default 100 and 1000) besides its seven; its ticking thread
# wakes every millisecond and records the longest gap between two wakes,
# which is the pause a dump causes the app (plus the tick's own jitter,
# shown as "idle"). The target has no thread in a vfork wait (-V): eu-stack
# waits for every thread to stop, and such a thread does not stop until its
# child execs or exits. For each tool and size, ROUNDS dumps (default 5): the
# wall time of a dump, the longest pause of the app during it, the peak RSS
# of the tool (GNU time, when installed), and the ratios.
#   sh bench/stacks.sh [ROUNDS] [THREADS...]     (root; run 'make' first)
set -eu
B=${SIDESCOPE_BUILD:-build}
S="$B/sidescope"
P="$B/tests/progs/thread_mix"
ROUNDS=${1:-5}
[ $# -gt 0 ] && shift
SIZES=${*:-100 1000}
[ -x "$S" ] && [ -x "$P" ] || { echo "stacks.sh: run 'make' first" >&2; exit 1; }
command -v eu-stack > /dev/null || { echo "stacks.sh: needs eu-stack (apt-get install elfutils)" >&2; exit 1; }
W=$(mktemp -d)
app=""
trap '[ -z "$app" ] || kill -9 "$app" 2>/dev/null; rm -rf "$W"' EXIT
TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f %M -o $W/rss"

# gap: the app's longest tick gap (us) since the last call
gap() {
	rm -f "$W/gap"
	kill -USR1 "$app"
	while [ ! -s "$W/gap" ]; do sleep 0.01; done
	cat "$W/gap"
}

# dump TOOL: one dump; prints "ms pause_us rss_kb frames"
dump() {
	gap > /dev/null
	_t0=$(date +%s%N)
	case $1 in
	sidescope) $TIME "$S" stacks -p "$app" --hands-off --table-cache none > "$W/out" 2> /dev/null || true ;;
	eu-stack) $TIME timeout 120 eu-stack -p "$app" > "$W/out" 2> /dev/null || true ;;
	idle) sleep 0.05; : > "$W/out" ;;
	esac
	_ms=$(( ($(date +%s%N) - _t0) / 1000000 ))
	_gap=$(gap)
	_rss=0
	[ "$1" != idle ] && [ -s "$W/rss" ] && _rss=$(tail -n 1 "$W/rss")
	rm -f "$W/rss"
	echo "$_ms $_gap $_rss $(grep -c . "$W/out")"
}

printf '%-8s %-10s %10s %12s %10s %8s\n' threads tool ms pause_us rss_kb lines
for n in $SIZES; do
	# -V: no thread in a vfork wait, which eu-stack waits for for ever
	"$P" -V -n "$n" -t "$W/gap" > "$W/ready" &
	app=$!
	while ! grep -q ready "$W/ready" 2> /dev/null; do sleep 0.05; done
	for tool in idle sidescope eu-stack; do
		v=$(echo "$tool" | tr - _)
		ms=0 pause=0 rss=0
		for r in $(seq "$ROUNDS"); do
			set -- $(dump "$tool")
			ms=$((ms + $1)); [ "$2" -gt "$pause" ] && pause=$2; [ "$3" -gt "$rss" ] && rss=$3
			lines=$4
		done
		printf '%-8s %-10s %10s %12s %10s %8s\n' "$n" "$tool" "$((ms / ROUNDS))" "$pause" "$rss" "$lines"
		eval "ms_$v=$((ms / ROUNDS)) pause_$v=$pause"
	done
	# shellcheck disable=SC2154
	echo "$n threads: time ratio sidescope/eu-stack $(awk -v a="$ms_sidescope" -v b="$ms_eu_stack" \
		'BEGIN { printf "%.2f", b ? a / b : 0 }'), longest app pause $pause_sidescope us against $pause_eu_stack us" \
		"(idle: $pause_idle us)"
	kill -9 "$app"
	wait "$app" 2> /dev/null || true
	app=""
done
