#!/bin/sh
# shellcheck disable=SC1091,SC2016,SC2086 # sourced helpers; code run at exit; jq's words split on purpose
# sidescope timeline --lttng next to an app that floods its LTTng reader
# (tests/progs/timeline_flood): 300,000 x_begin events, then 300,000 y_end
# that pair with none of them (an end that looked for its begin among all
# the open ones made this quadratic: minutes), or 300,000 x_begin that never
# end (each kept, with its arguments, until the end). Each capture ends in
# bounded time, exit 0, with a JSON file that counts what the reader's
# budgets left out, its peak memory bounded; SIGTERM while the trace is
# read ends the command within 2 s, the events read so far in its file, and
# so does SIGTERM while it waits for an app that never registers.
# lttng-sessiond is started by timeline itself in a mount namespace of this
# test's own, as in timeline/basic.t.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
require_root
require_cmd jq unshare lttng-sessiond timeout
[ -x /usr/bin/time ] || skip_all "needs GNU time (/usr/bin/time)"
APP=$SIDESCOPE_BUILD/tests/progs/timeline_flood
[ -x "$APP" ] || skip_all "no $APP (run make)"
private_workspace "$@"
T=$TMPDIR_TEST
mkdir -p /var/run/lttng
mount -t tmpfs -o mode=0755 tmpfs /var/run/lttng 2>/dev/null ||
	skip_all "cannot mount a private /var/run/lttng"
mount -t tmpfs -o mode=1777 tmpfs /dev/shm 2>/dev/null ||
	skip_all "cannot mount a private /dev/shm"
on_exit "umount -l /dev/shm; umount -l /var/run/lttng"
on_exit 'p=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) && kill "$p"'
SIDESCOPE_LTTNG_APPS=/var/run/lttng
export SIDESCOPE_LTTNG_APPS
# ASan reads about five times slower: a trace that size would pass the
# reader's 2-s budget there
N=300000
[ "${SANITIZE:-0}" = 1 ] && N=60000

# limit MIB: a memory bound, 512 MiB more in a SANITIZE=1 build (ASan's
# quarantine of 256 MiB, its shadow and redzones; and the reader's own
# limit is not set there)
limit() {
	if [ "${SANITIZE:-0}" = 1 ]; then echo $(($1 + 512)); else echo "$1"; fi
}
ms() { echo $(($(date +%s%N) / 1000000)); }

# flood NAME MODE: a timeline_flood of N events in MODE, started; sets PID
flood() {
	"$APP" -r "$T/$1.ready" -g "$T/$1.go" -n "$N" -m "$2" & _app=$!
	on_exit "kill $_app"
	wait_for_file "$T/$1.ready" 10
	ok $? "$1: timeline_flood -m $2 started"
	PID=$(cat "$T/$1.ready")
}

# go NAME: in the background, tell the app to fire once timeline samples
go() {
	(wait_for_grep "$T/$1.err" "sampling at" 30 && touch "$T/$1.go") &
}

# capture NAME EVENTS: timeline -d 2 --lttng of PID, timed, at most 30 s;
# sets RC, MS and RSS (MiB, peak of the command and its reader); the app
# fired EVENTS meanwhile
capture() {
	go "$1"
	_t0=$(ms)
	/usr/bin/time -f '%M' -o "$T/$1.rss" timeout -s KILL 30 \
		"$SIDESCOPE" timeline -v -p "$PID" -d 2 -F 9 --lttng -o "$T/$1.json" 2>"$T/$1.err"
	RC=$?
	MS=$(($(ms) - _t0))
	RSS=$(($(tail -n 1 "$T/$1.rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0) / 1024))
	[ "$RC" = 0 ] || diag "$1: exit $RC after ${MS} ms: $(grep -v '^libbpf' "$T/$1.err" | tail -5)"
	is "$(cat "$T/$1.ready.done" 2>/dev/null)" "$2" "$1: the app fired its $2 events"
}

# ---- N begins, then N ends of another name -----------------------------------
flood xy xy
capture xy $((2 * N))
ok "$([ "$RC" = 0 ] && [ "$MS" -lt 15000 ]; echo $?)" "xy: ends in time, exit 0 (${MS} ms, -d 2)"
J=$T/xy.json
jq -e . "$J" >/dev/null 2>&1
ok $? "xy: the file is JSON"
res=$(jq -r --argjson n "$N" '.otherData | [.lttng.events, .lttng.read_cut,
	.lost.lttng_begins_dropped, (.lttng.instants >= $n)] | join(" ")' "$J" 2>/dev/null)
set -- $res
ok "$([ "${1:-0}" -ge $((2 * N)) ]; echo $?)" "xy: every event read (${1:-none})"
is "${2:-}" "none" "xy: to the end of the trace"
is "${3:-}" $((N - 1024)) "xy: the begins past 1024 open on one thread and name dropped, counted"
is "${4:-}" "true" "xy: the y_end events are instants"
like "$(cat "$T/xy.err")" "LTTng begin events dropped, oldest first: more than 1024 open on one thread with one name" \
	"xy: said"
like "$(cat "$T/xy.err")" "LTTng events \([0-9]+ instants, [0-9]+ slices\), some left out" \
	"xy: and on the summary line"
ok "$([ "$RC" = 0 ] && [ "$RSS" -gt 0 ] && [ "$RSS" -lt "$(limit 150)" ]; echo $?)" \
	"xy: peak memory ${RSS} MiB < $(limit 150) MiB"

# ---- N begins that never end ---------------------------------------------------
flood open open
capture open "$N"
ok "$([ "$RC" = 0 ] && [ "$MS" -lt 15000 ]; echo $?)" "open: ends in time, exit 0 (${MS} ms)"
J=$T/open.json
res=$(jq -r '[.otherData.lost.lttng_begins_dropped,
	([.traceEvents[] | select(.args.unfinished)] | length)] | join(" ")' "$J" 2>/dev/null)
set -- $res
is "${1:-}" $((N - 1024)) "open: the begins past 1024 dropped, counted"
ok "$([ "${2:-0}" -ge 1024 ] && [ "${2:-0}" -le 8192 ]; echo $?)" \
	"open: the ones kept end unfinished (${2:-none})"
ok "$([ "$RC" = 0 ] && [ "$RSS" -gt 0 ] && [ "$RSS" -lt "$(limit 60)" ]; echo $?)" \
	"open: peak memory ${RSS} MiB < $(limit 60) MiB"

# ---- SIGTERM while the trace is read -------------------------------------------
flood term xy
go term
"$SIDESCOPE" timeline -v -p "$PID" -d 2 -F 9 --lttng -o "$T/term.json" 2>"$T/term.err" & tl=$!
on_exit "kill -9 $tl"
wait_for_grep "$T/term.err" "reading the LTTng trace" 30
ok $? "term: the trace is being read"
t0=$(ms)
kill -TERM "$tl"
# at most 5 s for the verdict: the rule is 2
i=0
while kill -0 "$tl" 2>/dev/null && [ "$i" -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
took=$(($(ms) - t0))
kill -9 "$tl" 2>/dev/null
wait "$tl"
rc=$?
ok "$([ "$took" -lt 2000 ]; echo $?)" "term: SIGTERM ended it within 2 s (${took} ms)"
is "$rc" 0 "term: exit 0"
jq -e . "$T/term.json" >/dev/null 2>&1
ok $? "term: the file is JSON"
is "$(jq -r '.otherData.lttng.read_cut' "$T/term.json" 2>/dev/null)" "signal" \
	"term: it says the read was cut by the signal"
like "$(cat "$T/term.err")" "the LTTng trace was read in part: a signal came" "term: said"

# ---- SIGTERM while waiting for an app that never registers -------------------
sleep 60 & idle=$!
on_exit "kill $idle"
"$SIDESCOPE" timeline -v -p "$idle" -d 2 --lttng --register-wait 20000 -o "$T/reg.json" \
	2>"$T/reg.err" & tl=$!
on_exit "kill -9 $tl"
wait_for_grep "$T/reg.err" "waiting for PID $idle to register" 30
ok $? "reg: timeline waits for the app to register"
t0=$(ms)
kill -TERM "$tl"
i=0
while kill -0 "$tl" 2>/dev/null && [ "$i" -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
took=$(($(ms) - t0))
kill -9 "$tl" 2>/dev/null
wait "$tl"
rc=$?
ok "$([ "$took" -lt 2000 ] && [ "$rc" = 0 ]; echo $?)" "reg: SIGTERM ended it within 2 s, exit 0 (${took} ms, $rc)"
is "$(jq -r '.otherData.source' "$T/reg.json" 2>&1)" "sidescope timeline" "reg: with its file"
like "$(cat "$T/reg.err")" "stopped before PID $idle registered with lttng-sessiond: no LTTng events" \
	"reg: said"

done_testing
