#!/bin/sh
# podspecs/lttng.yaml as a real pod: the sidecar has no added capability;
# lttng-capture starts lttng-sessiond on the shared /var/run/lttng, the app
# container's lttng-ust registers, its events end up in a CTF trace that
# babeltrace2 reads.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
podman_require
podman_images
ok_or_bail $? "images built"

have=1
pm run --rm "$SIDESCOPE_IMAGE" sh -c 'command -v lttng-capture' >/dev/null 2>&1 || have=0
pm run --rm "$APP_IMAGE" sh -c 'command -v lttng_app' >/dev/null 2>&1 || have=0
if [ "$have" = 1 ]; then
	# the app container runs the LTTng test program; its go and ready files
	# are in the shared /dev/shm
	app_cmd='          command: ["lttng_app", "-r", "/dev/shm/app.ready", "-g", "/dev/shm/app.go", "-n", "50"]'
	pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml" "\\|image: $APP_IMAGE|a\\
$app_cmd"
else
	pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml"
fi
ok_or_bail $? "lttng.yaml plays"
pod=$(pod_name_of sidescope-lttng)
ex() { pod_exec "$pod" sidescope "$@"; }
cap=$(ex sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
is "$(( (0x$cap >> 39 & 1) + (0x$cap >> 38 & 1) + (0x$cap >> 19 & 1) + (0x$cap >> 21 & 1) ))" 0 \
	"the sidecar has none of CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_SYS_ADMIN"

if [ "$have" = 1 ]; then
	pod_wait_exec 20 "$pod" sidescope test -s /dev/shm/app.ready
	ok $? "the app started"
	ex lttng-capture -n lttng_app -d 10 -o /out/trace >"$TMPDIR_TEST/cap.out" 2>"$TMPDIR_TEST/cap.err" &
	capp=$!
	on_exit "kill $capp"
	for _ in $(seq 1 300); do
		grep -Eq "tracing .*into|error" "$TMPDIR_TEST/cap.err" && break
		sleep 0.1
	done
	like "$(cat "$TMPDIR_TEST/cap.err")" "tracing .*\\(vpid [0-9]+\\) into /out/trace" "the app registered with the sidecar's sessiond"
	ex touch /dev/shm/app.go
	pod_wait_exec 30 "$pod" sidescope test -s /dev/shm/app.ready.done
	ok $? "the app emitted its events"
	wait "$capp"
	is "$?" 0 "lttng-capture ended with status 0"
	diag "$(cat "$TMPDIR_TEST/cap.out")"
	n=$(ex sh -c 'babeltrace2 /out/trace | grep -c "sidescope_app:request"')
	is "$n" 100 "babeltrace2 reads all 100 request events (2 threads x 50)"
	like "$(cat "$TMPDIR_TEST/cap.out")" "kubectl cp .*/out/trace" "prints the kubectl cp line"
else
	diag "lttng-capture or the LTTng test app is not on this branch yet: the daemon is checked alone"
	ex lttng-sessiond --daemonize --no-kernel
	ok $? "lttng-sessiond starts in the sidecar without capabilities"
	ex lttng list -u >/dev/null
	ok $? "and answers on the shared /var/run/lttng"
	like "$(ex ls /var/run/lttng)" "client-lttng-sessiond" "its sockets are in the shared directory"
fi

done_testing
