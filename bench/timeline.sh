#!/bin/sh
# bench/timeline.sh: what sidescope timeline costs its target, against
# sidescope profile alone, and how fast its file grows. Interleaved rounds
# (the machine's drift cancels out) of tests/progs/timeline_app - tick(N)
# every 10 ms, 2 ms of spinning, then an LTTng event - for SECONDS each:
# unprofiled, under 'sidescope profile -F 99', and under 'sidescope
# timeline -F 99' with a uprobe on tick and --lttng. Loss is the drop of
# the app's spin iterations per CPU second of its own against the
# unprofiled runs (mean, and the standard deviation of the single runs);
# bytes/s is the size of the timeline file over SECONDS.
#
# The runs are in a mount namespace of their own (a private /var/run/lttng
# and /dev/shm): the lttng-sessiond that timeline starts there is the
# bench's alone, and is stopped at the end.
#
# USAGE: sh bench/timeline.sh [ROUNDS [SECONDS]]   (default 5 10; root)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench)
set -eu
if [ -z "${BENCH_TIMELINE_PRIVATE:-}" ]; then
	BENCH_TIMELINE_PRIVATE=1 exec unshare --mount --propagation private -- sh "$0" "$@"
fi
build=${SIDESCOPE_BUILD:-build}
out=${BENCH_OUT:-$build/bench}
rounds=${1:-5}
secs=${2:-10}
app=$(readlink -f -- "$build/tests/progs/timeline_app" 2>/dev/null || :)
mkdir -p "$out"
for f in "$build/sidescope" "${app:-$build/tests/progs/timeline_app}"; do
	[ -x "$f" ] || { echo "timeline.sh: no $f (make first)" >&2; exit 1; }
done
mount -t tmpfs -o mode=0755 tmpfs /var/run/lttng
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mkdir -p "$out/tmp"
chmod 0700 "$out/tmp"
TMPDIR=$out/tmp
SIDESCOPE_LTTNG_APPS=/var/run/lttng
export TMPDIR SIDESCOPE_LTTNG_APPS
stop_daemon() {
	if p=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null); then
		kill "$p" 2>/dev/null || :
	fi
}
trap stop_daemon EXIT
trap 'exit 130' INT TERM
# the daemon first: each app registers as it starts, and timeline's runs
# do not wait for it
lttng-sessiond --daemonize --no-kernel

# one_run LABEL: the app under LABEL's tracer; prints "LABEL RATE BYTES"
one_run() {
	rm -f "$out/tl.ready" "$out/tl.json"
	"$app" -r "$out/tl.ready" -d "$secs" > "$out/tl.rate" &
	a=$!
	while [ ! -s "$out/tl.ready" ]; do sleep 0.01; done
	pid=$(cat "$out/tl.ready")
	case $1 in
	unprofiled) ;;
	profile) "$build/sidescope" profile -p "$pid" -F 99 -d "$secs" -o "$out/tl.folded" \
			2>"$out/tl.err" || { cat "$out/tl.err" >&2; exit 1; } ;;
	timeline) "$build/sidescope" timeline -p "$pid" -F 99 -d "$secs" \
			-e "p:$app:tick \"%d\", arg1" --lttng -o "$out/tl.json" \
			2>"$out/tl.err" || { cat "$out/tl.err" >&2; exit 1; } ;;
	esac
	wait "$a"
	bytes=0
	[ ! -f "$out/tl.json" ] || bytes=$(wc -c < "$out/tl.json")
	echo "$1 $(cat "$out/tl.rate") $bytes"
}

echo "timeline cost: $rounds rounds of $secs s; $(nproc) CPUs; kernel $(uname -r);" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$out/tl.runs"
i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	for p in unprofiled profile timeline; do
		one_run "$p" >> "$out/tl.runs"
	done
	echo "  round $i: $(tail -n 3 "$out/tl.runs" | tr '\n' ' ')"
done
echo
echo "| tracer | spin iterations per CPU s (mean) | loss % (mean) | loss % (std dev of runs) | file bytes/s |"
echo "|---|---|---|---|---|"
awk -v secs="$secs" '
{ v[$1, ++n[$1]] = $2; s[$1] += $2; b[$1] += $3 }
END {
	base = s["unprofiled"] / n["unprofiled"]
	split("unprofiled profile timeline", order, " ")
	name["unprofiled"] = "none"; name["profile"] = "sidescope profile -F 99"
	name["timeline"] = "sidescope timeline -F 99, 1 uprobe (100 hits/s), --lttng (100 events/s)"
	for (k = 1; k <= 3; k++) {
		p = order[k]; m = s[p] / n[p]; ss = 0
		for (j = 1; j <= n[p]; j++) {
			l = 100 * (base - v[p, j]) / base; ml = 100 * (base - m) / base
			ss += (l - ml) ^ 2
		}
		printf "| %s | %.0f | %.2f | %.2f | %s |\n", name[p], m, 100 * (base - m) / base,
			sqrt(ss / (n[p] > 1 ? n[p] - 1 : 1)),
			p == "timeline" ? sprintf("%.0f", b[p] / n[p] / secs) : "-"
	}
}' "$out/tl.runs"
