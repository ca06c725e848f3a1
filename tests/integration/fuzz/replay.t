#!/bin/sh
# Replay every fuzz target's seed corpus and crash regressions through the
# plain (non-libFuzzer) drivers: every input must be handled without a crash
# (with SANITIZE=1 the drivers carry ASan and UBSan).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"

found=0
for src in "$SIDESCOPE_SRC"/tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	n=${t#fuzz_}
	drv="$SIDESCOPE_BUILD/tests/fuzz/$t"
	found=$((found + 1))
	if [ ! -x "$drv" ]; then
		fail "$n: replay driver built"
		continue
	fi
	set --
	for f in "$SIDESCOPE_SRC/tests/fuzz/corpus/$n"/* "$SIDESCOPE_SRC/tests/fuzz/regressions/$n"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	if [ "$#" -eq 0 ]; then
		fail "$n: has a seed corpus"
		continue
	fi
	out=$("$drv" "$@" 2>&1)
	ok $? "$n: $# inputs replayed without a crash"
	[ -z "$out" ] || diag "$out"
done
ok "$([ "$found" -gt 0 ]; echo $?)" "found fuzz targets"
done_testing
