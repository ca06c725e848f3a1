#!/bin/sh
# Ring-buffer overflow: a target calls a probed function far faster than a
# tiny ring buffer drains; every hit is either printed or counted as lost,
# and the numbers add up.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd jq mkfifo
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T="$SIDESCOPE_BUILD/tests/progs/uprobe_target"
[ -x "$T" ] || skip_all "needs $T (make)"
RUN=0

# flood "COMMANDS" ARGS...: like the main test's trace()
flood() {
	_cmds=$1
	shift
	RUN=$((RUN + 1))
	_d="$TMPDIR_TEST/run$RUN"
	mkdir -p "$_d"
	mkfifo "$_d/fifo"
	"$T" "$_d/ready" < "$_d/fifo" > /dev/null &
	on_exit "kill $!"
	exec 3> "$_d/fifo"
	wait_for_file "$_d/ready" 10
	OUT="$_d/out"
	ERR="$_d/err"
	"$SIDESCOPE" uprobe -p "$(cat "$_d/ready")" --json "$@" > "$OUT" 2> "$ERR" &
	_tr=$!
	on_exit "kill $_tr"
	wait_for_grep "$ERR" "tracing|error"
	printf '%b' "$_cmds" >&3
	echo quit >&3
	exec 3>&-
	wait "$_tr"
	RC=$?
}

sum() { jq -r "select(.type == \"summary\") | $1" "$OUT"; }

N=30000
flood "floodstr $N\n" --buffer-kb 4 \
	"p:$T:flood_str \"%d %s\", arg2, dotnet_string(arg1)"
is "$RC" 0 "flood with a 4 KiB ring buffer exits 0"
hits=$(sum .hits)
printed=$(sum .printed)
lost=$(sum .lost)
diag "hits $hits, printed $printed, lost $lost"
is "$hits" "$N" "every call was a hit"
is "$((printed + lost))" "$N" "printed + lost = hits"
ok "$([ "$lost" -gt 0 ]; echo $?)" "the overflow was counted as lost"
is "$(jq -r 'select(.type == "entry") | .pid' "$OUT" | wc -l | tr -d ' ')" "$printed" \
	"printed events are in the output"
is "$(jq -r 'select(.type == "entry") | .args[1].value' "$OUT" | sort -u)" "héllo, wörld 😀" \
	"events that made it are intact"
# printed events keep their order; the lost ones leave gaps
is "$(jq -r 'select(.type == "entry") | .args[0].value' "$OUT" | sort -n -c 2>&1 && echo sorted)" \
	"sorted" "printed events in call order"
# under --json the messages on stderr are JSON too
like "$(jq -r 'select(.level == "warning") | .message' "$ERR")" \
	"^$lost events lost: the ring buffer was full" "loss reported on stderr, as a JSON warning"

# the default buffer keeps up with the same flood
flood "floodstr $N\n" "p:$T:flood_str \"%d %s\", arg2, dotnet_string(arg1)"
is "$RC" 0 "default buffer: exit 0"
is "$(sum .lost)" 0 "default buffer: nothing lost"
is "$(sum .printed)" "$N" "default buffer: every event printed"

# filtered-out hits are counted apart and never take ring buffer space
flood "flood $N\n" --buffer-kb 4 "p:$T:flood_fn (arg1 < 0) \"%d\", arg1"
is "$(sum .hits) $(sum '.probes[0].filtered') $(sum .printed) $(sum .lost)" "$N $N 0 0" \
	"filter in BPF: all filtered, none lost"

done_testing
