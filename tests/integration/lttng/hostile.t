#!/bin/sh
# shellcheck disable=SC2016 # commands and perl code for other shells
# lttng-capture next to a hostile app: root in its own mount namespace
# (without CAP_SYS_PTRACE, as in a pod), writing what it likes into the
# directory it shares with the sidecar (its /var/run/lttng). The sidecar's
# lttng-sessiond keeps its control sockets in the sidecar's own
# /var/run/lttng; only the application socket is in the shared directory.
# Each attack: the app cannot reach the client socket; a fake daemon, a
# forged PID file and a planted link in the shared directory change
# nothing (the capture works, no process of ours is killed, no file
# outside the output directory is written); temporary files stay in the
# private TMPDIR; a layout that shares /var/run/lttng or TMPDIR, or lets
# the app ptrace the sidecar, is refused in one line; names the app chose
# reach the terminal escaped.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter busybox lttng lttng-sessiond babeltrace2 perl setpriv timeout
T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
doctor="$SIDESCOPE_SRC/scripts/doctor"
export SIDESCOPE
[ -x "$APP" ] || skip_all "no $APP (run make)"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
on_exit lttngpod_stop_daemon

# as_app CMD...: run CMD as the app (its own mount namespace) and wait
as_app() { pod_app "$@"; wait "$!"; }
# uconnect PATH: "connected", or why a Unix stream socket connect failed
uconnect='use IO::Socket::UNIX;
	my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]);
	print $s ? "connected\n" : "$!\n"'
# ok when STATUS is not 0
isnt_zero() { if [ "$1" -ne 0 ]; then pass "$2"; else fail "$2"; fi; }
# ok when GOT is not WANT
isnt() { if [ "$1" != "$2" ]; then pass "$3"; else fail "$3"; diag "got and did not want: '$1'"; fi; }
# the events a capture printed, 0 when none
events_of() { sed -n 's/^events: //p' "$T/$1.out" | grep . || echo 0; }

lttngpod_app a -n 1000000
ok $? "the app started (pid $app in the pod)"
touch "$T/a.go"

# ---- 1. the layout: only the application socket is shared ------------------
lttngpod_capture lay -p "$app" -O "$T/lay"
wait_for_grep "$T/lay.err" "tracing .*into|error" 30
ok $? "capture started"
dpid=$(pod_sidecar cat /var/run/lttng/lttng-sessiond.pid)
is "$(pod_sidecar ls -A /run/lttng-apps | tr '\n' ' ')" "agent.port lttng-ust-sock-8 " \
	"the sidecar's app-socket directory holds the application socket and the agent port only"
as_app ls -A /var/run/lttng >"$T/app-view"
is "$(tr '\n' ' ' <"$T/app-view")" "agent.port lttng-ust-sock-8 " "the app's /var/run/lttng is that directory"
ok "$(pod_sidecar test -S /var/run/lttng/client-lttng-sessiond; echo $?)" \
	"the client socket is in the sidecar's own /var/run/lttng"
is "$(pod_sidecar ls -A /dev/shm | grep -v '^lttng-ust-wait-8\(-0\)\{0,1\}$')" "" \
	"the shared /dev/shm holds only lttng-ust's wait files"
ok "$(pod_sidecar test -d "/run/sidescope/tmp/$(pod_sidecar ls /run/sidescope/tmp | head -n 1)"; echo $?)" \
	"the temporary files are in the private TMPDIR"
is "$(pod_sidecar sh -c 'stat -c %a /run/sidescope/tmp/lttng-capture.*')" 700 "in a directory of mode 0700"
as_app stat -c %d /run/sidescope >"$T/app-dev"
isnt "$(cat "$T/app-dev")" "$(pod_sidecar stat -c %d /run/sidescope)" "which the app does not have"

pod_sidecar mkdir -p /run/sidescope/out
res=$(pod_sidecar busybox sh "$doctor" lttng -O /run/sidescope/out 2>&1)
is "$?" 0 "doctor lttng passes in this layout"
like "$res" "PASS  LTTng control directory /var/run/lttng: this sidecar's own" "doctor: the control directory is private"
like "$res" "PASS  LTTng app-socket directory /run/lttng-apps is the /var/run/lttng of PIDs [0-9,]*$app" \
	"doctor: the app-socket directory is the app's /var/run/lttng"
like "$res" "PASS  no other container can ptrace this one" "doctor: the app cannot ptrace the sidecar"

# ---- 2. the app cannot reach the client socket ------------------------------
as_app perl -e "$uconnect" /var/run/lttng/client-lttng-sessiond >"$T/c1"
like "$(cat "$T/c1")" "No such file" "app: no client socket in its /var/run/lttng"
as_app perl -e "$uconnect" "/proc/$dpid/root/run/lttng/client-lttng-sessiond" >"$T/c2"
like "$(cat "$T/c2")" "Permission denied" "app: not through the daemon's /proc/PID/root either"
is "$(pod_sidecar perl -e "$uconnect" "/proc/$dpid/root/run/lttng/client-lttng-sessiond")" connected \
	"(the sidecar does connect there: the path is right)"
as_app lttng --no-sessiond list >"$T/c3" 2>&1
isnt_zero $? "app: lttng finds no session daemon"
lttngpod_signal lay INT
wait "$cap_bg"
is "$?" 0 "meanwhile the capture ran"
ok "$([ "$(events_of lay)" -gt 0 ]; echo $?)" "and recorded the app ($(events_of lay) events)"
is "$(pod_sidecar ls -A /run/sidescope/tmp)" "" "no temporary file is left"
lttngpod_stop_daemon

# ---- 3. a fake daemon, a forged PID file and a planted link ----------------
# a process of the sidecar the forged PID file names
pod_sidecar sh -c 'echo "$$" > "$1"; exec sleep 1000' sh "$T/canary.pid" &
wait_for_file "$T/canary.pid" 10
canary=$(cat "$T/canary.pid")
on_exit "pod_sidecar kill $canary"
# a file of the sidecar's own that the planted link names
pod_sidecar sh -c 'printf canary > /run/sidescope/canary && chmod 0600 /run/sidescope/canary'
# the app's fake daemon: a client socket that logs every connection
fake='use IO::Socket::UNIX; my ($path, $log, $ready) = @ARGV;
	my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $path, Listen => 8) or die "$!\n";
	open(my $r, ">", $ready) or die; print $r "$$\n"; close $r;
	while (my $c = $s->accept) { open(my $l, ">>", $log); print $l "connection\n"; close $l; close $c }'
pod_app perl -e "$fake" /var/run/lttng/client-lttng-sessiond "$T/fake.log" "$T/fake.ready"
wait_for_file "$T/fake.ready" 10
ok $? "the app runs a fake daemon on client-lttng-sessiond in its /var/run/lttng"
on_exit "kill $(pod_host_pid "$(cat "$T/fake.ready")")"
as_app sh -c 'echo "$1" > /var/run/lttng/lttng-sessiond.pid &&
	ln -s /run/sidescope/canary /var/run/lttng/lttng-ust-sock-8' sh "$canary"
ok $? "and plants lttng-sessiond.pid (PID $canary, ours) and a link to our file as the application socket"
touch "$T/mark"
sleep 1	# what the capture writes is newer than the mark, to the second
lttngpod_capture fake -p "$app" -O "$T/fake" -d 2 --stop-daemon
wait "$cap_bg"
is "$?" 0 "the capture works"
ok "$([ "$(events_of fake)" -gt 0 ]; echo $?)" "and records the app ($(events_of fake) events)"
is "$(cat "$T/fake.log" 2>/dev/null)" "" "nothing of ours connected to the fake daemon"
ok "$(pod_sidecar kill -0 "$canary"; echo $?)" "the process the PID file names still runs"
is "$(lttngpod_daemons)" "" "--stop-daemon stopped our daemon only"
is "$(pod_sidecar sh -c 'stat -c %a /run/sidescope/canary; cat /run/sidescope/canary')" "600
canary" "the linked file is untouched (mode, content)"
is "$(pod_sidecar ls -A /run/lttng-apps | tr '\n' ' ')" "client-lttng-sessiond lttng-sessiond.pid " \
	"the shared directory holds what the app put there (our socket, which replaced the link, is gone)"
new=$(find "$T" -newer "$T/mark" ! -path "$T/fake" ! -path "$T/fake/*" \
	! -name 'fake.*' ! -path "$T/cwd" ! -path "$T" | sort)
is "$new" "" "no file outside the output directory was written"
is "$(pod_sidecar find /run/sidescope -mindepth 1 ! -path /run/sidescope/out | sort | tr '\n' ' ')" \
	"/run/sidescope/canary /run/sidescope/tmp " "and none left in the private volume"
babeltrace2 "$T/fake" >/dev/null 2>&1
ok $? "babeltrace2 reads the trace"
as_app rm -f /var/run/lttng/client-lttng-sessiond /var/run/lttng/lttng-sessiond.pid

# ---- 4. layouts that would let the app in: refused in one line --------------
# /var/run/lttng on the shared volume (the layout before)
pod_sidecar unshare --mount --propagation private sh -c \
	'mount --bind /run/lttng-apps /run/lttng && exec "$@"' sh \
	busybox sh "$CAP" -p "$app" -d 1 -O "$T/old" >"$T/old.out" 2>"$T/old.err"
is "$?" 1 "/var/run/lttng shared with the app: exit 1"
is "$(wc -l < "$T/old.err" | tr -d ' ')" 1 "one line"
like "$(cat "$T/old.err")" "error: /var/run/lttng is on a volume that other containers mount \\(PIDs [0-9 ]+\\): .*mount the emptyDir the app has at /var/run/lttng at /run/lttng-apps in this sidecar.*podspecs/lttng.yaml" \
	"it says why and how to fix the pod spec"
is "$(lttngpod_daemons)" "" "no daemon was started"
ok "$([ ! -e "$T/old" ]; echo $?)" "no output directory was made"
res=$(pod_sidecar unshare --mount --propagation private sh -c \
	'mount --bind /run/lttng-apps /run/lttng && exec "$@"' sh \
	busybox sh "$doctor" lttng -O /run/sidescope/out 2>&1)
is "$?" 1 "doctor lttng fails there too"
like "$res" "FAIL  LTTng control directory /var/run/lttng is on a volume other containers mount \\(PIDs [0-9,]*\\)" \
	"doctor: says why"
like "$res" "fix: mount the emptyDir the app has at /var/run/lttng at /run/lttng-apps in this sidecar, not at /var/run/lttng" \
	"doctor: with the fix"

# TMPDIR on the shared volume
pod_sidecar env TMPDIR=/run/lttng-apps/tmp busybox sh "$CAP" -p "$app" -d 1 -O "$T/tmpd" \
	>"$T/tmpd.out" 2>"$T/tmpd.err"
is "$?" 1 "TMPDIR shared with the app: exit 1"
is "$(wc -l < "$T/tmpd.err" | tr -d ' ')" 1 "one line"
like "$(cat "$T/tmpd.err")" "'/run/lttng-apps/tmp' is on a volume that other containers mount" "it says why"
as_app rm -rf /var/run/lttng/tmp

# a process of another container that holds CAP_SYS_PTRACE
nsenter -t "$POD_PAUSE" --pid --mount -- unshare --mount --propagation private \
	sh -c 'echo "$$" > "$1"; exec sleep 1000' sh "$T/tracer.pid" &
wait_for_file "$T/tracer.pid" 10
tracer=$(cat "$T/tracer.pid")
pod_sidecar busybox sh "$CAP" -p "$app" -d 1 -O "$T/ptr" >"$T/ptr.out" 2>"$T/ptr.err"
is "$?" 1 "another container with CAP_SYS_PTRACE: exit 1"
is "$(wc -l < "$T/ptr.err" | tr -d ' ')" 1 "one line"
like "$(cat "$T/ptr.err")" "another container \\(PIDs $tracer\\) may hold CAP_SYS_PTRACE: .*take SYS_PTRACE from the app container" \
	"it names the process and the fix"
res=$(pod_sidecar busybox sh "$doctor" lttng -O /run/sidescope/out 2>&1)
like "$res" "FAIL  PIDs $tracer of another container may hold CAP_SYS_PTRACE" "doctor says so too"
pod_sidecar kill "$tracer"

# ---- 5. names the app chose reach the terminal escaped ----------------------
evil="$T/$(printf 'e\033[31mx\302\233y')"
cp "$APP" "$evil"
pod_app "$evil" -r "$T/evil.ready" -g "$T/evil.go"
wait_for_file "$T/evil.ready" 10
ok $? "an app whose name holds ESC and a C1 CSI started"
on_exit "kill $(pod_host_pid "$(cat "$T/evil.ready")")"
pod_app sleep 1000
on_exit "kill $!"
sp=""
for _i in $(seq 50); do
	sp=$(pod_sidecar sh -c 'for d in /proc/[0-9]*; do [ "$(cat $d/cmdline 2>/dev/null | tr "\0" " ")" = "sleep 1000 " ] && echo ${d#/proc/}; done' | head -n 1)
	[ -n "$sp" ] && break
	sleep 0.1
done
# a daemon (a capture leaves it running), with both apps registered
lttngpod_capture wake -p "$app" -d 1 -O "$T/wake"
wait "$cap_bg"
for _i in $(seq 100); do
	[ "$(pod_sidecar lttng list -u 2>/dev/null | grep -c '^PID: ')" -ge 2 ] && break
	sleep 0.1
done
pod_sidecar busybox sh "$CAP" -p "$sp" --wait 1 -O "$T/esc" --stop-daemon >"$T/esc.out" 2>"$T/esc.err"
is "$?" 1 "a target that never registers: exit 1"
diag "$(cat "$T/esc.err")"
like "$(cat "$T/esc.err")" "PID [0-9]+ .*e\\\\x1b\\[31mx\\\\u009by" "the registered apps are listed, names escaped"
is "$(tr -d -c '\033' < "$T/esc.err" | wc -c | tr -d ' ')" 0 "no ESC reaches the terminal"
is "$(grep -c "$(printf '\302\233')" "$T/esc.err")" 0 "no C1 CSI either"

is "$(lttngpod_sessions)" "" "no session left behind"
done_testing
