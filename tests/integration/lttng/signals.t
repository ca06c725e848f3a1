#!/bin/sh
# SIGINT and SIGTERM at random moments of lttng-capture (starting the
# daemon, waiting for the app, setting the session up, recording, stopping,
# counting): it exits 0, 130 or 143 as documented; every trace directory
# left reads back with babeltrace2; no session and, with --stop-daemon, no
# daemon is left. SIDESCOPE_SEED=N replays a run; SIDESCOPE_ROUNDS=N sets
# the number of rounds (20).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
# a round that goes wrong says why on stderr, which prove shows
fail_diag() { diag "$@" >&2; }
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter busybox lttng lttng-sessiond babeltrace2 perl timeout awk
T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
[ -x "$APP" ] || skip_all "no $APP (run make)"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
on_exit lttngpod_stop_daemon

seed=${SIDESCOPE_SEED:-$(date +%s)}
rounds=${SIDESCOPE_ROUNDS:-20}
diag "seed $seed (SIDESCOPE_SEED=$seed replays this run)"
# one "DELAY SIGNAL" a line: 0 to 3 s, INT or TERM
plan=$(awk -v seed="$seed" -v n="$rounds" 'BEGIN { srand(seed)
	for (i = 0; i < n; i++) printf "%.2f %s\n", rand() * 3, rand() < 0.5 ? "INT" : "TERM" }')

lttngpod_app a -n 1000000
ok $? "the app started (pid $app in the pod)"
touch "$T/a.go"

i=0
bad=0
seen=""
printf '%s\n' "$plan" > "$T/plan"
while read -r delay sig; do
	i=$((i + 1))
	out="$T/r$i"
	# every other round starts and stops its own daemon; the others use
	# the daemon running, if any, and leave it running
	stopd=""
	if [ $((i % 2)) = 1 ]; then
		stopd=--stop-daemon
		lttngpod_stop_daemon
	fi
	lttngpod_capture "r$i" -p "$app" -O "$out" -d 1 $stopd
	sleep "$delay"
	lttngpod_signal "r$i" "$sig" 2>/dev/null
	wait "$cap_bg"
	rc=$?
	case "$rc:$sig" in
	0:*|130:INT|143:TERM) ;;
	*) bad=1; fail_diag "round $i ($delay s, SIG$sig): exit $rc" "$(cat "$T/r$i.err")" ;;
	esac
	# where the signal landed, by what the script printed
	if grep -q 'stopped by SIG' "$T/r$i.err"; then
		phase=recording
	elif [ "$rc" = 0 ]; then
		phase=after
	elif grep -q 'tracing .*into' "$T/r$i.err"; then
		phase=stopping
	else
		phase=setup
	fi
	seen="$seen $phase"
	if [ -e "$out" ]; then
		if ! babeltrace2 "$out" >/dev/null 2>"$T/r$i.bt"; then
			bad=1
			fail_diag "round $i ($delay s, SIG$sig, exit $rc): '$out' does not read back" "$(head -n 3 "$T/r$i.bt")"
		fi
		if [ "$rc" = 0 ] && ! grep -q "^events: [0-9]" "$T/r$i.out"; then
			bad=1
			fail_diag "round $i: exit 0 without an event count" "$(cat "$T/r$i.out")"
		fi
	elif [ "$rc" = 0 ] && ! grep -q 'no trace was written' "$T/r$i.err"; then
		bad=1
		fail_diag "round $i ($delay s, SIG$sig): exit 0 and no trace" "$(cat "$T/r$i.err")"
	fi
	s=$(lttngpod_sessions)
	if [ -n "$s" ]; then
		bad=1
		fail_diag "round $i ($delay s, SIG$sig, exit $rc): session left: $s"
	fi
	d=$(lttngpod_daemons | grep -c sessiond)
	if { [ -n "$stopd" ] && [ "$d" != 0 ]; } || [ "$d" -gt 1 ]; then
		bad=1
		fail_diag "round $i ($delay s, SIG$sig, exit $rc, $stopd): daemons left:" "$(lttngpod_daemons)"
	fi
done < "$T/plan"
diag "signal landed while:$(printf '%s\n' $seen | sort | uniq -c | awk '{ printf " %s %d", $2, $1 }')"
[ "$bad" = 0 ] || fail_diag "seed $seed (SIDESCOPE_SEED=$seed replays this run)"
is "$bad" 0 "$rounds random signals: documented exit, readable traces, nothing left behind"
ok "$(printf '%s\n' $seen | grep -q -e setup -e recording; echo $?)" "signals landed both before and while recording"

lttngpod_stop_daemon
is "$(lttngpod_daemons)" "" "no LTTng daemon at the end"
is "$(ls "$T/cwd" 2>/dev/null)" "" "nothing in the working directory"
done_testing
