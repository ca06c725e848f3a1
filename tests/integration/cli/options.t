#!/bin/sh
# One option grammar (docs/cli.md) over every command and script: each row
# of the grammar's table is in the --help of every command it names, a
# letter means one long option wherever it appears, and every mistake of
# the table below fails fast with its one-line error and exit status;
# --json output and JSON errors read back with jq.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd jq script mount
S=$SIDESCOPE
T=$TMPDIR_TEST
SCRIPTS="cpu-profile uprobe-trace lttng-capture capture-loop doctor timeline-capture"

helptext() { # helptext COMMAND: its --help
	case " $SCRIPTS " in
	*" $1 "*) sh "$SIDESCOPE_SRC/scripts/$1" --help ;;
	*) "$S" "$1" --help ;;
	esac
}

# ---- the grammar's table, in every help it names --------------------------
rows=$(sed -n 's/^| `\(-[^`]*\)` | [^|]* | \(.*\) |$/\1|\2/p' "$SIDESCOPE_SRC/docs/cli.md")
ok "$([ "$(printf '%s\n' "$rows" | wc -l)" -ge 12 ]; echo $?)" "docs/cli.md: the option table read"
while IFS='|' read -r opt where; do
	# "-p, --pid PID[,PID...]" -> "-p, --pid"; "--json ..." -> "--json"
	spell=$(printf '%s' "$opt" | awk '{ if ($1 ~ /,$/) print $1, $2; else print $1 }')
	# "ctf chrome, cron" -> "ctf cron"; "every command [and script]"
	case $where in
	"every command and script") list="ps profile ctf dotnet-methods flame uprobe cron timeline $SCRIPTS" ;;
	"every command") list="ps profile ctf dotnet-methods flame uprobe cron timeline" ;;
	*) list=$(printf '%s\n' "$where" | tr ',' '\n' | awk '{ print $1 }' | sort -u) ;;
	esac
	for c in $list; do
		helptext "$c" 2>&1 | grep -qF -- "$spell"
		ok $? "$c --help: $spell"
	done
done <<EOF
$rows
EOF

# ---- a letter is one long option wherever it appears ---------------------
for c in ps profile ctf dotnet-methods flame uprobe cron timeline $SCRIPTS; do
	helptext "$c" 2>/dev/null | sed -n "s/^ *\(-[A-Za-z]\), \(--[a-z-]*\).*/\1 \2 $c/p"
done | sort -u > "$T/pairs"
ok "$([ "$(wc -l < "$T/pairs")" -ge 30 ]; echo $?)" "letter/long pairs read from every help"
clash=$(awk '{ seen[$1] = seen[$1] " " $2 "(" $3 ")"; if (!(($1, $2) in p)) { p[$1, $2]; n[$1]++ } }
	END { for (l in n) if (n[l] > 1) print l ":" seen[l] }' "$T/pairs")
is "$clash" "" "no letter means two things"

# ---- targets ---------------------------------------------------------------
"$SIDESCOPE_BUILD/workload" -t 2 -r "$T/wl.ready" >/dev/null & wl=$!
on_exit "kill $wl"
"$SIDESCOPE_BUILD/workload" -r "$T/wl2.ready" >/dev/null & wl2=$!
on_exit "kill $wl2"
wait_for_file "$T/wl.ready" 10 && wait_for_file "$T/wl2.ready" 10
ok $? "two workloads started"
sleep 0.3
tid=$(ls "/proc/$wl/task" | grep -vx "$wl" | head -1)
ok "$([ -n "$tid" ]; echo $?)" "a thread of the first ($tid)"
mkdir -p "$T/dir" "$T/ro"
mount -t tmpfs -o ro tmpfs "$T/ro" && on_exit "umount '$T/ro'"
ok $? "a read-only directory"

# ---- every mistake: exit status, one line, and fast ----------------------
# STATUS|REGEX of stderr|COMMAND (words, eval'd); each must end within 5 s
# (a profile or trace of 30 s must fail before it starts)
while IFS='|' read -r want re cmd; do
	[ -n "$want" ] || continue
	t0=$(date +%s)
	eval "timeout -s KILL 20 $cmd" >/dev/null 2>"$T/err" </dev/null
	rc=$?
	secs=$(($(date +%s) - t0))
	is "$rc" "$want" "$cmd: exit $want"
	like "$(cat "$T/err")" "$re" "$cmd: says so"
	ok "$([ "$secs" -le 5 ]; echo $?)" "$cmd: at once (${secs}s)"
done <<EOF
1|PID 2 is a kernel thread \(kthreadd\)|"\$S" profile -p 2
1|PID $tid is a thread .* of process $wl .*use -p $wl|"\$S" profile -p $tid
1|PID 2 is a kernel thread|"\$S" uprobe -p 2 p:c:malloc
1|PID $tid is a thread .* of process $wl|"\$S" uprobe -p $tid p:c:malloc
1|PID 2 is a kernel thread|"\$S" ps -p 2
1|PID $tid is a thread .* of process $wl|"\$S" ps -p $tid
2|-o $T/dir: is a directory|"\$S" profile -p $wl -o "$T/dir"
1|cannot write $T/nodir/x.svg: its directory does not exist|"\$S" profile -p $wl -o "$T/nodir/x.svg"
1|cannot write $T/ro/x.folded: its directory is on a read-only file system|"\$S" profile -p $wl -o "$T/ro/x.folded"
2|cannot tell the format of '$T/x.bin' from its name: end it in|"\$S" profile -p $wl -o "$T/x.bin"
2|unknown format 'html'|"\$S" profile -p $wl --format html
1|cannot write $T/ro/t.txt: its directory is on a read-only|"\$S" uprobe -p $wl -o "$T/ro/t.txt" p:c:malloc
2|give exactly one target|"\$S" profile -p $wl -n workload
2|-n is a name in every sidescope command; the count is -c 3|"\$S" cron next '* * * * *' -n 3
2|-w means wide in sidescope; the image width is --width 900|"\$S" flame -w 900 "$T/none.folded"
2|invalid duration 'x'|"\$S" uprobe -d x p:c:malloc
1|PID 2 is a kernel thread|"\$S" timeline -p 2 -o "$T/t.json"
1|PID $tid is a thread .* of process $wl|"\$S" timeline -p $tid -o "$T/t.json"
2|-o $T/dir: is a directory|"\$S" timeline -p $wl -o "$T/dir"
1|cannot write $T/ro/t.json: its directory is on a read-only|"\$S" timeline -p $wl -o "$T/ro/t.json"
EOF

# both outputs bad: each named, nothing captured
"$S" profile -p "$wl" -o "$T/nodir/a.svg" -o "$T/ro/b.pb.gz" 2>"$T/err" >/dev/null
is "$(grep -c 'cannot write' "$T/err")" 2 "two bad outputs: one line each"
ok "$([ ! -e "$T/ro/b.pb.gz" ]; echo $?)" "and nothing written"

# one good output and one that fails at the end: the good one is written
# and named, the bad one named, exit 1 (its volume filled while the
# capture runs)
mkdir -p "$T/late"
mount -t tmpfs -o size=64k tmpfs "$T/late" && on_exit "umount '$T/late'"
"$S" profile -p "$wl" -d 2 -o "$T/good.folded" -o "$T/late/bad.folded" 2>"$T/err" >/dev/null &
pp=$!
sleep 1
dd if=/dev/zero of="$T/late/fill" bs=4k 2>/dev/null
wait "$pp"
is "$?" 1 "an output that fails at the end: exit 1"
like "$(cat "$T/err")" "wrote $T/good.folded" "the good output is written and named"
like "$(cat "$T/err")" "cannot write $T/late/bad.folded: No space left" "the bad one named"
like "$(cat "$T/err")" "1 of 2 outputs not written" "and counted"
ok "$([ -s "$T/good.folded" ]; echo $?)" "the good output holds the profile"
ok "$([ ! -e "$T/late/bad.folded" ]; echo $?)" "no partial file left"

# a binary format is not written to a terminal
script -qec "\"$S\" profile -p $wl -d 1 --format pprof" /dev/null > "$T/tty" 2>&1
like "$(cat "$T/tty")" "pprof is binary: not writing it to a terminal" "pprof to a terminal: refused"

# what a name chose, said before sampling
"$S" profile -n workload -d 1 2>"$T/err" >/dev/null
is "$?" 0 "profile -n workload"
like "$(cat "$T/err")" "-n workload: PIDs ([0-9]+, )*$wl(, [0-9]+)*" "says which PIDs it chose"
like "$(cat "$T/err")" "-n workload: PIDs .*$wl2" "all of them"

# ---- --json ----------------------------------------------------------------
"$S" profile -p "$wl" -d 1 --json > "$T/p.json" 2>/dev/null
is "$(jq -r '.stacks | length > 0' "$T/p.json")" true "profile --json: the profile on stdout"
"$S" ps --json -p "$wl" | jq -e ".[0].pid == $wl" >/dev/null
ok $? "ps --json"
"$S" cron next --json -c 1 '0 0 * * *' | jq -e '.next | length == 1' >/dev/null
ok $? "cron next --json"
for cmd in "profile -p 2147483000 --json" "ps --json -p 2147483000" "uprobe --json -p 2147483000 p:c:malloc" \
	"profile --json --no-such-option" "cron next --json -c 0 '* * * * *'" "flame --json" \
	"ctf summary --json $T/nodir"; do
	eval "\"\$S\" $cmd" >/dev/null 2>"$T/err"
	rc=$?
	ok "$([ "$rc" = 1 ] || [ "$rc" = 2 ]; echo $?)" "$cmd: fails ($rc)"
	is "$(jq -r .level "$T/err" 2>&1 | sort -u | tr '\n' ' ')" "error " "$cmd: errors as JSON lines"
	is "$(jq -r .program "$T/err" 2>&1 | sort -u)" "sidescope ${cmd%% *}" "$cmd: with the program"
done

done_testing
