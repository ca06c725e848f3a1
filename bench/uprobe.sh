#!/bin/sh
# Benchmark: cost of a uprobe hit, sidescope against bpftrace (Debian).
#   sh bench/uprobe.sh [CALLS]        (root; run 'make' first)
# A hot function (flood_str of tests/progs/uprobe_target, taking a .NET-like
# string and an int) is called CALLS times (default 100000) with: no probe;
# bpftrace counting (count()); bpftrace printing the int and the string's
# bytes; sidescope printing the int and the decoded string. Prints the time
# per call, the added cost per hit, and events printed and lost; then the
# rate at which sidescope decodes and formats captured events (--replay).
# Then aggregation in the kernel, on work() of tests/progs/callers_target
# (CALLS hits from two callers): bpftrace's @[ustack] = count() against
# sidescope --stacks, and @[arg0] = count() against --by arg1, as the cost
# per hit and the ratio, with the hits each counted.
set -eu
[ "${BENCH_DEBUG:-0}" = 1 ] && set -x

B=${SIDESCOPE_BUILD:-build}
S="$B/sidescope"
T="$(cd "$(dirname "$B/tests/progs/uprobe_target")" && pwd)/uprobe_target"
C="$(dirname "$T")/callers_target"
N=${1:-100000}
if [ ! -x "$S" ] || [ ! -x "$T" ] || [ ! -x "$C" ]; then
	echo "uprobe.sh: run 'make' first" >&2
	exit 1
fi
command -v bpftrace >/dev/null 2>&1 || { echo "uprobe.sh: needs bpftrace" >&2; exit 1; }
W=$(mktemp -d)
BG=""
mounted=0
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null || true; done
	rm -rf "$W"
	[ "$mounted" = 0 ] || umount /sys/kernel/tracing 2>/dev/null || true
}
trap cleanup EXIT INT TERM
RUN=0
# bpftrace's tracepoints (its end at the target's exit) need tracefs:
# mounted for the run when it is not
if [ ! -d /sys/kernel/tracing/events/sched ] && [ ! -d /sys/kernel/debug/tracing/events/sched ]; then
	if ! mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null; then
		echo "uprobe.sh: bpftrace needs tracefs, which cannot be mounted" >&2
		exit 1
	fi
	mounted=1
	echo "note: mounted tracefs on /sys/kernel/tracing for bpftrace (until the end)"
fi

wait_for_grep() { # FILE REGEX
	i=0
	while ! grep -Eq -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 400 ] || { echo "uprobe.sh: timeout waiting for $2 in $1" >&2; exit 1; }
		sleep 0.05
	done
}

start_target() { # sets TPID; fd 3 writes its commands
	RUN=$((RUN + 1))
	D="$W/run$RUN"
	mkdir -p "$D"
	mkfifo "$D/fifo"
	"$T" "$D/ready" < "$D/fifo" > "$D/target.out" &
	TBG=$!
	BG="$BG $TBG"
	exec 3> "$D/fifo"
	wait_for_grep "$D/ready" '^[0-9]+$'
	TPID=$(cat "$D/ready")
}

run_calls() { # the flood; NS gets its duration
	echo "floodstr $N" >&3
	echo quit >&3
	exec 3>&-
	wait "$TBG" || true
	NS=$(sed -n 's/^done floodstr .* ns=//p' "$D/target.out")
}

# bpftrace ends itself when the target exits, unless that very event is
# lost in its full buffer: then stop it.
stop_bpftrace() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt 60 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	for sig in INT TERM KILL; do
		kill -0 "$1" 2>/dev/null || break
		kill -"$sig" "$1" 2>/dev/null || true
		sleep 1
	done
	wait "$1" || true
}

per_call() { awk -v t="$1" -v n="$N" 'BEGIN { printf "%.3f", t / n / 1000 }'; }
added() { awk -v t="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.2f", (t - b) / n / 1000 }'; }

# 1. no probe
start_target
run_calls
base=$NS

# 2. bpftrace count()
start_target
# BEGIN fires once the probes are attached; bpftrace ends with the target
bpftrace -B line -e "BEGIN { printf(\"ready\\n\"); }
	uprobe:$T:flood_str /pid == $TPID/ { @calls = count(); }
	tracepoint:sched:sched_process_exit /pid == $TPID/ { exit(); }" \
	> "$D/bt.out" 2> "$D/bt.err" &
bt=$!
BG="$BG $bt"
wait_for_grep "$D/bt.out" "^ready"
run_calls
cnt=$NS
stop_bpftrace "$bt"
cnt_hits=$(sed -n 's/^@calls: //p' "$D/bt.out")

# 3. bpftrace printing the int and the string bytes (UTF-16 as raw bytes)
start_target
bpftrace -B line -e "BEGIN { printf(\"ready\\n\"); }
	uprobe:$T:flood_str /pid == $TPID/ { printf(\"%d %r\\n\", arg1, buf(arg0 + 12, 30)); }
	tracepoint:sched:sched_process_exit /pid == $TPID/ { exit(); }" \
	> "$D/bt.out" 2> "$D/bt.err" &
bt=$!
BG="$BG $bt"
wait_for_grep "$D/bt.out" "^ready"
run_calls
btp=$NS
stop_bpftrace "$bt"
btp_printed=$(grep -c '^[0-9]' "$D/bt.out" || true)
# what bpftrace reports as lost, or (when it could not say) what is missing
btp_lost=$(cat "$D/bt.out" "$D/bt.err" | sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
[ "$btp_lost" -gt 0 ] || btp_lost=$((N - btp_printed))
btp_sample=$(grep -m1 '^[0-9]' "$D/bt.out" || true)

# 4. sidescope printing the int and the decoded .NET string
start_target
"$S" uprobe -p "$TPID" -o "$D/ss.out" --save "$W/capture.bin" \
	"p:$T:flood_str \"%d %s\", arg2, dotnet_string(arg1)" 2> "$D/ss.err" &
ss=$!
BG="$BG $ss"
wait_for_grep "$D/ss.err" "tracing|error"
run_calls
ssp=$NS
wait "$ss" || true
ss_line=$(grep 'flood_str:' "$D/ss.err")
ss_printed=$(printf '%s' "$ss_line" | sed -n 's/.* \([0-9]*\) printed.*/\1/p')
ss_lost=$(printf '%s' "$ss_line" | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
ss_sample=$(head -1 "$D/ss.out" | cut -c1-100)

echo "calls: $N of flood_str(dotnet_string, int); $(nproc) CPUs; $(uname -r)"
echo
echo "| probe | us/call | added us/hit | printed | lost |"
echo "|---|---|---|---|---|"
echo "| none | $(per_call "$base") | - | - | - |"
echo "| bpftrace count() | $(per_call "$cnt") | $(added "$cnt" "$base") | (count $cnt_hits) | - |"
echo "| bpftrace printf int + buf() | $(per_call "$btp") | $(added "$btp" "$base") | $btp_printed | $btp_lost |"
echo "| sidescope int + dotnet_string | $(per_call "$ssp") | $(added "$ssp" "$base") | $ss_printed | $ss_lost |"
echo
echo "bpftrace line:  $btp_sample"
echo "sidescope line: $ss_sample"
echo
# 5. decode + format rate on a replay of the capture (best of 3)
for fmt in text json; do
	best=0
	for i in 1 2 3; do
		if [ "$fmt" = json ]; then
			"$S" uprobe --replay "$W/capture.bin" --json -o "$W/replay.out" 2> "$W/replay.err"
		else
			"$S" uprobe --replay "$W/capture.bin" -o "$W/replay.out" 2> "$W/replay.err"
		fi
		r=$(sed -n 's/.*s: \([0-9]*\) events\/s.*/\1/p' "$W/replay.err")
		[ "$r" -gt "$best" ] && best=$r
	done
	echo "replay ($fmt): $(sed -n 's/.*replayed \([0-9]*\) events.*/\1/p' "$W/replay.err") events, best $best events/s"
done

# 6. aggregation in the kernel: N hits of work() in N/4 rounds, each way
# AGG_ROUNDS times (default 3), interleaved; medians. Besides the time the
# target loses, the BPF program's own run time per hit (bpf_stats, turned
# on for these runs only).
R=$((N / 4))
AR=${AGG_ROUNDS:-3}
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
start_callers() { # like start_target, for callers_target
	RUN=$((RUN + 1))
	D="$W/run$RUN"
	mkdir -p "$D"
	mkfifo "$D/fifo"
	"$C" "$D/ready" < "$D/fifo" > "$D/target.out" &
	TBG=$!
	BG="$BG $TBG"
	exec 3> "$D/fifo"
	wait_for_grep "$D/ready" '^[0-9]+$'
	TPID=$(cat "$D/ready")
}
run_rounds() { # NS gets the rounds' time
	echo "round $R" >&3
	wait_for_grep "$D/target.out" '^done'
	NS=$(sed -n 's/^done .* ns=//p' "$D/target.out")
}
end_target() {
	echo quit >&3
	exec 3>&-
	wait "$TBG" || true
}
prog_ns() { # prog_ns NAME: run time per run of the newest program NAME, ns
	bpftool -j prog show name "$1" 2>/dev/null |
		jq -r 'if type == "array" then .[-1] else . end |
			if (.run_cnt // 0) > 0 then .run_time_ns / .run_cnt | floor else "-" end' 2>/dev/null ||
		echo "-"
}
bt_agg() { # bt_agg KEY: bpftrace counting work() hits by KEY; NS, HITS, PROG
	start_callers
	bpftrace -B line -e "BEGIN { printf(\"ready\\n\"); }
		uprobe:$C:work /pid == $TPID/ { @[$1] = count(); }
		tracepoint:sched:sched_process_exit /pid == $TPID/ { exit(); }" \
		> "$D/bt.out" 2> "$D/bt.err" &
	bt=$!
	BG="$BG $bt"
	wait_for_grep "$D/bt.out" "^ready"
	run_rounds
	PROG=$(prog_ns work)
	end_target
	stop_bpftrace "$bt"
	HITS=$(sed -n 's/^.*\]: \([0-9]*\)$/\1/p' "$D/bt.out" | awk '{ s += $1 } END { print s + 0 }')
}
ss_agg() { # ss_agg OPTION...: sidescope counting work() hits; NS, HITS, PROG
	start_callers
	"$S" uprobe -p "$TPID" --json "$@" "p:$C:work" > "$D/ss.out" 2> "$D/ss.err" &
	ss=$!
	BG="$BG $ss"
	wait_for_grep "$D/ss.err" "tracing|error"
	run_rounds
	PROG=$(prog_ns uprobe_hit)
	kill -INT "$ss"
	wait "$ss" || true
	end_target
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }
per_hit() { awk -v t="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.2f", (t - b) / n / 1000 }'; }
ratio() { awk -v s="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.2f", s / t; else print "-" }'; }

sysctl -qw kernel.bpf_stats_enabled=1
: > "$W/agg"
i=0
while [ "$i" -lt "$AR" ]; do
	start_callers
	run_rounds
	end_target
	echo "base $NS - -" >> "$W/agg"
	bt_agg ustack
	echo "bt_stacks $NS $HITS $PROG" >> "$W/agg"
	ss_agg --stacks -o "$W/stacks.folded"
	echo "ss_stacks $NS $(awk '{ s += $NF } END { print s + 0 }' "$W/stacks.folded") $PROG" >> "$W/agg"
	bt_agg arg0
	echo "bt_by $NS $HITS $PROG" >> "$W/agg"
	ss_agg --by arg1
	echo "ss_by $NS $(jq -r 'select(.type == "by") | .hits' "$D/ss.out") $PROG" >> "$W/agg"
	i=$((i + 1))
done
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
col() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$W/agg" | median; }
abase=$(col base 2)
row() { # row WHAT LABEL [BASELINE-WHAT]
	t=$(col "$1" 2)
	p=$(col "$1" 4)
	r1="" r2=""
	if [ -n "${3:-}" ]; then
		bt_t=$(col "$3" 2)
		r1=$(ratio "$(awk -v t="$t" -v b="$abase" 'BEGIN { print t - b }')" \
			"$(awk -v t="$bt_t" -v b="$abase" 'BEGIN { print t - b }')")
		r2=$(ratio "$p" "$(col "$3" 4)")
	fi
	echo "| $2 | $(per_hit "$t" "$abase") | $p | $(awk -v w="$1" '$1 == w { print $3 }' "$W/agg" | sort -u | tr '\n' ' ') | $r1 | $r2 |"
}

echo
echo "aggregation: $N hits of work(long, char16_t*) from two callers, median of $AR interleaved runs"
echo
echo "| aggregation | added us/hit | BPF ns/hit | hits counted | sidescope / bpftrace (added) | (BPF) |"
echo "|---|---|---|---|---|---|"
row bt_stacks "bpftrace @[ustack] = count()"
row ss_stacks "sidescope --stacks" bt_stacks
row bt_by "bpftrace @[arg0] = count()"
row ss_by "sidescope --by arg1" bt_by
