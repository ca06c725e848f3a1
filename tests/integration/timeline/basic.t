#!/bin/sh
# sidescope timeline against tests/progs/timeline_app, which calls tick(N)
# every 10 ms: tick spins 2 ms, then emits the LTTng event
# timeline_app:tick_done carrying N. One capture with CPU samples, a uprobe
# on tick and LTTng, checked with jq: the Chrome trace event format, all
# three kinds on the app's thread, CPU slices inside tick, and the LTTng
# event N after the probe hit N by less than 5 ms (the clocks agree). Then
# SIGTERM mid-capture and the errors.
# lttng-sessiond is started by timeline itself, in a mount namespace of
# this test's own (private /var/run/lttng and /dev/shm): no other test's
# daemon or app is seen, and ours is stopped at the end.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/private.sh"
require_root
require_cmd jq unshare lttng-sessiond
APP=$SIDESCOPE_BUILD/tests/progs/timeline_app
[ -x "$APP" ] || skip_all "no $APP (run make)"
private_workspace "$@"
T=$TMPDIR_TEST
# the mount point: made by the LTTng tests that run before this one, or
# here, on a machine where none has run
mkdir -p /var/run/lttng
mount -t tmpfs -o mode=0755 tmpfs /var/run/lttng 2>/dev/null ||
	skip_all "cannot mount a private /var/run/lttng"
mount -t tmpfs -o mode=1777 tmpfs /dev/shm 2>/dev/null ||
	skip_all "cannot mount a private /dev/shm"
on_exit "umount -l /dev/shm; umount -l /var/run/lttng"
# the daemon timeline starts: by its PID file, in our /var/run/lttng
on_exit 'p=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) && kill "$p"'
# the app's socket is where lttng-ust looks in its own /var/run/lttng
SIDESCOPE_LTTNG_APPS=/var/run/lttng
export SIDESCOPE_LTTNG_APPS

"$APP" -r "$T/ready" & app=$!
on_exit "kill $app"
wait_for_file "$T/ready" 10
ok $? "timeline_app started"
pid=$(cat "$T/ready")

"$SIDESCOPE" timeline -p "$pid" -d 3 -F 99 -e "p:$APP:tick \"%d\", arg1" --lttng \
	-o "$T/t.json" 2>"$T/err"
st=$?
# TIMELINE_KEEP=FILE: a copy of the capture, to look at
[ -z "${TIMELINE_KEEP:-}" ] || cp "$T/t.json" "$TIMELINE_KEEP"
(exit "$st")
is "$?" 0 "timeline -p -e --lttng exits 0"
like "$(cat "$T/err")" "starting lttng-sessiond" "it started lttng-sessiond"
J=$T/t.json
jq -e . "$J" >/dev/null
ok $? "the file is JSON"

# ---- the format ----------------------------------------------------------
is "$(jq -r '(.traceEvents | type) + " " + .displayTimeUnit + " " + (.otherData.lost | type)' "$J")" \
	"array ms object" "traceEvents, displayTimeUnit ms, otherData.lost"
is "$(jq '[.traceEvents[] | select(
	(.ph | IN("M", "X", "i") | not) or (.pid | type) != "number" or
	(.ph != "M" and ((.ts | type) != "number" or (.tid | type) != "number" or (.name | type) != "string")) or
	(.ph == "X" and ((.dur | type) != "number" or .dur < 0)) or
	(.ph == "i" and .s != "t") or
	(.ph == "M" and (.name | IN("process_name", "thread_name") | not)))] | length' "$J")" 0 \
	"every event is M, X (ts, dur >= 0) or i (s: t) with pid, tid, name"
is "$(jq -r --argjson p "$pid" '[.traceEvents[] | select(.ph == "M" and .pid == $p) |
	.name + "=" + .args.name] | sort | join(" ")' "$J" | tr ' ' '\n' | sort -u | grep -c '=timeline_app$')" 2 \
	"process_name and thread_name of the app"

# ---- the three kinds on the app's thread -----------------------------------
kinds=$(jq -r --argjson p "$pid" '[.traceEvents[] | select(.tid == $p and .ph != "M") |
	.ph + ":" + .cat] | unique | join(" ")' "$J")
is "$kinds" "X:cpu i:lttng i:uprobe" "the app's thread has CPU slices, probe instants and LTTng instants"
n=$(jq --argjson p "$pid" '[.traceEvents[] | select(.tid == $p and .cat == "uprobe")] | length' "$J")
ok "$([ "$n" -ge 150 ]; echo $?)" "probe hits: $n (about 100 a second)"
is "$(jq -r '[.traceEvents[] | select(.cat == "uprobe")][0] | .name + " " + (.args.args[0].value | type)' "$J")" \
	"tick number" "a hit is named by its probe, its argument decoded"

# ---- CPU samples fall inside tick ------------------------------------------
# tick(N) runs from its probe hit N to its LTTng event N (emitted as it
# returns): the first sample of each slice named tick is in one such span.
# A sample may come while the kernel handles the uprobe's trap at tick's
# first instruction, before the probe's program reads the clock: 100 us of
# slack before the hit
res=$(jq -r --argjson p "$pid" '
	([.traceEvents[] | select(.cat == "uprobe") | [.ts, .args.args[0].value]] | sort) as $h |
	([.traceEvents[] | select(.cat == "lttng" and .name == "timeline_app:tick_done") |
	  {key: (.args.counter | tostring), value: .ts}] | from_entries) as $fin |
	[.traceEvents[] | select(.cat == "cpu" and .tid == $p)] as $s |
	($s | map(.args.samples) | add) as $all |
	($s | map(select(.name | test("^(tick|mono_ns|clock_gettime|__vdso_clock_gettime|__clock_gettime)")) |
	      .args.samples) | add) as $in |
	($s | map(select(.name == "tick") | .ts as $t |
	      ($h | map(select(.[0] <= $t + 100)) | last) as $b |
	      select($b != null and ($fin[$b[1] | tostring] // -1) + 200 >= $t)) | length) as $inside |
	($s | map(select(.name == "tick")) | length) as $ticks |
	"\($all) \($in) \($ticks) \($inside)"' "$J")
set -- $res
diag "samples $1, in tick or its callees $2; slices named tick $3, of which $4 start inside a call of tick"
ok "$([ "$1" -ge 20 ] && [ $(($2 * 100)) -ge $(($1 * 90)) ]; echo $?)" ">= 90% of the samples name tick or its callee"
ok "$([ "$3" -ge 2 ] && [ "$4" -ge $(($3 - 1)) ]; echo $?)" \
	"slices named tick start inside a call of tick (from its probe hit to its LTTng event)"

# ---- one clock: LTTng event N after probe hit N, by less than 5 ms --------
res=$(jq -r '
	([.traceEvents[] | select(.cat == "uprobe") | {key: (.args.args[0].value | tostring), value: .ts}] |
	 from_entries) as $h |
	[.traceEvents[] | select(.cat == "lttng" and .name == "timeline_app:tick_done") |
	 select($h[.args.counter | tostring] != null) | .ts - $h[.args.counter | tostring]] |
	"\(length) \(map(select(. >= 0 and . < 5000)) | length) \(map(select(. < 0)) | length) \(min) \(max)"' "$J")
set -- $res
diag "LTTng events with a probe hit: $1; 0 to 5 ms after it: $2; before it: $3; delays $4 to $5 us"
ok "$([ "$1" -ge 150 ] && [ $(($2 * 100)) -ge $(($1 * 80)) ]; echo $?)" \
	"most LTTng events N come < 5 ms after probe hit N"
is "$3" 0 "no LTTng event comes before its probe hit"
is "$(jq -r '.otherData.lttng.clock + " " + (.otherData.lttng.clock_monotonic | tostring)' "$J")" \
	"monotonic true" "otherData: the trace's clock is monotonic"
is "$(jq -r '.otherData.lost | [.samples_ring_buffer_full, .probe_events, .lttng_discarded_events] | join(" ")' "$J")" \
	"0 0 0" "otherData: nothing lost"
is "$(jq -r '.otherData.lost | [.stack_store_full, .stack_store_no_memory, .stack_store_busy, .stack_store_refused] | join(" ")' "$J")" \
	"0 0 0 0" "otherData: stacks lost by their cause (full, no memory, busy, refused), none"
[ -z "$(ls "$TMPDIR" | grep sidescope-timeline)" ]
ok $? "the LTTng trace directory is removed"

# ---- SIGTERM mid-capture: a valid file of what was collected ---------------
"$SIDESCOPE" timeline -v -p "$pid" -d 0 -o "$T/term.json" 2>"$T/term.err" & tl=$!
on_exit "kill $tl"
wait_for_grep "$T/term.err" "sampling at" 10
ok $? "sampling began"
kill -TERM "$tl"
wait "$tl"
rc=$?; is "$rc" 0 "SIGTERM ends it with status 0"; [ "$rc" = 0 ] || diag "$(tail -5 "$T/term.err")"
is "$(jq -r '.otherData.source' "$T/term.json" 2>&1)" "sidescope timeline" "and the file is complete JSON"

# ---- errors ------------------------------------------------------------------
out=$("$SIDESCOPE" timeline -p 2147483000 -o "$T/e.json" 2>&1)
is "$?" 1 "no such PID: exit 1"
like "$out" "no process with PID 2147483000" "says so"
out=$("$SIDESCOPE" timeline -p "$pid" -d 1 -e "p:$APP:no_such_function" -o "$T/e.json" 2>&1)
is "$?" 1 "a probe on a missing symbol: exit 1"
like "$out" "no_such_function" "names the symbol"
sleep 30 & other=$!
on_exit "kill $other"
out=$("$SIDESCOPE" timeline -p "$other" -d 1 --lttng --register-wait 300 -o "$T/e.json" 2>&1)
is "$?" 1 "--lttng on a process without lttng-ust: exit 1"
like "$out" "did not register with lttng-sessiond" "says it did not register"
[ ! -e "$T/e.json" ]
ok $? "no file after an error"
out=$("$SIDESCOPE" timeline -p "$pid" 2>&1)
is "$?" 2 "no -o: usage error"

done_testing
