#!/bin/sh
# SIGTERM to capture-loop between a capture and its push (the Pyroscope
# server holds the request open): the loop still ends cleanly with status
# 0 once the push returns, and the unpushed profile stays queued.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
private_workspace "$@"
require_cmd busybox node flock curl
loop="$SIDESCOPE_SRC/scripts/capture-loop"
export SIDESCOPE SIDESCOPE_POD=stoppod
unset SIDESCOPE_SCHEDULE SIDESCOPE_TARGET SIDESCOPE_CAPTURE

T=$TMPDIR_TEST
sleep 300 &
target=$!
on_exit "kill $target"

# a server that takes the request and never answers; it says when one came
# shellcheck disable=SC2016 # node code
node -e '
const fs = require("fs"), dir = process.argv[1];
const srv = require("http").createServer((req) => {
	fs.writeFileSync(dir + "/request", req.method + " " + req.url + "\n");
});
srv.listen(0, "127.0.0.1", () => fs.writeFileSync(dir + "/port", String(srv.address().port)));
process.on("SIGTERM", () => process.exit(0));
' "$T" 2>"$T/server.err" &
srv=$!
on_exit "kill $srv"
wait_for_file "$T/port" 10
ok $? "the silent server listens"

out="$T/out"
log="$T/loop.log"
# shellcheck disable=SC2016 # expanded by capture-loop's sh -c
SIDESCOPE_OUT="$out" SIDESCOPE_TARGET=$target SIDESCOPE_SCHEDULE=1h \
	SIDESCOPE_CAPTURE='echo profile > "$CAPTURE_BASE.pb.gz"' \
	SIDESCOPE_PUSH_URL="http://127.0.0.1:$(cat "$T/port")" SIDESCOPE_PUSH_RETRIES=3 \
	busybox sh "$loop" 2>"$log" &
lp=$!
on_exit "kill $lp"
wait_for_file "$T/request" 20
like "$(cat "$T/request" 2>/dev/null)" "^POST /ingest\\?name=" "the push is in flight"
kill -TERM "$lp"
# the server answers nothing; ending it makes curl fail at once
kill "$srv"
wait "$lp"
is "$?" 0 "SIGTERM during the push: exit 0"
like "$(tail -1 "$log")" "capture-loop: stopped$" "the loop says it stopped"
unlike "$(cat "$log")" "retry in" "no retry backoff once stopping"
state="$TMPDIR/capture-loop"
like "$(cat "$state/push-queue" 2>/dev/null)" "$out/stoppod-sleep-$target-[0-9]{8}T[0-9]{6}Z\\.pb\\.gz\$" \
	"the unpushed profile stays queued"
ok "$([ ! -e "$state/push-queue.new" ]; echo $?)" "no temporary queue file left"
is "$(ls -A "$out" | grep -c '^\.')" 0 "no file of the loop's own in the output directory"
done_testing
