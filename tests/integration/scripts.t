#!/bin/sh
# The wrapper scripts: shellcheck -s sh clean, set -eu, usage at the top
# printed by -h under busybox sh in 80 columns, bad usage exits 2; each
# script that runs a capture checks its TMPDIR first and refuses one that is
# not a private directory (here: a symbolic link), before anything else.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd shellcheck busybox
cd "$SIDESCOPE_SRC" || exit 1
for s in doctor cpu-profile uprobe-trace capture-loop lib/common.sh; do
	out=$(shellcheck -s sh -x "scripts/$s" 2>&1)
	ok $? "$s: shellcheck -s sh clean"
	[ -z "$out" ] || diag "$out"
done
for s in doctor cpu-profile uprobe-trace capture-loop; do
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
for c in "cpu-profile -d 1 12345" "uprobe-trace 12345 p:/bin/true:main" "capture-loop --once"; do
	# shellcheck disable=SC2086 # the words of the command
	err=$(TMPDIR="$TMPDIR_TEST/tmp-link" SIDESCOPE_OUT="$TMPDIR_TEST/out" busybox sh scripts/$c 2>&1 >/dev/null)
	is "$?" 1 "${c%% *} with TMPDIR a link: exit 1"
	is "$err" "${c%% *}: '$TMPDIR_TEST/tmp-link' is a symbolic link; the sidecar's state needs a directory of its own" \
		"${c%% *}: one line saying why"
done
is "$(ls -A "$TMPDIR_TEST/elsewhere")" "" "nothing was made through the link"
ok "$([ ! -e "$TMPDIR_TEST/out" ]; echo $?)" "nor an output directory"
for s in cpu-profile uprobe-trace capture-loop; do
	code=$(grep -v '^[[:space:]]*#' "scripts/$s")
	unlike "$code" "/tmp" "$s: nothing in /tmp"
	# a staging directory in the output directory is all (capture-loop)
	is "$(printf '%s\n' "$code" | grep mktemp | grep -vc 'mktemp -d "\$out/')" 0 \
		"$s: no temporary file anywhere else"
done
done_testing
