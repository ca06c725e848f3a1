#!/bin/sh
# sidescope uprobe aggregations against a target with known callers and
# values: --stacks (top table, folded, pprof), --by (numbers, UTF-16
# strings, --top, with a filter), --hist, --latency without per-call
# lines, -o streaming while the trace runs, and the usage errors.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd jq mkfifo
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"

T="$SIDESCOPE_BUILD/tests/progs/callers_target"
[ -x "$T" ] || skip_all "needs $T (make)"
N=500	# rounds: caller_a calls work 3 times a round, caller_b once
RUN=0

# agg "ROUNDS" ARGS...: start a target, trace it with ARGS until it quits,
# run ROUNDS rounds once the probes are attached; OUT, ERR, RC.
agg() {
	_rounds=$1
	shift
	RUN=$((RUN + 1))
	_d="$TMPDIR_TEST/run$RUN"
	mkdir -p "$_d"
	mkfifo "$_d/fifo"
	"$T" "$_d/ready" < "$_d/fifo" > "$_d/target.out" &
	_tp=$!
	on_exit "kill $_tp"
	exec 3> "$_d/fifo"
	wait_for_file "$_d/ready" 10 || { RC=99; return; }
	TPID=$(cat "$_d/ready")
	OUT="$_d/out"
	ERR="$_d/err"
	"$SIDESCOPE" uprobe -p "$TPID" "$@" > "$OUT" 2> "$ERR" &
	_tr=$!
	on_exit "kill $_tr"
	wait_for_grep "$ERR" "tracing|error" || diag "tracer did not start"
	[ -n "$_rounds" ] && echo "round $_rounds" >&3 && wait_for_grep "$_d/target.out" "^done" 20
	echo quit >&3
	exec 3>&-
	wait "$_tr"
	RC=$?
}

# --- --stacks: the callers, exactly ---
agg "$N" --stacks "p:$T:work"
is "$RC" 0 "--stacks exits 0"
like "$(cat "$OUT")" "^$((4 * N)) hits over" "top table: every hit counted"
is "$(awk '$NF == "caller_a" { print $4 }' "$OUT")" "$((3 * N))" "caller_a: 3 hits a round, in its stack"
is "$(awk '$NF == "caller_b" { print $4 }' "$OUT")" "$N" "caller_b: 1 hit a round"
is "$(awk '$NF == "work" { print $2 }' "$OUT")" "$((4 * N))" "work is the leaf of every stack"
unlike "$(cat "$OUT")" "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} " "no line per call without a FORMAT"

agg "$N" --stacks -o "$TMPDIR_TEST/hits.folded" "p:$T:work"
F="$TMPDIR_TEST/hits.folded"
is "$(grep -E ';main;caller_a;work ' "$F" | awk '{ s += $NF } END { print s }')" "$((3 * N))" \
	"folded: main;caller_a;work counted 3 times a round"
is "$(grep -E ';main;caller_b;work ' "$F" | awk '{ s += $NF } END { print s }')" "$N" \
	"folded: main;caller_b;work once a round"
is "$(grep -c . "$F")" 2 "folded: one line per stack"

agg "$N" --stacks -o "$TMPDIR_TEST/hits.json" "p:$T:work"
is "$(jq -r '.meta.mode // .mode // empty' "$TMPDIR_TEST/hits.json" | head -1)" "hits" "JSON: the profile says it counts hits"

if command -v pprof >/dev/null 2>&1 || [ -x /usr/bin/pprof ] || command -v go >/dev/null 2>&1; then
	agg "$N" --stacks -o "$TMPDIR_TEST/hits.pb.gz" "p:$T:work"
	P=$(command -v pprof || echo "go tool pprof")
	top=$($P -top "$TMPDIR_TEST/hits.pb.gz" 2>/dev/null)
	like "$top" "Type: hits" "pprof: the sample type is hits"
	like "$top" "Total samples = $((4 * N))" "pprof: every hit"
else
	fail "pprof: needs pprof or go"
	fail "pprof: needs pprof or go"
fi

# --- --by: numbers, UTF-16 strings, --top, a filter ---
agg "$N" --json --by 'str16(arg2)' "p:$T:work"
is "$RC" 0 "--by exits 0"
by() { jq -r --arg v "$1" 'select(.type == "by") | .values[] | select(.value == $v) | .count' "$OUT"; }
is "$(by "héllo")" "$((3 * N))" "--by str16(): \"héllo\" counted 3 times a round"
is "$(by "wörld ✓")" "$N" "--by str16(): \"wörld ✓\" once a round (non-ASCII decoded)"
is "$(jq -r 'select(.type == "by") | .distinct' "$OUT")" 2 "--by: two distinct strings"
is "$(jq -r 'select(.type == "summary") | .printed' "$OUT")" 0 "--by without a FORMAT: no event sent"

agg "$N" --by arg1 --top 2 "p:$T:work"
like "$(cat "$OUT")" "work by arg1: $((4 * N)) hits, 4 values" "--by arg1: four values"
is "$(awk '/^ +[0-9]+  [0-9]+$/ { n++ } END { print n }' "$OUT")" 2 "--top 2: two rows"
like "$(cat "$OUT")" "$((2 * N))  \(2 other values" "and the rest in one row"

agg "$N" --by arg1 "p:$T:work (arg1 > 50)"
is "$(awk '$2 == "100" || $2 == "10000" || $2 == "1000000" { print $1 }' "$OUT" | tr '\n' ' ')" \
	"$N $N $N " "--by after a filter: the values it lets through, each once a round"
unlike "$(awk '$2 == "1"' "$OUT")" "." "the filtered value is not counted"

agg 10 --by arg1 --max-keys 2 "p:$T:work"
like "$(cat "$OUT")" "work by arg1: 20 hits, 2 values" "--max-keys 2: two values counted"
like "$(cat "$ERR")" "work: 20 hits not counted by value: the map of values was full \(raise --max-keys, now 2\)" \
	"and the hits left out said, with the fix"

# --- --hist: log2 buckets, exactly ---
agg "$N" --json --hist arg1 "p:$T:work"
bucket() { jq -r --argjson m "$1" 'select(.type == "hist") | .buckets[] | select(.min == $m) | .count' "$OUT"; }
is "$(bucket 0) $(bucket 64) $(bucket 8192) $(bucket 524288)" "$N $N $N $N" \
	"--hist arg1: 1, 100, 10000, 1000000 in their log2 buckets"
is "$(jq -r 'select(.type == "hist") | .values' "$OUT")" "$((4 * N))" "--hist: every value"

agg "$N" --hist retval "r:$T:work"
like "$(cat "$OUT")" "retval at work: $((4 * N)) values" "--hist retval on a return probe"

# --- aggregation and a FORMAT: the lines come too ---
agg 2 --by arg1 "p:$T:work \"size=%ld\", arg1"
is "$(grep -c ' work size=' "$OUT")" 8 "a probe with a FORMAT prints its lines besides --by"

# --- -o streams: lines reach the file while the trace runs ---
RUN=$((RUN + 1))
_d="$TMPDIR_TEST/run$RUN"
mkdir -p "$_d"
mkfifo "$_d/fifo"
"$T" "$_d/ready" < "$_d/fifo" > "$_d/target.out" &
on_exit "kill $!"
exec 3> "$_d/fifo"
wait_for_file "$_d/ready" 10
TPID=$(cat "$_d/ready")
echo old > "$_d/stream.txt"
"$SIDESCOPE" uprobe -p "$TPID" -o "$_d/stream.txt" "p:$T:work \"%ld\", arg1" 2> "$_d/err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$_d/err" "tracing|error"
echo "round 5" >&3
wait_for_grep "$_d/stream.txt" " work 1000000$" 5
is "$(grep -c ' work ' "$_d/stream.txt")" 20 "-o: every line in the file while the trace still runs"
kill -0 "$tr" 2>/dev/null
ok $? "(the tracer is still running)"
kill -INT "$tr"
wait "$tr"
is "$?" 0 "SIGINT ends it with status 0"
is "$(grep -c ' work ' "$_d/stream.txt")" 20 "-o: the file complete at the end"
is "$(find "$_d" -name '.stream.txt.*' | wc -l)" 0 "no temporary file left"
echo quit >&3
exec 3>&-

# --- through the wrapper: the options pass, -O DIR gets a flame graph ---
RUN=$((RUN + 1))
_d="$TMPDIR_TEST/run$RUN"
mkdir -p "$_d/out" "$_d/tmp"
mkfifo "$_d/fifo"
"$T" "$_d/ready" < "$_d/fifo" > "$_d/target.out" &
on_exit "kill $!"
exec 3> "$_d/fifo"
wait_for_file "$_d/ready" 10
TPID=$(cat "$_d/ready")
TMPDIR="$_d/tmp" SIDESCOPE_POD=pod "$SIDESCOPE_SRC/scripts/uprobe-trace" -p "$TPID" -d 2 --stacks -O "$_d/out" \
	"p:$T:work" > "$_d/wrap.out" 2> "$_d/wrap.err" &
w=$!
wait_for_grep "$_d/wrap.err" "tracing 1 probe|error"
echo "round 50" >&3
wait "$w"
is "$?" 0 "uprobe-trace --stacks -O DIR: exit 0"
svg=$(ls "$_d/out" | grep '\.svg$')
like "$svg" "^pod-callers_target-$TPID-[0-9TZ]+\.svg$" "a flame graph named for the pod, target and time"
like "$(cat "$_d/out/$svg" 2>/dev/null)" "caller_a" "the callers are in it"
like "$(cat "$_d/wrap.out")" "kubectl cp" "and the line that fetches it"
TMPDIR="$_d/tmp" SIDESCOPE_POD=pod "$SIDESCOPE_SRC/scripts/uprobe-trace" -p "$TPID" -d 2 --by 'str16(arg2)' --top 1 \
	"p:$T:work" > "$_d/wrap.out" 2> "$_d/wrap.err" &
w=$!
wait_for_grep "$_d/wrap.err" "tracing 1 probe|error"
echo "round 50" >&3
wait "$w"
like "$(cat "$_d/wrap.out")" "150  \"héllo\"" "uprobe-trace --by --top 1: the most frequent value"
echo quit >&3
exec 3>&-

# --- usage errors, before anything is attached ---
err=$("$SIDESCOPE" uprobe -p 1 --hist 'str(arg1)' "p:$T:work" 2>&1)
is "$?" 2 "--hist of a string: usage error"
like "$err" "a histogram needs a number" "and says why"
err=$("$SIDESCOPE" uprobe -p 1 --by 'retval' "p:$T:work" 2>&1)
is "$?" 2 "--by retval on an entry probe: usage error"
like "$err" "retval is only available in r: probes" "and says why"
like "$err" "\^" "with a caret under the place"
err=$("$SIDESCOPE" uprobe -p 1 --by arg1 --save "$TMPDIR_TEST/s" "p:$T:work" 2>&1)
is "$?" 2 "--save with --by: usage error"
err=$("$SIDESCOPE" uprobe -p 1 --stacks -o "$TMPDIR_TEST/x.log" "p:$T:work" 2>&1)
is "$?" 2 "--stacks -o FILE.log: usage error"
like "$err" "\.folded" "and names the endings"
[ ! -e "$TMPDIR_TEST/x.log" ]
ok $? "nothing written"

done_testing
