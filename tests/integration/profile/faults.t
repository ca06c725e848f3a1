#!/bin/sh
# Faults under 'sidescope profile': the target's PID reused by another
# process mid-capture (made deterministic in a private PID namespace with
# ns_last_pid), and a JIT's perf map moved, rewritten in place, deleted,
# half written, truncated and rewritten without pause while it is read.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd jq unshare mount
T=$TMPDIR_TEST
WL="$SIDESCOPE_BUILD/workload"
JIT="$SIDESCOPE_BUILD/tests/progs/jit_target"
REMAP="$SIDESCOPE_BUILD/tests/progs/jit_remap"

# Inside a new PID namespace (PID 1 is this shell): profile the workload,
# let it exit, give its PID to a different program, report what happened.
if [ "${1:-}" = reuse-inner ]; then
	T=$FAULTS_T
	# this namespace's own perf maps in a /tmp of its own; a checkout
	# under /tmp (CI clones there) is bound back in from the old /tmp
	keep=""
	for d in "$SIDESCOPE_SRC" "$SIDESCOPE_BUILD"; do
		case "$d/" in /tmp/*) keep="$keep $d" ;; esac
	done
	[ -z "$keep" ] || mount --bind /tmp /mnt || exit 97
	mount -t tmpfs tmpfs /tmp || exit 97
	for d in $keep; do
		mkdir -p "$d" && mount --bind "/mnt${d#/tmp}" "$d" || exit 97
	done
	"$WL" -r "$T/old.ready" >/dev/null &
	old=$!
	wait_for_file "$T/old.ready" 10 || exit 98
	"$SIDESCOPE" profile -v -p "$old" -d 20 -o "$T/reuse.folded" -o "$T/reuse.json" \
		2>"$T/reuse.err" &
	prof=$!
	# the first drain has seen the workload; a second of samples follows
	# that the next drain symbolizes once the PID belongs to another
	wait_for_grep "$T/reuse.err" "drain 1:" 20 || exit 99
	sleep 1
	kill "$old"
	wait "$old"
	echo "$((old - 1))" > /proc/sys/kernel/ns_last_pid
	"$JIT" "$T/new.ready" &
	new=$!
	echo "$old $new" > "$T/pids"
	wait "$prof"
	echo "$?" > "$T/reuse.rc"
	kill "$new"
	wait "$new"
	exit 0
fi

# --- 1. PID reuse ---
FAULTS_T=$T unshare --pid --fork --mount-proc sh "$0" reuse-inner
rc=$?
[ "$rc" -eq 0 ] || diag "namespace part ended with $rc: $(cat "$T/reuse.err" 2>/dev/null)"
[ "$rc" -ne 97 ] || skip_all "cannot mount a tmpfs in a new mount namespace"
read -r old new < "$T/pids"
is "$new" "$old" "the new program got the old PID ($old) in the namespace"
is "$(cat "$T/reuse.rc")" 0 "profile exits 0"
like "$(cat "$T/reuse.err")" "target PID $old exited; stopping" \
	"the capture stops when the target exits, though the PID lives on"
diag "$(grep -E 'left out|stopping' "$T/reuse.err")"
like "$(cat "$T/reuse.folded")" "compute_inner;hash_leaf" "the old process is symbolized"
unlike "$(cat "$T/reuse.folded")" "run_jitted|JitHot|JitCold|jit_target" \
	"no sample of the new process in the profile"
is "$(awk '$0 !~ /^workload;/' "$T/reuse.folded" | wc -l | tr -d ' ')" 0 \
	"every stack belongs to the old program"
# samples of the old process symbolized after the PID changed hands: with
# the old process's maps, never the new one's
is "$(jq -r '[.functions[] | select(.module != "" and (.module | test("jit_target")))] | length' \
	"$T/reuse.json")" 0 "no frame resolved against the new process's files"

# --- 2. the perf map changes during the capture ---
mkfifo "$T/ctl"
"$REMAP" "$T/remap.ready" "$T/ack" < "$T/ctl" &
remap=$!
on_exit "kill $remap"
exec 3> "$T/ctl"
wait_for_file "$T/remap.ready" 10
ok $? "JIT target started"
on_exit "rm -f /tmp/perf-$remap.map /tmp/perf-$remap.map.new"
"$SIDESCOPE" profile -v -p "$remap" -d 0 -o "$T/map.folded" -o "$T/map.json" \
	2>"$T/map.err" &
prof=$!
on_exit "kill $prof"

drains() { grep -c "drain [0-9]*:" "$T/map.err"; }
# Send a command, wait for its ack, then for two more drains: the second
# drained only samples taken after the change.
step() {
	echo "$1" >&3
	wait_for_grep "$T/ack" "done $1" 10 || { fail "$1 acknowledged"; return; }
	_n=$(drains)
	wait_for_grep "$T/map.err" "drain $((_n + 2)):" 15
	ok $? "$1: two drains after the change"
}
wait_for_grep "$T/map.err" "drain 2:" 15
ok $? "the capture runs"
step move
step inplace
step rename
step delete
step partial
step truncate
kill -INT "$prof"
wait "$prof"
is "$?" 0 "profile exits 0 after every change of the map"
names=$(jq -r '.functions[] | select(.kind == "jit") | .name' "$T/map.json" | sort -u)
diag "JIT names: $(printf '%s\n' "$names" | tr '\n' ' ')"
for n in 'JitOld::Hot(int)' 'JitNew::Hot(int)' 'JitInp::Hot(int)' 'JitRen::Hot(int)'; do
	printf '%s\n' "$names" | grep -qxF "$n"
	ok $? "named from the map version of its time: $n"
done
# the same stacks after "rename": counted under the new names from its
# next drain on (nothing kept from the map version before)
inp=$(awk '/JitInp::Hot/ { n += $NF } END { print n + 0 }' "$T/map.folded")
ren=$(awk '/JitRen::Hot/ { n += $NF } END { print n + 0 }' "$T/map.folded")
diag "samples in Hot: $inp as JitInp, $ren as JitRen"
ok "$([ "$((ren * 4))" -ge "$inp" ] && [ "$inp" -gt 0 ]; echo $?)" \
	"the same addresses renamed: counted under the new name ($ren, $inp before)"
unlike "$names" '^JitPar$' "no name from a half-written line"
is "$(printf '%s\n' "$names" | grep -cvE '^Jit(Old|New|Inp|Ren|Par)::(Hot\(int\)|Cold)$')" 0 \
	"no garbage names"
unknown=$(jq -r '[.functions[] | select(.name == "[unknown]")] | length' "$T/map.json")
diag "[unknown] functions: $unknown (code the newest map no longer names)"

# --- 3. a map rewritten without pause while it is read, and deleted as the
# process exits at the end of the capture ---
echo churn >&3
wait_for_grep "$T/ack" "done churn" 10
"$SIDESCOPE" profile -v -p "$remap" -d 30 -o "$T/churn.json" 2>"$T/churn.err" &
prof=$!
on_exit "kill $prof"
wait_for_grep "$T/churn.err" "drain 2:" 15
ok $? "two drains while the map churns"
echo calm >&3
wait_for_grep "$T/ack" "done calm" 10
wait_for_grep "$T/churn.err" "drain 4:" 15
echo quit >&3	# unlinks the map and exits
exec 3>&-
wait "$remap"
wait "$prof"
is "$?" 0 "profile of a churning map exits 0"
like "$(cat "$T/churn.err")" "exited; stopping" "the target exited during the capture"
names=$(jq -r '.functions[] | select(.kind == "jit") | .name' "$T/churn.json" | sort -u)
diag "JIT names: $(printf '%s\n' "$names" | tr '\n' ' ')"
is "$(printf '%s\n' "$names" | grep -cvE '^(Jit(Inp|Par)::(Hot\(int\)|Cold)|JitChurn::(Hot\(int\)|Cold))$|^$')" \
	0 "no garbage names from torn reads"
printf '%s\n' "$names" | grep -qxF 'JitChurn::Hot(int)'
ok $? "named from the map once whole, though deleted at the end"
diag "$(grep -c 'cannot read perf map' "$T/churn.err") reads gave up on a changing map"

done_testing
