#!/bin/sh
# sidescope plumbing, what the wrapper scripts ask instead of restating a
# rule of the C in sh (docs/cli.md): its answers to each action, exactly as
# common.sh reads them (the sizes of ss_size, the JSON of ss_json_str, the
# escaping of ss_tty_safe, the verdicts under ss_check_pid), and that
# 'sidescope help' does not list it.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd jq perl
S=$SIDESCOPE
T=$TMPDIR_TEST

# ---- the command ----------------------------------------------------------
"$S" help | grep -q plumbing
is "$?" 1 "sidescope help does not list it"
h=$("$S" plumbing --help)
ok $? "plumbing --help"
like "$h" "^sidescope plumbing: " "its help starts with a summary line"
like "$h" "EXAMPLES:" "its help has EXAMPLES"
is "$(printf '%s\n' "$h" | awk 'length > 80' | wc -l)" 0 "its help fits 80 columns"
is "$("$S" help plumbing)" "$h" "sidescope help plumbing prints it too"
for a in "" "nosuch" "size" "size 1 2" "json x" "target" "target 1 2" "size -5"; do
	# shellcheck disable=SC2086 # the words of the command
	"$S" plumbing $a </dev/null >/dev/null 2>&1
	is "$?" 2 "plumbing $a: bad usage, exit 2"
done

# ---- size: parse_size's grammar, 0 to 2^63-1 ------------------------------
while read -r in want; do
	got=$("$S" plumbing size -- "$in")
	rc=$?
	if [ "$want" = no ]; then
		is "$rc:$got" "1:" "size '$in': no size, exit 1, nothing printed"
	else
		is "$rc:$got" "0:$want" "size '$in' is $want"
	fi
done <<EOF
0 0
512 512
0064k 65536
64K 65536
4M 4194304
4m 4194304
2Gi 2147483648
16KiB 16384
1MB 1048576
9223372036854775807 9223372036854775807
8589934591G 9223372035781033984
9223372036854775808 no
8589934592G no
99999999999999999999999 no
512B no
64iB no
64KBi no
64T no
-5 no
+5 no
1.5M no
x no
EOF
is "$("$S" plumbing size -- '')" "" "size '': no size"

# ---- json: the JSON writer's strings ---------------------------------------
# shellcheck disable=SC2059 # the format holds the escapes
j() { printf "$1" | "$S" plumbing json; }
is "$(j '')" '""' "json: the empty string"
is "$(j 'q"b\\s')" '"q\"b\\s"' "json: quote and backslash"
is "$(j 'a\tb\rc\nd')" '"a\tb\rc\nd"' "json: tab, CR, newline"
is "$(j 'a\n\nx\n')" '"a\n\nx\n"' "json: empty lines and the last newline kept"
is "$(j '\001\010\014\033\177')" '"\u0001\u0008\u000c\u001b\u007f"' "json: C0 and DEL as \\u00NN"
is "$(j '\302\233\302\240')" "$(printf '"\\u009b\302\240"')" "json: C1 escaped, U+00A0 kept"
is "$(j '\342\202\254\360\237\230\200')" "$(printf '"\342\202\254\360\237\230\200"')" \
	"json: valid UTF-8 kept"
is "$(j '\377x\300\257\355\240\200\364\220\200\200')" \
	'"\ufffdx\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd"' \
	"json: each byte of invalid UTF-8 (overlong, surrogate, past U+10FFFF) as U+FFFD"
raw=$(printf 'q"b\\s\tt\001c\033[31m\nl\177 \302\233 \342\202\254 \377x')
is "$(printf '%s' "$raw" | "$S" plumbing json | jq -j .)" \
	"$(printf 'q"b\\s\tt\001c\033[31m\nl\177 \302\233 \342\202\254 \357\277\275x')" \
	"json: jq reads back the string"
head -c 300000 /dev/zero | tr '\0' 'a' > "$T/long"
is "$("$S" plumbing json < "$T/long" | wc -c)" 300003 "json: 300,000 bytes, no argument limit"

# ---- tty-safe: core/escape, backslashes kept, line by line -----------------
# shellcheck disable=SC2059
t() { printf "$1" | "$S" plumbing tty-safe; }
is "$(t 'plain \\ text\n')" 'plain \ text' "tty-safe: printable ASCII and backslash as they are"
is "$(t 'a\tb\033[31mc\177d\001')" 'a\tb\x1b[31mc\x7fd\x01' "tty-safe: tab, C0, DEL"
is "$(t 'a\302\233b\302\240\342\202\254')" "$(printf 'a\\u009bb\302\240\342\202\254')" \
	"tty-safe: C1 escaped, other UTF-8 kept"
is "$(t '\377x\300\257')" '\xffx\xc0\xaf' "tty-safe: invalid UTF-8 byte by byte as \\xNN"
is "$(t 'a\000b\303\000\251')" "$(printf 'ab\303\251')" "tty-safe: NULs dropped before the escaping"
is "$(t 'one\ntwo' | od -An -c | tr -d ' \n')" 'one\ntwo\n' "tty-safe: every line ended"
is "$(t '\000\n\000' | od -An -c | tr -d ' \n')" '\n' "tty-safe: NULs gone as if never there (no last line of NULs alone)"
is "$(t '' | wc -c)" 0 "tty-safe: nothing in, nothing out"

# ---- target: proc__target_kind ---------------------------------------------
is "$("$S" plumbing target "$$"; echo "rc $?")" "ok
rc 0" "target: this shell is ok"
"$SIDESCOPE_BUILD/workload" -t 2 -r "$T/wl.ready" >/dev/null & wl=$!
on_exit "kill $wl"
wait_for_file "$T/wl.ready" 10
ok $? "a workload with threads started"
tid=""
for _i in 1 2 3 4 5 6 7 8 9 10; do
	for d in "/proc/$wl/task/"*; do
		[ "${d##*/}" = "$wl" ] || { tid=${d##*/}; break; }
	done
	[ -z "$tid" ] || break
	sleep 0.1
done
is "$("$S" plumbing target "$tid"; echo "rc $?")" "thread $wl
rc 1" "target: a thread names its process"
# the tests run in the node's PID namespace, where PID 2 is kthreadd
is "$(cat /proc/2/comm 2>/dev/null)" kthreadd "PID 2 is kthreadd"
is "$("$S" plumbing target 2; echo "rc $?")" "kernel-thread
rc 1" "target: kthreadd is a kernel thread"
# a child its parent never reaps (SIGCHLD to its default: the runner may
# ignore it, and its children would then be reaped at once)
perl -e '$SIG{CHLD} = "DEFAULT"; my $p = fork; exit 0 if $p == 0;
	open(my $f, ">", $ARGV[0]) or die; print $f "$p\n"; close $f; sleep 30' "$T/z" & zp=$!
on_exit "kill $zp"
wait_for_file "$T/z" 10
z=$(cat "$T/z")
wait_for_grep "/proc/$z/stat" '\) [ZX] ' 10
is "$("$S" plumbing target "$z"; echo "rc $?")" "exited
rc 1" "target: a zombie has exited"
for p in 0 "0$$" 2147483648 99999999999 4194304 "" x "+$$" -1; do
	is "$("$S" plumbing target -- "$p"; echo "rc $?")" "none
rc 1" "target $p: none"
done

done_testing
