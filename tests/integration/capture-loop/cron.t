#!/bin/sh
# capture-loop with a cron schedule: busybox crond runs 'capture-loop --once'
# with the loop's environment (a space and a quote in it on purpose); the
# capture appears at the next minute; SIGTERM stops crond with the loop.
# The crontab and the environment file (which holds the push URL with its
# credentials) are in the loop's private state directory, 0600, and gone
# after it stops. Takes up to a minute: the first tick is at the next full
# minute.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
private_workspace "$@"
require_cmd busybox
busybox --list | grep -qx crond || skip_all "this busybox has no crond (install busybox-static)"
loop="$SIDESCOPE_SRC/scripts/capture-loop"
export SIDESCOPE SIDESCOPE_POD=cronpod
unset SIDESCOPE_PUSH_URL

# A bad expression is a usage error naming the field, before crond starts
# (crond itself would skip the line silently and never capture).
bad() { # bad EXPR FIELD-AND-REASON
	_e=$(SIDESCOPE_OUT="$TMPDIR_TEST/bad" SIDESCOPE_SCHEDULE="$1" busybox sh "$loop" 2>&1)
	_rc=$?
	is "$_rc" 2 "'$1': exit 2"
	like "$_e" "$2" "'$1': the error says why"
}
bad '61 * * * *' "SIDESCOPE_SCHEDULE is neither an interval .* nor a valid cron expression: bad cron expression '61 \\* \\* \\* \\*': minute field '61': 61 is out of range 0-59"
bad '*/0 * * * *' "minute field '\\*/0': step 0 is out of range 1-59"
bad '1-' "1 field, 5 needed"
bad '1- * * * *' "minute field '1-': the range '1-' has no end"
bad 'mon-foo' "1 field, 5 needed"
bad '* * * * mon-foo' "day-of-week field 'mon-foo': unknown day name 'foo'"
bad '0 0 31 2 *' "day-of-month field '31': never matches"
bad '5-2 * * * *' "minute field '5-2': the range 5-2 goes backwards"
bad '@hourly' "'@hourly' is not supported: busybox crond .* crashes"
bad "$(printf '* * * * *\n* * * * * touch x')" "control character"
ok "$([ ! -e "$TMPDIR_TEST/bad" ] || [ -z "$(ls -A "$TMPDIR_TEST/bad")" ]; echo $?)" "no capture was made for any of them"
is "$(SIDESCOPE_SCHEDULE='*/20 9-17 * * 5-7' busybox sh "$loop" --print-crontab | cut -d' ' -f1-5)" \
	"0,20,40 9-17 * * 0,5,6" "crond gets the canonical form (7 = Sunday, which busybox refuses)"

sleep 300 &
target=$!
on_exit "kill $target"
out="$TMPDIR_TEST/out dir"
log="$TMPDIR_TEST/cron.log"
# shellcheck disable=SC2016 # expanded by the cron job
# 0-7 in day-of-week: busybox crond refuses it; the canonical form is '*'
SIDESCOPE_OUT="$out" SIDESCOPE_TARGET=$target SIDESCOPE_SCHEDULE='*/1 * * * 0-7' \
SIDESCOPE_CAPTURE='printf "%s\n" "$CAPTURE_PID" "$LABEL" > "$CAPTURE_BASE.txt"' \
SIDESCOPE_PUSH_URL='http://user:s3cret@127.0.0.1:9' \
LABEL="it's here" busybox sh "$loop" 2>"$log" &
lp=$!
on_exit "kill $lp"
state="$TMPDIR/capture-loop"
wait_for_grep "$log" "capturing on cron schedule" 10
ok $? "the loop started crond"
is "$(stat -c %a "$state" "$state/crontabs" "$state/crontabs/root" "$state/cron.env" 2>&1 | tr '\n' ' ')" \
	"700 700 600 600 " "crontab and environment in the private state directory, 0600"
like "$(cat "$state/crontabs/root")" "^\\* \\* \\* \\* \\* \\. '$state/cron\\.env' && " \
	"the crontab sources the environment file of the state directory"
like "$(cat "$state/cron.env")" "^export SIDESCOPE_PUSH_URL='http://user:s3cret@" "the credentials are there"
ok "$(! grep -rqs s3cret "$out" "$TMPDIR_TEST/bad"; echo $?)" "and nowhere in the output directory"
# crond started late in a minute may run the job only at the one after, so
# the wait is bounded by the clock (two minutes and a margin), not by a count
# of polls, which a loaded machine stretches.
deadline=$(($(date +%s) + 135))
while [ "$(date +%s)" -lt "$deadline" ]; do
	ls "$out"/cronpod-sleep-* >/dev/null 2>&1 && break
	sleep 0.2
done
f=$(ls "$out"/cronpod-sleep-* 2>/dev/null | head -1)
# crond starts the job at the full minute; on a loaded machine the capture
# may take its time stamp a few seconds later
like "$f" "/cronpod-sleep-$target-[0-9]{8}T[0-9]{4}0[0-9]Z\\.txt\$" "a capture at a full minute, named like every capture"
is "$(head -1 "$f" 2>/dev/null)" "$target" "the job got the target from the environment"
is "$(sed -n 2p "$f" 2>/dev/null)" "it's here" "and the rest of the loop's environment"
like "$(cat "$log")" "capturing on cron schedule '\\* \\* \\* \\* \\*'" "the loop announced the schedule"
like "$(cat "$log")" "crond .* started" "busybox crond ran it"
like "$(cat "$log")" "next capture at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:00(Z|[+-][0-9:]{5}) " \
	"the loop logged the next capture time"
next=$(sed -n 's/.*next capture at \([^ ]*\) .*/\1/p' "$log" | head -1)
stamp=$(basename "$f" | sed -n 's/.*-\([0-9]\{4\}\)\([0-9]\{2\}\)\([0-9]\{2\}\)T\([0-9]\{2\}\)\([0-9]\{2\}\)\([0-9]\{2\}\)Z\.txt$/\1-\2-\3 \4:\5:\6/p')
n_s=$(date -u -d "$(echo "$next" | sed 's/T/ /;s/Z$//;s/[+-][0-9][0-9]:[0-9][0-9]$//')" +%s 2>/dev/null)
c_s=$(date -u -d "$stamp" +%s 2>/dev/null)
# crond started within the logged minute skips it and runs the next one
ok "$([ -n "$n_s" ] && [ -n "$c_s" ] && [ "$c_s" -ge "$n_s" ] && [ "$c_s" -lt $((n_s + 120)) ]; echo $?)" \
	"the first capture came at the logged time ($next; capture $stamp)"
crond=$(cat "/proc/$lp/task/$lp/children" 2>/dev/null | tr -d ' ')
kill -TERM "$lp"
wait "$lp"
is "$?" 0 "SIGTERM: exit 0"
ok "$([ -n "$crond" ] && [ ! -d "/proc/$crond" ]; echo $?)" "crond is gone too"
ok "$([ ! -e "$state/crontabs" ] && [ ! -e "$state/cron.env" ]; echo $?)" "the cron files are removed"
is "$(ls -A "$out" | grep -c '^\.')" 0 "no file of the loop's own in the output directory"

done_testing
