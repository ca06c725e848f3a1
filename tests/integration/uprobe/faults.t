#!/bin/sh
# Faults under 'sidescope uprobe': the probed binary replaced on disk while
# traced, by a rename over it (the running process keeps its file, and the
# probe keeps working) and by a write in place (the trace stops: a process
# must not run the new code with a probe placed for the old one).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd jq mkfifo
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T=$TMPDIR_TEST
V1="$SIDESCOPE_BUILD/tests/progs/replace_v1"
V2="$SIDESCOPE_BUILD/tests/progs/replace_v2"
[ -x "$V1" ] && [ -x "$V2" ] || skip_all "needs the replace_v1/v2 test programs (make)"

# --- renamed over while a process runs it ---
cp "$V1" "$T/app"
mkfifo "$T/fifo"
"$T/app" < "$T/fifo" > "$T/app.out" &
app=$!
on_exit "kill $app"
exec 3> "$T/fifo"
wait_for_grep "$T/app.out" "^ready" 10
ok $? "target started"
"$SIDESCOPE" uprobe -p "$app" --json "p:$T/app:probed_fn \"%d\", arg1" \
	> "$T/rename.json" 2> "$T/rename.err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$T/rename.err" "tracing|error" 10
echo 1 >&3
wait_for_grep "$T/rename.json" '"text":"1"' 10
ok $? "event before the replacement"
cp "$V2" "$T/app.new"
mv "$T/app.new" "$T/app"
wait_for_grep "$T/rename.err" "replaced on disk" 10
ok $? "the replacement is noticed"
like "$(grep 'replaced on disk' "$T/rename.err")" \
	"app was replaced on disk; the probes stay on the original file" "and explained"
echo 2 >&3
wait_for_grep "$T/rename.json" '"text":"2"' 10
ok $? "the probe keeps working on the original file"
# the new file, run meanwhile, is another program: it runs unharmed
out=$(echo 5 | "$T/app")
like "$out" "called 5 -> 6" "a process of the new file runs normally"
echo quit >&3
exec 3>&-
wait "$tr"
is "$?" 0 "the trace ends with the target, exit 0"
jq -e . "$T/rename.json" > /dev/null
ok $? "every output line is JSON"
is "$(jq -r 'select(.type == "entry") | .text' "$T/rename.json" | tr '\n' ' ')" "1 2 " \
	"exactly the target's two calls"
wait "$app"

# --- written in place ---
# a running executable: refused (ETXTBSY) by older kernels; where the write
# goes through, the trace stops
cp "$V1" "$T/busy"
mkfifo "$T/fifo2"
"$T/busy" < "$T/fifo2" > "$T/busy.out" &
busy=$!
on_exit "kill $busy"
exec 4> "$T/fifo2"
wait_for_grep "$T/busy.out" "^ready" 10
"$SIDESCOPE" uprobe -p "$busy" --json "p:$T/busy:probed_fn \"%d\", arg1" \
	> "$T/busy.json" 2> "$T/busy.err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$T/busy.err" "tracing|error" 10
echo 3 >&4
wait_for_grep "$T/busy.json" '"text":"3"' 10
ok $? "event from the running target"
if cat "$V2" 2> "$T/busy.write" > "$T/busy"; then
	diag "this kernel lets a running executable be written in place"
	wait "$tr"
	is "$?" 0 "written in place under a running target: the trace stops, exit 0"
	like "$(cat "$T/busy.err")" "busy was modified in place while probed; stopping" \
		"the reason is given"
else
	like "$(cat "$T/busy.write")" "Text file busy" "writing a running executable: ETXTBSY"
	kill -INT "$tr"
	wait "$tr"
	is "$?" 0 "the trace goes on until SIGINT, exit 0"
fi
jq -e 'select(.type == "summary") | .printed == 1' "$T/busy.json" > /dev/null
ok $? "the output holds the event and the summary"
exec 4>&-
kill "$busy" 2>/dev/null	# its code may have changed under it
wait "$busy"

# a copy no process runs, probed in every process of the namespace
cp "$V1" "$T/tool"
"$SIDESCOPE" uprobe --json "p:$T/tool:probed_fn \"%d\", arg1" \
	> "$T/inplace.json" 2> "$T/inplace.err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$T/inplace.err" "tracing|error" 10
echo 7 | "$T/tool" > /dev/null
wait_for_grep "$T/inplace.json" '"text":"7"' 10
ok $? "event from a run of the copy"
cat "$V2" > "$T/tool"
ok $? "the copy is written in place (no process runs it)"
wait "$tr"
is "$?" 0 "the trace stops, exit 0"
like "$(cat "$T/inplace.err")" "tool was modified in place while probed; stopping" \
	"the reason is given"
is "$(grep -c . "$T/inplace.err" | tr -d ' ')" 3 \
	"three lines: tracing, the warning, the summary"
out=$(echo 8 | "$T/tool")
is "$?" 0 "the new build runs unharmed (no stale probe in it)"
like "$out" "called 8 -> 9" "and computes right"
is "$(jq -r 'select(.type == "entry") | .text' "$T/inplace.json" | tr '\n' ' ')" "7 " \
	"the event before the change, none after"
jq -e 'select(.type == "summary") | .printed == 1' "$T/inplace.json" > /dev/null
ok $? "the summary closes the output"

done_testing
