#!/bin/sh
# The hostile app: a process that is root in its own mount namespace of a
# simulated pod, with a container's default capabilities (no CAP_SYS_PTRACE,
# CAP_SYS_ADMIN, CAP_BPF), attacking the sidecar through everything it
# controls (tests/progs/hostile_app.c): its perf map (a FIFO, a link to
# /dev/zero, an absolute link to a sidecar file, 2 GiB of holes, a file
# that grows without end), its names (terminal escapes), its mappings (a
# /proc/PID/maps past 64 MiB, an assembly truncated while mapped), a FIFO
# where its debug file would be, links in its root, and every file that
# appears in a directory it shares with the sidecar. Each command must end
# in bounded time and memory, write nothing outside its output, print no
# raw control character, and still capture what it can.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd unshare nsenter setpriv strip readelf mkfifo timeout jq
[ -x /usr/bin/time ] || skip_all "needs GNU time (/usr/bin/time)"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
H="$SIDESCOPE_BUILD/tests/progs/hostile_app"
[ -x "$H" ] || skip_all "needs $H (make)"

pod_start || skip_all "cannot create PID and mount namespaces"

# what a container's root has by default (Docker, containerd, CRI-O)
APP_CAPS="chown,dac_override,fowner,fsetid,kill,setgid,setuid,setpcap,net_bind_service,net_raw,sys_chroot,mknod,audit_write,setfcap"
W=$TMPDIR_TEST
SECRET=/run/sidescope/secret.map	# the sidecar's own: the app's root has no such file

# start_hostile NAME [PRE] -- ARGS...: the app, PRE run first as full root in
# its mount namespace (mounts), then hostile_app ARGS with a container's
# capabilities; sets APP (pod PID), JIT (its JIT code) and HOST (host PID).
start_hostile() {
	_n=$1
	_pre=":"
	shift
	if [ "$1" != -- ]; then
		_pre=$1
		shift
	fi
	shift
	mkdir -p "$W/$_n"
	# shellcheck disable=SC2016
	pod_app sh -c "$_pre"' && exec setpriv --inh-caps=-all --bounding-set="$0" -- "$@"' \
		"$(caps_bounding_set "$APP_CAPS")" "$H" --ready "$W/$_n/ready" "$@"
	wait_for_file "$W/$_n/ready" 20 || return 1
	APP=$(sed -n 1p "$W/$_n/ready")
	JIT=$(sed -n 2p "$W/$_n/ready")
	HOST=$(pod_host_pid "$APP")
	[ -n "$HOST" ] || return 1
	on_exit "kill $HOST 2>/dev/null"
}

stop_hostile() {
	kill "$HOST" 2>/dev/null
	for _i in $(seq 50); do
		[ -d "/proc/$HOST" ] || return 0
		sleep 0.1
	done
	kill -9 "$HOST" 2>/dev/null
}

# run NAME CMD...: CMD in the sidecar, at most 120 s, timed; stdout and
# stderr in $W/NAME.out and .err; sets RC, SECS and RSS (MiB, peak)
run() {
	_n=$1
	shift
	_t0=$(date +%s)
	pod_sidecar /usr/bin/time -f '%M' -o "$W/$_n.rss" timeout -s KILL 120 "$@" \
		> "$W/$_n.out" 2> "$W/$_n.err"
	RC=$?
	SECS=$(($(date +%s) - _t0))
	RSS=$(($(tail -n 1 "$W/$_n.rss" 2>/dev/null || echo 0) / 1024))
	[ "$RC" = 0 ] || diag "$_n: exit $RC after ${SECS}s: $(head -c 600 "$W/$_n.err")"
}

# limit MIB: a memory bound, doubled in a SANITIZE=1 build (ASan's shadow,
# redzones and quarantine roughly double what a heap costs)
limit() {
	if [ "${SANITIZE:-0}" = 1 ]; then echo $(($1 * 2)); else echo "$1"; fi
}

# raw FILE...: true when a file holds a raw control character (C0 but
# newline and tab, DEL, ESC, C1 encoded in UTF-8, a lone C1 byte)
raw() {
	LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$@" && return 0
	LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$@"
}

# profiled NAME: the capture ended in bounded time with samples of the app
profiled() {
	ok "$([ "$RC" = 0 ] && [ "$SECS" -lt 40 ]; echo $?)" "$1: profile ends, exit 0 (${SECS}s)"
	like "$(cat "$W/$1.folded" 2>/dev/null)" "hostile_spin" "$1: the app's native code is still named"
}

pod_sidecar sh -c "printf 'JIT_ADDR 100 SIDECAR_SECRET_LEAKED\n' > $SECRET"

# ---- perf maps ----------------------------------------------------------

start_hostile valid -- --perfmap valid
ok $? "the hostile app runs as root with a container's capabilities"
pod_sidecar sh -c "sed -i 's/JIT_ADDR/$JIT/' $SECRET"
run valid "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/valid.folded" -o "$W/valid.json"
profiled valid
like "$(cat "$W/valid.folded")" '\\x1b\]0.pwned\\x07Jit\\x1b\[2J\\u009b31mEvil' \
	"JIT names keep their escapes, escaped"
ok "$(raw "$W/valid.folded"; [ $? != 0 ]; echo $?)" "no raw control character in the folded stacks"
like "$(cat "$W/valid.folded")" ';L{1020,1024}\.\.\._\[j\] ' "a 4 KiB JIT name is cut at 1 KiB with '...'"
run valid-top "$SIDESCOPE" profile -p "$APP" -d 2
ok "$(raw "$W/valid-top.out" "$W/valid-top.err"; [ $? != 0 ]; echo $?)" \
	"no raw control character in the top table"
run valid-ps "$SIDESCOPE" ps
like "$(cat "$W/valid-ps.out")" ' \\x1b\[1m\\u009b1m' "ps shows the app's command line escaped"
ok "$(raw "$W/valid-ps.out"; [ $? != 0 ]; echo $?)" "no raw control character in ps"
run valid-ps-p "$SIDESCOPE" ps -p "$APP"
ok "$(raw "$W/valid-ps-p.out"; [ $? != 0 ]; echo $?)" "no raw control character in ps -p"
stop_hostile

start_hostile secret -- --perfmap secret --secret "$SECRET"
pod_sidecar sh -c "sed -i 's/^[0-9a-f]* /$JIT /' $SECRET"
run secret "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/secret.folded"
profiled secret
unlike "$(cat "$W/secret.folded")" "SIDECAR_SECRET_LEAKED" \
	"a perf map linked to a sidecar file (absolute link) is not read from the sidecar's root"
stop_hostile

for mode in fifo devzero; do
	start_hostile "$mode" -- --perfmap "$mode"
	run "$mode" "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/$mode.folded"
	profiled "$mode"
	like "$(cat "$W/$mode.err")" "perf map .* is not a regular file; ignored" \
		"$mode: one warning: not a regular file"
	stop_hostile
done

start_hostile sparse -- --perfmap sparse
run sparse "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/sparse.folded"
profiled sparse
ok "$([ "$RSS" -lt "$(limit 400)" ]; echo $?)" "a 2 GiB sparse perf map costs at most the 256 MiB read (${RSS} MiB)"
like "$(cat "$W/sparse.err")" "holds more than 256 MiB; its oldest [0-9]+ MiB are left out" \
	"and says what it left out"
run sparse-small "$SIDESCOPE" profile -p "$APP" -d 2 --max-perf-map 16M -o "$W/sparse-small.folded"
ok "$([ "$RC" = 0 ] && [ "$RSS" -lt "$(limit 120)" ]; echo $?)" "--max-perf-map 16M: ${RSS} MiB"
stop_hostile

start_hostile grow -- --perfmap grow
run grow "$SIDESCOPE" profile -p "$APP" -d 4 --max-perf-map 64M -o "$W/grow.folded"
profiled grow
ok "$([ "$RSS" -lt "$(limit 300)" ]; echo $?)" "a perf map growing without end: bounded (${RSS} MiB)"
stop_hostile

start_hostile cycle -- --perfmap cycle --secret "$SECRET"
run cycle "$SIDESCOPE" profile -p "$APP" -d 4 --max-perf-map 64M -o "$W/cycle.folded"
profiled cycle
unlike "$(cat "$W/cycle.folded")" "SIDECAR_SECRET_LEAKED" "cycling attacks: no sidecar file read"
stop_hostile

# ---- mappings and files ---------------------------------------------------

start_hostile maps -- --maps 60000
run maps "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/maps.folded"
profiled maps
ok "$([ "$RSS" -lt "$(limit 300)" ]; echo $?)" "a 240 MiB /proc/PID/maps: 64 MiB of it read (${RSS} MiB)"

# a stripped binary whose debug files (by build id and .gnu_debuglink)
# are FIFOs in the app's root
cp "$H" "$W/hostile_stripped"
strip --only-keep-debug -o "$W/hostile.debug" "$W/hostile_stripped"
strip -o "$W/hostile_stripped.s" "$W/hostile_stripped"
objcopy --add-gnu-debuglink="$W/hostile.debug" "$W/hostile_stripped.s" "$W/hostile_stripped" 2>/dev/null ||
	cp "$W/hostile_stripped.s" "$W/hostile_stripped"
id=$(readelf -n "$W/hostile_stripped" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
ok "$([ -n "$id" ]; echo $?)" "the stripped binary has a build id"
stop_hostile
H_SAVED=$H
H="/tmp/hostile_stripped"
# shellcheck disable=SC2016
start_hostile debugfifo "cp '$W/hostile_stripped' /tmp/ && mkdir -p /tmp/.debug && mkfifo /tmp/.debug/hostile.debug && mount -t tmpfs tmpfs /usr/lib/debug && mkdir -p /usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2) && mkfifo /usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" -- --perfmap valid
ok $? "the stripped app runs with FIFOs for its debug files"
H=$H_SAVED
run debugfifo "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/debugfifo.folded"
ok "$([ "$RC" = 0 ] && [ "$SECS" -lt 40 ]; echo $?)" "FIFOs at the debug-file paths: no hang (${SECS}s)"
stop_hostile

# a large ReadyToRun assembly (the .NET SDK's, which CI installs): its
# indexing takes long enough for the truncations to land in it
DLL=$(ls "$(dirname "$(readlink -f "$(command -v dotnet)")")"/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll 2>/dev/null | tail -n 1)
ok "$([ -f "$DLL" ]; echo $?)" "a ReadyToRun assembly to map ($DLL)"
start_hostile dll -- --dll "$DLL"
run dll "$SIDESCOPE" profile -p "$APP" -d 3 -o "$W/dll.folded"
profiled dll
ok "$([ "$RC" -lt 128 ]; echo $?)" "profile: an assembly truncated while read, no SIGBUS (exit $RC)"
worst=0
for i in $(seq 20); do
	run "dll-methods$i" "$SIDESCOPE" dotnet-methods "/proc/$APP/root/tmp/App.dll"
	[ "$RC" -le "$worst" ] || worst=$RC
done
ok "$([ "$worst" -lt 128 ]; echo $?)" "dotnet-methods, 20 times: never killed by a signal (worst exit $worst)"
stop_hostile

# ---- uprobes ------------------------------------------------------------

start_hostile uprobe -- --perfmap valid
# a sidecar-only binary, and a link to it planted in the app's root
pod_sidecar cp "$SIDESCOPE_BUILD/tests/progs/uprobe_target" /run/sidescope/sidecar_bin
pod_sidecar sh -c "ln -sf /run/sidescope/sidecar_bin /proc/$APP/root/tmp/evil"
run uprobe-link "$SIDESCOPE" uprobe -p "$APP" -d 2 'p:/tmp/evil:take_dotnet'
ok "$([ "$RC" = 1 ]; echo $?)" "a probe on an absolute link in the app's root fails (exit $RC)"
like "$(cat "$W/uprobe-link.err")" "cannot open /tmp/evil in the mount namespace of PID $APP: No such file" \
	"it names the app's file, not the sidecar's"
unlike "$(cat "$W/uprobe-link.err")" "tracing" "nothing of the sidecar was probed"
run uprobe-greet "$SIDESCOPE" uprobe -p "$APP" -c 6 -d 20 "p:$H:hostile_greet \"%s\", str(arg1)"
ok "$([ "$RC" = 0 ]; echo $?)" "uprobe on the app's hostile strings"
ok "$(raw "$W/uprobe-greet.out" "$W/uprobe-greet.err"; [ $? != 0 ]; echo $?)" \
	"no raw control character in uprobe's lines"
like "$(cat "$W/uprobe-greet.out")" '\\x1b\[31mred' "escapes shown escaped"
stop_hostile

# ---- a directory shared with the app ---------------------------------------

mkdir -p "$W/outdir"
printf 'sidecar secret\n' > "$W/outside"
sum_before=$(cksum < "$W/outside")
pod_sidecar sh -c "ln -sf '$W/outside' /run/sidescope/target"
start_hostile shared -- --watch "$W/outdir" --secret /run/sidescope/target --canary "$W/canary"
for i in 1 2 3; do
	run "shared$i" "$SIDESCOPE" profile -p "$APP" -d 1 -o "$W/outdir/p$i.svg" -o "$W/outdir/p$i.folded"
	ok "$([ "$SECS" -lt 40 ] && { [ "$RC" = 0 ] || [ "$(wc -l < "$W/shared$i.err")" -le 3 ]; }; echo $?)" \
		"output into a directory the app rewrites: no hang, exit $RC"
done
is "$(cksum < "$W/outside")" "$sum_before" "no output went through the app's links"
ok "$([ ! -e "$W/canary" ]; echo $?)" "no command the app injected ran"
stop_hostile

done_testing
