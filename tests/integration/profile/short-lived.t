#!/bin/sh
# sidescope profile -a over processes that live 30 ms each: their samples
# are named although every one of them is gone long before a drain (its
# maps are read when it is first sampled, while it lives). And a target
# that execs mid-capture: the new image's samples are named by its own
# maps and tables (the sampling program sees the new memory map).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
T=$TMPDIR_TEST
prog="$SIDESCOPE_BUILD/tests/progs/short_spin"

"$SIDESCOPE" profile -v -a -F 999 -d 0 --user-only -o "$T/short.folded" 2>"$T/err" &
prof=$!
on_exit "kill $prof"
wait_for_grep "$T/err" "sampling at" 10
ok $? "the capture started"

# 150 runs of 30 ms, two at a time (one per CPU of a small machine)
runs() { i=0; while [ "$i" -lt 75 ]; do "$prog" 30; i=$((i + 1)); done; }
runs & r1=$!
runs & r2=$!
wait "$r1" "$r2"
kill -INT "$prof"
wait "$prof"
is "$?" 0 "SIGINT: exit 0"

total=$(awk '/^short_spin;/ { n += $NF } END { print n + 0 }' "$T/short.folded")
named=$(awk '/^short_spin;.*(^|;)short_spin_work(;| )/ { n += $NF } END { print n + 0 }' \
	"$T/short.folded")
diag "$named of $total user samples of the 150 short-lived processes carry short_spin_work"
ok "$([ "$total" -ge 1500 ]; echo $?)" "the short-lived processes were sampled ($total)"
ok "$([ $((named * 100)) -ge $((total * 70)) ]; echo $?)" \
	">= 70% of their samples are named"
like "$(cat "$T/short.folded")" "^short_spin;.*main;short_spin_deeper;short_spin_work [0-9]+" \
	"the whole stack: main, short_spin_deeper, short_spin_work"

# ---- a target that execs: sh spinning, then nofp_chain in its place ---------
nofp="$SIDESCOPE_BUILD/tests/progs/nofp_chain"
sh -c "i=0; while [ \$i -lt 2000000 ]; do i=\$((i + 1)); done; exec '$nofp' -m chain -d 3" &
ex=$!
on_exit "kill $ex"
sleep 0.3
"$SIDESCOPE" profile -p "$ex" -F 199 -d 5 --user-only -o "$T/exec.folded" 2> "$T/exec.err"
is "$?" 0 "a target that execs mid-capture"
wait "$ex"
before=$(awk '/^sh;/ { n += $NF } END { print n + 0 }' "$T/exec.folded")
after=$(awk '/^nofp_chain;/ { n += $NF } END { print n + 0 }' "$T/exec.folded")
whole=$(awk '/^nofp_chain;.*;main;chain_a;chain_b;chain_c;spin_leaf / { n += $NF } END { print n + 0 }' \
	"$T/exec.folded")
diag "exec: $before samples before, $after after, $whole of them main..spin_leaf"
ok "$([ "$before" -ge 50 ] && [ "$after" -ge 300 ]; echo $?)" \
	"sampled before and after the exec ($before, $after)"
ok "$([ $((whole * 100)) -ge $((after * 95)) ]; echo $?)" \
	"after it, 95% named and walked by the new image's maps and tables ($whole of $after)"
done_testing
