#!/bin/sh
# sidescope ctf over a saved LTTng trace (tests/data/ctf/small: 5 rounds of
# the bundled lttng_app, 2 threads, with the vpid/vtid/procname contexts):
# summary, Chrome JSON, and clear errors for missing and corrupt traces.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd jq babeltrace2

DATA="$SIDESCOPE_SRC/tests/data/ctf/small"
T=$TMPDIR_TEST

# the fixture is what babeltrace2 itself reads
n=$(babeltrace2 "$DATA" | wc -l)
is "$n" 30 "babeltrace2 reads the fixture: 30 events"

json=$("$SIDESCOPE" ctf summary "$DATA" --json --by path)
ok $? "summary --json"
is "$(printf '%s' "$json" | jq .events)" 30 "30 events"
is "$(printf '%s' "$json" | jq -r '[.by_name[] | "\(.name)=\(.count)"] | join(" ")')" \
	"sidescope_app:WorkStart=10 sidescope_app:WorkStop=10 sidescope_app:request=10" "events per name"
is "$(printf '%s' "$json" | jq '.trace_dirs | length')" 1 "finds the trace dir several levels down"
is "$(printf '%s' "$json" | jq '[.threads[].events] | add')" 30 "per thread counts add up"
is "$(printf '%s' "$json" | jq '.threads | length')" 2 "two threads"
is "$(printf '%s' "$json" | jq -r '.processes[0].procname')" lttng_app "procname"
is "$(printf '%s' "$json" | jq -r '[.by.values[] | "\(.value)=\(.count)"] | join(" ")')" \
	"/api/echo=4 /api/fib=4 /health=2" "--by path"
is "$(printf '%s' "$json" | jq .by.missing)" 20 "--by: events without the field counted"
ok "$(printf '%s' "$json" | jq -e '.by_name | all(.first_ns <= .last_ns)' >/dev/null; echo $?)" \
	"first/last timestamps"
# a rate over less than a second says nothing: null, and "-" in the table
ok "$(printf '%s' "$json" | jq -e '.by_name | all(if .last_ns - .first_ns < 1000000000
	then .rate_per_s == null else .rate_per_s > 0 end)' >/dev/null; echo $?)" \
	"rates only over a second or more"

text=$("$SIDESCOPE" ctf summary "$DATA" --by status --top 1)
like "$text" "^events: 30 in " "text: totals"
like "$text" "sidescope_app:request +10 " "text: event rows"
span=$(printf '%s' "$json" | jq '.last_ns - .first_ns')
if [ "$span" -lt 1000000000 ]; then
	like "$text" "sidescope_app:request +10 +- " "text: no rate for a span under a second"
	unlike "$text" "^events: 30 in [0-9.]+ s \\(" "nor in the totals"
else
	like "$text" "sidescope_app:request +10 +[0-9]+ " "text: a rate"
fi
like "$text" "(1 more threads; --top N shows more)" "text: --top cuts the thread list"
like "$text" "      8  200" "text: top value of status"
unlike "$text" "WARNING" "no discarded-events warning on a clean trace"
is "$(printf '%s\n' "$text" | awk 'length > 80' | wc -l | tr -d ' ')" 0 "fits 80 columns"

"$SIDESCOPE" ctf chrome "$DATA" -o "$T/t.json" 2>/dev/null
ok $? "chrome"
jq -e . "$T/t.json" >/dev/null
ok $? "Chrome JSON parses"
is "$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$T/t.json")" 10 "10 WorkStart/WorkStop slices"
is "$(jq '[.traceEvents[] | select(.ph == "X") | select(.args.begin.id == .args.end.id)] | length' "$T/t.json")" 10 \
	"slices pair begin and end by thread"
is "$(jq '[.traceEvents[] | select(.ph == "i")] | length' "$T/t.json")" 10 "10 instants"
is "$(jq -r '[.traceEvents[] | select(.ph == "i")][0].args | keys | join(",")' "$T/t.json")" "id,path,status" \
	"instants carry their payload"
is "$(jq '[.traceEvents[] | select(.ph == "M" and .name == "thread_name")] | length' "$T/t.json")" 2 \
	"one named track per thread"
is "$(jq '[.traceEvents[] | select(.ts != null) | .ts] | min' "$T/t.json")" 0 "time starts at the first event"
"$SIDESCOPE" ctf chrome "$DATA" -o - 2>/dev/null | jq -e '.traceEvents | length > 0' >/dev/null
ok $? "chrome -o - writes to stdout"

# errors
"$SIDESCOPE" ctf summary "$T/nope" >/dev/null 2>"$T/err"
is "$?" 1 "missing directory: exit 1"
like "$(cat "$T/err")" "cannot read trace directory '.*nope': No such file or directory" "missing directory named"
mkdir "$T/empty"
"$SIDESCOPE" ctf summary "$T/empty" >/dev/null 2>"$T/err"
is "$?" 1 "no trace: exit 1"
like "$(cat "$T/err")" "no CTF trace under '.*empty'" "no trace: explained"
cp -r "$DATA" "$T/bad"
meta=$(find "$T/bad" -name metadata)
printf 'this is not CTF metadata\n' > "$meta"
"$SIDESCOPE" ctf summary "$T/bad" >/dev/null 2>"$T/err"
is "$?" 1 "corrupt metadata: exit 1"
like "$(cat "$T/err")" "opening trace '.*bad' failed: " "corrupt metadata: explained"
cp -r "$DATA" "$T/trunc"
for f in $(find "$T/trunc" -type f -name 'ch_*' ! -name '*.idx'); do
	head -c 100 "$f" > "$f.tmp" && mv "$f.tmp" "$f"
done
"$SIDESCOPE" ctf summary "$T/trunc" >/dev/null 2>"$T/err"
is "$?" 1 "truncated streams: exit 1"
like "$(cat "$T/err")" "failed: " "truncated streams: explained"
"$SIDESCOPE" ctf chrome "$T/bad" -o "$T/bad.json" 2>/dev/null
is "$?" 1 "chrome on a corrupt trace: exit 1"
ok "$([ ! -e "$T/bad.json" ]; echo $?)" "and leaves no partial output"

# usage
"$SIDESCOPE" ctf >/dev/null 2>&1
is "$?" 2 "no subcommand: exit 2"
"$SIDESCOPE" ctf frobnicate "$DATA" >/dev/null 2>&1
is "$?" 2 "unknown subcommand: exit 2"
"$SIDESCOPE" ctf chrome "$DATA" >/dev/null 2>&1
is "$?" 2 "chrome without -o: exit 2"
"$SIDESCOPE" ctf summary "$DATA" --top 0 >/dev/null 2>&1
is "$?" 2 "bad --top: exit 2"
"$SIDESCOPE" ctf summary >/dev/null 2>&1
is "$?" 2 "missing TRACE_DIR: exit 2"
"$SIDESCOPE" ctf --help | grep -q '^EXAMPLES:'
ok $? "--help has examples"
"$SIDESCOPE" help | grep -q '^  ctf '
ok $? "listed in sidescope help"

done_testing
