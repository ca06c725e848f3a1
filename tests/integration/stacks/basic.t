#!/bin/sh
# sidescope stacks on a program whose threads each do one known thing
# (tests/progs/thread_mix: two deadlocked over two mutexes, one in
# nanosleep, one reading a pipe, one spinning, one in a vfork wait, one
# ticking every millisecond, and an idle pool of 1,000), run as the app of
# a simulated pod and read from the sidecar: every thread in the pod's own
# TIDs, each in its place in the kernel and in its own functions (walked by
# unwind tables: the program has no frame pointers), the mutex owners and
# the deadlock named, the pool shown once; a snapshot under 2 s that pauses
# the app's ticking thread no more than 100 ms; --json, --every, -o; bad
# input.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter python3
prog="$SIDESCOPE_BUILD/tests/progs/thread_mix"
[ -x "$prog" ] || skip_all "needs $prog (make)"
T=$TMPDIR_TEST
pod_start || skip_all "cannot create PID and mount namespaces"

# shellcheck disable=SC2016
pod_app sh -c 'echo "$$" > "$0"; exec "$@" > /tmp/ready' "$T/app.pid" "$prog" -n 1000 -t /tmp/gap
wait_for_file "$T/app.pid" 20
APP=$(cat "$T/app.pid")
HOST=$(pod_host_pid "$APP")
on_exit "kill -9 $HOST"
wait_for_grep "/proc/$HOST/root/tmp/ready" ready 30
ok $? "thread_mix started as the pod's app (pod PID $APP) with 1,008 threads"

# the longest pause of the ticking thread since the last ask
gap_us() {
	rm -f "/proc/$HOST/root/tmp/gap"
	kill -USR1 "$HOST"
	wait_for_file "/proc/$HOST/root/tmp/gap" 5 && cat "/proc/$HOST/root/tmp/gap"
}
gap_us > /dev/null
t0=$(date +%s%N)
pod_sidecar "$SIDESCOPE" stacks -p "$APP" > "$T/dump.txt" 2> "$T/dump.err"
ok $? "stacks -p (pod PID) runs as the sidecar"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
gap=$(gap_us)
diag "a snapshot of $(grep -c . "$T/dump.txt") lines in $ms ms; the app's longest tick gap meanwhile: $gap us"
# an ASan build (SANITIZE=1) runs about three times slower
limit=2000
[ "${SANITIZE:-0}" = 1 ] && limit=6000
ok "$([ "$ms" -lt "$limit" ]; echo $?)" "1,008 threads read in under $((limit / 1000)) s ($ms ms)"
ok "$([ -n "$gap" ] && [ "$gap" -lt 100000 ]; echo $?)" \
	"the app's ticking thread never paused 100 ms ($gap us)"
[ -s "$T/dump.txt" ] || diag "$(cat "$T/dump.err")"
head -n 1 "$T/dump.txt" | sed 's/^/# /'

# block NAME: the dump's entry for the single thread named NAME
block() {
	awk -v n="\"$1\"" '/^$/ { p = 0 } $1 == "TID" && $3 == n { p = 1 } p' "$T/dump.txt"
}
# frames BLOCK: its frame names, one line, innermost first
frames() { printf '%s\n' "$1" | awk '/^    / { printf "%s;", $1 }'; }

like "$(head -n 1 "$T/dump.txt")" "^PID $APP \"thread_mix\": 1008 threads" "the header: PID, name, thread count"
like "$(cat "$T/dump.txt")" "deadlock: TID [0-9]+ \"deadlock_a\" -> TID [0-9]+ \"deadlock_b\" -> TID [0-9]+ \"deadlock_a\"" \
	"the deadlock is named, both threads in it"
a=$(block deadlock_a)
b=$(block deadlock_b)
tid_a=$(printf '%s\n' "$a" | awk 'NR == 1 { print $2 }')
tid_b=$(printf '%s\n' "$b" | awk 'NR == 1 { print $2 }')
like "$a" "waits for a lock held by TID $tid_b \"deadlock_b\"" "deadlock_a waits for deadlock_b's mutex (owner read from the mutex)"
like "$b" "waits for a lock held by TID $tid_a \"deadlock_a\"" "deadlock_b waits for deadlock_a's mutex"
like "$(frames "$a")" "futex[^;]*;.*entry_SYSCALL[^;]*;.*(lll_lock_wait|mutex_lock)[^;]*;lock_second;lock_first;deadlock_a;start_thread;" \
	"deadlock_a: in a futex wait in the kernel, in the lock call under its own functions, to start_thread"
like "$(frames "$b")" "futex[^;]*;.*mutex_lock[^;]*;lock_second;lock_first;deadlock_b;start_thread;" \
	"deadlock_b: the same under deadlock_b"
s=$(block sleeper)
like "$s" "sleeping in [a-z_]*nanosleep" "the sleeper sleeps in a nanosleep"
like "$(frames "$s")" "nanosleep[^;]*;.*nap_forever;sleeper;start_thread;" "under nap_forever"
r=$(block reader)
like "$r" "sleeping in [a-z_]*pipe_read" "the reader waits in a pipe read"
like "$(frames "$r")" "pipe_read[^;]*;.*;read;wait_pipe;reader;start_thread;" "under wait_pipe"
sp=$(block spinner)
like "$sp" "running|runnable" "the spinner runs (or waits for a CPU)"
like "$(frames "$sp")" "(^|;)spin_forever;spinner;start_thread;" "in spin_forever"
v=$(block vforker)
like "$v" "disk wait" "the vfork parent is in uninterruptible sleep (D)"
like "$v" "in uninterruptible sleep:" "with a hint saying what that means"
like "$(frames "$v")" "vfork[^;]*;.*__vfork;wait_child;vforker;start_thread;" "in __vfork under wait_child"
like "$(cat "$T/dump.txt")" "1000 threads  sleeping" "the pool of 1,000 is one entry"
like "$(cat "$T/dump.txt")" "TIDs [0-9]+-[0-9]+ \"pool\"" "its TIDs as one run"
pool_at=$(grep -n '^1000 threads' "$T/dump.txt" | cut -d: -f1)
last_at=$(grep -n '^TID \|^[0-9]* threads' "$T/dump.txt" | tail -n 1 | cut -d: -f1)
is "$pool_at" "$last_at" "the odd ones first, the pool last"

# ---- JSON: every thread, in the pod's TIDs ---------------------------------
pod_sidecar "$SIDESCOPE" stacks -p "$APP" --json -o "$T/dump.json" 2> "$T/json.err"
ok $? "--json -o FILE"
pod_sidecar sh -c "ls /proc/$APP/task" | sort -n > "$T/tids.pod"
python3 - "$T/dump.json" "$T/tids.pod" > "$T/json.check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tids = sorted(t["tid"] for t in d["threads"])
pod = sorted(int(x) for x in open(sys.argv[2]).read().split())
print("threads", len(tids))
print("same_tids", tids == pod)
by = {t["comm"]: t for t in d["threads"] if t["comm"] != "pool"}
a, b = by["deadlock_a"], by["deadlock_b"]
print("owners", a.get("waits_for_tid") == b["tid"] and b.get("waits_for_tid") == a["tid"])
print("deadlock", a["deadlock"] and b["deadlock"] and not by["sleeper"]["deadlock"])
print("states", by["vforker"]["state"], by["sleeper"]["state"], by["spinner"]["state"])
print("user", ";".join(f["name"] for f in by["reader"]["user"][1:4]))
print("kernel", any("futex" in f["name"] for f in a["kernel"]))
print("off_cpu", by["sleeper"]["off_cpu_ms"] > 100)
PY
diag "$(cat "$T/json.check")"
like "$(cat "$T/json.check")" "threads 1008" "the JSON has every thread"
like "$(cat "$T/json.check")" "same_tids True" "by their TIDs in the pod's PID namespace"
like "$(cat "$T/json.check")" "owners True" "each deadlocked thread names the other as the owner"
like "$(cat "$T/json.check")" "deadlock True" "both are marked as in a deadlock, no other"
like "$(cat "$T/json.check")" "states D S R" "states: D, S, R"
like "$(cat "$T/json.check")" "user wait_pipe;reader;start_thread" "user frames by name"
like "$(cat "$T/json.check")" "kernel True" "kernel frames by name"
like "$(cat "$T/json.check")" "off_cpu True" "how long a sleeping thread has been off its CPU"

# ---- repeated snapshots -----------------------------------------------------
pod_sidecar "$SIDESCOPE" stacks -p "$APP" --json --every 0.5 -c 2 > "$T/every.jsonl" 2> "$T/every.err"
ok $? "--every 0.5 -c 2 --json"
is "$(python3 -c 'import json,sys
n = 0
for l in open(sys.argv[1]):
    json.loads(l); n += 1
print(n)' "$T/every.jsonl")" 2 "two JSON documents, one a line"
pod_sidecar "$SIDESCOPE" stacks -p "$APP" --every 0.2 -c 3 -o "$T/every.txt" 2> "$T/every.err"
ok $? "--every 0.2 -c 3 -o FILE"
is "$(grep -c '^PID ' "$T/every.txt")" 3 "three text dumps in the file"

# ---- bad input ---------------------------------------------------------------
"$SIDESCOPE" stacks > /dev/null 2> "$T/e1"
is $? 2 "no target: usage error"
like "$(cat "$T/e1")" "give exactly one target" "which says what to give"
"$SIDESCOPE" stacks -p 1 -a > /dev/null 2> "$T/e2"
is $? 2 "two targets: usage error"
"$SIDESCOPE" stacks -p "$APP" --every 0 > /dev/null 2> "$T/e3"
is $? 2 "--every 0: usage error"
pod_sidecar "$SIDESCOPE" stacks -p 99999 > /dev/null 2> "$T/e4"
is $? 1 "a PID that names no process: exit 1"
like "$(cat "$T/e4")" "99999" "with a line naming it"
pod_sidecar "$SIDESCOPE" stacks -n no-such-process-here > /dev/null 2> "$T/e5"
is $? 1 "a name that matches nothing: exit 1"
like "$(cat "$T/e5")" "no process matches" "said"
"$SIDESCOPE" stacks -p "$APP" -o "$T" > /dev/null 2> "$T/e6"
is $? 2 "-o DIR: usage error"
"$SIDESCOPE" stacks --help > "$T/help" 2>&1
like "$(cat "$T/help")" "EXAMPLES:" "--help has examples"

# more threads than the limit: read up to it, the rest counted
pod_sidecar "$SIDESCOPE" stacks -p "$APP" --max-threads 100 > "$T/max.txt" 2> "$T/max.err"
ok $? "--max-threads 100"
like "$(head -n 1 "$T/max.txt")" ": 100 threads" "100 threads read"
like "$(cat "$T/max.txt")" "908 more threads left out" "the 908 others counted and said"
"$SIDESCOPE" stacks -p "$APP" -c 2 > /dev/null 2> "$T/e7"
is $? 2 "-c without --every: usage error"

# a thread name the app chose, with a terminal escape and a newline
# shellcheck disable=SC2016
pod_app sh -c 'echo "$$" > "$0"; exec "$@" > /tmp/ready2' "$T/esc.pid" "$prog" -V \
	-s "$(printf 'zz\033[2J\nx')"
wait_for_file "$T/esc.pid" 20
ESC=$(cat "$T/esc.pid")
on_exit "kill -9 $(pod_host_pid "$ESC")"
wait_for_grep "/proc/$(pod_host_pid "$ESC")/root/tmp/ready2" ready 30
pod_sidecar "$SIDESCOPE" stacks -p "$ESC" > "$T/esc.txt" 2>&1
grep -q "$(printf '\033')" "$T/esc.txt"
is $? 1 "no escape byte of a thread's name reaches the output"
like "$(cat "$T/esc.txt")" 'TID [0-9]+ "zz\\x1b\[2J\\nx"' "the name shown escaped"
pod_sidecar "$SIDESCOPE" stacks -p "$ESC" --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
print([t["comm"] for t in d["threads"] if t["comm"].startswith("zz")])' > "$T/esc.json" 2>&1
is "$(cat "$T/esc.json")" "['zz\x1b[2J\nx']" "and JSON-escaped in --json"

# by name
pod_sidecar "$SIDESCOPE" stacks -n thread_mix > "$T/byname.txt" 2> "$T/byname.err"
ok $? "-n NAME"
like "$(head -n 1 "$T/byname.txt")" "^PID $APP " "finds the app"
done_testing
