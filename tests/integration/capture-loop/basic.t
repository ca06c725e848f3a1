#!/bin/sh
# capture-loop on the host: interval schedule, atomic files named
# <pod>-<target>-<pid>-<UTC>.<ext>, retention by count and bytes, a failing
# capture that does not stop the loop, SIGTERM mid-capture leaving nothing
# partial, and pushes to a strict loopback Pyroscope receiver with retries
# and a queue that survives an unreachable server. The loop's own files
# (lock, push queue) stay in its private state directory, never in the
# output directory; pruning never opens a file, never follows a link and
# never logs a name it did not make. The log says what a capture said
# without the staging directory, and why a push failed in words ("HTTP
# 503", "cannot connect to HOST") without curl's messages or the URL's
# credentials; the pushed profiles are labelled with the pod's namespace
# and the app's container where they are known.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
private_workspace "$@"
require_cmd busybox node flock timeout mkfifo
require_pprof
state="$TMPDIR/capture-loop"
loop="$SIDESCOPE_SRC/scripts/capture-loop"
export SIDESCOPE SIDESCOPE_POD=testpod
unset SIDESCOPE_SCHEDULE SIDESCOPE_PUSH_URL SIDESCOPE_TARGET SIDESCOPE_CAPTURE

# a target process
"$SIDESCOPE_BUILD/tests/progs/podapp" "$TMPDIR_TEST/app.ready" &
app=$!
on_exit "kill $app"
wait_for_file "$TMPDIR_TEST/app.ready" 10
ok $? "target started"
export SIDESCOPE_TARGET=$app

# a real pprof profile for the captures, made by pprof itself
printf 'heap profile: 1: 1024 [1: 1024] @ heap/1048576\n1: 1024 [1: 1024] @ 0x401000 0x402000\n' \
	> "$TMPDIR_TEST/heap.txt"
FIXTURE="$TMPDIR_TEST/fixture.pb.gz"
"$PPROF" -proto -output "$FIXTURE" "$TMPDIR_TEST/heap.txt" >/dev/null 2>&1
ok $? "pprof made a fixture profile"
export FIXTURE
# shellcheck disable=SC2016 # expanded by capture-loop's sh -c
CAPTURE='cp "$FIXTURE" "$CAPTURE_BASE.pb.gz" && echo "$CAPTURE_PID $CAPTURE_DURATION" > "$CAPTURE_BASE.txt"'

# count lines matching a regex in a file; wait until there are N
count() { # a file the background loop has not opened yet counts 0
	if [ -f "$1" ]; then grep -Ec -- "$2" "$1" || :; else echo 0; fi
}
wait_count() { # FILE REGEX N SECONDS
	_w=$(($4 * 20))
	while [ "$(count "$1" "$2")" -lt "$3" ] && [ "$_w" -gt 0 ]; do
		sleep 0.05
		_w=$((_w - 1))
	done
	[ "$(count "$1" "$2")" -ge "$3" ]
}
RP=""
start_receiver() { # DIR [ARGS]; sets RP
	_d=$1
	shift
	node "$SIDESCOPE_SRC/tests/js/pyroscope-receiver.js" "$_d" "$@" >"$_d.log" 2>&1 &
	RP=$!
	on_exit "kill $RP"
	wait_for_file "$_d/port" 10
}
name_re="^testpod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.(pb\\.gz|txt)\$"

# --- usage ----------------------------------------------------------------------
like "$(busybox sh "$loop" -h)" "^capture-loop: periodic capture" "-h prints the usage"
busybox sh "$loop" --bogus >/dev/null 2>&1
is "$?" 2 "unknown option exits 2"
SIDESCOPE_KEEP=many busybox sh "$loop" --once >/dev/null 2>"$TMPDIR_TEST/err"
is "$?" 2 "bad SIDESCOPE_KEEP exits 2"
like "$(cat "$TMPDIR_TEST/err")" "SIDESCOPE_KEEP must be a whole number" "and says why"
SIDESCOPE_SCHEDULE="every tuesday" busybox sh "$loop" >/dev/null 2>"$TMPDIR_TEST/err"
is "$?" 2 "bad schedule exits 2"
like "$(cat "$TMPDIR_TEST/err")" "neither an interval .* nor a valid cron expression: .*2 fields, 5 needed" \
	"and says what a schedule is"
like "$(SIDESCOPE_SCHEDULE='*/10 * * * *' busybox sh "$loop" --print-crontab)" \
	"^0,10,20,30,40,50 \\* \\* \\* \\* \\. 'ENVFILE' && '.*/capture-loop' --once >>" \
	"cron schedule becomes a crontab line, in the canonical form"

# --- the loop: files, retention, pushes with retries ----------------------------
out="$TMPDIR_TEST/out one"	# a space in the path on purpose
recv="$TMPDIR_TEST/recv"
start_receiver "$recv" --fail-first 2
ok $? "receiver listening"
log="$TMPDIR_TEST/loop.log"
SIDESCOPE_OUT="$out" SIDESCOPE_SCHEDULE=1s SIDESCOPE_KEEP=4 SIDESCOPE_DURATION=7 \
SIDESCOPE_CAPTURE="$CAPTURE" SIDESCOPE_PUSH_URL="http://127.0.0.1:$(cat "$recv/port")" \
SIDESCOPE_PUSH_TENANT="team a" busybox sh "$loop" 2>"$log" &
lp=$!
on_exit "kill $lp"
wait_count "$log" "pushed .*\\.pb\\.gz" 5 30
ok $? "five profiles captured and pushed"
kill -TERM "$lp"
t0=$(date +%s)
wait "$lp"
is "$?" 0 "SIGTERM ends the loop with status 0"
ok "$([ $(($(date +%s) - t0)) -le 2 ]; echo $?)" "and at once"
diag "$(tail -4 "$log")"

files=$(ls -A "$out")
bad=$(printf '%s\n' "$files" | grep -Ev "$name_re" || :)
is "$bad" "" "every file is named <pod>-<target>-<pid>-<UTC time>.<ext>"
is "$(printf '%s\n' "$files" | wc -l)" 4 "retention kept exactly SIDESCOPE_KEEP=4 files"
like "$(count "$log" "pruned testpod-podapp-")" "^[1-9]" "older files were pruned"
newest=$(printf '%s\n' "$files" | sort | tail -1)
is "$(cat "$out/$(basename "$newest" .pb.gz | sed 's/\.txt$//').txt")" "$app 7" \
	"the capture command got CAPTURE_PID and CAPTURE_DURATION"
like "$(count "$log" "retry in 1s")" "^[1-9]" "503 answers were retried"
like "$(cat "$log")" "push of testpod-podapp-[^ ]*\\.pb\\.gz to http://127\\.0\\.0\\.1:[0-9]+ failed: HTTP 503; retry in 1s" \
	"the log says why in words: HTTP 503"
unlike "$(cat "$log")" "curl|\\(22\\)" "and no curl message"
# SIGTERM may land in a tick that follows the fifth push at once (a tick
# that took a second): its profile is written, then stays queued, unpushed
pushed=$(count "$log" "pushed .*\\.pb\\.gz")
queued=$(grep -c . "$state/push-queue" 2>/dev/null || :)
is "$(ls "$recv"/*.pb.gz | wc -l)" "$pushed" "the receiver got every profile pushed"
is "$((pushed + ${queued:-0}))" "$(count "$log" "wrote .*\\.pb\\.gz")" \
	"every profile written was pushed, or is queued"
ok "$([ ! -s "$recv/rejected" ]; echo $?)" "the receiver rejected nothing"
[ ! -s "$recv/rejected" ] || diag "$(cat "$recv/rejected")"
q=$(cat "$(ls "$recv"/*.json | head -1)")
like "$q" "\"name\":\"testpod\\.cpu\\{pod=testpod,target=podapp\\}\"" "Pyroscope name carries pod and target labels"
like "$q" "\"format\":\"pprof\"" "format=pprof"
like "$q" "\"tenant\":\"team a\"" "X-Scope-OrgID from SIDESCOPE_PUSH_TENANT"
raw_ok=0
for f in "$recv"/*.pb.gz; do
	"$PPROF" -raw "$f" >/dev/null 2>&1 || raw_ok=1
done
ok "$raw_ok" "pprof reads every pushed body"
ok "$([ "${queued:-0}" -le 1 ]; echo $?)" "at most the profile of the tick SIGTERM cut is queued"
is "$(stat -c %a "$state")" 700 "the state directory is private (0700)"
ok "$([ -f "$state/lock" ] && [ ! -e "$state/capture.pid" ]; echo $?)" \
	"the lock is in the state directory; no pid file once stopped"
kill "$RP"

# --- byte limit -----------------------------------------------------------------
out2="$TMPDIR_TEST/out2"
sz=$(($(wc -c < "$FIXTURE") + 12))
limit=$((sz * 2 + sz / 2))
for _ in 1 2 3 4; do
	SIDESCOPE_OUT="$out2" SIDESCOPE_MAX_BYTES=$limit SIDESCOPE_CAPTURE="$CAPTURE" \
		busybox sh "$loop" --once 2>>"$TMPDIR_TEST/bytes.log"
	sleep 1	# the next capture must get a new UTC second in its name
done
total=$(cat "$out2"/testpod-* | wc -c)
ok "$([ "$total" -le "$limit" ]; echo $?)" "total bytes $total within SIDESCOPE_MAX_BYTES=$limit"
# newest first, files are kept while they fit: 2 whole captures (4 files)
# and the third's small .txt; the rest is gone
is "$(ls "$out2"/testpod-*.pb.gz | wc -l)" 2 "the newest profiles are the ones kept"
is "$(ls "$out2"/testpod-* | wc -l)" 5 "and older files only while they fit"

# --- a failing capture is logged and the loop goes on ---------------------------
out3="$TMPDIR_TEST/out3"
log3="$TMPDIR_TEST/fail.log"
# every other capture fails
# shellcheck disable=SC2016
FLAKY='n=$(cat "$FLAG" 2>/dev/null || echo 0); echo $((n + 1)) > "$FLAG"; [ $((n % 2)) -eq 1 ] || exit 3; echo ok > "$CAPTURE_BASE.txt"'
FLAG="$TMPDIR_TEST/flag" SIDESCOPE_OUT="$out3" SIDESCOPE_SCHEDULE=1s SIDESCOPE_CAPTURE="$FLAKY" \
	busybox sh "$loop" 2>"$log3" &
lp=$!
on_exit "kill $lp"
export FLAG="$TMPDIR_TEST/flag"
wait_count "$log3" "wrote " 2 20
ok $? "captures after a failed one"
kill -TERM "$lp"
wait "$lp"
like "$(cat "$log3")" "capture of PID $app \\(podapp\\) failed \\(exit 3\\); next one as scheduled" "the failure is logged"
is "$(ls -A "$out3" | grep -c '^\.staging')" 0 "no staging left behind"

# --- SIGTERM in the middle of a capture leaves nothing partial ------------------
out4="$TMPDIR_TEST/out4"
# shellcheck disable=SC2016
SLOW='echo partial > "$CAPTURE_BASE.pb.gz"; touch "$FLAG.slow"; exec sleep 30'
rm -f "$FLAG.slow"
SIDESCOPE_OUT="$out4" SIDESCOPE_SCHEDULE=60s SIDESCOPE_CAPTURE="$SLOW" \
	busybox sh "$loop" 2>"$TMPDIR_TEST/slow.log" &
lp=$!
on_exit "kill $lp"
wait_for_file "$FLAG.slow" 10 || [ -e "$FLAG.slow" ]
ok $? "capture under way"
kill -TERM "$lp"
t0=$(date +%s)
wait "$lp"
is "$?" 0 "SIGTERM mid-capture: exit 0"
ok "$([ $(($(date +%s) - t0)) -le 3 ]; echo $?)" "promptly"
is "$(ls -A "$out4")" "" "no file, partial or staged, is left"
like "$(cat "$TMPDIR_TEST/slow.log")" "stopped during the capture of PID $app: discarded" "the discarded capture is logged"

# --- unreachable server: nothing lost, pushed later -----------------------------
# SIDESCOPE_STATE names the state directory
out5="$TMPDIR_TEST/out5"
export SIDESCOPE_STATE="$TMPDIR_TEST/state5"
SIDESCOPE_OUT="$out5" SIDESCOPE_CAPTURE="$CAPTURE" SIDESCOPE_PUSH_RETRIES=2 \
SIDESCOPE_PUSH_URL="http://127.0.0.1:9" busybox sh "$loop" --once 2>"$TMPDIR_TEST/q.log"
is "$(wc -l < "$SIDESCOPE_STATE/push-queue")" 1 "an unpushed profile stays queued, in SIDESCOPE_STATE"
is "$(ls -A "$out5" | grep -c '^\.')" 0 "nothing of the loop's own in the output directory"
like "$(cat "$TMPDIR_TEST/q.log")" "push of [^ ]* to http://127\\.0\\.0\\.1:9 failed 2 times \\(cannot connect to 127\\.0\\.0\\.1:9\\); kept queued" \
	"after SIDESCOPE_PUSH_RETRIES attempts, saying why"
like "$(cat "$TMPDIR_TEST/q.log")" "failed: cannot connect to 127\\.0\\.0\\.1:9; retry in 1s" "each attempt says why"
unlike "$(cat "$TMPDIR_TEST/q.log")" "curl" "no curl message"
is "$(ls "$out5"/*.pb.gz | wc -l)" 1 "and its file is kept"
sleep 1
recv2="$TMPDIR_TEST/recv2"
start_receiver "$recv2"
SIDESCOPE_OUT="$out5" SIDESCOPE_CAPTURE="$CAPTURE" POD_NAMESPACE="team-ns" SIDESCOPE_APP_CONTAINER="app one" \
SIDESCOPE_PUSH_URL="http://user:pw$$@127.0.0.1:$(cat "$recv2/port")" busybox sh "$loop" --once 2>>"$TMPDIR_TEST/q.log"
is "$(ls "$recv2"/*.pb.gz | wc -l)" 2 "the next tick pushes the queued profile and its own"
is "$(cat "$recv2"/*.json | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | sort -u)" \
	"testpod.cpu{pod=testpod,target=podapp,namespace=team-ns,container=app_one}" \
	"the name carries the namespace (POD_NAMESPACE) and container (SIDESCOPE_APP_CONTAINER) labels"
ok "$([ ! -s "$recv2/rejected" ]; echo $?)" "the receiver took those labels"
like "$(cat "$TMPDIR_TEST/q.log")" "pushed .* to http://127\\.0\\.0\\.1:" "the log names the server"
unlike "$(cat "$TMPDIR_TEST/q.log")" "pw$$" "but not the credentials in its URL"
is "$(cat "$SIDESCOPE_STATE/push-queue")" "" "queue empty"
unset SIDESCOPE_STATE

# --- what a capture says: logged once it ends, without the staging path -------
out7="$TMPDIR_TEST/out7"
# shellcheck disable=SC2016
SAYS='echo "writing $CAPTURE_BASE.txt" >&2; printf "bad \033[31mred\n" >&2; echo ok > "$CAPTURE_BASE.txt"'
SIDESCOPE_OUT="$out7" SIDESCOPE_CAPTURE="$SAYS" busybox sh "$loop" --once 2>"$TMPDIR_TEST/says.log"
ok $? "a capture that talks: exit 0"
like "$(cat "$TMPDIR_TEST/says.log")" "capture-loop: writing $out7/testpod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.txt\$" \
	"what it said is logged, naming the output directory"
unlike "$(cat "$TMPDIR_TEST/says.log")" "staging" "never the staging directory"
like "$(cat "$TMPDIR_TEST/says.log")" "capture-loop: bad \\?\\[31mred" "its control characters shown as '?'"
is "$(ls -A "$state" | grep -c capture)" 0 "nothing of it left in the state directory"

# --- pruning: sizes from stat, links and other files left alone ------------------
# A FIFO, a link to a file elsewhere and a directory named like old captures,
# and a name with an escape sequence: pruning to one file must neither block
# (a FIFO opened for its size) nor delete through the link, nor print the
# escape.
out6="$TMPDIR_TEST/out6"
mkdir -p "$out6"
echo precious > "$TMPDIR_TEST/victim"
ln -s "$TMPDIR_TEST/victim" "$out6/testpod-podapp-1-20000101T000000Z.txt"
mkfifo "$out6/testpod-podapp-2-20000101T000001Z.txt"
mkdir "$out6/testpod-podapp-3-20000101T000002Z.txt"
esc=$(printf 'testpod-a\033[31mred-4-20000101T000003Z.txt')
echo old > "$out6/$esc"
echo old > "$out6/testpod-podapp-5-20000101T000004Z.txt"
SIDESCOPE_OUT="$out6" SIDESCOPE_KEEP=1 SIDESCOPE_CAPTURE="$CAPTURE" \
	timeout 20 busybox sh "$loop" --once 2>"$TMPDIR_TEST/prune.log"
is "$?" 0 "prune over a FIFO, a link and a directory: exit 0, no hang"
is "$(cat "$TMPDIR_TEST/victim")" precious "the link's target is untouched"
ok "$([ -L "$out6/testpod-podapp-1-20000101T000000Z.txt" ] && [ -p "$out6/testpod-podapp-2-20000101T000001Z.txt" ] &&
	[ -d "$out6/testpod-podapp-3-20000101T000002Z.txt" ]; echo $?)" "the link, the FIFO and the directory are left alone"
ok "$([ ! -e "$out6/testpod-podapp-5-20000101T000004Z.txt" ]; echo $?)" "an old regular capture was pruned"
is "$(ls "$out6" | grep -Ec "$name_re")" 1 "the newest capture is kept (SIDESCOPE_KEEP=1)"
unlike "$(cat "$TMPDIR_TEST/prune.log")" "$(printf '\033')" "no escape sequence in the log"
unlike "$(cat "$TMPDIR_TEST/prune.log")" "pruned testpod-(a|podapp-[123]-)" "nothing but regular files of safe names pruned"

done_testing
