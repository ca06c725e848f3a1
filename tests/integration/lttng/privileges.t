#!/bin/sh
# The least privilege of lttng-capture: LTTng itself needs no capability,
# but a sidecar with none is one the app (root, with a container's usual
# capabilities) may ptrace, reaching the daemon's private control socket
# through /proc/PID/root: refused, in one line naming the fix. Root (user
# ID 0) with CAP_SYS_PTRACE alone runs a whole capture, lttng-sessiond
# included; the sidecar's set (CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE) works
# too. lttng-sessiond started the default way needs CAP_CHOWN where a
# 'tracing' group exists; the script's --group avoids that. Without user
# ID 0: one line naming what is missing and 'doctor'. Traces are 0640 or
# stricter.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter busybox lttng lttng-sessiond babeltrace2 setpriv perl timeout
T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
[ -x "$APP" ] || skip_all "no $APP (run make)"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
on_exit lttngpod_stop_daemon

# in the sidecar with only the capabilities $1
capped() {
	_c=$1
	shift
	# shellcheck disable=SC2016
	pod_sidecar sh -c '. "$1"; shift; with_caps "$@"' sh "$SIDESCOPE_SRC/tests/lib/caps.sh" "$_c" "$@"
}

# the effective capabilities of the pod's lttng-sessiond, in hex
daemon_capeff() {
	# shellcheck disable=SC2016
	pod_sidecar sh -c 'p=$(cat /var/run/lttng/lttng-sessiond.pid) && sed -n "s/^CapEff:[[:space:]]*//p" "/proc/$p/status"'
}

lttngpod_app a -n 1000000
ok $? "the app started (pid $app in the pod)"
touch "$T/a.go"

# no capability: the app holds every capability the sidecar has
LTTNGPOD_CAPS=""
export LTTNGPOD_CAPS
lttngpod_capture cnone -p "$app" -O "$T/none" -d 2
unset LTTNGPOD_CAPS
wait "$cap_bg"
is "$?" 1 "no capability: refused, exit 1"
is "$(wc -l < "$T/cnone.err" | tr -d ' ')" 1 "no capability: one line"
like "$(cat "$T/cnone.err")" "error: processes of another container \\(PIDs [0-9 ]*${app}[0-9 ]*\\) may hold every capability this sidecar has: .*add \"SYS_PTRACE\" to this sidecar's capabilities" \
	"no capability: names the app and the fix"
is "$(lttngpod_daemons)" "" "no capability: no daemon started"
ok "$([ ! -e "$T/none" ]; echo $?)" "no capability: no output directory"

for caps in sys_ptrace "$LEAST_CAPS"; do
	name=${caps:-none}
	LTTNGPOD_CAPS=$caps
	export LTTNGPOD_CAPS
	lttngpod_capture "c$name" -p "$app" -O "$T/$name" -d 2
	unset LTTNGPOD_CAPS
	wait_for_grep "$T/c$name.err" "tracing .*into|error" 30
	ok $? "capabilities '$name': the capture started"
	# while it runs: the daemon it started has no more than it was given
	is "$(daemon_capeff)" "$(capped "$caps" sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)" \
		"capabilities '$name': so has lttng-sessiond"
	wait "$cap_bg"
	is "$?" 0 "capabilities '$name': exit 0"
	n=$(sed -n 's/^events: //p' "$T/c$name.out")
	ok "$([ "$n" -gt 0 ] 2>/dev/null; echo $?)" "capabilities '$name': events recorded ($n)"
	is "$(babeltrace2 "$T/$name" 2>/dev/null | wc -l | tr -d ' ')" "$n" "capabilities '$name': babeltrace2 reads the trace"
	is "$(find "$T/$name" -type f -perm /0027 | wc -l | tr -d ' ')" 0 "capabilities '$name': trace files 0640 or stricter"
	is "$(find "$T/$name" -type d -perm /0027 | wc -l | tr -d ' ')" 0 "capabilities '$name': directories 0750 or stricter"
	lttngpod_stop_daemon
done

# why --group: lttng-sessiond's default needs CAP_CHOWN for 'tracing'
if getent group tracing >/dev/null 2>&1; then
	if capped "" lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1; then
		fail "a 'tracing' group exists: lttng-sessiond's default start fails without CAP_CHOWN"
	else
		pass "a 'tracing' group exists: lttng-sessiond's default start fails without CAP_CHOWN"
	fi
	lttngpod_stop_daemon
	capped chown lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
	ok $? "and works with CAP_CHOWN"
	lttngpod_stop_daemon
else
	diag "no 'tracing' group here: lttng-sessiond's default start needs no CAP_CHOWN"
fi

# less than root: a user ID other than 0
pod_sidecar setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	busybox sh "$CAP" -p "$app" -O "$T/nobody" -d 1 >/dev/null 2>"$T/nobody.err"
is "$?" 1 "not user ID 0: exit 1"
is "$(wc -l < "$T/nobody.err" | tr -d ' ')" 1 "not user ID 0: one line"
like "$(cat "$T/nobody.err")" "error: must run as root, user ID 0 .*run 'doctor lttng'" \
	"not user ID 0: names what is missing and doctor"
is "$(lttngpod_daemons)" "" "no daemon left"
done_testing
