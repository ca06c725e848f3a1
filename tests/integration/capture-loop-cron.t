#!/bin/sh
# capture-loop with a cron schedule: busybox crond runs 'capture-loop --once'
# with the loop's environment (a space and a quote in it on purpose); the
# capture appears at the next minute; SIGTERM stops crond with the loop.
# Takes up to a minute: the first tick is at the next full minute.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd busybox
busybox --list | grep -qx crond || skip_all "this busybox has no crond (install busybox-static)"
loop="$SIDESCOPE_SRC/scripts/capture-loop"
export SIDESCOPE SIDESCOPE_POD=cronpod
unset SIDESCOPE_PUSH_URL

sleep 300 &
target=$!
on_exit "kill $target"
out="$TMPDIR_TEST/out dir"
log="$TMPDIR_TEST/cron.log"
# shellcheck disable=SC2016 # expanded by the cron job
SIDESCOPE_OUT="$out" SIDESCOPE_TARGET=$target SIDESCOPE_SCHEDULE='* * * * *' \
SIDESCOPE_CAPTURE='printf "%s\n" "$CAPTURE_PID" "$LABEL" > "$CAPTURE_BASE.txt"' \
LABEL="it's here" busybox sh "$loop" 2>"$log" &
lp=$!
on_exit "kill $lp"
for _ in $(seq 1 1300); do
	ls "$out"/cronpod-sleep-* >/dev/null 2>&1 && break
	sleep 0.05
done
f=$(ls "$out"/cronpod-sleep-* 2>/dev/null | head -1)
like "$f" "/cronpod-sleep-$target-[0-9]{8}T[0-9]{4}00Z\\.txt\$" "a capture at a full minute, named like every capture"
is "$(head -1 "$f" 2>/dev/null)" "$target" "the job got the target from the environment"
is "$(sed -n 2p "$f" 2>/dev/null)" "it's here" "and the rest of the loop's environment"
like "$(cat "$log")" "capturing on cron schedule '\\* \\* \\* \\* \\*'" "the loop announced the schedule"
like "$(cat "$log")" "crond .* started" "busybox crond ran it"
crond=$(cat "/proc/$lp/task/$lp/children" 2>/dev/null | tr -d ' ')
kill -TERM "$lp"
wait "$lp"
is "$?" 0 "SIGTERM: exit 0"
ok "$([ -n "$crond" ] && [ ! -d "/proc/$crond" ]; echo $?)" "crond is gone too"

done_testing
