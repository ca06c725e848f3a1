#!/bin/sh
# Faults around lttng-capture in a simulated pod with a real lttng-sessiond:
# the daemon killed (SIGKILL, SIGTERM) while recording; a disk too small,
# then one that fills up; a trace that reaches --max-size; output
# directories, session names and event patterns full of shell
# metacharacters.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter jq busybox lttng lttng-sessiond babeltrace2 perl timeout
T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
[ -x "$APP" ] || skip_all "no $APP (run make)"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
on_exit lttngpod_stop_daemon

# readable DIR: the events in DIR as sidescope reads them (fails if not)
readable() {
	pod_sidecar "$SIDESCOPE" ctf summary "$1" --json 2>/dev/null | jq -e '.events' 2>/dev/null
}

# One app for the whole file: about 20000 events/s for a few minutes.
lttngpod_app a -n 1000000
ok $? "the app started (pid $app in the pod)"
touch "$T/a.go"

# ---- 1. lttng-sessiond killed while recording ------------------------------
for sig in KILL TERM; do
	tag=$(echo "k$sig" | tr '[:upper:]' '[:lower:]')
	lttngpod_capture "$tag" -p "$app" -O "$T/$tag"
	wait_for_grep "$T/$tag.err" "tracing .*into|error" 30
	ok $? "SIG$sig: capture started"
	# what the switch timer flushed reads back before the daemon dies
	n=0
	for _i in $(seq 100); do
		n=$(readable "$T/$tag") && [ "${n:-0}" -gt 0 ] && break
		sleep 0.1
	done
	ok "$([ "$n" -gt 0 ] 2>/dev/null; echo $?)" "SIG$sig: the trace on disk reads back while recording ($n events)"
	dpid=$(pod_sidecar cat /var/run/lttng/lttng-sessiond.pid)
	pod_sidecar kill -"$sig" "$dpid"
	wait_for_grep "$T/$tag.err" "died|error" 15
	wait "$cap_bg"
	is "$?" 1 "SIG$sig to lttng-sessiond: the capture exits 1"
	err=$(sed '/starting lttng-sessiond/d; /tracing .*into/d; /warning: output directory/d' "$T/$tag.err")
	diag "$err"
	is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "SIG$sig: one line of error"
	like "$err" "^lttng-capture: error: lttng-sessiond \\(PID $dpid\\) died during the capture; kept [0-9]+ events written before it died in $T/$tag\$" \
		"SIG$sig: it says the daemon died and what was kept"
	kept=$(printf '%s\n' "$err" | sed -n 's/.*; kept \([0-9]*\) events.*/\1/p')
	ok "$([ "$kept" -ge "$n" ] 2>/dev/null; echo $?)" "SIG$sig: it kept at least what was on disk before ($kept >= $n)"
	is "$(readable "$T/$tag")" "$kept" "SIG$sig: sidescope ctf summary reads the $kept events"
	is "$(babeltrace2 "$T/$tag" 2>/dev/null | wc -l | tr -d ' ')" "$kept" "SIG$sig: babeltrace2 reads the same"
	is "$(lttngpod_daemons)" "" "SIG$sig: no LTTng daemon left (the consumer died with it)"
done

# a new capture starts a new daemon over what the killed one left in
# /var/run/lttng, and the app registers with it
lttngpod_capture again -p "$app" -O "$T/again" -d 1 --stop-daemon
wait "$cap_bg"
is "$?" 0 "after the crash, a new capture works"
like "$(cat "$T/again.out")" "^events: [1-9]" "and records events"
is "$(lttngpod_daemons)" "" "--stop-daemon: no daemon left"

# ---- 3. the disk of the trace: too small, then filling up ------------------
mkdir -p "$T/small" "$T/tiny"
pod_sidecar mount -t tmpfs -o size=512k tmpfs "$T/small" || skip_all "cannot mount a tmpfs"
lttngpod_capture small -p "$app" -O "$T/small/trace" -d 1 --buffer-size 64k
wait "$cap_bg"
is "$?" 1 "a disk too small for the ring buffers: exit 1"
like "$(cat "$T/small.err")" "error: not enough space for a trace in '$T/small/trace': [0-9]+ KiB free, [0-9]+ KiB needed" \
	"it says so before recording"
is "$(pod_sidecar ls -A "$T/small")" "" "nothing left on that disk"
is "$(lttngpod_sessions)" "" "no session left"

# 3 MiB: the app writes about 1 MiB/s; a stop needs 1 MiB + 128 KiB of ring
pod_sidecar mount -t tmpfs -o size=3m tmpfs "$T/tiny"
lttngpod_capture full -p "$app" -O "$T/tiny/trace" --buffer-size 64k
wait_for_grep "$T/full.err" "nearly full|error: " 60
ok $? "the capture stops by itself as the disk fills"
wait "$cap_bg"
is "$?" 1 "full disk: exit 1"
diag "$(cat "$T/full.err")"
like "$(cat "$T/full.err")" "error: the disk of $T/tiny/trace is nearly full \\([0-9]+ KiB free\\): the capture stopped early; the trace holds the events until then" \
	"full disk: a clear error"
is "$(lttngpod_sessions)" "" "full disk: no session left, and lttng-sessiond still answers"
ok "$(timeout 10 nsenter -t "$POD_PAUSE" --pid --mount -- lttng list >/dev/null 2>&1; echo $?)" \
	"full disk: the daemon is not wedged"
n=$(readable "$T/tiny/trace")
is "$n" "$(sed -n 's/^events: //p' "$T/full.out")" "full disk: the trace is complete: it reads back with the count printed ($n)"
is "$(pod_sidecar babeltrace2 "$T/tiny/trace" 2>/dev/null | wc -l | tr -d ' ')" "$n" "full disk: babeltrace2 reads the same"
free=$(pod_sidecar df -Pk "$T/tiny" | awk 'NR == 2 { print $4 }')
ok "$([ "$free" -gt 0 ]; echo $?)" "full disk: space left for the final flush ($free KiB)"

# --max-size: the capture stops while what a stop flushes still fits below
# it, and the trace is complete
lttngpod_capture max -p "$app" -O "$T/max" --buffer-size 64k --max-size 4M
wait_for_grep "$T/max.err" "max-size|error: " 60
ok $? "--max-size 4M: the capture stops by itself"
wait "$cap_bg"
is "$?" 0 "--max-size: exit 0"
diag "$(cat "$T/max.err")"
like "$(cat "$T/max.err")" "warning: the trace neared --max-size 4M \\([0-9]+ KiB on disk\\): the capture stopped early; the trace is complete up to then" \
	"--max-size: it says so"
kib=$(du -sk "$T/max" | cut -f1)
ok "$([ "$kib" -le 4096 ]; echo $?)" "--max-size: the trace stays below it ($kib KiB)"
n=$(readable "$T/max")
ok "$([ "${n:-0}" -gt 0 ]; echo $?)" "--max-size: the trace reads back ($n events)"
is "$n" "$(sed -n 's/^events: //p' "$T/max.out")" "--max-size: with the count printed"
is "$(babeltrace2 "$T/max" 2>/dev/null | wc -l | tr -d ' ')" "$n" "--max-size: babeltrace2 reads the same"
# snapshots: each one adds the ring buffers; the one that would not fit is
# not taken
lttngpod_capture maxs -p "$app" -O "$T/maxs" --buffer-size 64k --max-size 3M --snapshot
wait_for_grep "$T/maxs.err" "tracing .*into|error" 30
for _i in $(seq 40); do
	grep -q "max-size" "$T/maxs.err" && break
	lttngpod_signal maxs USR1
	wait_for_grep "$T/maxs.err" "snapshot $_i recorded|max-size" 10
done
wait_for_grep "$T/maxs.err" "max-size|error: " 30
wait "$cap_bg"
is "$?" 0 "--max-size --snapshot: exit 0"
diag "$(cat "$T/maxs.err")"
like "$(cat "$T/maxs.err")" "snapshot not recorded: it could take the trace past --max-size 3M|the trace neared --max-size 3M" \
	"--max-size --snapshot: the capture stops before a snapshot that would not fit"
kib=$(du -sk "$T/maxs" | cut -f1)
ok "$([ "$kib" -le 3072 ]; echo $?)" "--max-size --snapshot: below the limit ($kib KiB)"
babeltrace2 "$T/maxs" >/dev/null 2>&1
ok $? "--max-size --snapshot: babeltrace2 reads the snapshots"
pod_sidecar busybox sh "$CAP" -p "$app" -O "$T/maxt" --max-size 1M -d 1 >/dev/null 2>"$T/maxt.err"
is "$?" 1 "--max-size below the ring buffers: exit 1"
like "$(cat "$T/maxt.err")" "error: --max-size 1M is too small for the ring buffers" "and says so"

# another writer fills the disk at once: the consumer daemon hits ENOSPC
# before a check sees it coming and gets stuck (lttng-tools 2.13); the
# script must not hang with it
mkdir -p "$T/shared"
pod_sidecar mount -t tmpfs -o size=8m tmpfs "$T/shared"
lttngpod_stop_daemon	# the capture starts its own, and stops it
lttngpod_capture filled -p "$app" -O "$T/shared/trace" --buffer-size 64k --stop-daemon
wait_for_grep "$T/filled.err" "tracing .*into|error" 30
# shellcheck disable=SC2016 # $1 is the inner shell's
pod_sidecar sh -c 'cat /dev/zero > "$1/filler"' sh "$T/shared" 2>/dev/null
wait_for_grep "$T/filled.err" "error: " 60
ok $? "disk filled by another writer: the capture ends"
wait "$cap_bg"
is "$?" 1 "disk filled by another writer: exit 1"
diag "$(cat "$T/filled.err")"
like "$(tail -n 1 "$T/filled.err")" "error: the disk of $T/shared/trace (is nearly full .*; the trace holds the events until then|filled up.*: the capture stopped; the trace there is incomplete, not a valid trace|filled up; lttng-sessiond \\(PID [0-9]+\\) got stuck writing to it and was killed; the trace there is incomplete, not a valid trace)\$" \
	"disk filled by another writer: a clear error"
unlike "$(cat "$T/filled.out")" "^trace: " "disk filled by another writer: no trace presented as valid"
is "$(lttngpod_daemons)" "" "disk filled by another writer: --stop-daemon: no daemon left, stuck or not"
pod_sidecar rm -f "$T/shared/filler"
lttngpod_capture refilled -p "$app" -O "$T/shared/trace2" -d 1 --buffer-size 64k --stop-daemon
wait "$cap_bg"
is "$?" 0 "space again: a capture works"

# ---- 5. names with spaces and shell metacharacters --------------------------
# shellcheck disable=SC2016
odd="$T/o d'q\"\$HOME;x*[a]\`touch $T/pwned1\`\$(touch $T/pwned2)"
# shellcheck disable=SC2016
sess="s'q\"\$HOME;x*[a]\`id\`\$(id)"
mkdir -p "$T/cwd"
: > "$T/cwd/sidescope_app:glob"	# what an unquoted * would expand to
lttngpod_capture odd -p "$app" -O "$odd/sub dir" --session "$sess" --events 'sidescope_app:*'
wait_for_grep "$T/odd.err" "tracing .*into|error" 30
ok $? "capture with odd names started"
diag "$(cat "$T/odd.err")"
is "$(lttngpod_sessions)" "$sess" "the session has exactly the name asked for"
rules=$(pod_sidecar lttng list "$sess" -u)
like "$rules" "sidescope_app:\\* " "the event pattern is not globbed"
lttngpod_signal odd TERM
wait "$cap_bg"
is "$?" 0 "odd names: the capture ends with status 0"
like "$(cat "$T/odd.out")" "^trace: $T/o d'q\"" "the trace path is printed as given"
n=$(readable "$odd/sub dir")
ok "$([ "$n" -gt 0 ] 2>/dev/null; echo $?)" "the trace landed where asked ($n events)"
is "$(babeltrace2 "$odd/sub dir" 2>/dev/null | wc -l | tr -d ' ')" "$n" "babeltrace2 reads it"
is "$(find "$T" -maxdepth 1 -name "pwned*" | wc -l | tr -d " ")" 0 "nothing was executed"
is "$(ls -A "$T/cwd")" "sidescope_app:glob" "nothing was made in the working directory"

for bad in "a b" "a/b" "-x" ".."; do
	pod_sidecar busybox sh "$CAP" -p "$app" -O "$T/bad" --session "$bad" -d 1 >/dev/null 2>"$T/bad.err"
	is "$?" 2 "--session '$bad': bad usage"
	like "$(head -n 1 "$T/bad.err")" "bad --session '$bad' \\(no '/', spaces" "--session '$bad': says why"
done
pod_sidecar busybox sh "$CAP" -p "$app" -O "$T/bad" --events 'sidescope_app:* x' -d 1 >/dev/null 2>"$T/bad.err"
is "$?" 2 "--events with a space: bad usage"
# shellcheck disable=SC2016
pod_sidecar busybox sh "$CAP" -p "$app" -O "$T/ev" -d 1 \
	--events "sidescope_app:x;\`touch\${IFS}$T/pwned4\`,\$(touch\${IFS}$T/pwned5)" >"$T/ev.out" 2>"$T/ev.err"
rc=$?
diag "$(cat "$T/ev.err")"
ok "$([ "$rc" -le 1 ]; echo $?)" "--events with metacharacters: a capture or a clear error (exit $rc)"
is "$(find "$T" -maxdepth 1 -name "pwned*" | wc -l | tr -d " ")" 0 "and nothing executed"
pod_sidecar busybox sh "$CAP" -n '*' -O "$T/star" -d 1 >/dev/null 2>"$T/star.err"
is "$?" 1 "-n '*': no such process"
like "$(cat "$T/star.err")" "no process named '\\*'" "-n '*' is not a glob"
ok "$([ ! -e "$T/bad" ] && [ ! -e "$T/star" ]; echo $?)" "failed captures leave no directory"
is "$(lttngpod_sessions)" "" "no session left behind"

done_testing
