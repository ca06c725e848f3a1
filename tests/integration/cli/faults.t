#!/bin/sh
# Faults: a full output disk gives a clear error and leaves no partial file;
# output goes in place to devices (never renamed over /dev/null).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd mount umount

T=$TMPDIR_TEST
mkdir -p "$T/tiny"
mount -t tmpfs -o size=64k tmpfs "$T/tiny" || skip_all "cannot mount a tmpfs"
on_exit "umount '$T/tiny'"

# a profile big enough that its flame graph cannot fit in 64 KiB
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "app;main;f%d;g%d;leaf%d %d\n", i % 50, i, i, i + 1 }' \
	> "$T/big.folded"
"$SIDESCOPE" flame "$T/big.folded" -o "$T/tiny/graph.svg" 2>"$T/err"
is "$?" 1 "full disk: exit 1"
like "$(cat "$T/err")" "No space left on device" "full disk: the error says why"
is "$(ls -A "$T/tiny" | wc -l | tr -d ' ')" 0 "full disk: no partial or temporary file left"

# space again: the same command succeeds
rm -f "$T/tiny/"* 2>/dev/null
"$SIDESCOPE" flame "$SIDESCOPE_SRC/tests/data/flame/"*.folded -o "$T/tiny/small.svg" 2>"$T/err" ||
	diag "$(cat "$T/err")"
ok "$([ -s "$T/tiny/small.svg" ]; echo $?)" "with space: the file is written"

# a null device of the test's own, so nothing else on the machine matters
mknod -m 666 "$T/null" c 1 3 || skip_all "cannot make a device node"
"$SIDESCOPE" flame "$T/big.folded" -o "$T/null" 2>"$T/err"
ok $? "-o to a device works"
is "$(stat -c %F "$T/null")" "character special file" "the device is written in place, not replaced"
done_testing
