#!/bin/sh
# sidescope profile over a process in a PID namespace nested below its own
# (unshare --pid, a container inside the pod, every container under
# hostPID): sampled by the PID this namespace shows, with -p and with -a;
# and the same one level down, sidescope itself in a namespace of its own
# (the pod) with the target in a namespace below that.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd unshare jq
T=$TMPDIR_TEST
wl="$SIDESCOPE_BUILD/workload"

# the target: PID 1 of its own namespace; its PID here is unshare's child.
# unshare blocks SIGTERM while it waits; SIGKILL takes the child along.
unshare --pid --fork --mount-proc --kill-child "$wl" -t 1 -r "$T/ns.ready" >/dev/null &
u=$!
on_exit "kill -KILL $u"
wait_for_file "$T/ns.ready" 10
ok $? "the target started in its own PID namespace"
pid=$(cat "/proc/$u/task/$u/children" | tr -d ' ')
is "$(cat "$T/ns.ready")" 1 "it is PID 1 there"
like "$(grep NSpid "/proc/$pid/status")" "^NSpid:[[:space:]]+$pid[[:space:]]+1$" \
	"here it is PID $pid"

"$SIDESCOPE" profile -p "$pid" -F 199 -d 1 -o "$T/p.json" -o "$T/p.folded" 2>"$T/err"
is "$?" 0 "profile -p PID"
unlike "$(cat "$T/err")" "did not run on a CPU" "no false 'did not run' message"
n=$(jq -r "[.stacks[] | select(.pid == $pid) | .count] | add // 0" "$T/p.json")
ok "$([ "$n" -ge 100 ]; echo $?)" "-p: its samples, by the PID this namespace shows ($n)"
like "$(cat "$T/p.folded")" "compute_inner;hash_leaf" "-p: symbolized"

"$SIDESCOPE" profile -a -F 199 -d 1 -o "$T/a.json" 2>"$T/err"
is "$?" 0 "profile -a"
n=$(jq -r "[.stacks[] | select(.pid == $pid) | .count] | add // 0" "$T/a.json")
ok "$([ "$n" -ge 100 ]; echo $?)" "-a: its samples under PID $pid ($n)"

# one level down: sidescope in namespace A (the pod's), the target in B
# below A. In A the target has a third PID; BPF must read that level.
cat > "$T/inner.sh" <<'SH'
set -u
unshare --pid --fork --mount-proc --kill-child "$1" -t 1 -r "$2/inner.ready" >/dev/null &
u=$!
while [ ! -s "$2/inner.ready" ]; do sleep 0.05; done
pid=$(tr -d ' ' < "/proc/$u/task/$u/children")
echo "$pid" > "$2/inner.pid"
"$3" profile -a -F 199 -d 1 -o "$2/inner.json" 2> "$2/inner.err"
echo "$?" > "$2/inner.rc"
kill -KILL "$u"
wait
SH
timeout -s KILL 30 unshare --pid --fork --mount-proc --kill-child sh "$T/inner.sh" "$wl" "$T" "$SIDESCOPE"
is "$(cat "$T/inner.rc")" 0 "profile -a in a namespace of its own"
ipid=$(cat "$T/inner.pid")
n=$(jq -r "[.stacks[] | select(.pid == $ipid) | .count] | add // 0" "$T/inner.json")
ok "$([ "$n" -ge 100 ]; echo $?)" \
	"the target one namespace further down: its samples under PID $ipid there ($n)"
is "$(jq -r '[.stacks[].pid] | map(select(. > 4194304)) | length' "$T/inner.json")" 0 \
	"no PID of another namespace"
done_testing
