#!/bin/sh
# bench/ctf.sh: sidescope ctf summary against babeltrace2 on one LTTng trace.
#
# USAGE: sh bench/ctf.sh [EVENTS] [TRACE_DIR]
#
# Records a trace of about EVENTS (default 2000000) events of the bundled
# lttng_app with a real lttng-sessiond (in a private mount namespace with
# its own /var/run/lttng and /dev/shm, blocking buffers so that nothing is
# discarded) unless TRACE_DIR already holds one, then times, best of 3:
#   floor:  babeltrace2 -o dummy TRACE        (decoding only)
#   ours:   sidescope ctf summary TRACE
#   text:   babeltrace2 TRACE | cut -d' ' -f4 | sort | uniq -c
# Needs root, lttng-tools, babeltrace2 and 'make' done. CTF_APP_FLAGS
# (default -f: flood, long payloads) goes to lttng_app.
#
# EXAMPLES:
#   sudo sh bench/ctf.sh                     # 2,000,000 events
#   sudo sh bench/ctf.sh 200000 /tmp/small   # quicker, trace kept
set -eu

events=${1:-2000000}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${SIDESCOPE_BUILD:-$src/build}
sidescope=$build/sidescope
app=$build/tests/progs/lttng_app
if [ ! -x "$sidescope" ] || [ ! -x "$app" ]; then
	echo "bench/ctf.sh: run 'make' first" >&2
	exit 1
fi
for c in lttng lttng-sessiond babeltrace2 unshare; do
	command -v "$c" >/dev/null 2>&1 || { echo "bench/ctf.sh: needs $c" >&2; exit 1; }
done
mkdir -p "$build/tmp"
trace=${2:-$build/tmp/bench-ctf-$events}

if ! find "$trace" -name metadata 2>/dev/null | grep -q .; then
	rm -rf "$trace"
	mkdir -p "$trace"
	rounds=$(( (events + 5) / 6 ))	# 2 threads x 3 events a round
	echo "recording $((rounds * 6)) events into $trace ..." >&2
	# shellcheck disable=SC2016
	unshare --mount --propagation private sh -eu -c '
		trace=$1 app=$2 rounds=$3 flags=$4
		mount -t tmpfs tmpfs /var/run/lttng
		mount -t tmpfs -o mode=1777 tmpfs /dev/shm
		lttng-sessiond --daemonize --no-kernel
		d=$(cat /var/run/lttng/lttng-sessiond.pid)
		trap "kill $d" EXIT
		LTTNG_UST_ALLOW_BLOCKING=1 "$app" -r "$trace.ready" -g "$trace.go" -n "$rounds" $flags &
		a=$!
		trap "kill $a; kill $d" EXIT
		while ! lttng list -u 2>/dev/null | grep -q "^PID: $a "; do sleep 0.1; done
		lttng create bench --output="$trace/session" >/dev/null
		lttng enable-channel -u ch --subbuf-size=4M --num-subbuf=4 --blocking-timeout=inf >/dev/null
		lttng enable-event -u -c ch "sidescope_app:*" >/dev/null
		lttng add-context -u -c ch -t vpid -t vtid -t procname >/dev/null
		lttng start >/dev/null
		touch "$trace.go"
		while [ ! -s "$trace.ready.done" ]; do sleep 0.2; done
		lttng stop >/dev/null
		lttng destroy >/dev/null
		rm -f "$trace.ready" "$trace.ready.done" "$trace.go"
	' sh "$trace" "$app" "$rounds" "${CTF_APP_FLAGS--f}"
fi

n=$("$sidescope" ctf summary "$trace" --json | sed -n 's/^[^}]*"discarded_packets_records":[0-9]*,"events":\([0-9]*\).*/\1/p')
d=$("$sidescope" ctf summary "$trace" --json | sed -n 's/.*"discarded_events":\([0-9]*\).*/\1/p')
echo "trace: $trace: $n events, $d discarded, $(du -sh "$trace" | cut -f1) on disk"

best() { # best of 3 wall-clock seconds of "$@"
	_b=""
	for _i in 1 2 3; do
		_s=$(date +%s.%N)
		"$@" >/dev/null
		_e=$(date +%s.%N)
		_b=$(echo "$_s $_e ${_b:-1e9}" | awk '{ t = $2 - $1; print (t < $3) ? t : $3 }')
	done
	echo "$_b"
}
text_pipeline() { babeltrace2 "$1" | cut -d' ' -f4 | sort | uniq -c; }

t_dummy=$(best babeltrace2 -o dummy "$trace")
t_ours=$(best "$sidescope" ctf summary "$trace")
t_text=$(best text_pipeline "$trace")
echo "$n $t_dummy $t_ours $t_text" | awk '{
	printf "%-44s %8.3f s %12.0f events/s\n", "babeltrace2 -o dummy (floor)", $2, $1 / $2
	printf "%-44s %8.3f s %12.0f events/s\n", "sidescope ctf summary", $3, $1 / $3
	printf "%-44s %8.3f s %12.0f events/s\n", "babeltrace2 | cut | sort | uniq -c", $4, $1 / $4
	printf "summary: %.0f%% of the floor rate, %.1fx faster than the text pipeline\n",
		100 * $2 / $3, $4 / $3
}'
