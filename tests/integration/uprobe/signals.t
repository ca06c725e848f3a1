#!/bin/sh
# SIGINT/SIGTERM at random moments of 'sidescope uprobe' (while it starts,
# resolves symbols, loads and attaches BPF, traces, and writes -o) and of
# the uprobe-trace wrapper: the exit status is 0 (or 128+N with nothing
# written, for a signal before sidescope set up), every output that exists
# is complete (JSON: every line parses, the summary last), no temporary file
# and no BPF program is left. Replay a failure with FAULTS_SEED=N.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/faults.sh"
require_root
require_cmd jq bpftool od awk
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T=$TMPDIR_TEST
RUNS=${FAULTS_RUNS:-20}
APP="$SIDESCOPE_BUILD/tests/progs/replace_v1"
[ -x "$APP" ] || skip_all "needs $APP (make)"
PROBE="p:$APP:probed_fn \"%d\", arg1"

"$APP" loop > "$T/app.out" &
app=$!
on_exit "kill $app"
wait_for_grep "$T/app.out" "^ready" 10
ok $? "target started (a call a millisecond)"
floor=$(bpf_max_prog_id)

# check_output FILE: complete and valid for its kind
check_output() {
	case "$1" in
	*.json)
		jq -e . "$1" > /dev/null 2>&1 || return 1
		tail -n 1 "$1" | jq -e '.type == "summary"' > /dev/null 2>&1 || return 1 ;;
	*)
		[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || [ ! -s "$1" ] || return 1
		awk '!/^[0-9][0-9]:[0-9][0-9]:[0-9.]+ +[0-9]+ +[0-9]+ .*probed_fn [0-9]+$/ { bad = 1 }
			END { exit bad }' "$1" || return 1 ;;
	esac
}

n=0 bad_rc=0 bad_files=0 stray=0 events=0
{
	fault_schedule "$RUNS" 1.5
	printf '%s\n' "0 TERM" "0 INT" "@loading TERM" "@loading INT" "@tracing TERM" \
		"@tracing INT"
} > "$T/schedule"
while read -r delay sig; do
	n=$((n + 1))
	d="$T/run$n"
	mkdir "$d"
	if [ $((n % 2)) -eq 0 ]; then
		out="$d/u.json"
		set -- --json
	else
		out="$d/u.txt"
		set --
	fi
	"$SIDESCOPE" uprobe -v -p "$app" -d 1 -o "$out" "$@" "$PROBE" 2> "$T/err$n" &
	pid=$!
	case "$delay" in
	@loading) wait_for_grep "$T/err$n" "loading object" 10 ;;
	@tracing) wait_for_grep "$T/err$n" "tracing 1 probe" 10 ;;
	*) sleep "$delay" ;;
	esac
	kill -"$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	files=$(cd "$d" && ls)
	if [ "$rc" -eq 0 ]; then
		if [ "$files" = "${out##*/}" ] && check_output "$out"; then
			events=$((events + $(grep -c probed_fn "$out")))
		else
			bad_files=$((bad_files + 1))
			diag "run $n ($delay s, $sig): exit 0, files: $files" "$(tail -n 2 "$out")"
		fi
	elif [ "$rc" -eq $((128 + $(signum "$sig"))) ] && [ -z "$files" ] &&
		[ ! -s "$T/err$n" ]; then
		: # killed before it set up (it had printed nothing): nothing written
	else
		bad_rc=$((bad_rc + 1))
		diag "run $n ($delay s, $sig): exit $rc, files: $files" \
			"$(grep -v libbpf "$T/err$n" | tail -3)"
	fi
	s=$(stray_files "$d" "${out##*/}")
	[ -z "$s" ] || { stray=$((stray + 1)); diag "run $n: left $s"; }
done < "$T/schedule"
diag "$n runs, $events events written in all"
is "$bad_rc" 0 "uprobe: exit 0 (or 128+N with no output) after every signal"
is "$bad_files" 0 "uprobe: every output complete and valid"
is "$stray" 0 "uprobe: no temporary file left"
is "$(bpf_orphans "$floor" uprobe_hit)" "" "uprobe: no BPF program left behind"

# --- the uprobe-trace wrapper under SIGTERM ---
bad=0
n=0
mkdir "$T/tmp"
fault_schedule 6 2.0 > "$T/wschedule"
while read -r delay sig; do
	n=$((n + 1))
	d="$T/wrap$n"
	mkdir "$d"
	TMPDIR="$T/tmp" SIDESCOPE_POD=pod "$SIDESCOPE_SRC/scripts/uprobe-trace" "$app" -d 1 \
		-O "$d" --json "$PROBE" > "$T/wout$n" 2> "$T/werr$n" &
	pid=$!
	sleep "$delay"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	set -- "$d"/*
	if [ "$rc" -eq 0 ]; then
		[ "$#" -eq 1 ] && check_output "$1" ||
			{ bad=$((bad + 1)); diag "wrapper run $n ($delay s): exit 0, files: $*"; }
	elif [ "$rc" -eq 143 ] && [ ! -e "$1" ]; then
		:
	else
		bad=$((bad + 1))
		diag "wrapper run $n ($delay s): exit $rc, files: $*" "$(cat "$T/werr$n")"
	fi
	s=$(stray_files "$d" "${1##*/}")
	[ -z "$s" ] || { bad=$((bad + 1)); diag "wrapper run $n: left $s"; }
done < "$T/wschedule"
is "$bad" 0 "uprobe-trace under SIGTERM: exit 0 with a valid output, or 143 with none"
is "$(stray_files "$T/tmp")" "" "uprobe-trace leaves no temporary file"
# the wrapper waits for its tracer: none is left running
is "$(pgrep -f "sidescope uprobe -p $app " | wc -l | tr -d ' ')" 0 "no orphaned tracer"
is "$(bpf_orphans "$floor" uprobe_hit)" "" "uprobe-trace: no BPF program left behind"

done_testing
