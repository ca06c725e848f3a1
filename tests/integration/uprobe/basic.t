#!/bin/sh
# sidescope uprobe against a real process: integers, return values, byte
# strings, UTF-16 (NUL-terminated, counted, .NET layout) with non-ASCII
# text, limits, faults, filters, -c, -d, -o, --json, --latency, errors.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd jq mkfifo setpriv
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"

T="$SIDESCOPE_BUILD/tests/progs/uprobe_target"
[ -x "$T" ] || skip_all "needs $T (make)"
RUN=0

# Start a fresh target reading commands from a FIFO on fd 3; sets TPID.
start_target() {
	RUN=$((RUN + 1))
	_d="$TMPDIR_TEST/run$RUN"
	mkdir -p "$_d"
	mkfifo "$_d/fifo"
	"$T" "$_d/ready" < "$_d/fifo" > "$_d/target.out" &
	_tp=$!
	on_exit "kill $_tp"
	exec 3> "$_d/fifo"
	wait_for_file "$_d/ready" 10 || return 1
	TPID=$(cat "$_d/ready")
}

# trace "COMMANDS" ARGS...: start a target, trace it with ARGS, send the
# commands once the probes are attached, then quit; output in OUT/ERR, exit
# status in RC.
trace() {
	_cmds=$1
	shift
	start_target || { RC=99; return; }
	OUT="$_d/out"
	ERR="$_d/err"
	"$SIDESCOPE" uprobe -p "$TPID" "$@" > "$OUT" 2> "$ERR" &
	_tr=$!
	on_exit "kill $_tr"
	wait_for_grep "$ERR" "tracing|error" || diag "tracer did not start"
	printf '%b' "$_cmds" >&3
	echo quit >&3
	exec 3>&-
	wait "$_tr"
	RC=$?
}

text_of() { # text_of PROBE: the formatted text of PROBE's events (JSON output)
	jq -r --arg p "$1" 'select(.probe == $p and .type == "entry") | .text' "$OUT"
}

# --- strings, exactly ---
trace 'strings\n' --json \
	"p:$T:take_str \"%s\", str(arg1)" \
	"p:$T:take_u16z \"%s\", str16(arg1)" \
	"p:$T:take_u16n \"%s\", str16(arg1, arg2)" \
	"p:$T:take_dotnet \"%s\", dotnet_string(arg1)"
is "$RC" 0 "json trace of strings exits 0"
jq -e . "$OUT" > /dev/null
ok $? "every line is JSON"
long=$(printf '0123456789%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26)
long=$(printf '%s' "$long" | cut -c1-256)
want16=$(printf '%s\n' "hello, world" "héllo wörld ÇÀ" "你好，世界" "😀👍🏽!" "a�b" "" "$long…")
want8=$(printf '%s\n' "hello, world" "héllo wörld ÇÀ" "你好，世界" "😀👍🏽!" "" "$long…")
is "$(text_of take_str)" "$want8" "str(): ASCII, accented, CJK, emoji, empty, cut at 256"
is "$(text_of take_u16z)" "$want16" "str16(): NUL-terminated UTF-16, lone surrogate as U+FFFD"
is "$(text_of take_u16n)" "$want16" "str16(E, LEN): counted UTF-16"
is "$(text_of take_dotnet)" "$want16" "dotnet_string(): length at +8, chars at +12"
is "$(jq -r 'select(.probe == "take_dotnet") | .args[0].length' "$OUT" | tr '\n' ' ')" \
	"12 14 5 7 3 0 300 " ".NET length field read as is"
is "$(jq -r 'select(.truncated == true) | .probe' "$OUT" | sort | tr '\n' ' ')" \
	"take_dotnet take_str take_u16n take_u16z " "\"truncated\": true on the long strings only"
is "$(jq -r 'select(.probe == "take_u16z") | .args[0].truncated // false' "$OUT" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" \
	"6false 1true " "per-argument truncated flag"
is "$(jq -r 'select(.type == "summary") | .hits' "$OUT")" "27" "summary counts every hit"
is "$(jq -r 'select(.type == "summary") | .printed' "$OUT")" "27" "summary counts what was printed"
is "$(jq -r 'select(.pid) | .pid' "$OUT" | sort -u)" "$TPID" "events carry the target's PID"

# --- text mode: same strings, escaped control characters, 80-column lines ---
trace 'strings\n' --max-str 8 "p:$T:take_u16z \"<%s>\", str16(arg1)"
is "$RC" 0 "text trace exits 0"
like "$(cat "$OUT")" "^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} +$TPID +$TPID +uprobe_target +take_u16z <héllo wö…>$" \
	"text line: time, PID, TID, comm, probe, text cut at --max-str with a marker"
like "$(cat "$OUT")" "take_u16z <😀👍🏽!>$" "surrogate pairs in text mode"
like "$(cat "$OUT")" "take_u16z <01234567…>$" "long string cut at 8 characters"
is "$(awk 'length > 80' "$OUT" | wc -l)" 0 "text lines fit 80 columns with short strings"
like "$(cat "$ERR")" "take_u16z: 7 hits, 0 filtered out, 7 printed, 0 lost" "hits on stderr"

# --- integers, return values, dereferences ---
trace 'ints\n' --json "p:$T:add_ints \"%d %ld %u %x\", arg1, arg2, arg3, arg1" \
	"r:$T:add_ints \"%ld\", retval"
is "$RC" 0 "int trace exits 0"
is "$(jq -r 'select(.type == "entry") | .text' "$OUT" | tr '\n' '|')" \
	"7 -3 200 7|-1 1099511627776 0 ffffffff|" "%d %ld %u %x of arguments"
is "$(jq -r 'select(.type == "return") | .args[0].value' "$OUT" | tr '\n' ' ')" \
	"204 1099511627775 " "retval in r: probes, typed as numbers"
is "$(jq -r 'select(.type == "entry") | .args[1].value' "$OUT" | tr '\n' ' ')" \
	"-3 1099511627776 " "typed JSON values (signed 64-bit)"

trace 'strings\n' --json "p:$T:take_dotnet \"%d %d\", *(s32*)(arg1 + 8), *(u16*)(arg1 + 12)"
is "$(jq -r 'select(.type == "entry") | .text' "$OUT" | head -3 | tr '\n' '|')" \
	"12 104|14 104|5 20320|" "dereferences with offsets: length and first char"

# --- faults, NULL, bad lengths ---
trace 'edge\n' --json "p:$T:take_dotnet \"%s\", dotnet_string(arg1)" \
	"p:$T:take_addr \"%s\", str(arg1)" "p:$T:take_u16n \"%s\", str16(arg1, arg2)"
is "$RC" 0 "edge cases do not crash the tracer"
is "$(jq -r 'select(.probe == "take_dotnet") | .text' "$OUT" | head -2 | tr '\n' '|')" \
	"(null)|<bad length>|" "NULL .NET string and negative length marked"
is "$(jq -r 'select(.probe == "take_addr") | .args[0].fault' "$OUT")" "true" "unreadable address marked as a fault"
is "$(jq -r 'select(.probe == "take_u16n") | .args[0].bad_length' "$OUT")" "true" "negative counted length marked"
is "$(jq -r 'select(.probe == "take_dotnet") | .truncated' "$OUT" | tail -1)" "true" \
	"absurd .NET length clamped to --max-str and marked"

# --- filters in BPF ---
trace 'flood 50\n' --json "p:$T:flood_fn ((arg1 >= 10 && arg1 < 20) || arg1 == 42) \"%d\", arg1"
is "$(jq -r 'select(.type == "entry") | .text' "$OUT" | tr '\n' ' ')" \
	"10 11 12 13 14 15 16 17 18 19 42 " "filter with && || and parentheses"
is "$(jq -r 'select(.type == "summary") | "\(.hits) \(.probes[0].filtered) \(.printed)"' "$OUT")" \
	"50 39 11" "hits = filtered + printed"
trace 'strings\n' --json "r:$T:take_u16z (retval > 10) \"%lu\", retval"
is "$(jq -r 'select(.type == "return") | .text' "$OUT" | tr '\n' ' ')" "12 14 300 " "filter on retval"

# --- -c, -d, -o ---
trace 'flood 100\n' -c 5 "p:$T:flood_fn \"%d\", arg1"
is "$RC" 0 "-c exits 0"
is "$(wc -l < "$OUT" | tr -d ' ')" 5 "-c 5 prints 5 events"

start_target
t0=$(date +%s)
"$SIDESCOPE" uprobe -p "$TPID" -d 1 "p:$T:flood_fn" > "$_d/out" 2> "$_d/err"
is "$?" 0 "-d exits 0"
t1=$(date +%s)
ok "$([ $((t1 - t0)) -ge 1 ] && [ $((t1 - t0)) -le 3 ]; echo $?)" "-d 1 stops after about a second"
echo quit >&3
exec 3>&-

# SIGTERM (what Kubernetes sends) ends a capture cleanly: the -o file has
# every event that was queued
start_target
"$SIDESCOPE" uprobe -p "$TPID" -o "$_d/sig.txt" "p:$T:flood_fn \"%d\", arg1" 2> "$_d/err" &
tr=$!
on_exit "kill $tr"
wait_for_grep "$_d/err" "tracing|error"
echo "flood 7" >&3
wait_for_grep "$_d/target.out" "^done flood 7"
kill -TERM "$tr"
wait "$tr"
is "$?" 0 "SIGTERM: exit 0"
is "$(sed 's/.* //' "$_d/sig.txt" | tr '\n' ' ')" "0 1 2 3 4 5 6 " "SIGTERM: the -o file holds every event"
echo quit >&3
exec 3>&-

trace 'ints\n' -o "$TMPDIR_TEST/events.txt" "p:$T:add_ints \"%d\", arg1"
is "$RC" 0 "-o exits 0"
is "$(sed 's/.* //' "$TMPDIR_TEST/events.txt" | tr '\n' ' ')" "7 -1 " "-o FILE holds the events"
is "$(stat -c %a "$TMPDIR_TEST/events.txt")" 640 "-o FILE has mode 0640"
left=0
for f in "$TMPDIR_TEST"/.events* "$TMPDIR_TEST"/events.txt.*; do
	[ -e "$f" ] && left=$((left + 1))
done
is "$left" 0 "no temporary file left"

# --- latency: totals equal hits ---
trace 'flood 200\nstrings\n' --json --latency "p:$T:flood_fn" "r:$T:take_u16z"
is "$RC" 0 "--latency exits 0"
is "$(jq -r 'select(.type == "latency" and .probe == "flood_fn") | .calls' "$OUT")" 200 \
	"latency: entry probe paired with its return for every call"
is "$(jq -r 'select(.type == "latency" and .probe == "flood_fn") | [.buckets[].count] | add' "$OUT")" 200 \
	"latency: buckets add up to the calls"
is "$(jq -r 'select(.type == "latency" and .probe == "take_u16z") | .calls' "$OUT")" \
	"$(jq -r 'select(.type == "summary") | .probes[1].hits' "$OUT")" \
	"latency of an r: probe: total equals its hits"
trace 'flood 20\n' --latency "p:$T:flood_fn"
like "$(cat "$OUT")" "latency of flood_fn: 20 calls" "text histogram"
unlike "$(cat "$OUT")" "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} " "--latency alone: no line per call"
like "$(cat "$ERR")" "flood_fn: 20 hits" "and every call counted"
trace 'flood 5\n' --latency -o "$TMPDIR_TEST/lat.txt" "p:$T:flood_fn \"i=%d\", arg1"
is "$(grep -Ec '^[0-9:.]+ .* flood_fn i=' "$TMPDIR_TEST/lat.txt")" 5 "--latency, a probe with a FORMAT: its lines per call too"
like "$(cat "$TMPDIR_TEST/lat.txt")" "latency of flood_fn: 5 calls" "and the histogram after them"
trace 'flood 3\n' -d 0 -c 3 "p:$T:flood_fn"
is "$RC" 0 "-d 0: until Ctrl-C (here, -c 3)"
is "$(grep -Ec '^[0-9:.]+ .* flood_fn' "$OUT")" 3 "-d 0 -c 3: three events"

# --- a place the kernel cannot probe: the middle of an instruction ---
# take_str starts "push %rbp; mov %rsp,%rbp" (55 48 89 e5): +3 is the e5
# byte, an instruction (in) that uprobes refuse (ENOTSUPP, 524); sidescope
# decodes the function and refuses first
start_target
"$SIDESCOPE" uprobe -p "$TPID" -d 1 "p:$T:take_str+3" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "a probe inside an instruction: exit 1"
like "$(cat "$TMPDIR_TEST/err")" "take_str\+3: file offset 0x[0-9a-f]+ is inside an instruction of take_str \(take_str\+0x3\); the instructions around it start at \+0x1 and \+0x4" \
	"and said in words, with the instructions around it"
unlike "$(cat "$TMPDIR_TEST/err")" "Unknown error" "not as an unknown error"
echo quit >&3
exec 3>&-

# --- save and replay ---
trace 'strings\n' --save "$TMPDIR_TEST/cap.bin" "p:$T:take_u16z \"%s\", str16(arg1)"
"$SIDESCOPE" uprobe --replay "$TMPDIR_TEST/cap.bin" > "$TMPDIR_TEST/replay.txt" 2> "$TMPDIR_TEST/replay.err"
is "$?" 0 "--replay exits 0"
is "$(cat "$TMPDIR_TEST/replay.txt")" "$(cat "$OUT")" "replay prints what the live trace printed"
like "$(cat "$TMPDIR_TEST/replay.err")" "replayed 7 events" "replay reports its rate"

# --- errors ---
"$SIDESCOPE" uprobe "p:$T:take_str (arg1 > \"%s\"" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 2 "malformed spec exits 2"
like "$(cat "$TMPDIR_TEST/err")" "column [0-9]+: " "malformed spec names the column"
like "$(sed -n 3p "$TMPDIR_TEST/err")" '^ +\^$' "a caret points at the column"
"$SIDESCOPE" uprobe "p:$T:no_such_function" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "unknown symbol exits 1"
like "$(cat "$TMPDIR_TEST/err")" "no function 'no_such_function'" "unknown symbol named"
"$SIDESCOPE" uprobe "p:/no/such/binary:main" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "missing binary exits 1"
like "$(cat "$TMPDIR_TEST/err")" "cannot open /no/such/binary: No such file" "missing binary named"
"$SIDESCOPE" uprobe -p 2147483000 "p:$T:add_ints" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "missing PID exits 1"
like "$(cat "$TMPDIR_TEST/err")" "no process with PID 2147483000" "missing PID named"
"$SIDESCOPE" uprobe "p:nosuchlibrary:f" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "unknown library exits 1"
like "$(cat "$TMPDIR_TEST/err")" "no library 'libnosuchlibrary.so\*'" "unknown library named"
"$SIDESCOPE" uprobe --max-str 0 "p:$T:add_ints" > /dev/null 2>&1
is "$?" 2 "bad --max-str exits 2"
with_caps "" "$SIDESCOPE" uprobe "p:$T:add_ints" > /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "no capabilities: exits 1"
like "$(cat "$TMPDIR_TEST/err")" "needs CAP_BPF" "no capabilities: says which are needed"
"$SIDESCOPE" uprobe --help | grep -q '^EXAMPLES:'
ok $? "--help has examples"

# --- privileges: with uprobe_multi links (kernel 6.6+), CAP_BPF, CAP_PERFMON
# and CAP_SYS_PTRACE are enough; uprobe perf events, the fallback for older
# kernels, need CAP_SYS_ADMIN on kernels with the CVE-2025-38466 fix.
# least_caps_run LINK CAPS: trace ints with only CAPS through LINK links
least_caps_run() {
	start_target
	SIDESCOPE_UPROBE_LINK=$1 with_caps "$2" "$SIDESCOPE" uprobe -p "$TPID" \
		"p:$T:add_ints \"%d\", arg1" > "$_d/out" 2> "$_d/err" &
	_lc=$!
	on_exit "kill $_lc"
	wait_for_grep "$_d/err" "tracing|error"
	printf 'ints\nquit\n' >&3
	exec 3>&-
	wait "$_lc"
	RC=$?
	grep -q error "$_d/err" && diag "$(cat "$_d/err")"
}
least_caps_run multi "$LEAST_CAPS"
is "$RC" 0 "uprobe_multi links: runs with only $LEAST_CAPS"
is "$(sed 's/.* //' "$_d/out" | tr '\n' ' ')" "7 -1 " "uprobe_multi links: events with those capabilities"
SIDESCOPE_UPROBE_LINK=perf with_caps "$LEAST_CAPS" "$SIDESCOPE" uprobe "p:$T:add_ints" \
	> /dev/null 2> "$TMPDIR_TEST/err"
is "$?" 1 "perf event fallback without CAP_SYS_ADMIN: exits 1"
like "$(cat "$TMPDIR_TEST/err")" "cannot attach add_ints.*need CAP_SYS_ADMIN.*run 'doctor'" \
	"perf event fallback without CAP_SYS_ADMIN: the attach failure names it and doctor"
is "$(wc -l < "$TMPDIR_TEST/err")" 1 "perf event fallback without CAP_SYS_ADMIN: one line"
least_caps_run perf "$LEAST_CAPS,sys_admin"
is "$RC" 0 "perf event fallback: runs with $LEAST_CAPS,sys_admin"
is "$(sed 's/.* //' "$_d/out" | tr '\n' ' ')" "7 -1 " "perf event fallback: events"

done_testing
