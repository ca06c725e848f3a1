#!/bin/sh
# podspecs/lttng.yaml as a real pod: the sidecar with CAP_SYS_PTRACE alone, a
# read-only root filesystem and the runtime's default seccomp profile;
# lttng-capture starts lttng-sessiond with its control sockets in the
# sidecar's own /var/run/lttng and only the application socket in the
# emptyDir the app has at /var/run/lttng; the app container's lttng-ust
# registers, its events end up in a CTF trace that babeltrace2 reads. The
# app cannot reach the client socket. The sidecar's default command starts
# lttng-sessiond and publishes its agent port: a Python app started after it
# in the app container logs through the LTTng Python agent, and its records
# are captured and summarized.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
podman_require
require_cmd jq
podman_images
ok_or_bail $? "images built"

# the app container runs the LTTng test program; its go and ready files
# are in the shared /dev/shm
app_cmd='          command: ["lttng_app", "-r", "/dev/shm/app.ready", "-g", "/dev/shm/app.go", "-n", "50"]'
pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml" "\\|image: $APP_IMAGE|a\\
$app_cmd"
ok_or_bail $? "lttng.yaml plays"
pod=$(pod_name_of sidescope-lttng)
ex() { pod_exec "$pod" sidescope "$@"; }
# ok when the command fails
fails() { _d=$1; shift; if "$@" >/dev/null 2>&1; then fail "$_d"; else pass "$_d"; fi; }
is "$(ex sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)" 0000000000080000 \
	"the sidecar has CAP_SYS_PTRACE only"
is "$(ex sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)" 2 "under a seccomp filter (runtime default)"
fails "its root filesystem is read-only" ex sh -c 'echo x > /usr/local/x'

pod_wait_exec 20 "$pod" sidescope test -s /dev/shm/app.ready
ok $? "the app started"
pod_wait_exec 20 "$pod" sidescope test -e /run/sidescope/tmp/sidecar.ready
ok $? "the sidecar is ready (its startupProbe's file)"
# the daemon writes its port once its agent thread listens
pod_wait_exec 30 "$pod" sidescope test -s /var/run/lttng/agent.port
port=$(ex cat /var/run/lttng/agent.port)
like "$port" '^[0-9]+$' "capture-loop --sidecar started lttng-sessiond (agent port $port)"
is "$(pod_exec "$pod" app cat /var/run/lttng/agent.port)" "$port" "the port is published in the app's /var/run/lttng"
ex lttng-capture -n lttng_app -d 10 -O /out/trace >"$TMPDIR_TEST/cap.out" 2>"$TMPDIR_TEST/cap.err" &
capp=$!
on_exit "kill $capp"
for _ in $(seq 1 300); do
	grep -Eq "tracing .*into|error" "$TMPDIR_TEST/cap.err" && break
	sleep 0.1
done
like "$(cat "$TMPDIR_TEST/cap.err")" "tracing .*\\(vpid [0-9]+\\) into /out/trace" "the app registered with the sidecar's sessiond"
! grep -qv 'starting lttng-sessiond\|tracing .*into' "$TMPDIR_TEST/cap.err" ||
	diag "$(cat "$TMPDIR_TEST/cap.err")"

# while it records: who sees what
is "$(pod_exec "$pod" app ls -A /var/run/lttng | tr '\n' ' ')" "agent.port lttng-ust-sock-8 " \
	"the app's /var/run/lttng holds the application socket and the agent port only"
is "$(ex ls -A /run/lttng-apps | tr '\n' ' ')" "agent.port lttng-ust-sock-8 " "it is the sidecar's /run/lttng-apps"
ex test -S /var/run/lttng/client-lttng-sessiond
ok $? "the client socket is in the sidecar's own /var/run/lttng"
dpid=$(ex cat /var/run/lttng/lttng-sessiond.pid)
fails "the app cannot enter the daemon's /proc/PID/root (PID $dpid)" \
	pod_exec "$pod" app ls "/proc/$dpid/root/run/lttng"
if res=$(ex doctor lttng 2>&1); then
	pass "doctor lttng passes while it records"
else
	fail "doctor lttng passes while it records"
	diag "$res"
fi

ex touch /dev/shm/app.go
pod_wait_exec 30 "$pod" sidescope test -s /dev/shm/app.ready.done
ok $? "the app emitted its events"
wait "$capp"
is "$?" 0 "lttng-capture ended with status 0"
diag "$(cat "$TMPDIR_TEST/cap.out")"
n=$(ex sh -c 'babeltrace2 /out/trace | grep -c "sidescope_app:request"')
is "$n" 100 "babeltrace2 reads all 100 request events (2 threads x 50)"
like "$(cat "$TMPDIR_TEST/cap.out")" "kubectl cp .*/out/trace" "prints the kubectl cp line"
is "$(ex ls -A /run/sidescope/tmp)" "sidecar.ready" "no temporary file is left"

# a Python app started in the app container after the sidecar
pod_exec "$pod" app python3 /usr/local/bin/lttng_agent.py /dev/shm/py.ready 100 &
on_exit "kill $!"
pod_wait_exec 20 "$pod" sidescope test -s /dev/shm/py.ready
ok $? "a Python app using the LTTng agent started"
py=$(ex cat /dev/shm/py.ready)
ex lttng-capture --domain python -p "$py" -d 3 -O /out/py --json >"$TMPDIR_TEST/py.out" 2>"$TMPDIR_TEST/py.err"
rc=$?
is "$rc" 0 "lttng-capture --domain python -p $py -d 3"
[ "$rc" = 0 ] || diag "$(cat "$TMPDIR_TEST/py.err")"
n=$(ex sidescope ctf summary /out/py --json | jq '.by_name[] | select(.name == "lttng_python:event") | .count')
ok "$([ "${n:-0}" -ge 50 ] 2>/dev/null; echo $?)" "ctf summary: ${n:-0} Python log records in 3 s (>= 50 at 100/s)"
like "$(ex sh -c 'babeltrace2 /out/py | head -n 1')" 'logger_name = "sidescope.agent"' "babeltrace2 shows the logger"

done_testing
