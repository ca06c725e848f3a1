#!/bin/sh
# The wrapper scripts: shellcheck -s sh clean, set -eu, usage at the top
# printed by -h under busybox sh in 80 columns, bad usage exits 2 with one
# "PROG: error:" line naming the fix (docs/cli.md: one target, -O DIR for a
# directory, -o FILE for a file), as JSON lines under --json; each script
# that runs a capture checks its TMPDIR first and refuses one that is not a
# private directory (here: a symbolic link), before anything else. The JSON
# string escaping of common.sh reads back with jq, under busybox awk too.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd shellcheck busybox jq
cd "$SIDESCOPE_SRC" || exit 1
for s in doctor cpu-profile uprobe-trace lttng-capture capture-loop timeline-capture lib/common.sh; do
	out=$(shellcheck -s sh -x "scripts/$s" 2>&1)
	ok $? "$s: shellcheck -s sh clean"
	[ -z "$out" ] || diag "$out"
done
for s in doctor cpu-profile uprobe-trace capture-loop timeline-capture; do
	grep -q '^set -eu$' "scripts/$s"
	ok $? "$s: set -eu"
	h=$(busybox sh "scripts/$s" -h)
	ok $? "$s -h under busybox sh"
	like "$h" "^$s: " "$s -h starts with a summary line"
	like "$h" "USAGE: $s" "$s -h has USAGE"
	like "$h" "EXAMPLES:" "$s -h has EXAMPLES"
	is "$(printf '%s\n' "$h" | awk 'length > 80' | wc -l)" 0 "$s -h fits 80 columns"
	busybox sh "scripts/$s" --no-such-option >/dev/null 2>&1
	is "$?" 2 "$s: unknown option exits 2"
done

mkdir -p "$TMPDIR_TEST/elsewhere"
ln -s "$TMPDIR_TEST/elsewhere" "$TMPDIR_TEST/tmp-link"
for c in "cpu-profile -d 1 12345" "uprobe-trace 12345 p:/bin/true:main" "capture-loop --once" \
	"timeline-capture -d 1 12345"; do
	# shellcheck disable=SC2086 # the words of the command
	err=$(TMPDIR="$TMPDIR_TEST/tmp-link" SIDESCOPE_OUT="$TMPDIR_TEST/out" busybox sh scripts/$c 2>&1 >/dev/null)
	is "$?" 1 "${c%% *} with TMPDIR a link: exit 1"
	is "$err" "${c%% *}: error: '$TMPDIR_TEST/tmp-link' is a symbolic link; the sidecar's state needs a directory of its own" \
		"${c%% *}: one line saying why"
done
is "$(ls -A "$TMPDIR_TEST/elsewhere")" "" "nothing was made through the link"
ok "$([ ! -e "$TMPDIR_TEST/out" ]; echo $?)" "nor an output directory"
for s in cpu-profile uprobe-trace capture-loop timeline-capture; do
	code=$(grep -v '^[[:space:]]*#' "scripts/$s")
	unlike "$code" "/tmp" "$s: nothing in /tmp"
	# a staging directory in the output directory is all (capture-loop)
	is "$(printf '%s\n' "$code" | grep mktemp | grep -vc 'mktemp -d "\$out/')" 0 \
		"$s: no temporary file anywhere else"
done
# ---- the command line (docs/cli.md): each mistake, its line, exit 2 --------
mkdir -p "$TMPDIR_TEST/adir"
D="$TMPDIR_TEST/adir"
P='p:/bin/true:main'
# SCRIPT|ARGUMENTS (eval'd)|the error line
while IFS='|' read -r s args want; do
	[ -n "$s" ] || continue
	err=$(eval "busybox sh scripts/$s $args" 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "$s $args: exit 2"
	is "$(printf '%s\n' "$err" | head -1)" "$s: error: $want" "$s $args: says why"
	is "$(printf '%s\n' "$err" | sed -n 2p)" "Run '$s -h' for usage." "$s $args: and where the usage is"
done <<EOF
cpu-profile|-p 7 -n dotnet|one target only, got -p 7 and -n 'dotnet' (-p PID, -n NAME or one PID|NAME)
cpu-profile|-p 7 dotnet|one target only, got -p 7 and 'dotnet' (-p PID, -n NAME or one PID|NAME)
cpu-profile|7 8|one target only, got '7' and '8' (-p PID, -n NAME or one PID|NAME)
cpu-profile|--pid=x|-p needs a PID, not 'x'
cpu-profile|-p 7,8|one PID only, not '7,8' (this script traces one process)
cpu-profile|-o "$D"|'$D' is a directory; the output directory is -O DIR
cpu-profile|--output "$D"|'$D' is a directory; the output directory is -O DIR
cpu-profile|-O "$D" -o x.svg|-o FILE names the file itself: give -O DIR or -o FILE, not both
cpu-profile|-d -1|-d must be a whole number, not '-1'
cpu-profile|--frequency 0|-F must be at least 1, not '0'
cpu-profile|-n|-n needs NAME
cpu-profile|--json|unknown option '--json'
uprobe-trace|-p 7 -n x '$P'|one target only, got -p 7 and -n 'x' (-p PID, -n NAME or one PID|NAME)
uprobe-trace|7 x '$P'|one target only, got '7' and 'x' (-p PID, -n NAME or one PID|NAME)
uprobe-trace|-o "$D" '$P'|'$D' is a directory; the output directory is -O DIR
uprobe-trace|-O "$D" -o x.txt '$P'|-o FILE names the file itself: give -O DIR or -o FILE, not both
uprobe-trace|--count=0 '$P'|-c must be at least 1, not '0'
uprobe-trace|-d x '$P'|-d must be a whole number, not 'x'
uprobe-trace|-p 7|no PROBE given (e.g. 'p:/app/bin/app:main')
uprobe-trace|--frequency=9 '$P'|unknown option '--frequency'
lttng-capture|-o "$D"|a trace is a directory: give it with -O DIR
lttng-capture|--output=x|a trace is a directory: give it with -O DIR
lttng-capture|-p 7 -n x|one target only, got -p 7 and -n 'x' (-p PID, -n NAME or one PID|NAME)
lttng-capture|-n x 7|one target only, got -n 'x' and '7' (-p PID, -n NAME or one PID|NAME)
lttng-capture|-d x|bad duration 'x' (whole seconds; 0: until Ctrl-C)
doctor|-o "$D"|-o is a file in every command; the output directory is -O DIR
doctor|--out-dir|--out-dir needs DIR
doctor|kernel|unknown technique 'kernel' (profile, uprobe or lttng)
capture-loop|--once --sidecar|one option at most
timeline-capture|-p 7 -n x|one target only, got -p 7 and -n 'x' (-p PID, -n NAME or one PID|NAME)
timeline-capture|-O "$D" -o x.json|-o FILE names the file itself: give -O DIR or -o FILE, not both
timeline-capture|-o "$D"|'$D' is a directory; the output directory is -O DIR
timeline-capture|-F 0|-F must be at least 1, not '0'
timeline-capture|-e|-e needs PROBE
EOF

# under --json: one JSON object a line on stderr, nothing else
for c in "cpu-profile --json" "uprobe-trace --json -p 7 -o $D $P" "lttng-capture --json -o x" \
	"doctor --json -o x" "uprobe-trace --json"; do
	# shellcheck disable=SC2086 # the words of the command
	err=$(busybox sh scripts/$c 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "$c: exit 2"
	s=${c%% *}
	case "$c" in
	"cpu-profile --json")
		# no --json in cpu-profile: a plain error
		like "$err" "^cpu-profile: error: unknown option '--json'" "$c: refused as text"
		continue ;;
	esac
	is "$(printf '%s\n' "$err" | jq -r '"\(.level) \(.program)"' 2>&1)" "error $s" "$c: one JSON error"
	like "$(printf '%s\n' "$err" | jq -r .message)" " \\(see '$s -h'\\)\$" "$c: the hint in the message"
done

# JSON strings: quotes, backslashes, control characters, UTF-8 (and each
# byte of invalid UTF-8 as U+FFFD), read back by jq; busybox awk too
bb="$TMPDIR_TEST/bb"
mkdir -p "$bb"
for c in awk sed tr; do ln -s "$(command -v busybox)" "$bb/$c"; done
raw=$(printf 'q"b\\s\tt\001c\033[31m\nl\177 \302\233 \342\202\254 \360\237\230\200 \377x\n')
want=$(printf 'q"b\\s\tt\001c\033[31m\nl\177 \302\233 \342\202\254 \360\237\230\200 \357\277\275x')
for a in "" "$bb:"; do
	j=$(PATH="$a$PATH" SS_RAW=$raw busybox sh -c '. scripts/lib/common.sh; ss_json_str "$SS_RAW"')
	is "$(printf '%s' "$j" | jq -j .)" "$want" "ss_json_str${a:+ (busybox awk)}: jq reads back the string"
	unlike "$j" "$(printf '[\001\033\177]')" "ss_json_str${a:+ (busybox awk)}: no raw control character"
	like "$j" '\\u009b' "ss_json_str${a:+ (busybox awk)}: a C1 control escaped"
done
is "$(busybox sh -c '. scripts/lib/common.sh; ss_json_str ""')" '""' "ss_json_str: the empty string"
is "$(SS_RAW=$(printf 'a\n\nx') busybox sh -c '. scripts/lib/common.sh; ss_json_str "$SS_RAW"')" '"a\n\nx"' \
	"ss_json_str: empty lines kept"

# ss_run: a signal after the command ended (its outputs written, the script
# reporting them) is noted, not fatal: the wrapper does not end with 143
# beside complete files (profile/signals.t saw it under load)
for sh in "busybox sh" dash; do
	r=$($sh -c '. scripts/lib/common.sh; ss_run true; kill -TERM $$; kill -INT $$;
		echo "after $ss_interrupted"' 2>&1)
	is "$r" "after 1" "ss_run (${sh% sh}): INT and TERM after the command noted, the script goes on"
done

done_testing
