#!/bin/sh
# Periodic capture on a full output disk (a small tmpfs): real 'sidescope
# profile' captures on an interval schedule; while the disk is full each
# tick fails with a logged reason and leaves no partial, staging or
# temporary file; once space returns the next tick writes complete files;
# a full disk never empties the Pyroscope push queue; the loop never exits
# on its own and stops cleanly on SIGTERM. The loop's state directory (push
# queue, lock) is on the same full disk, beside the output directory.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
require_root
private_workspace "$@"
require_cmd busybox flock mount umount gzip
loop="$SIDESCOPE_SRC/scripts/capture-loop"
export SIDESCOPE SIDESCOPE_POD=fullpod
unset SIDESCOPE_SCHEDULE SIDESCOPE_PUSH_URL SIDESCOPE_CAPTURE

T=$TMPDIR_TEST
disk="$T/tiny"
mkdir -p "$disk"
mount -t tmpfs -o size=512k,mode=0750 tmpfs "$disk" || skip_all "cannot mount a tmpfs"
on_exit "umount -l '$disk'"
out="$disk/out"
state="$disk/state"
mkdir -p "$out"
export SIDESCOPE_STATE="$state"

"$SIDESCOPE_BUILD/tests/progs/podapp" "$T/app.ready" &
app=$!
on_exit "kill $app"
wait_for_file "$T/app.ready" 10
ok $? "target started"

# fill the disk to the last block (dd stops at ENOSPC)
dd if=/dev/zero of="$disk/filler" bs=4k 2>/dev/null
is "$(df -P "$out" | awk 'NR == 2 { print $4 }')" 0 "the output disk is full"

log="$T/loop.log"
# made here: the loop's redirection is opened by its child, maybe after
# the first look at the log below
: > "$log"
# pushes go nowhere (connection refused): profiles stay queued in
# STATE/push-queue, which must survive the disk filling up again
SIDESCOPE_OUT="$out" SIDESCOPE_TARGET=$app SIDESCOPE_SCHEDULE=1s SIDESCOPE_DURATION=1 \
	SIDESCOPE_FREQ=99 SIDESCOPE_FORMATS="pb.gz svg folded" \
	SIDESCOPE_PUSH_URL=http://127.0.0.1:9 SIDESCOPE_PUSH_RETRIES=1 \
	busybox sh "$loop" 2>>"$log" &
lp=$!
on_exit "kill $lp"

# two failed ticks: the loop goes on after the first
fails="capture of PID $app \\(podapp\\) failed \\(exit 1\\); next one as scheduled"
w=1200
while [ "$(grep -Ec -- "$fails" "$log")" -lt 2 ] && [ "$w" -gt 0 ]; do
	sleep 0.05
	w=$((w - 1))
done
ok "$([ "$(grep -Ec -- "$fails" "$log")" -ge 2 ]; echo $?)" \
	"full disk: ticks fail and the schedule goes on"
like "$(cat "$log")" "sidescope profile: .*No space left on device" \
	"full disk: the log says why (no space)"
ok "$(kill -0 "$lp" 2>/dev/null; echo $?)" "full disk: the loop is still running"
# between ticks: the loop holds this lock for the whole of a tick
left=$(flock "$state/lock" ls -A "$out")
is "$left" "" "full disk: no partial, staging or temporary file left"
is "$(flock "$state/lock" ls -A "$state" | grep -vx lock)" "" "full disk: no state file left but the lock"

# space again: the next tick writes every format, complete
n_fail=$(grep -c "failed (exit" "$log")
rm -f "$disk/filler"
wait_for_grep "$log" "wrote $out/fullpod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.svg" 60
ok $? "space again: a later tick succeeds"
# the files of that tick appear together (atomic rename from staging)
stamp=$(sed -n "s|.*wrote $out/fullpod-podapp-$app-\\([0-9T]*Z\\)\\.svg.*|\\1|p" "$log" | head -1)
base="$out/fullpod-podapp-$app-$stamp"
gzip -t "$base.pb.gz" 2>/dev/null
ok $? "space again: the pprof file is a complete gzip stream"
like "$(tail -c 7 "$base.svg")" "</svg>" "space again: the SVG is complete"
like "$(head -1 "$base.folded")" "podapp" "space again: the folded stacks name the target"
ok "$(kill -0 "$lp" 2>/dev/null; echo $?)" "the loop is still running"

# full again, with a profile waiting in the push queue
wait_for_grep "$log" "push of fullpod-podapp-$app-$stamp\\.pb\\.gz to http://127\\.0\\.0\\.1:9 failed 1 times \\(cannot connect to 127\\.0\\.0\\.1:9\\); kept queued" 30
ok $? "the profile is queued for a push that fails"
queued=$(flock "$state/lock" cat "$state/push-queue")
like "$queued" "$base\\.pb\\.gz\$" "the queue holds it"
flock "$state/lock" dd if=/dev/zero of="$disk/filler" bs=4k 2>/dev/null
n=$(grep -c "failed (exit" "$log")
w=1200
while [ "$(grep -c "failed (exit" "$log")" -le "$n" ] && [ "$w" -gt 0 ]; do
	sleep 0.05
	w=$((w - 1))
done
ok "$([ "$(grep -c "failed (exit" "$log")" -gt "$n" ]; echo $?)" "full again: a tick fails"
like "$(flock "$state/lock" cat "$state/push-queue")" "$base\\.pb\\.gz\$" \
	"full again: the push queue still holds the profile"
like "$(cat "$log")" "cannot rewrite the push queue in .* \\(disk full\\?\\); kept as it was" \
	"full again: the log says the queue was kept"
left=$(flock "$state/lock" ls -A "$out" | grep -v -e '^fullpod-')
is "$left" "" "full again: no partial, staging or temporary file left"
is "$(flock "$state/lock" ls -A "$state" | grep -v -e '^lock$' -e '^push-queue$')" "" \
	"full again: no temporary state file left"
rm -f "$disk/filler"

kill -TERM "$lp"
wait "$lp"
is "$?" 0 "SIGTERM: exit 0"
ok "$([ -z "$(ls -A "$out" | grep '^\.staging')" ]; echo $?)" "no staging directory left"
diag "failed ticks while full: $n_fail" "$(grep -m1 'No space' "$log")"
done_testing
