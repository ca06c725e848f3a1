#!/bin/sh
# sidescope profile names JIT frames from perf maps: a process that JITs its
# own code, directly and in a simulated pod where its perf map exists only
# in its private /tmp and its PID is the pod's.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd jq unshare nsenter
T=$TMPDIR_TEST
JIT="$SIDESCOPE_BUILD/tests/progs/jit_target"

"$JIT" "$T/jit.ready" &
jit=$!
on_exit "kill $jit"
on_exit "rm -f /tmp/perf-$jit.map"
wait_for_file "$T/jit.ready" 10
ok $? "jit target started"
"$SIDESCOPE" profile -p "$jit" -d 2 -o "$T/jit.folded" -o "$T/jit.json" 2>"$T/err"
is "$?" 0 "profile of the JIT target"
like "$(cat "$T/jit.folded")" ';run_jitted;JitHot::Spin\(int\)_\[j\] [0-9]+$' \
	"JIT frame named from the perf map, kind suffix _[j], under its native caller"
like "$(cat "$T/jit.folded")" ';Jit Cold Path \[tier1\]_\[j\] [0-9]+$' "names with spaces"
is "$(jq -r '.functions[] | select(.name == "JitHot::Spin(int)") | .kind' "$T/jit.json")" jit \
	"json: kind jit"
kill "$jit"
wait "$jit"

pod_start || skip_all "cannot create PID and mount namespaces"
pod_app "$JIT" "$T/pod.ready"
wait_for_file "$T/pod.ready" 10
ok $? "the app started in the pod"
app=$(cat "$T/pod.ready")
host=$(pod_host_pid "$app")
on_exit "kill $host"
diag "app: pid $app in the pod, $host on the host"
ok "$([ ! -e "/tmp/perf-$app.map" ] || [ "$app" -eq 1 ]; echo $?)" \
	"the perf map is only in the app's private /tmp"
pod_sidecar "$SIDESCOPE" profile -p "$app" -d 2 -o "$T/pod.folded" -o "$T/pod.json" 2>"$T/err"
is "$?" 0 "profile from the sidecar's mount namespace"
like "$(cat "$T/pod.folded")" 'JitHot::Spin\(int\)_\[j\]' "JIT names from the app's private /tmp"
is "$(jq -r '[.stacks[].pid] | unique | join(",")' "$T/pod.json")" "$app" \
	"samples keyed by the pod's PID"

done_testing
