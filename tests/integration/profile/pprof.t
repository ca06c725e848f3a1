#!/bin/sh
# What Google's pprof reads in sidescope's pprof output: real addresses,
# mappings with build ids, file:line and inlined functions from DWARF for a
# program built with -g, thread labels; and in the folded output: one line
# per stack over two processes (per process with --split pid), callers'
# addresses outside code named as such, the vDSO named.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
require_root
require_cmd readelf
require_pprof
T=$TMPDIR_TEST
prog="$SIDESCOPE_BUILD/tests/progs/lines_target"
src="$SIDESCOPE_SRC/tests/progs/lines_target.c"

# a check that cannot run on this machine: a skip, or a failure in CI
skip_one() {
	if [ "${SIDESCOPE_REQUIRE_ALL:-0}" = 1 ]; then
		fail "required but unavailable: $1"
	else
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $1"
	fi
}

"$prog" "$T/a.ready" 30 & a=$!
on_exit "kill $a"
"$prog" "$T/b.ready" 30 & b=$!
on_exit "kill $b"
wait_for_file "$T/a.ready" 10 && wait_for_file "$T/b.ready" 10
ok $? "two targets started"

# frame pointers: the program's bad frame (a return address into its data)
# is what a frame-pointer walk finds, and every frame of the program, below
# main, has lines (unwind tables would add _start, which has none)
"$SIDESCOPE" profile -p "$a,$b" -d 2 --unwind fp -o "$T/p.pb.gz" -o "$T/p.folded" \
	-o "$T/p.json" 2>"$T/err"
is "$?" 0 "profile -p A,B writes pprof, folded and JSON"

# ---- pprof: addresses, mappings, lines, labels --------------------------
raw=$("$PPROF" -symbolize=none -raw "$T/p.pb.gz" 2>&1)
ok $? "pprof -raw reads the profile"
bid=$(readelf -n "$prog" | awk '/Build ID:/ { print $3 }')
maps=$(printf '%s\n' "$raw" | sed -n '/^Mappings/,$p')
like "$maps" "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*/lines_target $bid \[FN\]\[FL\]\[LN\]\[IN\]" \
	"a mapping of the program: start, limit, offset, file, its build id, every has_* flag"
unlike "$raw" "0x0/0x0/0x0 [^ ]*lines_target" "no empty mapping"
like "$raw" "[0-9]+: 0x[0-9a-f]{6,} M=[0-9]+ worker_spin " "locations carry their addresses"
unlike "$raw" ": 0x0 M=[1-9]" "no location in a mapping without an address"
inl=$(grep -n 'LT_INLINED_LINE' "$src" | cut -d: -f1)
call=$(grep -n 'LT_CALL_LINE' "$src" | cut -d: -f1)
like "$raw" "M=[0-9]+ lines_inlined_work [^ ]*lines_target\.c:$inl s=[0-9]+
 +lines_outer [^ ]*lines_target\.c:$call " \
	"an inlined function and the line it was inlined at, at one address"
like "$raw" "thread:\[lt-worker\]" "samples carry the thread's name"
like "$raw" "tid:\[[0-9]+\]" "and its id"
like "$raw" "comm:\[lines_target\]" "and the process's name"
like "$raw" "pid:\[$a\]" "and its pid"
lines=$("$PPROF" -symbolize=none -lines -top "$T/p.pb.gz" 2>&1)
like "$lines" "lines_inlined_work [^ ]*lines_target\.c:$inl \(inline\)" \
	"pprof -lines: file:line of the inlined loop"
like "$lines" "worker_spin [^ ]*lines_target\.c:[0-9]+" "pprof -lines: file:line of a function"
worker=$("$PPROF" -symbolize=none -tagfocus=thread=lt-worker -top "$T/p.pb.gz" 2>&1)
like "$worker" "worker_spin" "-tagfocus=thread=lt-worker keeps its thread's function"
unlike "$worker" "vdso_spin|lines_outer|bad_frame_spin" "and no other thread's"
# this pprof takes a mapping's load base from the first address it is
# asked about, in an order that varies from run to run: -show keeps only
# the function's own addresses
disasm=$("$PPROF" -symbolize=none -show=worker_spin -disasm worker_spin "$T/p.pb.gz" 2>&1)
like "$disasm" "ROUTINE =+ worker_spin" "pprof -disasm finds the function at its addresses"
like "$disasm" "[0-9.]+m?s +[0-9.]+m?s +[0-9a-f]+: " "and puts samples on its instructions"
list=$("$PPROF" -symbolize=none -list '^lines_outer$' "$T/p.pb.gz" 2>&1)
like "$list" "[0-9.]+m?s +$call:.*LT_CALL_LINE" "pprof -list attributes the samples to the source line"

# ---- folded: one line per stack ------------------------------------------
dups=$(sed 's/ [0-9]*$//' "$T/p.folded" | sort | uniq -d)
is "$dups" "" "folded: no two lines for one stack"
like "$(cat "$T/p.folded")" "^lt-worker;[^ ]*worker_spin [0-9]+$" "folded: rooted at the thread's name"
is "$(jq -r '[.stacks[].pid] | unique | length' "$T/p.json")" 2 "json: both processes"
w_json=$(jq -r '[.stacks[] | select(.thread == "lt-worker") | .count] | add' "$T/p.json")
w_fold=$(awk '/^lt-worker;/ { n += $NF } END { print n + 0 }' "$T/p.folded")
is "$w_fold" "$w_json" "folded: the worker lines of both processes are the JSON's total"
is "$(jq -r '[.stacks[] | select(.thread == "lt-worker") | .tid] | unique | length' "$T/p.json")" 2 \
	"json: one worker thread in each process, by tid"

"$SIDESCOPE" profile -p "$a,$b" -d 1 --split pid -o "$T/pid.folded" 2>/dev/null
is "$?" 0 "--split pid"
like "$(cat "$T/pid.folded")" "^lt-worker-$a;" "--split pid: NAME-PID roots, the first process"
like "$(cat "$T/pid.folded")" "^lt-worker-$b;" "--split pid: and the second"
"$SIDESCOPE" profile -p "$a" -d 1 --split tid -o "$T/tid.folded" 2>/dev/null
like "$(cat "$T/tid.folded")" "^lt-worker-$a/[0-9]+;" "--split tid: NAME-PID/TID roots"

# ---- frames outside code, the vDSO ---------------------------------------
if [ "$(uname -m)" = x86_64 ]; then
	like "$(cat "$T/p.folded")" "^lt-badframe;\[not code: lines_target\];bad_frame_spin [0-9]+$" \
		"a return address in the program's data is named [not code: lines_target]"
	unlike "$(grep '^lt-badframe;' "$T/p.folded")" "lines_target\+0x" \
		"and not as an offset in the program"
	like "$raw" "M=[0-9]+ bad_frame_spin " "the sampled address in that stack is code"
else
	skip_one "the fake frame is x86-64 assembly"
	skip_one "the fake frame is x86-64 assembly"
	skip_one "the fake frame is x86-64 assembly"
fi
vdso=$(awk '/^lt-vdso;/ && /__vdso_|(^|;)clock_gettime(;| )/ { n += $NF } END { print n + 0 }' \
	"$T/p.folded")
# an address no symbol of the vDSO covers stays [vdso]+0x (some kernels'
# clock_gettime calls a local function, e.g. a paravirtual clock's read):
# the symbols from the target's own vDSO image, read from its memory
vm=$(awk '$NF == "[vdso]" { split($1, r, "-"); print r[1], r[2]; exit }' "/proc/$a/maps")
set -- $vm
dd if="/proc/$a/mem" of="$T/vdso.so" bs=4096 skip=$((0x$1 / 4096)) \
	count=$(((0x$2 - 0x$1) / 4096)) 2>/dev/null
hex='function hex(s,  i, v) { v = 0; s = tolower(s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'
readelf -sW "$T/vdso.so" 2>/dev/null |
	awk "$hex"' $4 == "FUNC" { printf "%d %d\n", hex($2), $3 }' > "$T/vdso.syms"
unnamed=$(awk "$hex"' NR == FNR { lo[NR] = $1; hi[NR] = $1 + $2; n = NR; next }
	/^lt-vdso;.*\[vdso\]\+0x/ { f = $0; sub(/.*\[vdso\]\+0x/, "", f); sub(/[; ].*/, "", f)
		o = hex(f); for (i = 1; i <= n; i++) if (o >= lo[i] && o < hi[i]) { c += $NF; break } }
	END { print c + 0 }' "$T/vdso.syms" "$T/p.folded")
outside=$(awk '/^lt-vdso;.*\[vdso\]\+0x/ { n += $NF } END { print n - '"$unnamed"' }' "$T/p.folded")
diag "vDSO samples: $vdso named, $unnamed as [vdso]+0x inside a symbol, $outside outside" \
	"every symbol ($(wc -l < "$T/vdso.syms" | tr -d ' ') of them)"
ok "$([ $((vdso + outside)) -gt 10 ] && [ -s "$T/vdso.syms" ] &&
	[ "$unnamed" -le $(((vdso + outside) / 10)) ]; echo $?)" \
	"samples in the vDSO are named by its symbols"
like "$raw" "/0x[0-9a-f]+/0x0 \[vdso\] [0-9a-f]+ " "the vDSO is a mapping with its build id"

# sidescope flame reads the pprof back, rooted as the folded stacks are
"$SIDESCOPE" flame "$T/p.pb.gz" -o "$T/p.svg" 2>/dev/null
ok $? "sidescope flame reads the pprof"
like "$(cat "$T/p.svg")" "lt-worker" "its roots are the threads' names"

done_testing
