#!/bin/sh
# Names for a running app's JIT code with no restart and no flag
# (tools/lib/rt/rtnames): a plain .NET program and a plain Java program,
# each started the ordinary way as the app of a simulated pod (its own PID
# namespace's PIDs, its own /tmp), profiled from the sidecar. The .NET
# runtime is asked for a perf map and left as it was found (the map
# switched off again); the JVM is asked for one, again during the capture
# and at its end, so that a method first compiled mid-capture is named.
# --hands-off asks nothing. The refusals: diagnostics disabled, a process
# that looks like a JVM without being one (never signalled), a fake
# diagnostics socket that never answers or answers garbage (bounded, one
# line, the capture still written).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter dotnet java javac cc timeout
hotapp="$SIDESCOPE_BUILD/hotapp/HotApp.dll"
fake="$SIDESCOPE_BUILD/tests/progs/fake_dotnet"
[ -f "$hotapp" ] || skip_all "the plain .NET program is not built ($hotapp; run make)"
[ -x "$fake" ] || skip_all "needs $fake (make)"
T=$TMPDIR_TEST
pod_start || skip_all "cannot create PID and mount namespaces"

# share FILE PATTERN: percent of the folded file's samples matching PATTERN
share() {
	awk -v p="$2" '{ n += $NF } $0 ~ p { m += $NF } END { printf "%d", n ? 100 * m / n : 0 }' "$1"
}
samples() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
# no DOTNET_ or COMPlus_ variable of ours reaches the app
no_dotnet_env() {
	env | sed -n -e 's/^\(DOTNET_[A-Za-z0-9_]*\)=.*/-u \1/p' -e 's/^\(COMPlus_[A-Za-z0-9_]*\)=.*/-u \1/p'
}
# start NAME CMD...: CMD as the pod's app; APP (pod PID), HOST (host PID)
start() {
	_n=$1
	shift
	rm -f "$T/$_n.pid"
	# shellcheck disable=SC2016
	pod_app sh -c 'echo "$$" > "$0"; exec "$@"' "$T/$_n.pid" "$@"
	wait_for_file "$T/$_n.pid" 20 || return 1
	APP=$(cat "$T/$_n.pid")
	HOST=$(pod_host_pid "$APP") || return 1
	on_exit "kill -9 $HOST"
}
# holds_map HOSTPID MAP: whether the process has the file MAP open
holds_map() {
	for _f in "/proc/$1/fd/"*; do
		[ "$(readlink "$_f" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

# ---- .NET, started the plain way ---------------------------------------------
# shellcheck disable=SC2046
start net env $(no_dotnet_env) HOME=/tmp dotnet "$hotapp" 120 /tmp/ready
ok $? "HotApp started as the pod's app (pod PID $APP)"
wait_for_file "/proc/$HOST/root/tmp/ready" 30
map="/proc/$HOST/root/tmp/perf-$APP.map"
ok "$([ ! -e "$map" ]; echo $?)" "it has no perf map"
pod_sidecar "$SIDESCOPE" profile -p "$APP" -F 199 -d 4 -o "$T/net.folded" 2> "$T/net.err"
is "$?" 0 "profile -p as the sidecar"
n=$(samples "$T/net.folded")
named=$(share "$T/net.folded" 'HotApp::(Work|Outer)')
diag "$n samples, $named% in HotApp's methods, by name"
ok "$([ "$n" -ge 300 ] && [ "$named" -ge 90 ]; echo $?)" \
	"at least 90% of the samples name its methods ($named%)"
like "$(cat "$T/net.err")" "PID $APP \\(.NET\\): its perf map switched on for this capture, off again" \
	"it says it switched the perf map on, and off at the end"
ok "$([ -s "$map" ]; echo $?)" "the map was written in the app's own /tmp"
ok "$(if holds_map "$HOST" "/tmp/perf-$APP.map"; then echo 1; else echo 0; fi)" \
	"and switched off again: the runtime no longer holds it open"

# --hands-off: nothing asked
# shellcheck disable=SC2046
start net2 env $(no_dotnet_env) HOME=/tmp dotnet "$hotapp" 120 /tmp/ready2
wait_for_file "/proc/$HOST/root/tmp/ready2" 30
pod_sidecar "$SIDESCOPE" profile -p "$APP" -d 2 --hands-off -o "$T/off.folded" 2> "$T/off.err"
is "$?" 0 "profile --hands-off"
like "$(cat "$T/off.err")" "PID $APP \\(.NET\\): no perf map, its runtime not asked for one \\(--hands-off\\)" \
	"says it did not ask"
ok "$([ ! -e "/proc/$HOST/root/tmp/perf-$APP.map" ]; echo $?)" "and no perf map was made"
is "$(share "$T/off.folded" 'HotApp::')" 0 "its methods are unnamed then"

# diagnostics disabled: one clear line, the capture written
# shellcheck disable=SC2046
start nodiag env $(no_dotnet_env) HOME=/tmp DOTNET_EnableDiagnostics=0 dotnet "$hotapp" 120 /tmp/ready3
wait_for_file "/proc/$HOST/root/tmp/ready3" 30
pod_sidecar "$SIDESCOPE" profile -p "$APP" -d 2 -o "$T/nodiag.folded" 2> "$T/nodiag.err"
is "$?" 0 "profile of a .NET app with diagnostics disabled: exit 0"
ok "$([ -s "$T/nodiag.folded" ]; echo $?)" "its profile written"
is "$(grep -c "PID $APP (.NET)" "$T/nodiag.err")" 1 "one line about it"
like "$(cat "$T/nodiag.err")" "DOTNET_" "which says what to set"

# ---- a fake diagnostics socket: silent, or garbage ---------------------------
printf 'int coreclr_fake;\n' > "$T/lib.c"
cc -shared -fPIC -o "$T/libcoreclr.so" "$T/lib.c"
ok $? "a library named libcoreclr.so for the fake .NET process"
for how in silent garbage; do
	start "fake-$how" "$fake" "$T/libcoreclr.so" "$how" 60 /tmp/fake.ready
	wait_for_file "/proc/$HOST/root/tmp/fake.ready" 10
	t0=$(date +%s)
	pod_sidecar timeout -s KILL 30 "$SIDESCOPE" profile -p "$APP" -d 2 -o "$T/fake-$how.folded" \
		2> "$T/fake-$how.err"
	rc=$?
	secs=$(($(date +%s) - t0))
	ok "$([ "$rc" = 0 ] && [ "$secs" -le 8 ]; echo $?)" \
		"a diagnostics socket that answers $how: the capture ends in time, exit 0 (${secs} s)"
	like "$(cat "$T/fake-$how.folded")" 'fake_spin' "its profile written, the app's code named"
	is "$(grep -c "PID $APP (.NET)" "$T/fake-$how.err")" 1 "and one line says why there are no JIT names"
done

# ---- Java, started the plain way -------------------------------------------
mkdir -p "$T/classes"
javac -d "$T/classes" "$SIDESCOPE_SRC/tests/progs/HotJava.java" 2> "$T/javac.err"
ok $? "javac compiled tests/progs/HotJava.java" || diag "$(cat "$T/javac.err")"
start jvm java -cp "$T/classes" HotJava /tmp/jready /tmp/late.go /tmp/late.ready
wait_for_file "/proc/$HOST/root/tmp/jready" 60
ok $? "HotJava started as the pod's app (pod PID $APP), with no flag"
ok "$([ ! -e "/proc/$HOST/root/tmp/perf-$APP.map" ]; echo $?)" "it has no perf map"
# a method first called 2 s into the capture, compiled during it
( sleep 2; : > "/proc/$HOST/root/tmp/late.go" ) &
pod_sidecar "$SIDESCOPE" profile -p "$APP" -F 199 -d 6 -o "$T/jvm.folded" 2> "$T/jvm.err"
is "$?" 0 "profile -p of the JVM as the sidecar"
n=$(samples "$T/jvm.folded")
named=$(share "$T/jvm.folded" 'HotJava\.(hotAlpha|hotBeta|lateGamma|main)')
unknown=$(share "$T/jvm.folded" '\[unknown\]')
diag "$n samples, $named% in HotJava's methods, $unknown% [unknown]"
ok "$([ "$n" -ge 100 ] && [ "$named" -ge 90 ]; echo $?)" \
	"at least 90% of the samples name its methods ($named%)"
like "$(cat "$T/jvm.folded")" 'HotJava\.lateGamma' "the method first compiled during the capture is named"
like "$(cat "$T/jvm.err")" "PID $APP \\(JVM\\): its perf map written" "it says it asked the JVM"

# ---- a process named java that is no JVM: never signalled --------------------
cp "$(command -v sleep)" "$T/java"
start notjvm "$T/java" 60
pod_sidecar "$SIDESCOPE" profile -p "$APP" -d 1 -o "$T/notjvm.folded" 2> "$T/notjvm.err"
is "$?" 0 "profile of a process named java without libjvm.so"
kill -0 "$HOST"
ok $? "it is still alive (no SIGQUIT sent)"
ok "$([ ! -e "/proc/$HOST/root/tmp/.attach_pid$APP" ]; echo $?)" "and no attach file was made"
done_testing
