#!/bin/sh
# What sidescope profile says about lost and truncated stacks: only what
# happened, never a list of zeros, nothing when nothing was lost.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
T=$TMPDIR_TEST
prog="$SIDESCOPE_BUILD/tests/progs/short_spin"

# nothing lost: not a word about losses
"$SIDESCOPE_BUILD/workload" -r "$T/wl.ready" >/dev/null &
wl=$!
on_exit "kill $wl"
wait_for_file "$T/wl.ready" 10
"$SIDESCOPE" profile -p "$wl" -F 199 -d 1 --user-only -o "$T/none.folded" 2>"$T/none.err"
is "$?" 0 "a capture that lost nothing"
unlike "$(cat "$T/none.err")" "lost|truncated" "nothing lost: no loss line"
kill "$wl"
wait "$wl" 2>/dev/null

# stacks deeper than 127 frames: truncated, none lost
"$prog" 3000 200 >/dev/null &
deep=$!
on_exit "kill $deep"
"$SIDESCOPE" profile -p "$deep" -F 199 -d 1 -o "$T/deep.folded" 2>"$T/deep.err"
is "$?" 0 "a capture of 200-frame stacks"
like "$(cat "$T/deep.err")" "warning: no stack lost; truncated at 127 frames: user [1-9][0-9]*$" \
	"truncation only: 'no stack lost' and the truncated user stacks"
unlike "$(cat "$T/deep.err")" " 0(,|;|$)" "no zero counts"
kill "$deep"
wait "$deep" 2>/dev/null

# more distinct stacks than the kernel holds: only the losses that happened
"$prog" 3000 100 1 >/dev/null &
vary=$!
on_exit "kill $vary"
"$SIDESCOPE" profile -p "$vary" -F 999 -d 1 --user-only --max-stacks 64 \
	-o "$T/full.folded" 2>"$T/full.err"
is "$?" 0 "a capture with a 64-stack store over 100 distinct stacks"
line=$(grep "stacks lost" "$T/full.err")
like "$line" "warning: stacks lost: ([a-z ]+ [1-9][0-9]*)(, [a-z ]+ [1-9][0-9]*)*$" \
	"the losses, each with its count"
like "$line" "stack store full [1-9]" "the full stack store is named"
unlike "$line" " 0(,|;|$)|truncated" "no zero counts, nothing truncated"
like "$(cat "$T/full.err")" "raise --max-stacks \\(now 64\\)" "the hint"
kill "$vary"
wait "$vary" 2>/dev/null

# few distinct stacks, the store far larger: whatever the kernel refuses
# (an element its allocator's per-CPU cache did not have at a first
# sample, a bucket lock held), it is never called full nor answered with
# --max-stacks
"$SIDESCOPE_BUILD/workload" -r "$T/wl2.ready" >/dev/null &
wl=$!
on_exit "kill $wl"
wait_for_file "$T/wl2.ready" 10
said=""
for i in 1 2 3 4; do
	"$SIDESCOPE" profile -p "$wl" -F 999 -d 1 -o "$T/few$i.folded" 2>"$T/few$i.err" ||
		said="$said capture $i failed;"
	grep -E "store full|map full|raise --max-stacks" "$T/few$i.err" >/dev/null &&
		said="$said$(cat "$T/few$i.err");"
done
is "$said" "" "a few stacks in a store of 8192: never 'full', never 'raise --max-stacks'"
kill "$wl"
wait "$wl" 2>/dev/null
done_testing
