#!/bin/sh
# Least privilege, feature by feature, against an application that runs as
# another user (uid 1000), as in a pod: every feature works with exactly
# CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (CAP_SYSLOG only adds kernel symbol
# names); with one of them missing, a one-line message names it and
# 'doctor'; the offline tools need no capability at all; outputs are 0640.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd setpriv mkfifo
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"

T=$TMPDIR_TEST
chmod 0755 "$T"
mkdir -m 0777 "$T/app"
# start "$@" in the background as uid 1000; $! is the program itself
as_app_bg() { (exec setpriv --reuid=1000 --regid=1000 --clear-groups -- "$@") & }

# a JIT-style app with a perf map, and a uprobe target reading commands
as_app_bg "$SIDESCOPE_BUILD/tests/progs/jit_target" "$T/app/jit.ready"
jp=$!
on_exit "kill $jp"
wait_for_file "$T/app/jit.ready" 10
jit=$(cat "$T/app/jit.ready")
mkfifo -m 0666 "$T/app/fifo"
U="$SIDESCOPE_BUILD/tests/progs/uprobe_target"
exec 3<> "$T/app/fifo"	# read-write: opening it does not wait for a reader
# (an asynchronous list's own redirection: without one, stdin is /dev/null)
(exec setpriv --reuid=1000 --regid=1000 --clear-groups -- "$U" "$T/app/up.ready") \
	< "$T/app/fifo" > "$T/app/up.out" &
up=$!
on_exit "kill $up"
wait_for_file "$T/app/up.ready" 10
upid=$(cat "$T/app/up.ready")
is "$(stat -c %u "/proc/$jit")" 1000 "the app runs as uid 1000"

# --- sidescope ps: no capability needed ---------------------------------
res=$(with_caps "" "$SIDESCOPE" ps 2>&1)
is "$?" 0 "ps: runs with no capability"
like "$res" "^ *$jit +$jit .* yes " "ps: lists the other user's process and its perf map"

# --- profile --------------------------------------------------------------
with_caps "$LEAST_CAPS" "$SIDESCOPE" profile -p "$jit" -d 1 -o "$T/least.folded" \
	-o "$T/least.pb.gz" 2> "$T/err"
is "$?" 0 "profile: runs with only $LEAST_CAPS"
like "$(cat "$T/least.folded")" ";main;run_jitted;Jit" "profile: ELF and perf-map frames named"
unlike "$(cat "$T/err")" "unreadable" "profile: every binary readable"
is "$(stat -c %a "$T/least.folded") $(stat -c %a "$T/least.pb.gz")" "640 640" "profile: outputs are 0640"

with_caps "$LEAST_CAPS" "$SIDESCOPE" profile --off-cpu -p "$jit" -d 1 -o "$T/off.folded" \
	2> "$T/err"
is "$?" 0 "profile --off-cpu: runs with only $LEAST_CAPS (the sched_switch tracepoint)"
with_caps "$LEAST_CAPS" "$SIDESCOPE" profile --wall -p "$jit" -d 1 -o "$T/wall.folded" \
	2> "$T/err"
is "$?" 0 "profile --wall: runs with only $LEAST_CAPS"
like "$(cat "$T/wall.folded")" ";main;run_jitted;Jit" "profile --wall: ELF and perf-map frames named"

with_caps "bpf,perfmon" "$SIDESCOPE" profile -p "$jit" -d 1 -o "$T/noptrace.folded" 2> "$T/err"
is "$?" 0 "profile without CAP_SYS_PTRACE: still a profile"
like "$(cat "$T/noptrace.folded")" "Jit" "profile without CAP_SYS_PTRACE: perf-map frames still named"
like "$(cat "$T/err")" "warning: [0-9]+ binar.* unreadable: permission denied .*CAP_SYS_PTRACE; run 'doctor'" \
	"profile without CAP_SYS_PTRACE: one warning names it and doctor"

for drop in bpf perfmon; do
	caps=$(printf '%s' "$LEAST_CAPS" | sed "s/$drop,//; s/,$drop//")
	with_caps "$caps" "$SIDESCOPE" profile -p "$jit" -d 1 -o "$T/x.folded" 2> "$T/err"
	is "$?" 1 "profile without CAP_$(echo $drop | tr a-z A-Z): exits 1"
	is "$(wc -l < "$T/err" | tr -d ' ')" 1 "profile without CAP_$(echo $drop | tr a-z A-Z): one line"
	like "$(cat "$T/err")" "needs CAP_$(echo $drop | tr a-z A-Z); run 'doctor'" \
		"profile without CAP_$(echo $drop | tr a-z A-Z): names it and doctor"
done
ok "$([ ! -e "$T/x.folded" ]; echo $?)" "profile refused: no output file"

# kernel symbols: CAP_SYSLOG is what names them; a process that lives in
# system calls makes sure that kernel stacks are sampled
dd if=/dev/zero of=/dev/null bs=1 2>/dev/null &
dd=$!
on_exit "kill $dd"
with_caps "$LEAST_CAPS" "$SIDESCOPE" profile -a -d 1 -o "$T/k.folded" 2> "$T/err"
is "$?" 0 "profile -a: runs with only $LEAST_CAPS"
like "$(cat "$T/err")" "kernel symbols unavailable: .*needs CAP_SYSLOG" \
	"profile -a without CAP_SYSLOG: says kernel symbols need it"
with_caps "$LEAST_CAPS,syslog" "$SIDESCOPE" profile -a -d 1 -o "$T/k.folded" 2> "$T/err"
unlike "$(cat "$T/err")" "kernel symbols unavailable" "profile -a with CAP_SYSLOG: no warning"
like "$(cat "$T/k.folded")" ";[a-z_][a-z0-9_.]*_\\[k\\]" "profile -a with CAP_SYSLOG: kernel frames named"
kill "$dd"

# --- uprobe -------------------------------------------------------------------
with_caps_bg "$LEAST_CAPS" "$SIDESCOPE" uprobe -p "$upid" -o "$T/up.txt" \
	"p:$U:add_ints \"%d\", arg1" 2> "$T/err"
tr=$!
on_exit "kill $tr"
wait_for_grep "$T/err" "tracing|error"
printf 'ints\n' >&3
wait_for_grep "$T/app/up.out" "ints" 10
kill -INT "$tr"
wait "$tr"
is "$?" 0 "uprobe: runs with only $LEAST_CAPS on the other user's process" || diag "$(cat "$T/err")"
is "$(sed 's/.* //' "$T/up.txt" | tr '\n' ' ')" "7 -1 " "uprobe: its events"
is "$(stat -c %a "$T/up.txt")" 640 "uprobe: output is 0640"

with_caps "bpf,perfmon" "$SIDESCOPE" uprobe -p "$upid" -d 1 "p:$U:add_ints" > /dev/null 2> "$T/err"
is "$?" 1 "uprobe without CAP_SYS_PTRACE: exits 1"
is "$(wc -l < "$T/err" | tr -d ' ')" 1 "uprobe without CAP_SYS_PTRACE: one line"
like "$(cat "$T/err")" "Permission denied .*CAP_SYS_PTRACE; run 'doctor'" \
	"uprobe without CAP_SYS_PTRACE: names it and doctor"
with_caps "sys_ptrace" "$SIDESCOPE" uprobe -p "$upid" -d 1 "p:$U:add_ints" > /dev/null 2> "$T/err"
is "$?" 1 "uprobe without CAP_BPF and CAP_PERFMON: exits 1"
like "$(cat "$T/err")" "needs CAP_BPF.*; run 'doctor'" \
	"uprobe without CAP_BPF and CAP_PERFMON: names them and doctor"
printf 'quit\n' >&3
exec 3>&-

# --- offline tools: no capability --------------------------------------
with_caps "" "$SIDESCOPE" flame "$T/least.folded" -o "$T/least.svg" 2> "$T/err"
is "$?" 0 "flame: runs with no capability"
is "$(stat -c %a "$T/least.svg")" 640 "flame: output is 0640"
with_caps "" "$SIDESCOPE" flame "$T/least.pb.gz" -o "$T/pprof.svg" 2> "$T/err"
is "$?" 0 "flame reads pprof with no capability"

done_testing
