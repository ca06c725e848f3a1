#!/bin/sh
# sidescope profile --off-cpu and --wall on a program whose threads block
# for known times (tests/progs/blocker: it measures each blocking call
# itself): the time per blocking function within 10% of the truth, in
# folded stacks, pprof (read by Google's pprof), SVG and JSON; the state
# and length filters; the wall-clock split of a thread that spends a
# quarter of its time on the CPU; a storm of context switches in bounded
# memory with the losses counted; the usage errors.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
require_root
require_cmd jq
require_cmd xmllint
require_pprof
T=$TMPDIR_TEST
blocker="$SIDESCOPE_BUILD/tests/progs/blocker"
pingpong="$SIDESCOPE_BUILD/tests/progs/pingpong"

# us_of FILE FUNCTION: the microseconds of the folded lines through FUNCTION
us_of() {
	awk -v f="$2" '{ n = split($1, fr, ";"); for (i = 1; i <= n; i++)
		if (fr[i] == f) { s += $NF; break } } END { print s + 0 }' "$1"
}
# thread_us FILE THREAD: the microseconds of the folded lines rooted at THREAD
thread_us() {
	awk -v t="$2" '{ split($1, fr, ";") } fr[1] == t { s += $NF } END { print s + 0 }' "$1"
}
# truth_us FILE FUNCTION...: the blocked time the program measured, in us
truth_us() {
	_f=$1
	shift
	awk -v fs="$*" 'BEGIN { n = split(fs, f, " "); for (i = 1; i <= n; i++) want[f[i]] = 1 }
		$1 in want { s += $2 } END { printf "%d\n", s * 1000000 }' "$_f"
}
# within PCT GOT WANT: |GOT - WANT| <= PCT% of WANT (WANT > 0)
within() { [ "$3" -gt 0 ] && [ $((($2 - $3) * ($2 - $3) * 10000)) -le $(($1 * $1 * $3 * $3)) ]; }

# ---- accuracy and the outputs ---------------------------------------------
# the workload waits for SIGUSR1, so that the capture sees all of it
"$blocker" all -w -d 5 -r "$T/b.pid" -t "$T/b.truth" & b=$!
on_exit "kill $b"
wait_for_file "$T/b.pid" 10
ok $? "blocker started"
"$SIDESCOPE" profile -v --off-cpu -p "$b" -d 30 -o "$T/off.folded" -o "$T/off.pb.gz" \
	-o "$T/off.svg" -o "$T/off.json" 2>"$T/off.err" & prof=$!
on_exit "kill $prof"
wait_for_grep "$T/off.err" "tracing context switches" 15
ok $? "the off-CPU capture started"
kill -USR1 "$b"
wait "$prof"
is "$?" 0 "--off-cpu -p: exit 0 once the target has exited"
wait "$b"
like "$(cat "$T/off.err")" "target PID $b exited" "it stopped when the target exited"
like "$(cat "$T/off.err")" "off-CPU periods, [0-9.]+ s off the CPU in all" "the summary line"
# blocker calls libc through a helper of its own: a frame-pointer walk
# through libc loses it instead of the blocker_* function, the tables keep it
for f in blocker_sleep blocker_feed_sleep blocker_pipe_read blocker_lock_sync blocker_lock_wait \
	blocker_vfork_wait; do
	want=$(truth_us "$T/b.truth" "$f")
	got=$(us_of "$T/off.folded" "$f")
	diag "$f: truth $want us, measured $got us"
	ok "$(within 10 "$got" "$want"; echo $?)" "$f: blocked time within 10% of the truth"
done
# each of these threads blocks in its functions only
for tf in "reader blocker_pipe_read" "locker blocker_lock_sync blocker_lock_wait" \
	"vforker blocker_vfork_wait" "sleeper blocker_sleep" "feeder blocker_feed_sleep"; do
	# shellcheck disable=SC2086
	set -- $tf
	th=$1
	shift
	want=$(truth_us "$T/b.truth" "$@")
	got=$(thread_us "$T/off.folded" "$th")
	diag "thread $th ($*): truth $want us, measured $got us"
	ok "$(within 10 "$got" "$want"; echo $?)" "thread $th: off-CPU time within 10% of the truth"
done
grep -Eq '^reader;.*;blocker_pipe_read;(read_byte;)?read;[^ ]*pipe_read_\[k\];' "$T/off.folded"
ok $? "the read of a pipe, user and kernel frames"
like "$(grep '^vforker;' "$T/off.folded" | sort -k2 -n | tail -n 1)" \
	"blocker_vfork_wait;(vfork_napping_child;)?__vfork;.*kernel_clone_\[k\];.*schedule_\[k\] [0-9]+$" \
	"a thread blocked in the kernel (vfork): its kernel stack, ending in the scheduler"
unlike "$(cat "$T/off.folded")" "bpf_prog_|bpf_trace_run" "no frame of the tracing program itself"
like "$(grep -c '^sleeper;' "$T/off.folded")" "^[1-9]" "stacks are rooted at the thread's name"

top=$("$PPROF" -top -nodecount=40 "$T/off.pb.gz" 2>&1)
like "$top" "Type: off_cpu" "pprof reads the sample type off_cpu"
like "$top" "blocker_sleep" "pprof names the blocking functions"
raw=$("$PPROF" -raw "$T/off.pb.gz" 2>&1)
like "$raw" "off_cpu/nanoseconds" "pprof values are nanoseconds"
xmllint --noout "$T/off.svg" 2>"$T/xml.err"
ok $? "the flame graph is well-formed XML"
like "$(cat "$T/off.svg")" "off-CPU time: [0-9.]+ s" "the flame graph says it shows off-CPU time"
"$SIDESCOPE" flame --colors blocked --unit us "$T/off.folded" -o "$T/again.svg" 2>"$T/fl.err" &&
	xmllint --noout "$T/again.svg"
ok $? "flame --colors blocked draws the folded off-CPU stacks"
is "$(jq -r '.meta.mode + " " + .meta.unit' "$T/off.json")" "off-cpu nanoseconds" \
	"JSON: mode and unit"
is "$(jq '.meta.lost.missed_switches + .meta.lost.off_cpu_start_map_full' "$T/off.json")" 0 \
	"JSON: nothing lost"

# ---- filters on a running workload ------------------------------------------
"$blocker" all -d 12 -r "$T/c.pid" -t "$T/c.truth" & c=$!
on_exit "kill $c"
wait_for_file "$T/c.pid" 10
"$SIDESCOPE" profile --off-cpu --state uninterruptible -p "$c" -d 2 -o "$T/d.folded" 2>"$T/d.err"
is "$?" 0 "--state uninterruptible"
ok "$([ "$(thread_us "$T/d.folded" vforker)" -gt 500000 ]; echo $?)" \
	"D state: the vfork parent's wait is there"
is "$(thread_us "$T/d.folded" sleeper)$(thread_us "$T/d.folded" reader)" "00" \
	"D state: no interruptible sleep"
"$SIDESCOPE" profile --off-cpu --state interruptible -p "$c" -d 2 -o "$T/s.folded" 2>"$T/s.err"
ok "$([ "$(us_of "$T/s.folded" blocker_sleep)" -gt 500000 ] &&
	! grep -q '__vfork' "$T/s.folded"; echo $?)" \
	"--state interruptible: sleeps, no D state"
"$SIDESCOPE" profile --off-cpu --min-block 150000 -p "$c" -d 2 -o "$T/m.folded" 2>"$T/m.err"
ok "$([ "$(thread_us "$T/m.folded" vforker)" -gt 500000 ] &&
	[ "$(thread_us "$T/m.folded" sleeper)" -eq 0 ]; echo $?)" \
	"--min-block 150000: the 200 ms waits stay, the 45 ms sleeps go"
"$SIDESCOPE" profile -v --off-cpu -p "$c" -d 0 -o "$T/int.folded" -o "$T/int.pb.gz" \
	2>"$T/int.err" & prof=$!
wait_for_grep "$T/int.err" "tracing context switches" 15
sleep 1
kill -INT "$prof"
wait "$prof"
is "$?" 0 "-d 0 ended by SIGINT: exit 0"
ok "$([ "$(thread_us "$T/int.folded" sleeper)" -gt 100000 ] && [ -s "$T/int.pb.gz" ]; echo $?)" \
	"SIGINT: the outputs hold what was collected"
"$SIDESCOPE" profile --off-cpu --split tid -p "$c" -d 1 -o "$T/t.folded" 2>"$T/t.err"
like "$(cat "$T/t.folded")" "^sleeper-$c/[0-9]+;" "--split tid: one root per thread"
"$SIDESCOPE" profile --off-cpu --wakers -p "$c" -d 2 -o "$T/wk.folded" -o "$T/wk.svg" \
	2>"$T/wk.err"
is "$?" 0 "--wakers"
grep -Eq '^reader;.*;read;.*;--;.*pipe_write_\[k\];.*;feeder [0-9]+$' "$T/wk.folded"
ok $? "--wakers: the pipe's reader was woken by the feeder's write, its stack above --"
grep -Eq '^sleeper;.*blocker_sleep;.*;--;.*hrtimer_wakeup_\[k\];.*;\[interrupt\] [0-9]+$' \
	"$T/wk.folded"
ok $? "--wakers: a sleep ends in the timer interrupt, not in the task it interrupted"
xmllint --noout "$T/wk.svg"
ok $? "--wakers: the flame graph is well-formed"
kill "$c"

# ---- wall clock ------------------------------------------------------------
"$blocker" wall -d 6 -r "$T/w.pid" -t "$T/w.truth" & w=$!
on_exit "kill $w"
wait_for_file "$T/w.pid" 10
"$SIDESCOPE" profile --wall -F 499 -p "$w" -d 4 -o "$T/w.folded" -o "$T/w.json" 2>"$T/w.err"
is "$?" 0 "--wall"
spin=$(us_of "$T/w.folded" blocker_wall_spin)
slept=$(us_of "$T/w.folded" blocker_wall_sleep)
diag "waller: on the CPU $spin us, asleep $slept us"
ok "$([ $((spin * 100)) -ge $(((spin + slept) * 18)) ] &&
	[ $((spin * 100)) -le $(((spin + slept) * 33)) ]; echo $?)" \
	"a thread on the CPU a quarter of the time: about 1:3 (18-33% on-CPU)"
grep -Eq ';blocker_wall_sleep;.*;\[off-CPU\] [0-9]+$' "$T/w.folded"
ok $? "its sleep ends in the leaf [off-CPU]"
total=$(awk '/^waller;/ { s += $NF } END { print s + 0 }' "$T/w.folded")
ok "$(within 10 "$total" 4000000; echo $?)" "the thread's total is its wall-clock time ($total us of 4 s)"
is "$(jq -r .meta.mode "$T/w.json")" wall "JSON: mode wall"
kill "$w"

# ---- a storm of context switches ---------------------------------------------
# both processes on one CPU: /proc/PID/schedstat is then a truth for their
# time off it. Across two CPUs the kernel counts a woken task as running
# from its wakeup, so an idle CPU's time to wake up (microseconds in a VM,
# a period's length in this storm) is off the CPU to a tracer of context
# switches, as to perf sched, but run time to schedstat: 10-20% apart.
# The profiler runs on the other CPUs: on theirs, its drains would be rare
# periods of milliseconds, and one of them noted, counted K times, would
# move the estimate by a quarter.
ncpu=$(nproc) pin=
[ "$ncpu" -gt 1 ] && pin="taskset -c 0-$((ncpu - 2))"
"$pingpong" -d 6 -r "$T/pp.pid" -c "$((ncpu - 1))" > "$T/pp.out" & pp=$!
on_exit "kill $pp"
wait_for_file "$T/pp.pid" 10
pc=$(cat "$T/pp.pid")
child=$(pgrep -P "$pc" | head -n 1)
# the truth: the capture's wall time, twice, less the two processes' run
# time (the first field of /proc/PID/schedstat, in ns)
runtime() { awk '{ s += $1 } END { printf "%.0f", s }' "/proc/$pc/schedstat" "/proc/$child/schedstat"; }
run0=$(runtime) t0=$(date +%s%N)
/usr/bin/time -f '%M' -o "$T/storm.rss" $pin "$SIDESCOPE" profile --off-cpu -p "$pc,$child" -d 3 \
	--json > "$T/storm.json" 2>"$T/storm.err"
is "$?" 0 "--off-cpu over two processes ping-ponging"
run1=$(runtime) t1=$(date +%s%N)
periods=$(jq .meta.off_cpu_periods "$T/storm.json")
every=$(jq .meta.switches_noted_1_in "$T/storm.json")
off=$(jq '[.stacks[].count] | add' "$T/storm.json")
rss=$(tail -n 1 "$T/storm.rss")
diag "$periods off-CPU periods in 3 s, 1 in $every noted; $off ns off; sidescope's peak RSS $rss KB"
ok "$([ "$periods" -ge 30000 ]; echo $?)" "tens of thousands of switches counted"
ok "$([ "$every" -gt 1 ]; echo $?)" "a storm: 1 switch in K noted (--switch-rate)"
like "$(cat "$T/storm.err")" "1 in [0-9]+ at the most was noted" "and said"
# periods as short as the program's stack walks, 1 in K noted: the estimate
# is within 20% of the truth over the 3 s captured (the command ran longer)
truth=$(awk -v w=$((t1 - t0)) -v r=$((run1 - run0)) 'BEGIN { printf "%.0f", (2 * w - r) * 3e9 / w }')
diag "off-CPU truth $truth ns, estimated $off ns"
ok "$(awk -v o="$off" -v t="$truth" 'BEGIN { d = o - t; if (d < 0) d = -d; exit !(t > 0 && d * 5 <= t) }'; echo $?)" \
	"the time estimated from the switches noted is within 20% of the truth ($off of $truth ns)"
ok "$([ "$rss" -lt 120000 ]; echo $?)" "in bounded memory (under 120 MB)"
"$SIDESCOPE" profile -v --off-cpu -a --max-threads 16 -d 2 -o "$T/full.folded" \
	2>"$T/full.err" & prof=$!
wait_for_grep "$T/full.err" "tracing context switches" 15
# 40 processes that each leave the CPU once, for longer than the capture
i=0
while [ "$i" -lt 40 ]; do sleep 4 & i=$((i + 1)); done
wait "$prof"
is "$?" 0 "-a with --max-threads 16, 40 processes asleep at once"
like "$(cat "$T/full.err")" "off-CPU periods \(too many threads off the CPU at once\) [0-9]+" \
	"a full start map is counted"
like "$(cat "$T/full.err")" "raise --max-threads" "and says what to raise"
wait "$pp"

# ---- usage ------------------------------------------------------------------
for args in "--state both -a" "--min-block 5 -a" "--off-cpu -F 99 -a" "--off-cpu --wall -a" \
	"--off-cpu --state idle -a" "--wall --state both -a" "--wakers -a"; do
	# shellcheck disable=SC2086
	"$SIDESCOPE" profile $args -d 1 >/dev/null 2>"$T/u.err"
	is "$?" 2 "usage error: $args"
	is "$(wc -l < "$T/u.err" | tr -d ' ')" 2 "one line and the hint: $args"
done
done_testing
