#!/bin/sh
# bench/offcpu.sh: off-CPU profiles, sidescope profile --off-cpu against the
# same aggregation written for bpftrace (bcc's offcputime: on the
# sched_switch tracepoint, a thread's switch-out keeps the time and its
# kernel and user stacks, its switch-in adds the time since to those
# stacks). Two measures:
#
# Accuracy: tests/progs/blocker all runs SECONDS under both profilers at
# once; for each of its blocking functions, the microseconds of the folded
# lines holding it against the time the blocker measured itself around its
# blocking calls (its truth file). The blocker's threads wait (-w) until
# both profilers have attached, and the process stays (-k) until they have
# written their output, so both see the whole run and nothing else of the
# functions.
#
# Cost: interleaved rounds of tests/progs/pingpong (two processes passing a
# byte over two pipes, both on one CPU: each round trip is two blocking
# reads and two context switches) unprofiled, under sidescope profile
# --off-cpu and under bpftrace, both given the two PIDs. Each run starts
# (-w) once its profiler has attached. Round trips a second (mean and standard
# deviation over the rounds), the slowdown against the unprofiled runs, and
# the CPU seconds (user+sys) of the profiler's whole run (bpftrace's
# include the compile of its script).
#
# USAGE: sh bench/offcpu.sh [ROUNDS [SECONDS]]   (default 5 5; root, GNU
#                                                time, bpftrace for its
#                                                columns)
# Env: SIDESCOPE_BUILD (default build), BENCH_OUT (default $BUILD/bench),
#      OFFCPU_STATE (default both; interruptible, uninterruptible, both or
#      all: the switch-out states counted, by both profilers), OFFCPU_CPU
#      (default 0: pingpong's CPU)
#
# bpftrace's tracepoints need tracefs: if /sys/kernel/tracing is not
# mounted, it is mounted for the run and unmounted at the end. Other
# tracers attaching to or leaving sched_switch during a run can make
# bpftrace miss switches (seen here: a lost interval now and then, once
# 15% of a run), so the machine should be quiet.
set -eu
build=${SIDESCOPE_BUILD:-build}
out=${BENCH_OUT:-$build/bench}
rounds=${1:-5}
secs=${2:-5}
state=${OFFCPU_STATE:-both}
ppcpu=${OFFCPU_CPU:-0}
mkdir -p "$out"
T=/usr/bin/time
blocker=$build/tests/progs/blocker
pingpong=$build/tests/progs/pingpong
funcs="blocker_sleep blocker_pipe_read blocker_lock_wait blocker_vfork_wait blocker_feed_sleep
blocker_lock_sync blocker_hold_sleep blocker_wall_sleep"

for f in "$build/sidescope" "$blocker" "$pingpong" "$T"; do
	[ -x "$f" ] || { echo "offcpu.sh: no $f (make first; GNU time)" >&2; exit 1; }
done
case $state in
interruptible) mask=1 ;;
uninterruptible) mask=2 ;;
both) mask=3 ;;
all) mask=0 ;;
*) echo "offcpu.sh: OFFCPU_STATE: interruptible, uninterruptible, both or all" >&2; exit 2 ;;
esac

# background jobs started (those still children of this shell are ended at
# exit, the profilers under GNU time first), and whether tracefs is ours to
# unmount
jobs_left=""
mounted=0
cleanup() {
	live=$(pgrep -P "$$" 2>/dev/null || true)
	for j in $jobs_left; do
		echo "$live" | grep -qx "$j" || continue
		for c in $(pgrep -P "$j" 2>/dev/null || true); do kill -TERM "$c" 2>/dev/null || true; done
		kill -TERM "$j" 2>/dev/null || true
	done
	[ "$mounted" = 0 ] || umount /sys/kernel/tracing 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run-time statistics of BPF programs add two clock reads to every run
if [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)" != 0 ]; then
	echo "note: kernel.bpf_stats_enabled is on: every BPF program costs more (sysctl -w kernel.bpf_stats_enabled=0)"
fi
profilers=""
if "$build/sidescope" profile --help 2>&1 | grep -q -- --off-cpu; then
	profilers=sidescope
else
	echo "note: $build/sidescope has no profile --off-cpu yet: no sidescope columns"
fi
if command -v bpftrace >/dev/null 2>&1; then
	if [ ! -d /sys/kernel/tracing/events/sched ] && [ ! -d /sys/kernel/debug/tracing/events/sched ]; then
		if mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null; then
			mounted=1
			echo "note: mounted tracefs on /sys/kernel/tracing for bpftrace (until the end)"
		else
			echo "note: no tracefs and it cannot be mounted: no bpftrace columns"
		fi
	fi
	if [ -d /sys/kernel/tracing/events/sched ] || [ -d /sys/kernel/debug/tracing/events/sched ]; then
		profilers="$profilers bpftrace"
	fi
else
	echo "note: no bpftrace: no bpftrace columns"
fi

# The bpftrace equivalent: positional parameters PID PID MASK (the same PID
# twice for one process; MASK 1 S, 2 D, 3 both, 0 every switch-out).
bt=$out/offcpu.bt
cat > "$bt" <<'EOF'
// off-CPU time of the threads of processes $1 and $2 (bench/offcpu.sh):
// a switch-out in a state of the mask $3 (1 S, 2 D, 0 any) keeps its time,
// stacks and thread name by thread; the switch-in adds the nanoseconds
// since to @off[name, kernel stack, user stack]. (In sched_switch, pid, tid
// and the stacks are those of the thread switched out.)
BEGIN { printf("ready\n"); }

tracepoint:sched:sched_switch
/(pid == $1 || pid == $2) && ($3 == 0 || (args->prev_state & $3))/
{
	@start[tid] = nsecs;
	@ks[tid] = kstack;
	@us[tid] = ustack;
	@cm[tid] = comm;
}

tracepoint:sched:sched_switch
/@start[args->next_pid]/
{
	$t = args->next_pid;
	@off[@cm[$t], @ks[$t], @us[$t]] = sum(nsecs - @start[$t]);
	delete(@start[$t]);
}

END { clear(@start); clear(@ks); clear(@us); clear(@cm); }
EOF

# bpftrace's @off as folded stacks in microseconds: "name;user frames
# outermost first;kernel frames_[k] VALUE", as sidescope writes them.
# shellcheck disable=SC2016 # awk program, not shell
fold_bt='
function emit(   s, i) {
	s = comm
	for (i = nu; i >= 1; i--) s = s ";" u[i]
	for (i = nk; i >= 1; i--) s = s ";" k[i] "_[k]"
	printf "%s %d\n", s, int(v / 1000 + 0.5)
}
/^@off\[/ { comm = substr($0, 6); sub(/, *$/, "", comm); nk = nu = 0; part = "k"; next }
part == "" { next }
/^, *$/ { part = "u"; next }
/^\]: [0-9]+$/ { v = $2; emit(); part = ""; next }
{
	f = $0
	sub(/^[ \t]+/, "", f); sub(/\+[0-9]+$/, "", f)
	if (part == "k") k[++nk] = f; else u[++nu] = f
}'

# sum_folded FILE FUNCTION: seconds in the folded lines with FUNCTION as a
# frame
sum_folded() {
	awk -v f="$2" '
	{
		n = split($0, fr, ";"); sub(/ [0-9]+$/, "", fr[n])
		for (i = 2; i <= n; i++)
			if (fr[i] == f || index(fr[i], f " ") == 1) { s += $NF; break }
	}
	END { printf "%.6f", s / 1e6 }' "$1"
}

# wait_file FILE: until FILE is there and not empty (1 after 60 s)
wait_file() {
	wf_n=0
	while [ ! -s "$1" ]; do
		wf_n=$((wf_n + 1))
		[ "$wf_n" -lt 6000 ] || return 1
		sleep 0.01
	done
}

# start_profiler NAME PID PID OUTPUT: NAME in the background under GNU time
# (CPU seconds in OUTPUT.cpu, messages in OUTPUT.err); $tpid is time's
start_profiler() {
	rm -f "$4" "$4.cpu" "$4.err" "$4.bt"
	case $1 in
	sidescope|sidescope-exact)
		pids=$2
		[ "$3" = "$2" ] || pids=$2,$3
		rate=5000
		[ "$1" = sidescope ] || rate=0
		$T -f '%U %S' -o "$4.cpu" "$build/sidescope" profile --off-cpu -p "$pids" \
			-d "$((secs + 120))" --state "$state" --switch-rate "$rate" -o "$4" 2> "$4.err" &
		;;
	bpftrace)
		$T -f '%U %S' -o "$4.cpu" bpftrace "$bt" "$2" "$3" "$mask" > "$4.bt" 2> "$4.err" &
		;;
	esac
	tpid=$!
	jobs_left="$jobs_left $tpid"
}

# alive PID: the process runs (a job not yet waited for stays a zombie)
alive() {
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# profiler_ready NAME TPID OUTPUT: 0 once it has attached (bpftrace: its
# BEGIN has printed; sidescope: alive after 2 s), then half a second more;
# 1 if it ended first or after 60 s. Waiting longer costs nothing: the
# target has not started.
profiler_ready() {
	pr_n=0
	while :; do
		alive "$2" || return 1
		case $1 in
		bpftrace) if grep -q '^ready' "$3.bt" 2>/dev/null; then break; fi ;;
		sidescope*) [ "$pr_n" -lt 200 ] || break ;;
		esac
		pr_n=$((pr_n + 1))
		[ "$pr_n" -lt 6000 ] || return 1
		sleep 0.01
	done
	sleep 0.5
}

# stop_profiler NAME TPID OUTPUT: SIGTERM to the profiler (time's child),
# wait; bpftrace's maps folded into OUTPUT
stop_profiler() {
	for c in $(pgrep -P "$2" 2>/dev/null || true); do kill -TERM "$c" 2>/dev/null || true; done
	wait "$2" || true
	[ "$1" != bpftrace ] || awk "$fold_bt" "$3.bt" > "$3"
	[ -f "$3" ] || : > "$3"
}

# profiler_cpu OUTPUT: user+sys seconds (GNU time's last line)
profiler_cpu() { tail -n 1 "$1.cpu" | awk '{ printf "%.2f", $1 + $2 }'; }

echo "off-CPU profiles: state $state; $(nproc) CPUs; kernel $(uname -r);" \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
case $profilers in
*bpftrace*) echo "bpftrace: $(bpftrace --version 2>/dev/null)" ;;
esac

# == accuracy
echo
echo "== accuracy: blocker all, $secs s, under:$profilers"
echo "(blocker_vfork_wait waits in state D, the others in S)"
rm -f "$out/offcpu-blocker.pid" "$out/offcpu-blocker.truth"
"$blocker" all -w -k -d "$secs" -r "$out/offcpu-blocker.pid" -t "$out/offcpu-blocker.truth" &
bl=$!
jobs_left="$jobs_left $bl"
wait_file "$out/offcpu-blocker.pid" || { echo "offcpu.sh: blocker did not start" >&2; exit 1; }
target=$(cat "$out/offcpu-blocker.pid")
ready=""
acc=""	# NAME:TPID of each
for p in $profilers; do
	start_profiler "$p" "$target" "$target" "$out/offcpu-acc-$p.folded"
	acc="$acc $p:$tpid"
done
for j in $acc; do
	p=${j%%:*}
	if profiler_ready "$p" "${j#*:}" "$out/offcpu-acc-$p.folded"; then
		ready="$ready $p"
	else
		echo "  $p did not attach: $(tail -n 3 "$out/offcpu-acc-$p.folded.err" | tr '\n' ' ')"
	fi
done
kill -USR1 "$target"
wait_file "$out/offcpu-blocker.truth" || { echo "offcpu.sh: no truth file" >&2; exit 1; }
for j in $acc; do
	stop_profiler "${j%%:*}" "${j#*:}" "$out/offcpu-acc-${j%%:*}.folded"
done
kill -TERM "$bl" 2>/dev/null || true
wait "$bl" || true
head="| function | truth s |"
rule="|---|---|"
for p in $ready; do
	head="$head $p s | $p error % |"
	rule="$rule---|---|"
done
echo
echo "$head"
echo "$rule"
for f in $funcs; do
	t=$(awk -v f="$f" '$1 == f { print $2 }' "$out/offcpu-blocker.truth")
	row="| $f | $t |"
	for p in $ready; do
		m=$(sum_folded "$out/offcpu-acc-$p.folded" "$f")
		row="$row $m | $(echo "$m $t" | awk '{ if ($2 > 0) printf "%+.2f", 100 * ($1 - $2) / $2; else print "-" }') |"
	done
	echo "$row"
done

# == cost
# cost_run NAME: a pingpong run under NAME; prints "NAME RATE CPU"
cost_run() {
	rm -f "$out/offcpu-pp.pid"
	"$pingpong" -w -c "$ppcpu" -d "$secs" -r "$out/offcpu-pp.pid" > "$out/offcpu-pp.rate" &
	pp=$!
	wait_file "$out/offcpu-pp.pid" || { echo "offcpu.sh: pingpong did not start" >&2; exit 1; }
	parent=$(cat "$out/offcpu-pp.pid")
	child=$(pgrep -P "$parent" | head -n 1)
	cpu=0
	if [ "$1" != unprofiled ]; then
		start_profiler "$1" "$parent" "$child" "$out/offcpu-pp-$1.folded"
		profiler_ready "$1" "$tpid" "$out/offcpu-pp-$1.folded" || {
			echo "offcpu.sh: $1 did not attach: $(tail -n 3 "$out/offcpu-pp-$1.folded.err" |
				tr '\n' ' ')" >&2
			exit 1
		}
	fi
	kill -USR1 "$parent"
	wait "$pp"
	if [ "$1" != unprofiled ]; then
		stop_profiler "$1" "$tpid" "$out/offcpu-pp-$1.folded"
		cpu=$(profiler_cpu "$out/offcpu-pp-$1.folded")
	fi
	echo "$1 $(awk '{ print $6 }' "$out/offcpu-pp.rate") $cpu"
}

echo
echo "== cost: pingpong on CPU $ppcpu, $rounds rounds of $secs s"
: > "$out/offcpu.runs"
# sidescope twice: by default (in this storm it notes 1 switch in K at
# random, --switch-rate 5000 a second) and noting every switch
costs=$(echo "$ready" | sed 's/sidescope/sidescope sidescope-exact/')
nruns=$((1 + $(echo "$costs" | wc -w)))
round=0
while [ "$round" -lt "$rounds" ]; do
	round=$((round + 1))
	for p in unprofiled $costs; do
		cost_run "$p" >> "$out/offcpu.runs"
	done
	echo "  round $round: $(tail -n "$nruns" "$out/offcpu.runs" | tr '\n' ' ')"
done
echo
echo "| profiler | round trips/s (mean) | std dev | slowdown % (mean) | slowdown % (std dev of runs) | profiler CPU s (mean) |"
echo "|---|---|---|---|---|---|"
awk -v order="unprofiled $costs" -v state="$state" '
{ v[$1, ++n[$1]] = $2; s[$1] += $2; c[$1] += $3 }
END {
	base = s["unprofiled"] / n["unprofiled"]
	name["unprofiled"] = "none"
	name["sidescope"] = "sidescope profile --off-cpu --state " state " (default --switch-rate 5000)"
	name["sidescope-exact"] = "sidescope profile --off-cpu --state " state " --switch-rate 0 (every switch)"
	name["bpftrace"] = "bpftrace (sched_switch, offcputime-like)"
	k = split(order, o, " ")
	for (j = 1; j <= k; j++) {
		p = o[j]; m = s[p] / n[p]; sr = 0; sl = 0; ml = 100 * (base - m) / base
		for (r = 1; r <= n[p]; r++) {
			sr += (v[p, r] - m) ^ 2
			sl += (100 * (base - v[p, r]) / base - ml) ^ 2
		}
		d = n[p] > 1 ? n[p] - 1 : 1
		printf "| %s | %.0f | %.0f | %.2f | %.2f | %s |\n", name[p], m, sqrt(sr / d), ml,
			sqrt(sl / d), p == "unprofiled" ? "-" : sprintf("%.2f", c[p] / n[p])
	}
}' "$out/offcpu.runs"
