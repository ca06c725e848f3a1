#!/bin/sh
# lttng-capture in a simulated pod with a real lttng-sessiond: the app (with
# lttng-ust tracepoints) in its own mount namespace, sharing only the
# app-socket directory (its /var/run/lttng, the sidecar's /run/lttng-apps)
# and /dev/shm with the sidecar; its events captured, summarized and
# converted to Chrome JSON; babeltrace2 reads every trace. --json gives the
# summary as one JSON object (jq), a positional PID is the target and -d 0
# runs until Ctrl-C; a name several processes match is refused with their
# PIDs. The attacks of a hostile app are in lttng/hostile.t.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter jq busybox lttng lttng-sessiond babeltrace2

T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
[ -x "$APP" ] || skip_all "no $APP (run make)"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
export SIDESCOPE

on_exit lttngpod_stop_daemon
start_app() { lttngpod_app "$@"; }

# start_capture TAG [lttng-capture options]: in the background, in the
# sidecar; returns once it is recording (or failed)
start_capture() {
	lttngpod_capture "$@" &&
		wait_for_grep "$T/$1.err" "tracing .*into|error" 30
}

# stop_capture TAG: SIGINT, as Ctrl-C would; returns the script's status
stop_capture() { # TAG [SIGNAL]
	pod_sidecar kill -"${2:-INT}" "$(cat "$T/$1.cap.pid")"
	wait "$cap_bg"
}

# ---- 1. app first, daemon later: registers through the shared /dev/shm ----
pod_sidecar sh -c '! lttng list >/dev/null 2>&1'
ok $? "no lttng-sessiond in the pod yet"
start_app a -n 200
ok $? "the app started (pid $app in the pod)"
app_a=$app
start_capture a -p "$app" -O "$T/a"
ok $? "capture started"
like "$(cat "$T/a.err")" "starting lttng-sessiond" "the script started the daemon"
like "$(cat "$T/a.err")" "tracing PID $app \\(vpid $app\\) into $T/a" "the app registered (daemon started after it)"
touch "$T/a.go"
wait_for_file "$T/a.ready.done" 30
ok $? "the app emitted its events"
stop_capture a
is "$?" 0 "SIGINT ends the capture with status 0"
out=$(cat "$T/a.out")
diag "$out"
like "$out" "^trace: $T/a\$" "prints the trace path"
like "$out" "^discarded events: 0\$" "no discarded events"
like "$out" "^fetch: kubectl cp .*:$T/a \\./a -c " "prints the kubectl cp line"
events=$(printf '%s\n' "$out" | sed -n 's/^events: //p')
ok "$([ "$events" -ge 1200 ] 2>/dev/null; echo $?)" "event count printed ($events >= 1200)"
pod_sidecar sh -c '! lttng list 2>/dev/null | grep -q sidescope-'
ok $? "the session was destroyed"

json=$("$SIDESCOPE" ctf summary "$T/a" --by path --json)
ok $? "ctf summary --json runs"
is "$(printf '%s' "$json" | jq '.events')" "$events" "summary and script agree on the count"
is "$(printf '%s' "$json" | jq '[.by_name[] | select(.name | startswith("sidescope_app:")) | "\(.name)=\(.count)"] | sort | join(" ")' -r)" \
	"sidescope_app:WorkStart=400 sidescope_app:WorkStop=400 sidescope_app:request=400" "events per name"
is "$(printf '%s' "$json" | jq '.discarded_events')" 0 "summary: no discarded events"
is "$(printf '%s' "$json" | jq -r '[.processes[] | "\(.vpid) \(.procname)"] | join(",")')" "$app lttng_app" \
	"one process: the target, by vpid and procname"
ok "$(printf '%s' "$json" | jq -e '[.threads[] | select(.events >= 600)] | length == 2' >/dev/null; echo $?)" \
	"two worker threads with 600 events each"
is "$(printf '%s' "$json" | jq -r '[.by.values[:3][] | "\(.value)=\(.count)"] | join(" ")')" \
	"/api/echo=134 /api/fib=134 /health=132" "--by path: top values"
text=$("$SIDESCOPE" ctf summary "$T/a" --by status)
like "$text" "sidescope_app:request +400 " "text summary: event row"
like "$text" "TOP VALUES OF 'status'" "text summary: --by section"
like "$text" " 360  200" "text summary: status 200 counted"
is "$(printf '%s\n' "$text" | awk 'length > 80' | wc -l | tr -d ' ')" 0 "text summary fits 80 columns"

"$SIDESCOPE" ctf chrome "$T/a" -o "$T/a.json" 2>"$T/chrome.err"
ok $? "ctf chrome runs"
jq -e . "$T/a.json" >/dev/null
ok $? "the Chrome JSON parses (jq)"
is "$(jq '[.traceEvents[] | select(.ph == "X" and .name == "sidescope_app:Work")] | length' "$T/a.json")" 400 \
	"400 WorkStart/WorkStop slices"
is "$(jq '[.traceEvents[] | select(.ph == "X" and .name == "sidescope_app:Work" and .args.begin.id == .args.end.id and .dur >= 0)] | length' "$T/a.json")" 400 \
	"each slice pairs the begin and end of one id"
is "$(jq '[.traceEvents[] | select(.ph == "i" and .name == "sidescope_app:request" and (.args.path | startswith("/")))] | length' "$T/a.json")" 400 \
	"requests are instants with their payload as args"
is "$(jq "[.traceEvents[] | select(.ph == \"X\" and .name == \"sidescope_app:Work\") | .tid] | unique | length" "$T/a.json")" 2 \
	"slices on two thread tracks"
is "$(jq "[.traceEvents[] | select(.ph == \"M\" and .name == \"thread_name\" and .pid == $app)] | length > 1" "$T/a.json")" true \
	"thread tracks are named"
like "$(cat "$T/chrome.err")" "events from 1 trace dir written to" "chrome reports what it wrote"

n=$(babeltrace2 "$T/a" | wc -l)
is "$n" "$events" "babeltrace2 reads the trace: same count"

# ---- 2. a flood into small buffers: discarded events reported --------------
start_app b -n 300000 -f
ok $? "flooding app started"
app_b=$app
start_capture b -p "$app" -O "$T/b" --buffer-size 16k --events 'sidescope_app:*'
ok $? "capture with 16k buffers started"
touch "$T/b.go"
wait_for_file "$T/b.ready.done" 60
ok $? "the flood finished"
stop_capture b
is "$?" 0 "capture ended"
out=$(cat "$T/b.out")
diag "$out"
d=$(printf '%s\n' "$out" | sed -n 's/^discarded events: //p')
diag "$(cat "$T/b.err")"
ok "$([ "$d" -gt 0 ] 2>/dev/null; echo $?)" "the script reports discarded events ($d)"
like "$(cat "$T/b.err")" "EVENTS WERE DISCARDED" "the script warns loudly"
text=$("$SIDESCOPE" ctf summary "$T/b" 2>"$T/b.sum.err")
like "$(printf '%s\n' "$text" | head -1)" "^!!! WARNING: [0-9]+ EVENTS DISCARDED" "summary: discarded events on the first line"
sd=$("$SIDESCOPE" ctf summary "$T/b" --json 2>/dev/null | jq .discarded_events)
ok "$([ "$sd" -gt 0 ] 2>/dev/null; echo $?)" "summary --json counts discarded events ($sd)"
like "$(cat "$T/b.sum.err")" "warning: [0-9]+ events and [0-9]+ packets were discarded" "summary warns on stderr too"
babeltrace2 -o dummy "$T/b" >/dev/null
ok $? "babeltrace2 reads the flooded trace"

# ---- 3. snapshot: SIGUSR1 and exit record the ring --------------------------
# the earlier apps go (zombies: the pod's PID 1 does not reap; a name
# matches no zombie): -n must match one process
for _p in "$app_a" "$app_b"; do kill "$(pod_host_pid "$_p")"; done
for _i in $(seq 50); do
	# shellcheck disable=SC2016
	pod_sidecar sh -c 'for p; do case "$(sed "s/.*) //" /proc/$p/stat 2>/dev/null)" in Z*|"") ;; *) exit 1 ;; esac; done' \
		sh "$app_a" "$app_b" && break
	sleep 0.1
done
start_app c -n 100
start_capture c -n lttng_app --snapshot -O "$T/c" --events 'sidescope_app:*'
ok $? "snapshot capture started (by name)"
touch "$T/c.go"
wait_for_file "$T/c.ready.done" 30
pod_sidecar kill -USR1 "$(cat "$T/c.cap.pid")"
wait_for_grep "$T/c.err" "snapshot 1 recorded" 20
ok $? "SIGUSR1 records a snapshot"
stop_capture c
is "$?" 0 "snapshot capture ended"
like "$(cat "$T/c.out")" "^snapshots: 2\$" "exit records another snapshot"
is "$(find "$T/c" -name metadata | wc -l | tr -d ' ')" 2 "two snapshot traces on disk"
j=$("$SIDESCOPE" ctf summary "$(find "$T/c" -mindepth 1 -maxdepth 1 | sort | head -n 1)" --json)
is "$(printf '%s' "$j" | jq '[.by_name[] | select(.name == "sidescope_app:request") | .count] | add')" 200 \
	"first snapshot holds the app's 200 requests"
is "$(printf '%s' "$j" | jq -r '[.processes[].procname] | unique | join(",")')" "lttng_app" "-n: only the target's events"
babeltrace2 -o dummy "$T/c" >/dev/null
ok $? "babeltrace2 reads the snapshots"

# ---- 4. rotation: chunks on disk, read together ----------------------------
start_app d -n 100
start_capture d -p "$app" -O "$T/d" --rotate-size 4k --events 'sidescope_app:*' --preset dotnet-gc
ok $? "rotating capture started"
sess=$(pod_sidecar lttng list | sed -n 's/^ *[0-9]*) \(sidescope-[^ ]*\) .*/\1/p' | head -n 1)
rules=$(pod_sidecar lttng list "$sess" -u)
like "$rules" "sidescope_app:\\*" "--events pattern enabled"
like "$rules" "DotNETRuntime:GC\\*" "--preset dotnet-gc enabled"
like "$rules" "filter: '.ctx[.]vpid == $app'" "with the vpid filter"
like "$(pod_sidecar lttng list "$sess")" "Virtual process IDs: *$app" "and the vpid tracker"
touch "$T/d.go"
wait_for_file "$T/d.ready.done" 30
stop_capture d TERM
is "$?" 0 "SIGTERM ends the capture with status 0"
like "$(cat "$T/d.err")" "stopped by SIGTERM" "it says so"
is "$(sed -n 's/^events: //p' "$T/d.out")" 600 "all 600 events across the chunks"
babeltrace2 -o dummy "$T/d" >/dev/null
ok $? "babeltrace2 reads the chunks"

start_app g -n 100000
start_capture g -p "$app" -O "$T/g" --rotate-every 1s -d 3 --events 'sidescope_app:*'
ok $? "capture with --rotate-every 1s -d 3 started"
touch "$T/g.go"
wait "$cap_bg"
is "$?" 0 "-d ends the capture by itself"
ok "$([ "$(find "$T/g" -name metadata | wc -l)" -ge 2 ]; echo $?)" "timer rotation wrote several chunks"
is "$("$SIDESCOPE" ctf summary "$T/g" --json | jq .events)" "$(sed -n 's/^events: //p' "$T/g.out")" \
	"summary reads every chunk"

# ---- 4b. --json, a positional PID, -d 0 ------------------------------------
start_app h -n 50
start_capture h --json -d 0 -O "$T/h" --events 'sidescope_app:*' "$app"
ok $? "capture --json -d 0 PID started"
touch "$T/h.go"
wait_for_file "$T/h.ready.done" 30
stop_capture h
is "$?" 0 "-d 0: SIGINT ends it, status 0"
diag "$(cat "$T/h.out")"
jq -e . "$T/h.out" >/dev/null
ok $? "--json: stdout is JSON"
is "$(jq -s length "$T/h.out")" 1 "--json: one object"
is "$(jq -r '"\(.trace) \(.pids | join(",")) \(.events) \(.discarded_events) \(.lost_packets) \(.stopped_by)"' "$T/h.out")" \
	"$T/h $app 300 0 0 SIGINT" "--json: the trace, the target, 300 events, none discarded, stopped by SIGINT"
like "$(jq -r .session "$T/h.out")" "^sidescope-[0-9]+-[0-9]{8}-[0-9]{6}\$" "--json: the session"
like "$(jq -r .fetch "$T/h.out")" "^kubectl cp .*:$T/h \\./h -c " "--json: the kubectl cp line"
is "$("$SIDESCOPE" ctf summary "$T/h" --json | jq .events)" 300 "--json: the count is the trace's"
# the progress, and the warning that the app reaches this output directory
is "$(jq -r .level "$T/h.err" | sort -u | tr '\n' ' ')" "info warning " "--json: stderr is JSON lines (progress, a warning)"
like "$(jq -r .message "$T/h.err")" "tracing PID $app \\(vpid $app\\) into $T/h \\(Ctrl-C to stop\\)" \
	"--json: the progress says the target and the trace"

# apps c, d, g and h still run: a name is refused, with their PIDs
for how in -n --; do
	out=$(pod_sidecar busybox sh "$CAP" -d 1 -O "$T/several" "$how" lttng_app 2>&1)
	is "$?" 1 "$how NAME that several processes match: exit 1"
	like "$out" "^lttng-capture: error: several processes match 'lttng_app': PIDs [0-9]+(, [0-9]+)+; give one with -p PID \\(list them: sidescope ps\\)\$" \
		"$how NAME: refused with the PIDs"
done
ok "$([ ! -e "$T/several" ]; echo $?)" "no trace directory made"
out=$(pod_sidecar busybox sh "$CAP" --json -d 1 -n lttng_app 2>&1)
is "$(printf '%s\n' "$out" | jq -r 'select(.level == "error") | .program')" lttng-capture "--json: the refusal as a JSON error"

# ---- 5. targets the daemon cannot trace: explained -------------------------
cp "$APP" "$T/hidden_app"
pod_outsider "$T/hidden_app" -r "$T/e.ready" -g "$T/e.go"
on_exit "kill $!"
wait_for_file "$T/e.ready" 10
out=$(pod_sidecar busybox sh "$CAP" -n hidden_app -d 1 -O "$T/e" 2>&1)
is "$?" 1 "an app in another PID namespace: exit 1"
like "$out" "no process named 'hidden_app' in this PID namespace" "names the problem"
like "$out" "shareProcessNamespace" "and the likely fix"

pod_app sleep 1000
sleep_pid=$!
on_exit "kill $sleep_pid"
sp=""
for _i in $(seq 50); do
	# shellcheck disable=SC2016 # for the shell in the pod
	sp=$(pod_sidecar sh -c 'for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = sleep ] && [ "$(cat $d/cmdline | tr "\0" " ")" = "sleep 1000 " ] && echo ${d#/proc/}; done' | head -1)
	[ -n "$sp" ] && break
	sleep 0.1
done
lttngpod_stop_daemon
pod_sidecar sh -c '! lttng list >/dev/null 2>&1'
ok $? "daemon stopped"
out=$(pod_sidecar busybox sh "$CAP" -p "$sp" --wait 1 -O "$T/f" --stop-daemon 2>&1)
is "$?" 1 "an app that never registers: exit 1"
pod_sidecar sh -c '! lttng list >/dev/null 2>&1'
ok $? "--stop-daemon: the daemon the script started is gone"
like "$out" "did not register with lttng-sessiond within 1s" "says it did not register"
like "$out" "has not loaded liblttng-ust" "knows why: no lttng-ust"
like "$out" "the app's /var/run/lttng is not the directory this sidecar has at" "lists the shared socket directory"
like "$out" "/dev/shm is not shared" "lists the shared /dev/shm"

out=$(pod_sidecar busybox sh "$CAP" --domain python -d 1 -O "$T/py" 2>&1)
is "$?" 0 "--domain python: a session for the python agent"
like "$out" "events: 0" "nothing recorded without a python app"
port=$(pod_sidecar cat /var/run/lttng/agent.port)
like "$port" "^[0-9]+$" "the daemon's agent port is in its own /var/run/lttng ($port)"
pod_app cat /var/run/lttng/agent.port >"$T/agent.port"
wait "$!"
is "$(cat "$T/agent.port")" "$port" "and published in the app's /var/run/lttng, where its agents look"

# ---- 6. usage -------------------------------------------------------------
busybox sh "$CAP" --bogus >/dev/null 2>&1
is "$?" 2 "unknown option exits 2"
busybox sh "$CAP" -p 1 -n x >/dev/null 2>&1
is "$?" 2 "-p with -n exits 2"
busybox sh "$CAP" -o "$T/x" >/dev/null 2>&1
is "$?" 2 "-o exits 2 (a trace is a directory: -O DIR)"
busybox sh "$CAP" --preset nope >/dev/null 2>&1
is "$?" 2 "unknown preset exits 2"
busybox sh "$CAP" --max-size lots >/dev/null 2>&1
is "$?" 2 "a bad --max-size exits 2"
busybox sh "$CAP" --max-size 512k >/dev/null 2>&1
is "$?" 2 "--max-size below 1M exits 2"
is "$(busybox sh "$CAP" --help | awk 'length > 80' | wc -l | tr -d ' ')" 0 "--help fits 80 columns"
busybox sh "$CAP" --help | grep -q '^EXAMPLES:'
ok $? "--help has examples"
if command -v shellcheck >/dev/null 2>&1; then
	(cd "$SIDESCOPE_SRC" && shellcheck -s sh -x scripts/lttng-capture)
	ok $? "shellcheck -s sh is clean"
fi
pod_sidecar sh -c '! lttng list 2>/dev/null | grep -q sidescope-'
ok $? "no session left behind"

done_testing
