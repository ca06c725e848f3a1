#!/bin/sh
# LTTng agents in a simulated pod: Python logging (python3-lttngust) and
# java.util.logging (liblttng-ust-agent-java). The sidecar starts as the
# image does (capture-loop --sidecar), which starts lttng-sessiond and
# publishes its agent port in the app's /var/run/lttng; apps started after
# it register in their domain, doctor lttng --json lists them with the
# port, and lttng-capture records their log records (ctf summary counts
# them), as does timeline-capture --lttng. A Python app started before the
# sidecar never registers:
# lttng-capture says why in one line, as it does for an app without agent.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter jq busybox lttng lttng-sessiond babeltrace2 java javac

T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
PY=/usr/bin/python3
# (found, not imported: importing it starts the agent)
if ! [ -x "$PY" ] || ! "$PY" -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("lttngust") is None)'; then
	skip_all "no LTTng Python agent for $PY (python3-lttngust; scripts/install-deps)"
fi
JARS=/usr/share/java/lttng-ust-agent-common.jar:/usr/share/java/lttng-ust-agent-jul.jar
JNI=""
for _j in /usr/lib/*/jni/liblttng-ust-jul-jni.so; do [ -f "$_j" ] && JNI=${_j%/*}; done
if [ ! -f /usr/share/java/lttng-ust-agent-jul.jar ] || [ -z "$JNI" ]; then
	skip_all "no LTTng Java agent (liblttng-ust-agent-java; scripts/install-deps)"
fi
LOOP="$SIDESCOPE_SRC/scripts/capture-loop"
DOCTOR="$SIDESCOPE_SRC/scripts/doctor"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
export SIDESCOPE
on_exit lttngpod_stop_daemon

# the JVM starts slowly: compile now, start it once
mkdir -p "$T/classes"
javac -d "$T/classes" -cp "$JARS" "$SIDESCOPE_SRC/tests/progs/LttngJul.java" 2>"$T/javac.err"
ok $? "javac compiled tests/progs/LttngJul.java" || { diag "$(cat "$T/javac.err")"; done_testing; exit 1; }

# py_app TAG [LOGGER]: the Python app in its own container; sets $app (pod PID)
py_app() {
	pod_app "$PY" "$SIDESCOPE_SRC/tests/progs/lttng_agent.py" "$T/$1.ready" 100 "${2:-sidescope.agent}"
	wait_for_file "$T/$1.ready" 20 || return 1
	app=$(cat "$T/$1.ready")
	_h=$(pod_host_pid "$app") && on_exit "kill $_h"
}

# ---- 1. an app started before the sidecar ----------------------------------
py_app early
ok $? "a Python app started before the sidecar (pid $app)"
early=$app

# ---- 2. the sidecar starts: lttng-sessiond with it, agent port published --
ready=/proc/$POD_PAUSE/root/run/sidescope/tmp/sidecar.ready
pod_sidecar env SIDESCOPE_LTTNG_APPS=/run/lttng-apps busybox sh "$LOOP" --sidecar \
	>"$T/loop.out" 2>"$T/loop.err" &
loop_bg=$!
on_exit "kill $loop_bg"
wait_for_file "$ready" 20 || [ -e "$ready" ]
rc=$?
ok "$rc" "capture-loop --sidecar is ready"
[ "$rc" = 0 ] || diag "$(cat "$T/loop.err")"
like "$(cat "$T/loop.err")" "lttng-sessiond started \\(PID [0-9]+\\), agent port [0-9]+ published in /run/lttng-apps/agent.port" \
	"it started lttng-sessiond and published its agent port"
port=$(pod_sidecar cat /var/run/lttng/agent.port)
pod_app cat /var/run/lttng/agent.port >"$T/app.port"
wait "$!"
is "$(cat "$T/app.port")" "$port" "the app's /var/run/lttng/agent.port holds the daemon's port ($port)"

# ---- 3. apps started after the sidecar register ----------------------------
py_app py
ok $? "a Python app started after the sidecar (pid $app)"
py=$app
pod_app java -Djava.library.path="$JNI" -cp "$T/classes:$JARS" LttngJul "$T/jul.ready" 100
wait_for_file "$T/jul.ready" 30
ok $? "a Java app logging through JUL started after the sidecar"
jul=$(cat "$T/jul.ready")
_h=$(pod_host_pid "$jul") && on_exit "kill $_h"

# the Java agent registers in a thread of its own: wait for it
for _i in $(seq 100); do
	pod_sidecar lttng list --jul 2>/dev/null | grep -q "^PID: $jul - " && break
	sleep 0.1
done
pod_sidecar lttng list --python >"$T/list.py" 2>&1
like "$(cat "$T/list.py")" "PID: $py - " "lttng list --python lists the Python app"
unlike "$(cat "$T/list.py")" "PID: $early - " "but not the one started before the sidecar"
like "$(pod_sidecar lttng list --jul 2>&1)" "PID: $jul - " "lttng list --jul lists the Java app"

json=$(pod_sidecar busybox sh "$DOCTOR" lttng --json -O /run/sidescope/out 2>/dev/null)
is "$(printf '%s' "$json" | jq '.[] | select(.check == "lttng_daemon") | .agent_port')" "$port" \
	"doctor lttng --json: the agent port"
is "$(printf '%s' "$json" | jq '.[] | select(.check == "lttng_daemon") | .status' -r)" PASS \
	"doctor lttng --json: the port is published"
is "$(printf '%s' "$json" | jq -c '.[] | select(.check == "lttng_apps") | .apps | [.python[].pid, .jul[].pid, .log4j[].pid]')" \
	"[$py,$jul]" "doctor lttng --json: the registered apps per domain"
text=$(pod_sidecar busybox sh "$DOCTOR" lttng -O /run/sidescope/out 2>&1)
like "$text" "python: $py; jul: $jul; log4j: none" "doctor lttng says it in words"

# ---- 4. their records captured ---------------------------------------------
# capture TAG DOMAIN PID: 3 s; sets $n, the events counted by ctf summary
capture() {
	pod_sidecar busybox sh "$CAP" --domain "$2" -p "$3" -d 3 -O "$T/$1" --json \
		>"$T/$1.out" 2>"$T/$1.err"
	_rc=$?
	ok "$_rc" "lttng-capture --domain $2 -p $3 -d 3"
	[ "$_rc" = 0 ] || diag "$(cat "$T/$1.err")"
	"$SIDESCOPE" ctf summary "$T/$1" --json >"$T/$1.sum"
	ok $? "ctf summary reads the trace"
	n=$(jq ".by_name[] | select(.name == \"lttng_$2:event\") | .count" "$T/$1.sum")
	ok "$([ "${n:-0}" -ge 50 ] 2>/dev/null; echo $?)" "$2: ${n:-0} records in 3 s (>= 50, logged at 100/s)"
	is "$(jq .events "$T/$1.out")" "$(jq .events "$T/$1.sum")" "script and summary agree"
	is "$(jq -r '[.processes[].vpid] | join(",")' "$T/$1.sum")" "$3" "all from the target"
}
capture py python "$py"
like "$(babeltrace2 "$T/py" | head -n 1)" 'msg = "record [0-9]+", logger_name = "sidescope.agent"' \
	"babeltrace2 shows the logger and the message"
# an app that logs on the root logger alone lists no logger: 'lttng list
# --python' does not show it, its records are recorded all the same
py_app rootpy root
ok $? "a Python app logging on the root logger alone (pid $app)"
rootpy=$app
pod_sidecar busybox sh "$CAP" --domain python -p "$rootpy" -d 1 -O "$T/rootpy" --json \
	>"$T/rootpy.out" 2>"$T/rootpy.err"
rc=$?
ok "$rc" "lttng-capture --domain python -p $rootpy -d 1"
[ "$rc" = 0 ] || diag "$(cat "$T/rootpy.err")"
n=$(jq .events "$T/rootpy.out")
ok "$([ "${n:-0}" -ge 20 ] 2>/dev/null; echo $?)" "${n:-0} records in 1 s (>= 20, logged at 100/s)"
json=$(pod_sidecar busybox sh "$DOCTOR" lttng --json -O /run/sidescope/out 2>/dev/null)
is "$(printf '%s' "$json" | jq -c '.[] | select(.check == "lttng_apps") | [.apps.python[].pid] | sort')" \
	"$(printf '[%s]' "$(printf '%s\n' "$py" "$rootpy" | sort -n | paste -s -d , -)")" \
	"doctor lttng --json counts it among the python apps"
pod_sidecar kill "$rootpy"
capture jul jul "$jul"
like "$(babeltrace2 "$T/jul" | head -n 1)" 'msg = "record [0-9]+", logger_name = "sidescope.jul"' \
	"babeltrace2 shows the JUL logger and the message"

# the timeline's --lttng takes the agents' records too
pod_sidecar env SIDESCOPE_LTTNG_APPS=/run/lttng-apps busybox sh "$SIDESCOPE_SRC/scripts/timeline-capture" \
	-p "$py" -d 2 -F 19 --lttng -o "$T/py.timeline.json" >"$T/tl.out" 2>"$T/tl.err"
rc=$?
ok "$rc" "timeline-capture -p $py --lttng"
[ "$rc" = 0 ] || diag "$(cat "$T/tl.err")"
n=$(jq '[.traceEvents[] | select(.name == "lttng_python:event")] | length' "$T/py.timeline.json")
ok "$([ "${n:-0}" -ge 50 ] 2>/dev/null; echo $?)" "the timeline holds ${n:-0} Python records in 2 s (>= 50)"
is "$(jq -r '[.traceEvents[] | select(.name == "lttng_python:event")][0].args.logger_name' "$T/py.timeline.json")" \
	sidescope.agent "with the logger in the arguments"

# ---- 5. no registration: the reason in one line -----------------------------
out=$(pod_sidecar busybox sh "$CAP" --domain python -p "$early" -d 1 --wait 1 -O "$T/early" 2>&1)
is "$?" 1 "the app started before the sidecar: exit 1"
like "$out" "^lttng-capture: error: process $early \\(PID $early\\) did not register in the python domain .* it started before lttng-sessiond \\(PID [0-9]+\\)" \
	"says it started before lttng-sessiond"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "in one line"
out=$(pod_sidecar busybox sh "$CAP" --domain jul -p "$py" -d 1 --wait 1 -O "$T/nojul" 2>&1)
is "$?" 1 "a Python app traced in the jul domain: exit 1"
like "$out" "it has not loaded the LTTng jul agent" "says it has no JUL agent"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "in one line"

# ---- 6. the daemon stays ----------------------------------------------------
pod_sidecar lttng list >/dev/null 2>&1
ok $? "lttng-sessiond still runs after the captures"
is "$(pod_sidecar cat /run/lttng-apps/agent.port)" "$port" "and its port stays published"

pod_sidecar kill "$(cat "$T/jul.ready")" 2>/dev/null
kill "$loop_bg" 2>/dev/null
done_testing
