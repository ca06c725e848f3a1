#!/bin/sh
# sidescope profile over thousands of short-lived processes (tests/progs/
# churn: exec, instant exits, native and JIT code with perf maps, all
# exiting mid-capture): under valgrind memcheck no memory error, no definite
# or indirect leak, no descriptor left open, and every output written; at
# the same time, a longer capture without valgrind keeps its descriptors
# and its memory bounded (exited processes are forgotten). The pod-wide
# -a mode is left out here: under valgrind, reading the symbols of every
# binary on a busy machine takes minutes; it shares every code path but the
# start-up watch with --cgroup.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/memcheck.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
require_root
require_cmd xmllint
require_pprof
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
CHURN="$SIDESCOPE_BUILD/tests/progs/churn"
[ -x "$CHURN" ] || skip_all "needs $CHURN (make)"
T=$TMPDIR_TEST
VG_SECS=12	# the capture under valgrind
LONG_SECS=40	# the capture that is sampled for growth
WARM=9		# seconds of warm-up before growth counts
# RSS growth after warm-up: a fixed slack plus half a KB for each process
# that came and went meanwhile (set once churn has said how many). The
# profile keeps what it sampled of each process (its PID and thread labels,
# its name: about 300 bytes), so a healthy capture grows by ~500 KB over
# the 1,700 processes of the window; what a leak of an exited process's
# maps or symbols would keep is kilobytes each. ASan's redzones make every
# allocation larger: twice that under sanitizers.
GROWTH_SLACK_KB=256

# the workload in a cgroup of its own, so that others' processes stay out
cgr=/sys/fs/cgroup
[ -f "$cgr/cgroup.procs" ] && [ ! -d "$cgr/unified" ] || cgr=/sys/fs/cgroup/unified
cg="$cgr/sidescope-vg-$$"
mkdir "$cg" || skip_all "cannot create a cgroup under $cgr"
on_exit "rmdir '$cg'"

# under valgrind, loading the BPF object (kernel BTF) takes 15-40 s: start
# it first, and the workload once it samples
memcheck "$T/vg.log" "$SIDESCOPE" profile -v --cgroup "$cg" -d "$VG_SECS" \
	-o "$T/vg.folded" -o "$T/vg.pb.gz" -o "$T/vg.svg" 2> "$T/vg.err" &
vg=$!
on_exit "kill $vg"
wait_for_grep "$T/vg.err" "sampling at|error" 120
ok $? "profile under $MEMCHECK started"

sh -c 'echo "$$" > "$1/cgroup.procs" && exec "$2" "$3"' sh "$cg" "$CHURN" \
	"$T/churn.ready" > "$T/churn.out" &
churn=$!
on_exit "kill $churn; wait $churn"
wait_for_file "$T/churn.ready" 10
ok $? "churn started"

# the long capture, sampled every 3 s
exec_for_growth "$SIDESCOPE" profile --cgroup "$cg" -d "$LONG_SECS" -o "$T/long.folded" \
	2> "$T/long.err" &
long=$!
on_exit "kill $long"
sample_proc "$long" "$T/samples" 3 &
sampler=$!
on_exit "kill $sampler"

wait "$vg"
is "$?" 0 "profile --cgroup under $MEMCHECK exits 0"
diag "$(grep -E '^sidescope profile: (warning|wrote|debug: [0-9]+ samples)' "$T/vg.err")"
check_memcheck "$T/vg.log" "profile --cgroup"
xmllint --noout "$T/vg.svg"
ok $? "the SVG is well-formed"
"$PPROF" -raw "$T/vg.pb.gz" > "$T/vg.raw" 2>&1
ok $? "pprof reads the profile"
like "$(cat "$T/vg.folded")" '^churn;.*churn_native_leaf [0-9]+$' "native frames named"
like "$(cat "$T/vg.folded")" '^churn;.*Churn::JitSpin\(int\)_\[j\] [0-9]+$' \
	"JIT frames named from perf maps"
pids=$(grep -c 'pid:\[' "$T/vg.raw")
diag "$pids pprof samples with a pid label; $(wc -l < "$T/vg.folded") folded lines"

wait "$long"
is "$?" 0 "the long capture exits 0"
wait "$sampler" 2> /dev/null
kill "$churn"
wait "$churn"
children=$(awk '{ print $2 }' "$T/churn.out")
diag "churn: $(cat "$T/churn.out")"
ok "$([ "${children:-0}" -ge 1000 ]; echo $?)" "thousands of processes came and went (${children:-0})"
like "$(cat "$T/long.folded")" 'Churn::JitSpin' "the long capture names JIT frames"
# samples while capturing: after warm-up, before the outputs are written
max_kb=$((GROWTH_SLACK_KB + ${children:-0} * (LONG_SECS - 2 - WARM) / LONG_SECS / 2))
[ "$MEMCHECK" = sanitizers ] && max_kb=$((max_kb * 2))
check_growth "$T/samples" "$WARM" $((LONG_SECS - 2)) "$max_kb" "profile --cgroup"

done_testing
