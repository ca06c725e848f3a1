#!/bin/sh
# capture-loop next to a hostile app, in a simulated pod whose app and
# sidecar share a volume (the podspecs' /tmp emptyDir): the app appends a
# command to every file it finds there and where the sidecar keeps its state,
# over and over. The sidecar refuses a TMPDIR, a state directory or an
# output directory on that volume; with its own volume, cron mode keeps the
# crontab and the environment file (push credentials included) out of the
# app's reach, 0600, and a tick run exactly as crond runs it captures and
# never runs the app's command. Drives the tick by hand: no minute of waiting.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/appender.sh"
require_root
require_cmd busybox unshare nsenter flock mount umount timeout
busybox --list | grep -qx crond || skip_all "this busybox has no crond (install busybox-static)"
scripts="$SIDESCOPE_SRC/scripts"
unset SIDESCOPE_SCHEDULE SIDESCOPE_PUSH_URL SIDESCOPE_CAPTURE SIDESCOPE_OUT SIDESCOPE_TARGET \
	SIDESCOPE_STATE SIDESCOPE_POD
export SIDESCOPE_LIB="$scripts/lib/common.sh"

T=$TMPDIR_TEST
# the shared emptyDir, mounted before the pod starts so that the app's and
# the sidecar's mount namespaces both hold it
vol="$T/vol"
mkdir -p "$vol"
mount -t tmpfs -o mode=0777 tmpfs "$vol" || skip_all "cannot mount a tmpfs"
on_exit "umount -l '$vol'"
pod_start || skip_all "cannot create PID and mount namespaces"

canary="$T/canary"
rounds="$T/rounds"
# (not anything else it can reach: in this simulation that is the host's
# filesystem)
pod_app_appender "touch '$canary'" "$rounds" "$vol"
appender_wait_rounds "$rounds" 1
ok $? "the app appends to every file it finds"
app=$(cat "$rounds.pid")
echo 'exit 0' > "$vol/bait"
appender_wait_rounds "$rounds" 2
like "$(cat "$vol/bait")" "touch '$canary'" "it reached a file the sidecar put on the shared volume"

secret="s3cret$$"
# what every run below shares
sc() { # sc VAR=VALUE... -- capture-loop arguments
	set -- env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" SIDESCOPE_POD=hpod \
		SIDESCOPE_TARGET="$app" "$@"
	pod_sidecar "$@"
}
# shellcheck disable=SC2016 # expanded by capture-loop's sh -c
CAPTURE='echo "$CAPTURE_PID" > "$CAPTURE_BASE.txt"'
shared_re="is on a volume that other containers mount \\(PIDs [0-9 ]+\\)"

# --- refusals: TMPDIR, state, output on the shared volume ----------------------
# (bounded: a loop that did not refuse would run until stopped)
err=$(sc TMPDIR="$vol/tmp" SIDESCOPE_OUT=/run/sidescope/out0 SIDESCOPE_SCHEDULE='* * * * *' \
	SIDESCOPE_CAPTURE="$CAPTURE" timeout 20 busybox sh "$scripts/capture-loop" 2>&1)
is "$?" 1 "cron mode with TMPDIR on the shared volume: exit 1"
like "$err" "^capture-loop: error: '$vol/tmp' $shared_re: the app could alter the sidecar's state there; give TMPDIR a volume" \
	"and says why, naming the app's processes"
is "$(printf '%s\n' "$err" | wc -l)" 1 "in one line"
is "$(find "$vol/tmp" -type f | wc -l)" 0 "no crontab, no environment file on the shared volume"

err=$(sc SIDESCOPE_STATE="$vol/state" SIDESCOPE_OUT=/run/sidescope/out0 \
	SIDESCOPE_CAPTURE="$CAPTURE" busybox sh "$scripts/capture-loop" --once 2>&1)
is "$?" 1 "SIDESCOPE_STATE on the shared volume: exit 1"
like "$err" "^capture-loop: error: '$vol/state' $shared_re" "and says why"

for mode in --once loop; do
	a=$mode
	[ "$mode" = loop ] && a=""
	# shellcheck disable=SC2086 # no argument for the loop
	err=$(sc SIDESCOPE_OUT="$vol/out" SIDESCOPE_SCHEDULE=1s SIDESCOPE_CAPTURE="$CAPTURE" \
		timeout 20 busybox sh "$scripts/capture-loop" $a 2>&1)
	is "$?" 1 "$mode: an output directory the app mounts: exit 1"
	like "$err" "^capture-loop: error: output directory '$vol/out' $shared_re: the app could swap a capture there" \
		"$mode: says why, in one line"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$mode: one line"
done
is "$(find "$vol/out" -type f | wc -l)" 0 "no capture was made there"

# --- cron mode with the sidecar's own volume -------------------------------------
log="$T/cron.log"
out=/run/sidescope/out
state=/run/sidescope/tmp/capture-loop
sc SIDESCOPE_OUT="$out" SIDESCOPE_SCHEDULE='* * * * *' SIDESCOPE_CAPTURE="$CAPTURE" \
	SIDESCOPE_PUSH_URL="http://user:$secret@127.0.0.1:9" SIDESCOPE_PUSH_RETRIES=1 \
	busybox sh "$scripts/capture-loop" 2>"$log" &
lp=$!
on_exit "kill $lp"
wait_for_grep "$log" "crond .* started" 10
ok $? "cron mode: crond started"
is "$(pod_sidecar stat -c %a "$state" "$state/crontabs" "$state/crontabs/root" "$state/cron.env" 2>&1 | tr '\n' ' ')" \
	"700 700 600 600 " "crontab and environment file in the private state directory, 0600"
like "$(pod_sidecar cat "$state/cron.env")" "SIDESCOPE_PUSH_URL='http://user:$secret@" \
	"the push credentials are in the environment file"
# the app's own view of those paths (the host's, in this simulation) holds
# neither the files nor the secret
# shellcheck disable=SC2016 # the app's script
pod_app sh -c '{ grep -rqs "$1" "$2" "$3" && echo found || echo none; } > "$0.new"; mv "$0.new" "$0"' \
	"$T/app.sees" "$secret" "$state" "$vol"
wait_for_file "$T/app.sees" 10
is "$(cat "$T/app.sees" 2>/dev/null)" none "the app cannot read the environment file, nor the credentials anywhere"
# shellcheck disable=SC2016 # the sidecar's script
is "$(pod_sidecar sh -c '. "$1"; ss_shared_with "$2"; ss_shared_with "$3"' sh "$SIDESCOPE_LIB" "$state" "$out")" "" \
	"no other container's mounts reach them"
# shellcheck disable=SC2016 # the sidecar's script
like "$(pod_sidecar sh -c '. "$1"; ss_shared_with "$2"' sh "$SIDESCOPE_LIB" "$vol" | tr '\n' ' ')" "(^| )$app " \
	"while the shared volume's are found"

# the app keeps at it; then two ticks, the crontab's own command line run as
# crond runs it (an environment of PATH alone: the rest comes from the file)
appender_wait_rounds "$rounds" 2
ok $? "two more passes of the app over everything it can reach"
line=$(pod_sidecar cat "$state/crontabs/root")
cmd=${line#\* \* \* \* \* }
like "$cmd" "^\\. '$state/cron\\.env' && '$scripts/capture-loop' --once >>'/proc/[0-9]+/fd/2' 2>&1\$" \
	"the job sources the private environment file, then ticks"
for tick in 1 2; do
	pod_sidecar env -i PATH="$PATH" sh -c "$cmd"
	is "$?" 0 "tick $tick: exit 0"
	appender_wait_rounds "$rounds" 1
done
like "$(pod_sidecar ls "$out")" "^hpod-sh-$app-[0-9]{8}T[0-9]{6}Z\\.txt\$" "the ticks captured the app"
like "$(cat "$log")" "capture-loop: wrote $out/hpod-sh-$app-" "and logged it to the loop's log"

# stop: the loop's PID in the pod is the one its crontab sends the log to
loop_pid=$(printf '%s\n' "$cmd" | sed -n 's|.*/proc/\([0-9]*\)/fd/2.*|\1|p')
pod_sidecar kill -TERM "$loop_pid"
wait "$lp"
is "$?" 0 "SIGTERM: the loop ends, exit 0"
is "$(pod_sidecar ls -A "$state")" "lock" "the cron files are gone; only the lock stays"
appender_wait_rounds "$rounds" 1
ok "$([ ! -e "$canary" ]; echo $?)" "the app's command never ran"
done_testing
