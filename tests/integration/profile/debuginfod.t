#!/bin/sh
# sidescope profile of a stripped program whose debug file a debuginfod
# server has (Debian's debuginfod, on localhost, indexing a directory):
# with DEBUGINFOD_URLS set its functions are named; with the server gone a
# second capture still names them, from the sidecar's cache; servers that
# are closed, answer with garbage, send without end or trickle get one line
# each and a capture written on time, and a fetch never outlives its
# budget nor leaves its bytes behind.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
require_root
require_cmd debuginfod curl objcopy strip python3 pgrep jq busybox
require_pprof
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
PROG="$SIDESCOPE_BUILD/tests/progs/dbg_spin"
[ -x "$PROG" ] || skip_all "needs $PROG (make)"
T=$TMPDIR_TEST
mkdir "$T/bin" "$T/srv"
cp "$PROG" "$T/bin/dbg_spin"
objcopy --only-keep-debug "$T/bin/dbg_spin" "$T/srv/dbg_spin.debug" &&
	strip --strip-all "$T/bin/dbg_spin"
ok $? "a stripped copy of dbg_spin, its debug file for the server alone"
ID=$(readelf -n "$T/bin/dbg_spin" | awk '/Build ID/ { print $3 }')

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
debuginfod -F -p "$PORT" -d "$T/db.sqlite" -t 0 -g 0 "$T/srv" > "$T/server.log" 2>&1 & SRV=$!
on_exit "kill $SRV 2> /dev/null"
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/buildid/$ID/debuginfo"; do
	i=$((i + 1))
	[ "$i" -lt 150 ] || break
	sleep 0.2
done
ok "$([ "$i" -lt 150 ]; echo $?)" "debuginfod serves the debug file of build ID $ID"

# doctor_says URLS: doctor's debuginfod check with DEBUGINFOD_URLS=URLS
doctor_says() {
	DEBUGINFOD_URLS="$1" busybox sh "$SIDESCOPE_SRC/scripts/doctor" --json profile 2> /dev/null |
		jq -r '.[] | select(.check == "debuginfod") | "\(.status) \(.detail)"'
}
like "$(doctor_says "http://127.0.0.1:$PORT")" "^PASS debuginfod servers answer: http://127.0.0.1:$PORT" \
	"doctor: the server answers"

"$T/bin/dbg_spin" > "$T/ready" & APP=$!
on_exit "kill $APP 2> /dev/null"
wait_for_grep "$T/ready" ready 10

# run NAME [VAR=VALUE...]: dbg_spin profiled 2 s with the environment given
# -> $T/NAME.folded and .err, $T/NAME.ms its wall time
run() {
	_n=$1
	shift
	_t0=$(date +%s%N)
	env "$@" "$SIDESCOPE" profile -p "$APP" -F 199 -d 2 --user-only \
		--table-cache "$T/cache.$_n" -o "$T/$_n.folded" 2> "$T/$_n.err"
	_rc=$?
	echo $(( ($(date +%s%N) - _t0) / 1000000 )) > "$T/$_n.ms"
	return $_rc
}
# named NAME: the share in percent of NAME's samples whose leaf frame has
# a name (not dbg_spin+0xOFF)
named() {
	awk '{ n = $NF; $NF = ""; all += n; if ($0 !~ /dbg_spin\+0x[0-9a-f]+ *$/) ok += n }
	     END { print all ? int(100 * ok / all) : 0 }' "$T/$1.folded"
}
# one_line NAME RE: how many lines of NAME's stderr say RE
lines() { grep -c -E "$2" "$T/$1.err"; }

URL="http://127.0.0.1:$PORT"
run first DEBUGINFOD_URLS="$URL"
is "$?" 0 "profiled with DEBUGINFOD_URLS=$URL"
pct=$(named first)
diag "$pct% of the samples named; $(cat "$T/first.ms") ms"
ok "$([ "$pct" -ge 90 ]; echo $?)" "at least 90% of the samples named from the fetched debug file ($pct%)"
like "$(cat "$T/first.folded")" ";spin_outer;spin_inner [0-9]+" "its static functions by name"
[ -f "$T/cache.first/debuginfod/$ID/debuginfo" ]
ok $? "the debug file kept in the sidecar's cache, under its build ID"
is "$(stat -c %a "$T/cache.first/debuginfod")" 700 "a directory of the sidecar's own (0700)"
SHORT=${ID%"${ID#????????????????}"}
unlike "$(cat "$T/first.err")" "warning.*$SHORT" "no warning about it"

kill "$SRV"
wait "$SRV" 2> /dev/null
# a fresh table cache but the fetched file: names from it, no server
mkdir -m 700 "$T/cache.second"
cp -a "$T/cache.first/debuginfod" "$T/cache.second/"
run second DEBUGINFOD_URLS="$URL"
is "$?" 0 "the server stopped: profiled again"
pct=$(named second)
ok "$([ "$pct" -ge 90 ]; echo $?)" "still named, from the cache ($pct%)"
unlike "$(cat "$T/second.err")" "$SHORT" "no fetch of it, nothing said"
DEBUGINFOD_URLS="$URL" "$SIDESCOPE" profile -p "$APP" -F 199 -d 1 --user-only \
	--table-cache "$T/cache.second" -o "$T/lines.pb.gz" 2> /dev/null
like "$("$PPROF" -symbolize=none -raw "$T/lines.pb.gz" 2>&1)" "spin_inner [^ ]*dbg_spin\.c:[0-9]+" \
	"pprof: its source lines from the debug file too"
mkdir -m 700 "$T/cache.stacks"
cp -a "$T/cache.first/debuginfod" "$T/cache.stacks/"
DEBUGINFOD_URLS="$URL" "$SIDESCOPE" stacks -p "$APP" --table-cache "$T/cache.stacks" \
	> "$T/stacks.txt" 2> "$T/stacks.err"
like "$(cat "$T/stacks.txt")" "spin_(inner|outer)" "stacks names it too, from the same cache"
cp -a "$T/cache.first" "$T/cache.third"
run third DEBUGINFOD_URLS="$URL"
ok "$([ "$(named third)" -ge 90 ]; echo $?)" "and with the symbol tables kept from the first capture"

CLOSED=$(free_port)
like "$(doctor_says "http://127.0.0.1:$CLOSED")" \
	"^WARN debuginfod servers that do not answer: http://127.0.0.1:$CLOSED" "doctor: a closed port does not answer"
run closed DEBUGINFOD_URLS="http://127.0.0.1:$CLOSED"
is "$?" 0 "a server that is not there: profiled"
ms=$(cat "$T/closed.ms")
ok "$([ "$ms" -lt 6000 ]; echo $?)" "on time ($ms ms for -d 2)"
[ -s "$T/closed.folded" ]
ok $? "the profile written"
is "$(lines closed 'debuginfod')" 1 "one line about the server"
like "$(cat "$T/closed.err")" "debuginfod: no debug file for build ID [0-9a-f]{16}\.\.\.: Connection refused" \
	"saying it refused"

DEBUGINFOD_URLS="$URL" "$SIDESCOPE" profile -p "$APP" -d 1 --table-cache none \
	-o "$T/none.folded" 2> "$T/none.err"
like "$(cat "$T/none.err")" "warning: debuginfod not used: its files are kept in the table cache, which this capture does not use" \
	"--table-cache none: one line says no server is asked"

# bad MODE [VAR=VALUE...]: a capture with the fake server in MODE, checked
# to end with its profile in under 6 s; $T/MODE.err what it said
bad() {
	_m=$1
	shift
	rm -f "$T/port"
	python3 "$SIDESCOPE_SRC/tests/progs/bad_debuginfod.py" "$_m" "$T/port" & BADPID=$!
	on_exit "kill $BADPID 2> /dev/null"
	wait_for_file "$T/port" 10
	run "$_m" DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$T/port")" "$@"
	is "$?" 0 "a server that answers '$_m': profiled"
	_ms=$(cat "$T/$_m.ms")
	ok "$([ "$_ms" -lt 6000 ] && [ -s "$T/$_m.folded" ]; echo $?)" "its profile written on time ($_ms ms)"
}
# fetchers: the fetch children of this test still running
fetchers() { pgrep -f "debuginfod-fetch $T/" | grep -c .; }

bad garbage
is "$(lines garbage 'debuginfod')" 1 "one line about it"
like "$(cat "$T/garbage.err")" "not its debug file \(not an ELF file\): removed" "saying it is not the debug file"
[ ! -e "$T/cache.garbage/debuginfod/$ID/debuginfo" ]
ok $? "and nothing of it kept"
kill "$BADPID"

bad endless DEBUGINFOD_MAXSIZE=4000000
like "$(cat "$T/endless.err")" "cut off over 4000000 bytes \(DEBUGINFOD_MAXSIZE\)" "a body without end cut off at DEBUGINFOD_MAXSIZE"
is "$(lines endless 'debuginfod')" 1 "in one line"
kill "$BADPID"

bad slow DEBUGINFOD_TIMEOUT=6
like "$(cat "$T/slow.err")" "debuginfod: [0-9]+ debug files? not here in time; (its fetch goes|their fetches go) on for the next capture \(at most 6 s\)" \
	"a trickle: the fetch still running said"
C=$(pgrep -f "debuginfod-fetch $T/" | head -n 1)
is "$(awk '/^CapEff:/ { print $2 }' "/proc/$C/status" 2> /dev/null)" 0000000000000000 \
	"the fetch runs without a capability"
is "$(ls "/proc/$C/fd" 2> /dev/null | awk '$1 > 2 && !/^[3-9]$/' | wc -l)" 0 \
	"and holds none of the capture's descriptors"
i=0
while [ "$(fetchers)" -gt 0 ] && [ "$i" -lt 50 ]; do
	i=$((i + 1))
	sleep 0.2
done
is "$(fetchers)" 0 "the fetch gone within its budget"
left=$(find "$T/cache.slow/debuginfod" -type f ! -name cache_clean_interval_s ! -name max_unused_age_s -size +0 | wc -l)
is "$left" 0 "no byte of it left in the cache"
kill "$BADPID"

done_testing
