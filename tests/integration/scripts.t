#!/bin/sh
# The wrapper scripts: shellcheck -s sh clean, set -eu, usage at the top
# printed by -h under busybox sh in 80 columns, bad usage exits 2.
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
done_testing
