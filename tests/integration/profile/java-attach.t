#!/bin/sh
# HotSpot's attach (tools/lib/rt/jattach) against real JVMs started the
# plain way, with no flag, in a simulated pod: the app in its own mount
# namespace with a private /tmp, in the pod's PID namespace. The driver
# (tests/unit/rt/test_jattach.t perfmap PID) asks for a perf map from the
# sidecar and from the host (where the JVM's PID is not the one it sees).
# Also: a method first compiled after the first map is named by the next;
# links planted at the trigger's and the socket's names are not followed; a
# process named java without libjvm, one with a libjvm.so that does not
# handle SIGQUIT, and a JVM started with -XX:+DisableAttachMechanism get no
# signal; a JVM of another user is refused with the podspecs' capabilities
# and attached to with CAP_SETUID and CAP_SETGID. Says how long a dump takes.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd java javac unshare nsenter setpriv
T=$TMPDIR_TEST
DRV="$SIDESCOPE_BUILD/tests/unit/rt/test_jattach.t"
# the capabilities the profiling podspecs give the sidecar
PODCAPS=-all,+bpf,+perfmon,+sys_ptrace,+syslog

[ -x "$DRV" ] || { fail "the driver $DRV is built"; done_testing; exit 1; }
# another user's JVM reads the classes and writes its ready files here
chmod 0755 "$T"
mkdir -p "$T/classes" "$T/shared" "$T/cwd2"
chmod 0777 "$T/shared"
javac -d "$T/classes" "$SIDESCOPE_SRC/tests/progs/HotJava.java" 2>"$T/javac.err"
ok $? "javac compiled tests/progs/HotJava.java"
chmod -R a+rX "$T/classes"

# host PID of the pod's PID $1
host_of() {
	_h=$(pod_host_pid "$1") || return 1
	on_exit "kill -KILL $_h"
	echo "$_h"
}

pod_start || skip_all "cannot create PID and mount namespaces"

# ---- a plain JVM ----
pod_app java -cp "$T/classes" HotJava "$T/app.ready" "$T/late.go" "$T/late.ready" \
	>"$T/app.out" 2>&1
wait_for_file "$T/app.ready" 30
ok $? "a plain JVM started in the pod"
app=$(cat "$T/app.ready")
host=$(host_of "$app")
diag "the JVM: pid $app in the pod, $host on the host"
ok "$([ ! -e "/proc/$host/root/tmp/.java_pid$app" ]; echo $?)" "no attach socket before"

pod_sidecar "$DRV" perfmap "$app" >"$T/side.out" 2>"$T/side.err"
is "$?" 0 "the sidecar asked it for a perf map"
[ -s "$T/side.err" ] && diag "$(cat "$T/side.err")"
like "$(cat "$T/side.out")" "^pid $app nspid $app jdk 1[7-9]|^pid $app nspid $app jdk [2-9][0-9]" \
	"probe: a JDK 17 or later, its PID as the sidecar sees it"
like "$(cat "$T/side.out")" "how self listening 0" "probe: no socket yet, our own uid"
map="/proc/$host/root/tmp/perf-$app.map"
ok "$([ -s "$map" ]; echo $?)" "the map is in the app's own /tmp (perf-$app.map)"
like "$(cat "$map")" ' long HotJava\.hotAlpha\(long\)$' "hotAlpha named"
like "$(cat "$map")" ' long HotJava\.hotBeta\(long\)$' "hotBeta named"
unlike "$(cat "$map")" 'lateGamma' "lateGamma not yet compiled, not named"
ok "$([ "$app" -eq "$host" ] || [ ! -e "/tmp/perf-$app.map" ]; echo $?)" \
	"nothing in the sidecar's /tmp"
ok "$([ -S "/proc/$host/root/tmp/.java_pid$app" ]; echo $?)" "the JVM's attach socket is open"
ok "$([ ! -e "/proc/$host/root/tmp/.attach_pid$app" ] && [ ! -e "$PWD/.attach_pid$app" ]; echo $?)" \
	"the trigger file was removed"
first=$(sed -n 's/^ms //p' "$T/side.out")
unlike "$(cat "$T/app.out")" "Full thread dump" "no thread dump in the app's output"

# from the host: another PID namespace level, the JVM's own PID differs
"$DRV" perfmap "$host" 10 >"$T/host.out" 2>"$T/host.err"
is "$?" 0 "the host asked it ten times"
like "$(cat "$T/host.out")" "^pid $host nspid $app " "the host's PID, the JVM's own for the file"
like "$(cat "$T/host.out")" "listening 1" "the socket was open: no signal"
again=$(sed -n 's/^ms //p' "$T/host.out" | sort -n | sed -n 5p)
diag "a dump: ${first} ms the first time (SIGQUIT, the listener's start), ${again} ms after (median of 10)"

# a method compiled after the first map is named by the next one
: >"$T/late.go"
wait_for_file "$T/late.ready" 30
ok $? "the JVM now runs lateGamma"
named=1
for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	pod_sidecar "$DRV" perfmap "$app" >/dev/null 2>&1 || break
	if grep -q ' long HotJava\.lateGamma(long)$' "$map"; then
		named=0
		break
	fi
	sleep 0.5	# its compilation is the JVM's, in the background
done
ok "$named" "lateGamma, compiled later, named by a later dump"

# ---- links planted in the app's /tmp ----
pod_sidecar sh -c 'mkdir -p /run/sidescope/tmp'
pod_sidecar "$DRV" listen /run/sidescope/tmp/victim.sock "$T/victim.rec" >"$T/listen.out" 2>&1 &
wait_for_file "$T/listen.out" 10
ok $? "a socket of the sidecar's own, at /run/sidescope/tmp/victim.sock"
printf 'keep\n' >"$T/victim"
chmod 0644 "$T/victim"
before=$(stat -c '%s %Y %a' "$T/victim")
(cd "$T/cwd2" && pod_app java -cp "$T/classes" HotJava "$T/app2.ready" >"$T/app2.out" 2>&1)
wait_for_file "$T/app2.ready" 30
ok $? "a second JVM started"
app2=$(cat "$T/app2.ready")
host2=$(host_of "$app2")
ln -s /run/sidescope/tmp/victim.sock "/proc/$host2/root/tmp/.java_pid$app2"
ln -s "$T/victim" "/proc/$host2/root/tmp/.attach_pid$app2"
ok "$([ -L "/proc/$host2/root/tmp/.java_pid$app2" ] && [ -L "/proc/$host2/root/tmp/.attach_pid$app2" ]; echo $?)" \
	"links planted at .java_pid$app2 and .attach_pid$app2 in its /tmp"
pod_sidecar "$DRV" perfmap "$app2" >"$T/side2.out" 2>"$T/side2.err"
is "$?" 0 "a perf map all the same"
[ -s "$T/side2.err" ] && diag "$(cat "$T/side2.err")"
like "$(cat "/proc/$host2/root/tmp/perf-$app2.map")" 'HotJava\.hotAlpha' "its map names hotAlpha"
is "$(cat "$T/victim.rec" 2>/dev/null)" "" "the sidecar's socket got no connection"
is "$(stat -c '%s %Y %a' "$T/victim")" "$before" "the file the trigger link names is untouched"
is "$(cat "$T/victim")" "keep" "and holds what it held"
ok "$([ -S "/proc/$host2/root/tmp/.java_pid$app2" ]; echo $?)" \
	"the socket link replaced by the JVM's own socket"
ok "$([ -L "/proc/$host2/root/tmp/.attach_pid$app2" ]; echo $?)" "the planted trigger link left alone"
ok "$([ ! -e "$T/cwd2/.attach_pid$app2" ]; echo $?)" \
	"the trigger made in its working directory instead, and removed"
unlike "$(cat "$T/app2.out")" "Full thread dump" "no thread dump in its output"

# ---- processes that must get no signal ----
# sleep named java; then the same with a library named libjvm.so mapped
mkdir -p "$T/fake/lib/server"
cp "$(command -v sleep)" "$T/fake/java"
cp "$(ldd "$(command -v sleep)" | awk '/libc\.so/ { print $3 }')" "$T/fake/lib/server/libjvm.so"
# A background job of a shell starts with SIGQUIT ignored: the fakes get it
# back at its default, so a SIGQUIT would kill them
# shellcheck disable=SC2016 # the inner shell's $$ and arguments
(cd "$T/shared" && pod_app sh -c 'echo $$ > "$1"; exec env --default-signal=QUIT "$2" 1000' \
	sh "$T/fake1.ready" "$T/fake/java")
wait_for_file "$T/fake1.ready" 10
f1=$(cat "$T/fake1.ready")
hf1=$(host_of "$f1")
is "$(cat "/proc/$hf1/comm")" "java" "a process named java (a copy of sleep)"
! pod_sidecar "$DRV" perfmap "$f1" >"$T/f1.out" 2>"$T/f1.err"
ok $? "refused"
like "$(cat "$T/f1.err")" "is not a HotSpot JVM \(no libjvm.so mapped\)" "said: not a HotSpot JVM"
like "$(cat "$T/f1.out")" "errno ENOEXEC" "ENOEXEC"
# shellcheck disable=SC2016 # the inner shell's $$ and arguments
(cd "$T/shared" && pod_app sh -c 'echo $$ > "$1"; LD_PRELOAD="$3" exec env --default-signal=QUIT "$2" 1000' sh \
	"$T/fake2.ready" "$T/fake/java" "$T/fake/lib/server/libjvm.so")
wait_for_file "$T/fake2.ready" 10
f2=$(cat "$T/fake2.ready")
hf2=$(host_of "$f2")
like "$(cat "/proc/$hf2/maps")" "/lib/server/libjvm\.so" "another maps a libjvm.so"
# SigIgn and SigCgt: bit 2 (SIGQUIT) is in the last hex digit
quit_default() {
	for _m in SigIgn SigCgt; do
		_d=$(sed -n "s/^$_m:[[:space:]]*//p" "/proc/$1/status")
		case "${_d#"${_d%?}"}" in [4567cdefCDEF]) return 1 ;; esac
	done
}
for _p in "$hf1" "$hf2"; do
	quit_default "$_p"
	ok $? "SIGQUIT is at its default in process $_p: one would kill it"
done
! pod_sidecar "$DRV" perfmap "$f2" >"$T/f2.out" 2>"$T/f2.err"
ok $? "refused"
like "$(cat "$T/f2.err")" "does not handle SIGQUIT" "said: it does not handle SIGQUIT"
# a signal sent wakes its target at once: asleep with nothing pending, it got none
for _p in "$hf1" "$hf2"; do
	like "$(grep -E '^(State|SigPnd|ShdPnd):' "/proc/$_p/status" | tr '\n\t' '  ')" \
		"^State: S \(sleeping\) SigPnd: 0+ ShdPnd: 0+ $" "process $_p sleeps on, no signal pending"
done
made=0
for _f in "/proc/$hf1/root/tmp/".attach_pid* "/proc/$hf2/root/tmp/".attach_pid* "$T/shared/".attach_pid*; do
	[ -e "$_f" ] && made=$((made + 1))
done
is "$made" 0 "no trigger file made in their /tmp or working directory"

pod_app java -XX:+DisableAttachMechanism -cp "$T/classes" HotJava "$T/app3.ready" \
	>"$T/app3.out" 2>&1
wait_for_file "$T/app3.ready" 30
app3=$(cat "$T/app3.ready")
host3=$(host_of "$app3")
! pod_sidecar "$DRV" perfmap "$app3" >"$T/a3.out" 2>"$T/a3.err"
ok $? "-XX:+DisableAttachMechanism: refused"
like "$(cat "$T/a3.err")" "runs with -XX:\+DisableAttachMechanism" "said so, with what to do"
like "$(cat "$T/a3.out")" "errno EOPNOTSUPP" "EOPNOTSUPP"
unlike "$(cat "$T/app3.out")" "Full thread dump" "no SIGQUIT (it would print a thread dump)"
ok "$([ ! -e "/proc/$host3/root/tmp/.attach_pid$app3" ]; echo $?)" "no trigger file"

# ---- another user's JVM ----
pod_app setpriv --reuid 1000 --regid 1000 --clear-groups -- \
	java -cp "$T/classes" HotJava "$T/shared/app4.ready" >"$T/shared/app4.out" 2>&1
wait_for_file "$T/shared/app4.ready" 30
ok $? "a JVM of uid 1000 started"
app4=$(cat "$T/shared/app4.ready")
host4=$(host_of "$app4")
! pod_sidecar setpriv --inh-caps="$PODCAPS" --bounding-set="$PODCAPS" -- \
	"$DRV" perfmap "$app4" >"$T/a4.out" 2>"$T/a4.err"
ok $? "with the podspecs' capabilities: refused"
like "$(cat "$T/a4.err")" "runs as uid 1000 gid 1000.*CAP_SETUID and CAP_SETGID" \
	"said: the capabilities it takes"
like "$(cat "$T/a4.out")" "errno EPERM" "EPERM"
ok "$([ ! -e "/proc/$host4/root/tmp/.java_pid$app4" ] && [ ! -e "/proc/$host4/root/tmp/.attach_pid$app4" ]; echo $?)" \
	"nothing signalled or made"
caps="$PODCAPS,+setuid,+setgid"
pod_sidecar setpriv --inh-caps="$caps" --bounding-set="$caps" -- \
	"$DRV" perfmap "$app4" 3 >"$T/a4b.out" 2>"$T/a4b.err"
is "$?" 0 "with CAP_SETUID and CAP_SETGID added: a perf map"
[ -s "$T/a4b.err" ] && diag "$(cat "$T/a4b.err")"
like "$(cat "$T/a4b.out")" "how user" "made by a child process as uid 1000"
like "$(cat "/proc/$host4/root/tmp/perf-$app4.map")" 'HotJava\.hotBeta' "its map names hotBeta"
is "$(stat -c '%u' "/proc/$host4/root/tmp/.java_pid$app4")" 1000 "the socket is uid 1000's"
diag "as another user: $(sed -n 's/^ms //p' "$T/a4b.out" | tr '\n' ' ')ms"
unlike "$(cat "$T/shared/app4.out")" "Full thread dump" "no thread dump in its output"

done_testing
