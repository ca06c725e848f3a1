#!/bin/sh
# sidescope profile of a stripped program (no symbol table, a debug link)
# whose debug file comes later: its few symbols are kept in the table cache
# like any file's and taken from there, until a debug file for it is found;
# then its functions are named from that file, which is kept in turn.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd objcopy strip
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
NOFP="$SIDESCOPE_BUILD/tests/progs/nofp_chain"
[ -x "$NOFP" ] || skip_all "needs $NOFP (make)"
T=$TMPDIR_TEST
mkdir "$T/bin" "$T/away"
cp "$NOFP" "$T/bin/stripme"
objcopy --only-keep-debug "$T/bin/stripme" "$T/away/stripme.debug" &&
	strip --strip-all "$T/bin/stripme" &&
	objcopy --add-gnu-debuglink="$T/away/stripme.debug" "$T/bin/stripme"
ok $? "a stripped copy of nofp_chain, its debug file set aside"

# run NAME: the stripped chain profiled 2 s -> $T/NAME.folded and .err
run() {
	rm -f "$T/pid"
	"$T/bin/stripme" -m chain -d 6 -r "$T/pid" > /dev/null & _j=$!
	wait_for_file "$T/pid" 10
	"$SIDESCOPE" profile -v -p "$(cat "$T/pid")" -F 199 -d 2 --user-only \
		--table-cache "$T/cache" -o "$T/$1.folded" 2> "$T/$1.err"
	_rc=$?
	kill "$_j" 2> /dev/null
	wait "$_j" 2> /dev/null
	return $_rc
}
chain=';main;chain_a;chain_b;chain_c;spin_leaf '

run first
is "$?" 0 "the stripped program profiled"
unlike "$(cat "$T/first.folded")" "$chain" "without its debug file: the chain not named"
like "$(cat "$T/first.folded")" ';stripme\+0x[0-9a-f]+' "its frames named by offset"
run second
is "$?" 0 "again"
like "$(cat "$T/second.err")" "symbols of [^ ]*stripme from the cache" \
	"its symbols are taken from the cache"
unlike "$(cat "$T/second.folded")" "$chain" "the chain still not named"

mv "$T/away/stripme.debug" "$T/bin/"
run third
is "$?" 0 "the debug file in place"
like "$(cat "$T/third.err")" "symbols of [^ ]*stripme read again: a debug file was found" \
	"the kept symbols give way to the debug file"
like "$(cat "$T/third.folded")" "$chain" "the chain named from the debug file"
run fourth
like "$(cat "$T/fourth.err")" "symbols of [^ ]*stripme from the cache" \
	"the debug file's symbols are kept"
like "$(cat "$T/fourth.folded")" "$chain" "and name the chain"

done_testing
