#!/bin/sh
# sidescope uprobe in a simulated pod: the target runs from a binary that
# exists only in its own mount namespace (its private /tmp); sidescope, in
# another mount namespace of the same PID namespace, traces it by PID
# through /proc/PID/root and shows the pod's PIDs and TIDs. Probes after
# "--" are probes only, even one that reads like an option.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter jq mkfifo
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T="$SIDESCOPE_BUILD/tests/progs/uprobe_target"
[ -x "$T" ] || skip_all "needs $T (make)"

pod_start || skip_all "cannot create PID and mount namespaces"

# start_app N: the target copied into the app's private /tmp, commands
# from a FIFO on fd 3; sets APP (pod PID) and HOST (host PID)
start_app() {
	_d="$TMPDIR_TEST/app$1"
	mkdir -p "$_d"
	mkfifo "$_d/fifo"
	# shellcheck disable=SC2016
	pod_app sh -c 'cp "$1" /tmp/uprobe_target && exec /tmp/uprobe_target "$2" < "$3" > /dev/null' \
		sh "$T" "$_d/ready" "$_d/fifo"
	exec 3> "$_d/fifo"
	wait_for_file "$_d/ready" 10 || return 1
	APP=$(cat "$_d/ready")
	HOST=$(pod_host_pid "$APP")
	on_exit "kill $HOST"
}

start_app 1
ok $? "the app started in its own mount namespace"
diag "app: pid $APP in the pod, $HOST on the host"
ok "$([ ! -e /tmp/uprobe_target ]; echo $?)" "the binary is not visible outside the app's mount namespace"
ok "$([ -e "/proc/$HOST/root/tmp/uprobe_target" ]; echo $?)" "the binary is reachable through /proc/PID/root"

out="$_d/out"
err="$_d/err"
pod_sidecar "$SIDESCOPE" uprobe -p "$APP" --json \
	'p:/tmp/uprobe_target:take_dotnet "%s", dotnet_string(arg1)' \
	'r:/tmp/uprobe_target:add_ints "%ld", retval' \
	'p:c:atoi "%s", str(arg1)' > "$out" 2> "$err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$err" "tracing|error"
like "$(cat "$err")" "tracing 3 probes in PID $APP" "sidecar attached by pod PID"
printf 'strings\nints\nflood 3\nquit\n' >&3
exec 3>&-
wait "$tr"
is "$?" 0 "the trace ends when the app exits, exit 0"
is "$(jq -r 'select(.probe == "take_dotnet") | .text' "$out" | head -5 | tr '\n' '|')" \
	"hello, world|héllo wörld ÇÀ|你好，世界|😀👍🏽!|a�b|" ".NET-layout strings decoded exactly"
is "$(jq -r 'select(.type == "return") | .text' "$out" | tr '\n' ' ')" "204 1099511627775 " \
	"return values"
is "$(jq -c 'select(.probe == "atoi") | .text' "$out")" '"3\n"' \
	"library short name 'c' resolved among the app's mappings"
is "$(jq -r 'select(.pid) | "\(.pid) \(.tid)"' "$out" | sort -u)" "$APP $APP" \
	"events show the pod's PID and TID, not the host's"
[ "$APP" != "$HOST" ]
ok $? "pod and host PIDs differ (the check above means something)"
grep -v "^sidescope uprobe: \(tracing\|PID\|take_dotnet\|add_ints\|atoi\)" "$err" | while read -r l; do diag "$l"; done

# from the host's PID namespace the same process has its host PID
start_app 2
"$SIDESCOPE" uprobe -p "$HOST" 'p:/tmp/uprobe_target:add_ints "%d", arg1' --json \
	> "$_d/out" 2> "$_d/err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$_d/err" "tracing|error"
printf 'ints\nquit\n' >&3
exec 3>&-
wait "$tr"
is "$?" 0 "host view: exit 0"
is "$(jq -r 'select(.pid) | .pid' "$_d/out" | sort -u)" "$HOST" "host view: host PID"
is "$(jq -r 'select(.pid) | .text' "$_d/out" | tr '\n' ' ')" "7 -1 " "host view: events"

# a path that exists only in the sidecar's namespace is not the app's
start_app 3
cp "$T" "/tmp/sidescope-only-$$"
on_exit "rm -f /tmp/sidescope-only-$$"
pod_sidecar "$SIDESCOPE" uprobe -p "$APP" "p:/tmp/sidescope-only-$$:add_ints" \
	> /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "a binary missing in the target's namespace: exit 1"
like "$(cat "$TMPDIR_TEST/err")" "cannot open /tmp/sidescope-only-$$ in the mount namespace of PID $APP" \
	"the message says which namespace"
echo quit >&3
exec 3>&-

# probes after "--", as uprobe-trace passes them: one that looks like an
# option is a bad probe, never an option (getopt_long would permute it)
start_app 4
pod_sidecar "$SIDESCOPE" uprobe -p "$APP" -- "-o$TMPDIR_TEST/injected" \
	'p:/tmp/uprobe_target:add_ints "%d", arg1' > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 2 "'-o FILE' after --: a usage error"
ok "$([ ! -e "$TMPDIR_TEST/injected" ]; echo $?)" "and no file was opened"
pod_sidecar "$SIDESCOPE" uprobe -p "$APP" -c 2 -- 'p:/tmp/uprobe_target:add_ints "%d", arg1' \
	> "$_d/out" 2> "$_d/err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$_d/err" "tracing|error"
printf 'ints\n' >&3
wait "$tr"
is "$?" 0 "probes after --: exit 0"
is "$(grep -c add_ints "$_d/out")" 2 "probes after --: traced"
echo quit >&3
exec 3>&-

done_testing
