#!/bin/sh
# SIGINT/SIGTERM at random moments of 'sidescope profile' (while it starts,
# loads and attaches BPF, samples, symbolizes and writes) and of the
# cpu-profile wrapper: the exit status is 0 (or 128+N with nothing written,
# for a signal before sidescope set up), every output that exists is
# complete and valid, no temporary file and no BPF program is left.
# Replay a failure with FAULTS_SEED=N.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
. "$SIDESCOPE_SRC/tests/lib/faults.sh"
require_root
require_cmd jq bpftool xmllint od awk
require_pprof
T=$TMPDIR_TEST
RUNS=${FAULTS_RUNS:-20}

"$SIDESCOPE_BUILD/workload" -r "$T/wl.ready" >/dev/null &
wl=$!
on_exit "kill $wl"
wait_for_file "$T/wl.ready" 10
ok $? "workload started"
floor=$(bpf_max_prog_id)

# check_outputs DIR NAME...: each file is all there and valid
check_outputs() {
	_d=$1
	shift
	for _f in "$@"; do
		case "$_f" in
		*.folded)
			awk 'NF < 2 || $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' "$_d/$_f" ||
				return 1 ;;
		*.pb.gz)
			"$PPROF" -raw "$_d/$_f" > /dev/null 2>&1 || return 1
			# sidescope flame reads it too (and refuses an empty one)
			"$SIDESCOPE" flame "$_d/$_f" -o "$T/check.svg" 2> "$T/check.err" ||
				grep -q "no samples in the input" "$T/check.err" || return 1 ;;
		*.svg)
			tail -c 16 "$_d/$_f" | grep -q '</svg>' || return 1
			xmllint --noout "$_d/$_f" 2> /dev/null || return 1 ;;
		esac
	done
}

n=0 bad_rc=0 bad_files=0 stray=0 early=0 sampling=0 late=0
# random moments, and some chosen ones: at once, while libbpf loads the
# object, while sampling, and during the final drains and the writing
{
	fault_schedule "$RUNS" 1.5
	printf '%s\n' "0 TERM" "0 INT" "@loading TERM" "@loading INT" "@sampling TERM" \
		"@sampling INT" "@drain INT" "@drain TERM"
} > "$T/schedule"
while read -r delay sig; do
	n=$((n + 1))
	d="$T/run$n"
	mkdir "$d"
	"$SIDESCOPE" profile -v -p "$wl" -d 1 -o "$d/p.folded" -o "$d/p.pb.gz" -o "$d/p.svg" \
		2> "$T/err$n" &
	pid=$!
	case "$delay" in
	@loading) wait_for_grep "$T/err$n" "loading object" 10 ;;
	@sampling) wait_for_grep "$T/err$n" "sampling at" 10 ;;
	@drain) wait_for_grep "$T/err$n" "drain 1:" 10 ;;
	*) sleep "$delay" ;;
	esac
	kill -"$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	files=$(cd "$d" && ls)
	if [ "$rc" -eq 0 ]; then
		[ "$files" = "$(printf 'p.folded\np.pb.gz\np.svg')" ] ||
			{ bad_files=$((bad_files + 1)); diag "run $n ($delay s, $sig): exit 0 but files: $files"; }
		check_outputs "$d" p.folded p.pb.gz p.svg ||
			{ bad_files=$((bad_files + 1)); diag "run $n ($delay s, $sig): invalid output"; }
	elif [ "$rc" -eq $((128 + $(signum "$sig"))) ] && [ -z "$files" ] &&
		[ ! -s "$T/err$n" ]; then
		: # killed before it set up (it had printed nothing): nothing written
	else
		bad_rc=$((bad_rc + 1))
		diag "run $n ($delay s, $sig): exit $rc, files: $files" "$(grep -v libbpf "$T/err$n" | tail -3)"
	fi
	s=$(stray_files "$d" p.folded p.pb.gz p.svg)
	[ -z "$s" ] || { stray=$((stray + 1)); diag "run $n: left $s"; }
	# where the signal landed: before sampling, while sampling (the
	# capture ended early), or later (final drains, writing, or exited)
	if ! grep -q "sampling at" "$T/err$n"; then
		early=$((early + 1))
	elif awk -v d="$delay" 'BEGIN { exit !(d !~ /^@/ && d < 1.0 || d == "@sampling") }'; then
		sampling=$((sampling + 1))
	else
		late=$((late + 1))
	fi
done < "$T/schedule"
diag "$n runs: signalled $early before sampling, $sampling while sampling," \
	"$late after (final drains, writing or already done)"
is "$bad_rc" 0 "profile: exit 0 (or 128+N with no output) after every signal"
is "$bad_files" 0 "profile: every output complete and valid"
is "$stray" 0 "profile: no temporary file left"
is "$(bpf_orphans "$floor" do_sample)" "" "profile: no BPF program left behind"

# --- the cpu-profile wrapper under SIGTERM ---
bad=0
fault_schedule 6 2.0 > "$T/wschedule"
n=0
while read -r delay sig; do
	n=$((n + 1))
	d="$T/wrap$n"
	mkdir "$d"
	SIDESCOPE_POD=pod "$SIDESCOPE_SRC/scripts/cpu-profile" "$wl" -d 1 -O "$d" \
		> "$T/wout$n" 2> "$T/werr$n" &
	pid=$!
	sleep "$delay"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	set -- "$d"/*
	if [ "$rc" -eq 0 ]; then
		[ "$#" -eq 3 ] && check_outputs "$d" "${1##*/}" "${2##*/}" "${3##*/}" ||
			{ bad=$((bad + 1)); diag "wrapper run $n ($delay s): exit 0, files: $*"; }
	elif [ "$rc" -eq 143 ] && [ ! -e "$1" ]; then
		:
	else
		bad=$((bad + 1))
		diag "wrapper run $n ($delay s): exit $rc, files: $*" "$(cat "$T/werr$n")"
	fi
	s=$(stray_files "$d" "${1##*/}" "${2##*/}" "${3##*/}")
	[ -z "$s" ] || { bad=$((bad + 1)); diag "wrapper run $n: left $s"; }
done < "$T/wschedule"
is "$bad" 0 "cpu-profile under SIGTERM: exit 0 with valid outputs, or 143 with none"
# the wrapper waits for its profiler: none is left running
is "$(pgrep -f "sidescope profile -p $wl " | wc -l | tr -d ' ')" 0 "no orphaned profiler"
is "$(bpf_orphans "$floor" do_sample)" "" "cpu-profile: no BPF program left behind"

done_testing
