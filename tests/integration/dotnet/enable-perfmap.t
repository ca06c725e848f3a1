#!/bin/sh
# .NET perf maps switched on and off through the runtime's diagnostics
# socket (tools/lib/rt/dotnetipc), on a plain .NET program started with no
# DOTNET_* variable in a simulated pod: its own mount namespace and /tmp,
# the pod's PID namespace; the client run as the sidecar (the pod's PIDs)
# and from the host (a PID namespace below ours: the socket is named by the
# PID the app sees). The client is test_dotnetipc.t's driver mode.
# Also: a link planted in the app's /tmp where the socket belongs, pointing
# at a socket of the sidecar, is refused (a naive connect by name reaches
# the sidecar's socket); DOTNET_EnableDiagnostics=0 gets its one clear line;
# an app running as another user, reached with the least capabilities.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd unshare nsenter setpriv dotnet
hotapp="$SIDESCOPE_BUILD/hotapp/HotApp.dll"
drv="$SIDESCOPE_BUILD/tests/unit/rt/test_dotnetipc.t"
[ -f "$hotapp" ] || skip_all "the plain .NET program is not built ($hotapp; run make)"
[ -x "$drv" ] || skip_all "the client's driver is not built ($drv; run make)"
T=$TMPDIR_TEST
chmod 0755 "$T"	# the app running as another user writes its PID here

pod_start || skip_all "cannot create PID and mount namespaces"

# "-u NAME" for every DOTNET_ or COMPlus_ variable of ours: the app is
# started the plain way
no_dotnet_env() {
	env | sed -n -e 's/^\(DOTNET_[A-Za-z0-9_]*\)=.*/-u \1/p' -e 's/^\(COMPlus_[A-Za-z0-9_]*\)=.*/-u \1/p'
}

# start_app NAME [ENV...] [-- WRAPPER...]: HotApp as the pod's app, for
# 300 s; its pod PID into $T/NAME.pid; sets APP_PID (the pod's) and
# APP_HOST (the host's)
start_app() {
	_n=$1
	shift
	rm -f "$T/$_n.pid"
	# shellcheck disable=SC2046,SC2016
	pod_app sh -c 'echo "$$" > "$0"; exec "$@"' "$T/$_n.pid" \
		env $(no_dotnet_env) HOME=/tmp "$@" dotnet "$hotapp" 300 /tmp/ready
	wait_for_file "$T/$_n.pid" 20 || return 1
	APP_PID=$(cat "$T/$_n.pid")
	APP_HOST=$(pod_host_pid "$APP_PID") || return 1
	on_exit "kill -9 $APP_HOST"
}

# wait_for_socket HOSTPID PODPID SECONDS: the socket's path on the host
wait_for_socket() {
	_w=$(($3 * 20))
	while [ "$_w" -gt 0 ]; do
		for _s in "/proc/$1/root/tmp/dotnet-diagnostic-$2-"*-socket; do
			[ -S "$_s" ] && { echo "$_s"; return 0; }
		done
		sleep 0.05
		_w=$((_w - 1))
	done
	return 1
}

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# holds_map HOSTPID MAP: whether the process has MAP open
holds_map() {
	for _f in "/proc/$1/fd/"*; do
		[ "$(readlink "$_f" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

# ---- the plain app: its perf map switched on, grown, switched off -----------
start_app plain
ok $? "HotApp started in the pod (pod PID $APP_PID, host PID $APP_HOST)"
pid=$APP_PID
host=$APP_HOST
is "$(tr '\0' '\n' < "/proc/$host/environ" | grep -c -e '^DOTNET_' -e '^COMPlus_')" 0 \
	"it has no DOTNET_ or COMPlus_ variable"
sock=$(wait_for_socket "$host" "$pid" 60)
ok $? "its diagnostics socket appears in its own /tmp (${sock##*/})"
ok "$([ ! -e "/tmp/${sock##*/}" ] || [ "$pid" -lt 3 ]; echo $?)" "and only there, not in the host's /tmp"
map="/proc/$host/root/tmp/perf-$pid.map"
ok "$([ ! -e "$map" ]; echo $?)" "no perf map before"

# switched on as soon as the runtime listens: before Main is compiled
out=$(pod_sidecar "$drv" --enable "$pid" 2>"$T/enable.err")
is "$?" 0 "EnablePerfMap by the sidecar, by the pod's PID"
[ -s "$T/enable.err" ] && diag "$(cat "$T/enable.err")"
like "$out" '^enabled in [0-9.]+ ms$' "it says how long it took"
diag "enable at start-up (lookup, connect, exchange): ${out#enabled in }"
ok "$([ -f "$map" ]; echo $?)" "the perf map appears in the app's /tmp as perf-$pid.map"
s0=$(size_of "$map")
holds_map "$host" "/tmp/perf-$pid.map"
ok $? "the runtime holds it open"

wait_for_file "/proc/$host/root/tmp/ready" 60
ok $? "HotApp runs its loop"
wait_for_grep "$map" 'HotApp::Work' 30
ok $? "the map names HotApp::Work"
# the hot loop's methods go up the tiers after the enable: new lines
_w=600
while [ "$(size_of "$map")" -le "$s0" ] && [ "$_w" -gt 0 ]; do sleep 0.05; _w=$((_w - 1)); done
s1=$(size_of "$map")
ok "$([ "$s1" -gt "$s0" ]; echo $?)" "the map grows as the runtime compiles ($s0 -> $s1 bytes)"
diag "$(grep -c 'HotApp::' "$map") HotApp lines: $(grep 'HotApp::Work' "$map" | sed 's/.*HotApp::/HotApp::/' | tr '\n' ' ')"

# the runtime's answer to ProcessInfo2, asked from the host: a PID
# namespace below ours, the socket named by the PID the app sees
out=$("$drv" --probe "$host" 2>"$T/probe.err")
is "$?" 0 "ProcessInfo2 from the host, by the host's PID"
like "$out" "nspid $pid" "the app's own PID found ($pid, $host on the host)"
like "$out" "socket /tmp/dotnet-diagnostic-$pid-[0-9]+-socket" "its socket as the app sees it"
ver=$(dotnet --list-runtimes | sed -n 's/^Microsoft\.NETCore\.App \([0-9][^ ]*\) .*/\1/p' | tail -n 1)
like "$out" "version $ver" "the runtime's version ($ver)"
like "$out" "assembly HotApp" "the entry assembly"

# switched off: the runtime closes the map, and writes no more
out=$(pod_sidecar "$drv" --disable "$pid" 2>"$T/disable.err")
is "$?" 0 "DisablePerfMap"
[ -s "$T/disable.err" ] && diag "$(cat "$T/disable.err")"
ok "$(if holds_map "$host" "/tmp/perf-$pid.map"; then echo 1; else echo 0; fi)" \
	"the runtime closed the map"
s2=$(size_of "$map")

# on again later, with the loop's code compiled: the runtime writes all of it
out=$(pod_sidecar "$drv" --enable "$pid" 2>"$T/enable2.err")
is "$?" 0 "EnablePerfMap again, the app warm"
diag "enable of a warm app: ${out#enabled in } ($(size_of "$map") bytes written)"
grep -q 'HotApp::Work' "$map"
ok $? "the map, rewritten, names HotApp::Work again"
pod_sidecar "$drv" --disable "$pid" >/dev/null 2>"$T/disable2.err"
is "$?" 0 "and off again"
s3=$(size_of "$map")

# ---- a link planted where the socket belongs ---------------------------------
# a process of the app's that is not .NET, a link named for its PID and start
# time pointing at a socket in the sidecar's private /run/sidescope
rm -f "$T/fake.pid"
# shellcheck disable=SC2016
pod_app sh -c 'echo "$$" > "$0"; exec sleep 300' "$T/fake.pid"
wait_for_file "$T/fake.pid" 10
fpid=$(cat "$T/fake.pid")
fhost=$(pod_host_pid "$fpid")
on_exit "kill -9 $fhost"
key=$(sed 's/.*) //' "/proc/$fhost/stat" | cut -d' ' -f20)
link="/proc/$fhost/root/tmp/dotnet-diagnostic-$fpid-$key-socket"
ln -s /run/sidescope/sidecar.sock "$link"
ok $? "a link planted in the app's /tmp: ${link##*/} -> /run/sidescope/sidecar.sock"
mkfifo "$T/listen.ctl"
pod_sidecar "$drv" --listen /run/sidescope/sidecar.sock < "$T/listen.ctl" > "$T/listen.out" &
listener=$!
exec 4> "$T/listen.ctl"
on_exit "kill $listener"
pod_sidecar timeout 10 sh -c 'while [ ! -S /run/sidescope/sidecar.sock ]; do sleep 0.05; done'
# what a naive client would do: connect by name, the link followed
pod_sidecar "$drv" --connect "/proc/$fpid/root/tmp/${link##*/}" 2>/dev/null
ok $? "a connect by name through the app's /tmp reaches the sidecar's socket (the attack)"
pod_sidecar "$drv" --enable "$fpid" 2>"$T/planted.err"
is "$?" 1 "the client refuses the link"
like "$(cat "$T/planted.err")" "dotnet-diagnostic-$fpid-$key-socket is a symbolic link, not a socket: refused" \
	"in one line: $(cat "$T/planted.err")"
exec 4>&-
wait "$listener"
is "$(cat "$T/listen.out")" "connections 1" "the sidecar's socket saw the naive connect only"

# ---- diagnostics disabled ----------------------------------------------------
start_app nodiag DOTNET_EnableDiagnostics=0
ok $? "HotApp with DOTNET_EnableDiagnostics=0 (pod PID $APP_PID)"
wait_for_file "/proc/$APP_HOST/root/tmp/ready" 60
ok $? "it runs its loop"
out=$(pod_sidecar "$drv" --enable "$APP_PID" 2>&1)
is "$?" 1 "EnablePerfMap is not possible"
is "$(printf '%s\n' "$out" | wc -l)" 1 "one line: $out"
like "$out" "DOTNET_EnableDiagnostics=0 in its environment" "it names the cause"
like "$out" "set DOTNET_PerfMapEnabled=1 in its environment at its next start" "and what to do"
ok "$([ ! -e "/proc/$APP_HOST/root/tmp/perf-$APP_PID.map" ]; echo $?)" "no perf map"
kill -9 "$APP_HOST"

# ---- an app of another user, the sidecar's least capabilities ----------------
# the runtime makes its socket 0600, its user's: connecting takes that user,
# or CAP_DAC_OVERRIDE
start_app user setpriv --reuid 1654 --regid 1654 --clear-groups --
ok $? "HotApp as uid 1654 (pod PID $APP_PID)"
usock=$(wait_for_socket "$APP_HOST" "$APP_PID" 60)
ok $? "its socket appears"
is "$(stat -c '%a %u' "$usock")" "600 1654" "0600, owned by uid 1654"
out=$(with_caps "$LEAST_CAPS" "$drv" --enable "$APP_HOST" 2>&1)
is "$?" 1 "with only $LEAST_CAPS: refused"
like "$out" "no permission to connect to /tmp/dotnet-diagnostic-$APP_PID-[0-9]+-socket \(the runtime makes it 0600" \
	"in one line: $out"
out=$(with_caps "$LEAST_CAPS,dac_override" "$drv" --enable "$APP_HOST" 2>&1)
is "$?" 0 "with CAP_DAC_OVERRIDE as well: $out"
with_caps "$LEAST_CAPS,dac_override" "$drv" --disable "$APP_HOST" >/dev/null 2>&1
kill -9 "$APP_HOST"

# the first app's map was not written to since it was switched off
is "$(size_of "$map")" "$s3" "the plain app's map unchanged since DisablePerfMap ($s3 bytes; $s2 after the first)"
done_testing
