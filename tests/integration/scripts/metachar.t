#!/bin/sh
# The wrapper scripts with hostile names: an output directory, a target
# program path and a process name holding spaces, quotes, '$', ';', '*',
# backticks and a leading dash. capture-loop, cpu-profile, uprobe-trace (and
# doctor -O) must write where they are asked, match the process by its name,
# and never run or glob any part of a name. Real captures in a simulated pod.
# capture-loop writes into the sidecar's own volume (/run/sidescope): it
# refuses an output directory that the app's mounts reach; cpu-profile and
# uprobe-trace write into one the app reaches, and warn. Then the targets
# of docs/cli.md: -p PID, -n NAME or a positional one, a name two processes
# match refused with both PIDs, a thread's ID refused with its process;
# -o FILE writes that file alone (uprobe-trace --json: the events as JSON in
# it, stderr JSON lines).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd busybox unshare nsenter flock jq
scripts="$SIDESCOPE_SRC/scripts"
unset SIDESCOPE_SCHEDULE SIDESCOPE_PUSH_URL SIDESCOPE_CAPTURE SIDESCOPE_OUT SIDESCOPE_TARGET
export SIDESCOPE_LIB="$scripts/lib/common.sh"

T=$TMPDIR_TEST
# whatever runs by mistake leaves a file in the directory it runs in: the
# test runs the scripts from $T/cwd and looks for these everywhere under $T
mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
# a file a glob would pick up
: > "$T/cwd/globbed"
evil="x 'q' \"d\" \$(touch pwned1) ;touch pwned2; * \`touch pwned3\`"
# the program: its path and its name (comm, at most 15 bytes) are hostile
bindir="$T/bin $evil"
name="-b'c\$d;e*\`f x"
mkdir -p "$bindir"
cp "$SIDESCOPE_BUILD/tests/progs/podapp" "$bindir/$name"
bin="$bindir/$name"

pod_start || skip_all "cannot create PID and mount namespaces"
[ -n "$POD_APP_CGROUP" ] || skip_all "cannot make a cgroup for the app container"
pod_app sh -c 'echo "$$" > "$1" && exec "$2" "$3"' sh "$T/app.pid" "$bin" "$T/app.ready"
wait_for_file "$T/app.ready" 10
ok $? "the program with a hostile path started"
app=$(cat "$T/app.pid")
is "$(pod_sidecar cat "/proc/$app/comm")" "$name" "its process name is hostile too"

# capture-loop --once: hostile output directory (absolute) and pod name,
# the target by its hostile name, a real CPU profile
priv=/run/sidescope
out1="$priv/-loop $evil"
pod_sidecar env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" \
	SIDESCOPE_OUT="$out1" SIDESCOPE_TARGET="$name" SIDESCOPE_POD="pod $evil" \
	SIDESCOPE_DURATION=1 SIDESCOPE_FORMATS="pb.gz folded" \
	busybox sh "$scripts/capture-loop" --once 2>"$T/loop.err"
ok $? "capture-loop --once: exit 0"
[ -s "$T/loop.err" ] && diag "$(cat "$T/loop.err")"
files=$(pod_sidecar ls -A "$out1")
like "$files" "^pod_x__q___d___.*--b_c_d_e__f_x-$app-[0-9]{8}T[0-9]{6}Z\\.folded\$" \
	"capture-loop: the files are in the asked directory, with safe names"
is "$(printf '%s\n' "$files" | wc -l | tr -d ' ')" 2 "capture-loop: both formats and nothing else"
# shellcheck disable=SC2016 # expanded by the sidecar's sh
like "$(pod_sidecar sh -c 'cat "$1"/*.folded' sh "$out1" 2>/dev/null)" "run_app" \
	"capture-loop: the profile is of the program"
unlike "$(cat "$T/loop.err")" "staging|sidescope profile: wrote" \
	"capture-loop: its log names no staging path (sidescope's own 'wrote' lines left out)"

# a relative SIDESCOPE_OUT that starts with a dash, from the working directory
pod_sidecar mkdir -p "$priv/cwd"
pod_sidecar sh -c 'cd "$1" && shift && exec "$@"' sh "$priv/cwd" \
	env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" SIDESCOPE_POD=pod \
	SIDESCOPE_OUT="-loop $evil" SIDESCOPE_TARGET="$name" SIDESCOPE_DURATION=1 \
	SIDESCOPE_FORMATS=folded busybox sh "$scripts/capture-loop" --once 2>"$T/loop2.err"
ok $? "capture-loop --once, SIDESCOPE_OUT=-DIR: exit 0"
[ -s "$T/loop2.err" ] && diag "$(cat "$T/loop2.err")"
like "$(pod_sidecar ls "$priv/cwd/-loop $evil")" "^pod--b_c_d_e__f_x-$app-[0-9]{8}T[0-9]{6}Z\\.folded\$" \
	"capture-loop: the file is in the asked relative directory"
is "$(pod_sidecar ls -A "$priv/cwd")" "-loop $evil" "capture-loop: nothing else in the working directory"

# an output directory the app reaches (the host's filesystem, in its mount
# namespace too): refused before any capture
pod_sidecar env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" \
	SIDESCOPE_OUT="$T/-shared $evil" SIDESCOPE_TARGET="$name" SIDESCOPE_DURATION=1 \
	busybox sh "$scripts/capture-loop" --once 2>"$T/loop3.err"
is "$?" 1 "capture-loop --once into a directory the app reaches: exit 1"
like "$(cat "$T/loop3.err")" "^capture-loop: error: output directory '$T/-shared x 'q' .*' is on a volume that other containers mount \\(PIDs [0-9 ]+\\)" \
	"capture-loop: the error names the directory and the other containers' processes"
is "$(wc -l < "$T/loop3.err" | tr -d ' ')" 1 "capture-loop: in one line"
is "$(ls -A "$T/-shared $evil")" "" "capture-loop: nothing was written there"

# cpu-profile: a relative output directory that starts with a dash
out2="-cpu $evil"
pod_sidecar sh -c 'cd "$1" && shift && exec "$@"' sh "$T/cwd" \
	env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" SIDESCOPE_POD=pod \
	busybox sh "$scripts/cpu-profile" -d 1 -O "$out2" -- "$name" >"$T/cpu.out" 2>"$T/cpu.err"
ok $? "cpu-profile -O -DIR -- -NAME: exit 0"
like "$(cat "$T/cpu.err")" "^cpu-profile: warning: output directory '\\./-cpu x 'q' .*' is on a volume that other containers mount \\(PIDs [0-9 ]+\\): the app could alter or remove the results there\$" \
	"cpu-profile: one line warns that the app reaches the output directory"
is "$(cd -- "$T/cwd/$out2" && ls | sed 's/-[0-9]\{8\}T[0-9]\{6\}Z//' | sort | tr '\n' ' ')" \
	"pod--b_c_d_e__f_x-$app.folded pod--b_c_d_e__f_x-$app.pb.gz pod--b_c_d_e__f_x-$app.svg " \
	"cpu-profile: three files in the asked directory"
like "$(cat "$T/cpu.out")" "^kubectl cp -c sidescope pod:.*/-cpu x 'q'" \
	"cpu-profile: the kubectl cp line names the directory"

# uprobe-trace: the probe names the hostile program path; output to a
# hostile directory
out3="$T/-probe $evil"
pod_sidecar env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" SIDESCOPE_POD=pod \
	busybox sh "$scripts/uprobe-trace" -c 1 -d 20 -O "$out3" -- "$name" \
	"p:$bin:greet_utf16 \"%s\", str16(arg1, arg2)" >"$T/up.out" 2>"$T/up.err"
ok $? "uprobe-trace -O DIR -- -NAME 'p:HOSTILE PATH:func': exit 0"
like "$(cat "$T/up.err")" "^uprobe-trace: warning: output directory '$T/-probe x 'q' .*' is on a volume that other containers mount" \
	"uprobe-trace: one line warns that the app reaches the output directory"
f=$(ls "$out3" 2>/dev/null)
like "$f" "^pod--b_c_d_e__f_x-$app-[0-9]{8}T[0-9]{6}Z\\.txt\$" "uprobe-trace: the file is in the asked directory"
like "$(cat "$out3/$f" 2>/dev/null)" "greet_utf16 h.llo w.rld" "uprobe-trace: the event was traced (UTF-16 decoded)"

# doctor: its output-directory check on a relative directory with a dash
(cd "$T/cwd" && busybox sh "$scripts/doctor" -O "-doc $evil" >"$T/doctor.out" 2>&1)
like "$(cat "$T/doctor.out")" "PASS +output directory \\./-doc x 'q'.* writable" \
	"doctor -O -DIR checks that directory"
ok "$([ -d "$T/cwd/-doc $evil" ]; echo $?)" "doctor: the directory is the one asked for"

# ---- targets and -o FILE -----------------------------------------------
sc() { pod_sidecar env SIDESCOPE="$SIDESCOPE" SIDESCOPE_LIB="$SIDESCOPE_LIB" SIDESCOPE_POD=pod "$@"; }
probe="p:$bin:greet_utf16 \"%s\", str16(arg1, arg2)"
mkdir -p "$T/files o"
sc busybox sh "$scripts/cpu-profile" -p "$app" -d 1 -o "$T/files o/p.svg" --output "$T/files o/p.folded" \
	>"$T/f.out" 2>"$T/f.err"
ok $? "cpu-profile -p PID -o FILE -o FILE: exit 0"
[ -s "$T/f.err" ] && diag "$(cat "$T/f.err")"
is "$(ls "$T/files o" | tr '\n' ' ')" "p.folded p.svg " "cpu-profile -o: those files and no other"
like "$(cat "$T/files o/p.folded")" "run_app" "cpu-profile -o: the profile of the PID"
like "$(tail -c 7 "$T/files o/p.svg")" "</svg>" "cpu-profile -o x.svg: a flame graph"
is "$(grep -c '^kubectl cp ' "$T/f.out")" 2 "cpu-profile -o: a kubectl cp line for each"
sc busybox sh "$scripts/cpu-profile" "$app" -d 1 -O "$T/pos" >/dev/null 2>"$T/pos.err"
ok $? "cpu-profile PID -O DIR: exit 0"
is "$(ls "$T/pos" | sed 's/-[0-9]\{8\}T[0-9]\{6\}Z//' | sort | tr '\n' ' ')" \
	"pod--b_c_d_e__f_x-$app.folded pod--b_c_d_e__f_x-$app.pb.gz pod--b_c_d_e__f_x-$app.svg " \
	"cpu-profile PID -O DIR: the three files in DIR"
sc busybox sh "$scripts/uprobe-trace" --pid="$app" -c 1 -d 0 --json -o "$T/files o/ev.json" "$probe" \
	>"$T/j.out" 2>"$T/j.err"
ok $? "uprobe-trace --pid=PID -d 0 -c 1 --json -o FILE: exit 0"
is "$(jq -r 'select(.type == "entry") | .text' "$T/files o/ev.json")" "héllo wörld ✓" \
	"uprobe-trace -o FILE --json: the event, in JSON, in the file"
is "$(cat "$T/j.out")" "" "uprobe-trace --json -o FILE: nothing on stdout"
is "$(jq -r .level "$T/j.err" | sort -u | tr '\n' ' ')" "info " "uprobe-trace --json: stderr is JSON lines"
like "$(jq -r .message "$T/j.err")" "fetch it from your machine: kubectl cp .*ev\\.json" \
	"uprobe-trace --json: the kubectl cp line among them"

# a second process of the same name: the name is refused, with both PIDs
pod_app sh -c 'echo "$$" > "$1" && exec "$2" "$3"' sh "$T/app2.pid" "$bin" "$T/app2.ready"
wait_for_file "$T/app2.ready" 10
app2=$(cat "$T/app2.pid")
pids=$(printf '%s\n%s\n' "$app" "$app2" | sort -n | paste -s -d , - | sed 's/,/, /')
for s in cpu-profile uprobe-trace; do
	set --
	[ "$s" = cpu-profile ] || set -- "$probe"
	for how in "-n" "--"; do
		sc busybox sh "$scripts/$s" -d 1 "$how" "$name" "$@" >/dev/null 2>"$T/two.err"
		is "$?" 1 "$s $how NAME that two processes match: exit 1"
		is "$(cat "$T/two.err")" \
			"$s: error: several processes match '$name': PIDs $pids; give one with -p PID (list them: sidescope ps)" \
			"$s $how NAME: refused with both PIDs"
	done
done
kill "$(pod_host_pid "$app2")"

# a thread's ID: refused with the process it belongs to
pod_app "$SIDESCOPE_BUILD/workload" -t 2 -d 30 -r "$T/wl.ready"
wait_for_file "$T/wl.ready" 10
wl=$(cat "$T/wl.ready")
on_exit "kill $(pod_host_pid "$wl")"
tid=""
for _i in $(seq 50); do
	tid=$(pod_sidecar ls "/proc/$wl/task" | grep -vx "$wl" | head -1)
	[ -n "$tid" ] && break
	sleep 0.1
done
ok "$([ -n "$tid" ]; echo $?)" "a thread of a process of the pod ($tid of $wl)"
for c in "cpu-profile -d 1 -p $tid" "uprobe-trace -p $tid p:c:malloc" "cpu-profile $tid"; do
	# shellcheck disable=SC2086 # the words of the command
	sc busybox sh "$scripts/${c%% *}" ${c#* } >/dev/null 2>"$T/tid.err"
	is "$?" 1 "$c: a thread: exit 1"
	is "$(cat "$T/tid.err")" "${c%% *}: error: PID $tid is a thread of process $wl (workload); use -p $wl" \
		"$c: names its process"
done
kill "$(pod_host_pid "$wl")"

# nothing ran, nothing was globbed
is "$(pod_sidecar find "$T" "$priv" -name 'pwned*' | wc -l | tr -d ' ')" 0 "no part of a name was run"
is "$(pod_sidecar find "$T" "$priv" -name globbed | wc -l | tr -d ' ')" 1 "no name was globbed into a file name"
is "$(ls -A "$T/cwd" | grep -v -e '^globbed$' -e '^-cpu ' -e '^-loop ' -e '^-doc ' | wc -l | tr -d ' ')" 0 \
	"nothing else was created in the working directory"
done_testing
