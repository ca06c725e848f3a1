#!/bin/sh
# The scripts' targets by sidescope's one rule (docs/cli.md, "Targets"), in a
# simulated pod. -n NAME is what 'sidescope ps -n' matches (comm, executable
# or first two arguments) in every script, lttng-capture's too, which before
# matched comm and arguments alone: a process whose executable alone has the
# name is found by each. -p of a thread, of an exited process or of a PID
# that names no process is refused alike ('sidescope plumbing target'), in
# the scripts' own words.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter perl lttng lttng-sessiond

T=$TMPDIR_TEST
. "$SIDESCOPE_SRC/tests/lib/lttngpod.sh"
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
on_exit lttngpod_stop_daemon
SC="$SIDESCOPE_SRC/scripts"
PO=/run/sidescope/o	# the sidecar's own volume
pod_sidecar mkdir -p "$PO"
mkdir -p "$T/bin" "$T/cwd"
# in the sidecar: stdout and stderr in $T/NAME.out and $T/NAME.err; its status
sc() { # sc NAME CMD...
	_n=$1
	shift
	pod_sidecar env -C "$T/cwd" SIDESCOPE="$SIDESCOPE" SIDESCOPE_POD=pod SIDESCOPE_OUT="$PO" "$@" \
		> "$T/$_n.out" 2> "$T/$_n.err"
}

# a process whose executable alone is called uniqexe: its comm and its
# arguments say "renamed"
cp "$(command -v perl)" "$T/bin/uniqexe"
# shellcheck disable=SC2016
pod_app "$T/bin/uniqexe" -e '$0 = "renamed"; open(my $f, ">", $ARGV[0]) or die;
	print $f "$$\n"; close $f; sleep 300' "$T/u.ready"
# a process with threads
pod_app "$SIDESCOPE_BUILD/workload" -t 2 -d 300 -r "$T/w.ready"
# an exited process its parent does not reap (SIGCHLD to its default: the
# test's runner may ignore it, and the child would be reaped at once)
# shellcheck disable=SC2016
pod_app perl -e '$SIG{CHLD} = "DEFAULT"; my $p = fork; exit 0 if $p == 0;
	open(my $f, ">", $ARGV[0]) or die; print $f "$p\n"; close $f; sleep 300' "$T/z.ready"
wait_for_file "$T/u.ready" 10 && wait_for_file "$T/w.ready" 10 && wait_for_file "$T/z.ready" 10
ok $? "the apps started"
u=$(cat "$T/u.ready")
w=$(cat "$T/w.ready")
z=$(cat "$T/z.ready")
for h in "$(pod_host_pid "$u")" "$(pod_host_pid "$w")"; do
	[ -z "$h" ] || on_exit "kill $h"
done
is "$(pod_sidecar cat "/proc/$u/comm")" renamed "uniqexe's comm is 'renamed'"
wait_for_grep "$T/z.ready" . 1
tid=""
for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	# shellcheck disable=SC2016
	tid=$(pod_sidecar sh -c 'for d in /proc/$1/task/*; do
		[ "${d##*/}" = "$1" ] || { echo "${d##*/}"; exit 0; }; done' sh "$w")
	[ -z "$tid" ] || break
	sleep 0.1
done
ok "$([ -n "$tid" ]; echo $?)" "a thread of the workload ($tid)"
# shellcheck disable=SC2016
pod_sidecar sh -c 'for i in $(seq 100); do grep -q ") [ZX] " "/proc/$1/stat" && exit 0; sleep 0.05; done
	exit 1' sh "$z"
ok $? "PID $z has exited, not reaped"
diag "uniqexe $u, workload $w (thread $tid), exited $z"

# ---- -n: the executable's name finds it, in every script --------------------
is "$(pod_sidecar "$SIDESCOPE" ps -q -n uniqexe)" "$u" "sidescope ps -n uniqexe: its executable"
sc cp sh "$SC/cpu-profile" -n uniqexe -d 1 -o "$PO/u.folded"
is "$?" 0 "cpu-profile -n uniqexe: exit 0"
like "$(cat "$T/cp.err")" "^profiling PID $u \\(renamed\\) for 1s" "cpu-profile -n uniqexe: PID $u"
sc up sh "$SC/uprobe-trace" -n uniqexe -d 1 'p:c:malloc'
like "$(cat "$T/up.err")" "^tracing PID $u \\(renamed\\) with 1 probe" "uprobe-trace -n uniqexe: PID $u"
sc tl sh "$SC/timeline-capture" -n uniqexe -d 1 -o "$PO/u.json"
like "$(cat "$T/tl.err")" "^recording a timeline of PID $u \\(renamed\\)" "timeline-capture -n uniqexe: PID $u"
# shellcheck disable=SC2016
sc cl env SIDESCOPE_TARGET=uniqexe SIDESCOPE_STATE="$PO/cl1.state" SIDESCOPE_CAPTURE='echo x > "$CAPTURE_BASE.txt"' \
	SIDESCOPE_OUT="$PO/cl" sh "$SC/capture-loop" --once
like "$(cat "$T/cl.err")" "wrote $PO/cl/pod-renamed-$u-" "capture-loop, SIDESCOPE_TARGET=uniqexe: PID $u"
# lttng-capture finds it, then waits for it to register (it never does)
for a in "-n uniqexe" "uniqexe"; do
	# shellcheck disable=SC2086 # the target's words
	sc lt sh "$SC/lttng-capture" $a -d 1 --wait 1 -O "$PO/lt"
	is "$?" 1 "lttng-capture $a: exit 1"
	like "$(head -2 "$T/lt.err")" "error: process $u \\(uniqexe\\) did not register with lttng-sessiond" \
		"lttng-capture $a: PID $u found (its name, then no registration)"
done
sc lt sh "$SC/lttng-capture" -n renamed -d 1 --wait 1 -O "$PO/lt"
like "$(head -2 "$T/lt.err")" "error: process $u \\(renamed\\) did not register" "lttng-capture -n renamed: its comm"
sc lt sh "$SC/lttng-capture" -n nosuchname -d 1 -O "$PO/lt"
is "$(cat "$T/lt.err")" "lttng-capture: error: no process named 'nosuchname' in this PID namespace (does the pod set shareProcessNamespace: true? 'sidescope ps' lists what is visible)" \
	"lttng-capture -n nosuchname: no such process"

# ---- -p: a thread, an exited process, no process: one answer each -----------
for s in cpu-profile uprobe-trace timeline-capture lttng-capture; do
	for p in "$tid" "$z" "0$w" 4194304; do
		case $s in
		uprobe-trace) set -- -p "$p" -d 1 'p:c:malloc' ;;
		lttng-capture) set -- -p "$p" -d 1 -O "$PO/lt" ;;
		*) set -- -p "$p" -d 1 -o "$PO/x.json" ;;
		esac
		sc t sh "$SC/$s" "$@"
		rc=$?
		case $p in
		"$tid") want="PID $tid is a thread of process $w (workload); use -p $w" ;;
		"$z") want="PID $z (perl) has exited" ;;
		*) want="no process with PID $p in this PID namespace (list them: sidescope ps)"
			[ "$s" != lttng-capture ] ||
				want="no process with PID $p in this PID namespace (does the pod set shareProcessNamespace: true? 'sidescope ps' lists what is visible)" ;;
		esac
		is "$rc:$(cat "$T/t.err")" "1:$s: error: $want" "$s -p $p: exit 1, '$want'"
	done
done
# shellcheck disable=SC2016
sc cl env SIDESCOPE_TARGET="$tid" SIDESCOPE_STATE="$PO/cl2.state" SIDESCOPE_CAPTURE='echo x > "$CAPTURE_BASE.txt"' \
	SIDESCOPE_OUT="$PO/cl" sh "$SC/capture-loop" --once
like "$(cat "$T/cl.err")" "^capture-loop: error: PID $tid is a thread of process $w \\(workload\\); use -p $w\$" \
	"capture-loop, SIDESCOPE_TARGET=$tid: a thread"

done_testing
