#!/bin/sh
# shellcheck disable=SC1091,SC2016,SC2046 # sourced helpers; code run at exit; jq's words split on purpose
# sidescope ctf summary and chrome over a trace an app flooded
# (tests/progs/timeline_flood, recorded here by lttng): 300,000 x_begin
# events, then 300,000 y_end that pair with none of them. The Chrome
# writer's pairing looked for each end's begin among every open one
# (minutes), and kept every begin: now each command ends in bounded time,
# exit 0, its peak memory bounded, the Chrome file JSON that counts the
# begins its budget dropped. SIGTERM and SIGINT during the read end the
# command within 2 s with what it read, and leave no reader behind; so does
# SIGTERM while babeltrace2 loops on a packet that says its size is 0 (the
# reader killed, the file ended by the parent).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
require_root
require_cmd jq unshare lttng lttng-sessiond timeout dd
[ -x /usr/bin/time ] || skip_all "needs GNU time (/usr/bin/time)"
APP=$SIDESCOPE_BUILD/tests/progs/timeline_flood
[ -x "$APP" ] || skip_all "no $APP (run make)"
private_workspace "$@"
T=$TMPDIR_TEST
mkdir -p /var/run/lttng "$T/home"
mount -t tmpfs -o mode=0755 tmpfs /var/run/lttng 2>/dev/null ||
	skip_all "cannot mount a private /var/run/lttng"
mount -t tmpfs -o mode=1777 tmpfs /dev/shm 2>/dev/null ||
	skip_all "cannot mount a private /dev/shm"
on_exit "umount -l /dev/shm; umount -l /var/run/lttng"
HOME=$T/home
LTTNG_HOME=$T/home
export HOME LTTNG_HOME
lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || skip_all "cannot start lttng-sessiond"
on_exit 'p=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) && kill "$p"'
# ASan reads about five times slower
N=300000
[ "${SANITIZE:-0}" = 1 ] && N=100000

# limit MIB: a memory bound, 512 MiB more in a SANITIZE=1 build (ASan's
# quarantine, shadow and redzones; and the reader's own limit is not set)
limit() {
	if [ "${SANITIZE:-0}" = 1 ]; then echo $(($1 + 512)); else echo "$1"; fi
}
ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- the trace: N x_begin, then N y_end ---------------------------------------
"$APP" -r "$T/app.ready" -g "$T/app.go" -n "$N" -m xy & app=$!
on_exit "kill $app"
wait_for_file "$T/app.ready" 10
ok $? "timeline_flood started"
i=0
while ! lttng list -u 2>/dev/null | grep -q "PID: $app" && [ "$i" -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
# sub-buffers large enough for the consumer to keep every event
{ lttng create flood -o "$T/trace" &&
	lttng enable-channel -u -s flood c --subbuf-size=1M --num-subbuf=8 &&
	lttng enable-event -u -s flood -c c -a &&
	lttng add-context -u -s flood -c c -t vpid -t vtid -t procname &&
	lttng start flood; } >"$T/lttng.out" 2>&1
ok $? "the app registered, tracing started"
touch "$T/app.go"
wait_for_file "$T/app.ready.done" 60
is "$(cat "$T/app.ready.done" 2>/dev/null)" $((2 * N)) "the app fired its events"
{ lttng stop flood && lttng destroy flood; } >>"$T/lttng.out" 2>&1
ok $? "tracing stopped" || diag "$(cat "$T/lttng.out")"
TR=$T/trace

# run NAME ACTION...: sidescope ctf ACTION on the trace, timed, at most 30 s,
# its output in $T/NAME.out; sets RC, MS and RSS (MiB, peak of the command
# and its reader)
run() {
	_n=$1
	shift
	_t0=$(ms)
	/usr/bin/time -f '%M' -o "$T/$_n.rss" timeout -s KILL 30 \
		"$SIDESCOPE" ctf "$@" >"$T/$_n.out" 2>"$T/$_n.err"
	RC=$?
	MS=$(($(ms) - _t0))
	RSS=$(($(tail -n 1 "$T/$_n.rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0) / 1024))
	[ "$RC" = 0 ] || diag "$_n: exit $RC after ${MS} ms: $(tail -5 "$T/$_n.err")"
}

# ---- summary ----------------------------------------------------------------
run summary summary "$TR" --json
ok "$([ "$RC" = 0 ] && [ "$MS" -lt 10000 ]; echo $?)" "summary: ends in time, exit 0 (${MS} ms)"
set -- $(jq -r '[.events, (.by_name[] | select(.name == "timeline_flood:x_begin") | .count),
	(.by_name[] | select(.name == "timeline_flood:y_end") | .count)] | join(" ")' "$T/summary.out" 2>/dev/null)
NX=${2:-0}
NY=${3:-0}
ok "$([ "${1:-0}" -ge $((2 * N)) ] && [ "$NX" = "$N" ] && [ "$NY" = "$N" ]; echo $?)" \
	"summary: every event counted (${1:-none}: $NX x_begin, $NY y_end)"
ok "$([ "$RC" = 0 ] && [ "$RSS" -gt 0 ] && [ "$RSS" -lt "$(limit 60)" ]; echo $?)" \
	"summary: peak memory ${RSS} MiB < $(limit 60) MiB"

# ---- chrome -----------------------------------------------------------------
run chrome chrome "$TR" -o "$T/c.json"
ok "$([ "$RC" = 0 ] && [ "$MS" -lt 10000 ]; echo $?)" "chrome: ends in time, exit 0 (${MS} ms)"
jq -e . "$T/c.json" >/dev/null 2>&1
ok $? "chrome: the file is JSON"
set -- $(jq -r '[.otherData.lost.begins_dropped,
	([.traceEvents[] | select(.name == "timeline_flood:y_end" and .ph == "i")] | length),
	([.traceEvents[] | select(.args.unfinished)] | length),
	(.otherData.read_cut // "none")] | join(" ")' \
	"$T/c.json" 2>/dev/null)
is "${1:-}" $((NX - 1024)) "chrome: the begins past 1024 open on one thread and name dropped, counted"
is "${2:-}" "$NY" "chrome: every y_end an instant"
is "${3:-}" 1024 "chrome: the begins kept end unfinished"
is "${4:-}" "none" "chrome: read to the end"
like "$(cat "$T/chrome.err")" "[0-9]+ begin events dropped, oldest first: more than 1024 open on one thread" \
	"chrome: said"
ok "$([ "$RC" = 0 ] && [ "$RSS" -gt 0 ] && [ "$RSS" -lt "$(limit 60)" ]; echo $?)" \
	"chrome: peak memory ${RSS} MiB < $(limit 60) MiB"

# stop NAME SIGNAL ACTION...: sidescope ctf -v ACTION in the background,
# SIGNAL once it has found the trace; sets RC and TOOK (ms from the signal
# to its end, 5 s at most); its output in $T/NAME.out
stop() {
	_n=$1
	_sig=$2
	shift 2
	"$SIDESCOPE" ctf "$@" >"$T/$_n.out" 2>"$T/$_n.err" & _p=$!
	on_exit "kill -9 $_p"
	wait_for_grep "$T/$_n.err" "trace: " 10
	_t0=$(ms)
	kill "-$_sig" "$_p"
	_i=0
	while kill -0 "$_p" 2>/dev/null && [ "$_i" -lt 100 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	TOOK=$(($(ms) - _t0))
	kill -9 "$_p" 2>/dev/null
	wait "$_p"
	RC=$?
}

# left NAME: the processes still running with $T/NAME in their command line
left() {
	for _d in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$_d/cmdline"; } 2>/dev/null | grep -q "$T/$1" && echo "${_d#/proc/}"
	done
}

# ---- SIGTERM while chrome reads -----------------------------------------------
stop term TERM chrome -v "$TR" -o "$T/term.json"
ok "$([ "$TOOK" -lt 2000 ] && [ "$RC" = 0 ]; echo $?)" \
	"chrome, SIGTERM: ended within 2 s, exit 0 (${TOOK} ms, $RC)"
jq -e . "$T/term.json" >/dev/null 2>&1
ok $? "chrome, SIGTERM: the file is JSON"
is "$(jq -r '.otherData.read_cut' "$T/term.json" 2>/dev/null)" "signal" \
	"chrome, SIGTERM: it says the read was cut by the signal"
like "$(cat "$T/term.err")" "the trace was read in part: a signal came" "chrome, SIGTERM: said"
p=$(left term.json)
is "$p" "" "chrome, SIGTERM: no reader left behind"
[ -z "$p" ] || kill -9 "$p"

# ---- SIGINT while summary reads --------------------------------------------------
stop int INT summary -v "$TR" --json --by n
ok "$([ "$TOOK" -lt 2000 ] && [ "$RC" = 0 ]; echo $?)" \
	"summary, SIGINT: ended within 2 s, exit 0 (${TOOK} ms, $RC)"
is "$(jq -r '.read_cut' "$T/int.out" 2>/dev/null)" "signal" \
	"summary, SIGINT: its JSON says the read was cut by the signal"

# ---- SIGTERM while babeltrace2 loops ----------------------------------------
# a packet that says its size is 0, the index that would spare the search
# gone: babeltrace2 2.0 indexes it over and over
cp -r "$SIDESCOPE_SRC/tests/data/ctf/small" "$T/loop"
f=$(find "$T/loop" -type f -name 'ch_0')
dd if=/dev/zero of="$f" bs=1 seek=48 count=16 conv=notrunc 2>/dev/null
find "$T/loop" -name '*.idx' -exec rm {} +
stop loop TERM chrome -v "$T/loop" -o "$T/loop.json"
ok "$([ "$TOOK" -lt 2000 ] && [ "$RC" = 0 ]; echo $?)" \
	"a reader that loops, SIGTERM: chrome ended within 2 s, exit 0 (${TOOK} ms, $RC)"
is "$(jq -r '.otherData.read_cut' "$T/loop.json" 2>/dev/null)" "killed" \
	"a reader that loops, SIGTERM: the reader killed, the file ended and said so"
like "$(cat "$T/loop.err")" "did not stop within [0-9]+ ms of the signal: killed" \
	"a reader that loops, SIGTERM: said"
p=$(left loop)
is "$p" "" "a reader that loops, SIGTERM: no reader left behind"
[ -z "$p" ] || kill -9 "$p"
stop loopsum TERM summary -v "$T/loop"
ok "$([ "$TOOK" -lt 2000 ] && [ "$RC" = 0 ]; echo $?)" \
	"a reader that loops, SIGTERM: summary ended within 2 s, exit 0 (${TOOK} ms, $RC)"
like "$(cat "$T/loopsum.out")" "read cut short: its reader did not stop in time" \
	"a reader that loops, SIGTERM: the summary says what it has"

done_testing
