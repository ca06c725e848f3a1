#!/bin/sh
# Programs as they are built in the wild, compiled here with the machine's
# own toolchains: a C program linked by LLD (its executable segment at a
# file offset that is not its address less the first segment's), a Rust
# program built with rustc's defaults (LLD, no frame pointers, legacy and
# v0 symbol names), and a plain .NET program (its host LLD-linked, its JIT
# code double-mapped). Their stacks reach main, their names read as perf
# shows them, a uprobe on the LLD program lands with the right argument,
# and the counters of cut walks agree between the summary and the JSON.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd clang ld.lld readelf rustc jq dotnet
[ -f "$SIDESCOPE_BUILD/hotapp/HotApp.dll" ] ||
	skip_all "the plain .NET program is not built ($SIDESCOPE_BUILD/hotapp; run make)"
T=$TMPDIR_TEST

# share FILE PATTERN: percent of the folded file's samples whose line
# matches the awk regex PATTERN
share() {
	awk -v p="$2" '{ n += $NF } $0 ~ p { m += $NF } END { printf "%d", n ? 100 * m / n : 0 }' "$1"
}
samples() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
# cut ERRFILE: walks cut short less those cut at an object still loading
cut() {
	sed -n 's/.* \([0-9]*\) of them cut short\( (\([0-9]*\) at an object.*\)\{0,1\}$/\1 \3/p' "$1" |
		awk '{ print $1 - ($2 == "" ? 0 : $2) }'
}
# gap FILE: whether an executable PT_LOAD sits at a file offset other than
# its address (LLD's layout: offset 0x7a0 at 0x17a0), where GNU ld keeps
# the two equal
gap() {
	readelf -lW "$1" | awk '$1 == "LOAD" && / E +0x/ { print $2, $3 }' | {
		g=1
		while read -r _o _v; do
			[ "$((_o))" -ne "$((_v))" ] && g=0
		done
		return "$g"
	}
}

# start PROG ARGS...: run it, its PID file at $T/ready (its last argument)
start() {
	rm -f "$T/ready"
	"$@" > /dev/null &
	_job=$!
	on_exit "kill $_job 2>/dev/null"
	wait_for_file "$T/ready" 30
}

# ---- C, linked by LLD, no frame pointers -------------------------------------
lld="$T/nofp_lld"
clang -O2 -g -fomit-frame-pointer -momit-leaf-frame-pointer -fuse-ld=lld \
	-o "$lld" "$SIDESCOPE_SRC/tests/progs/nofp_chain.c" 2> "$T/cc.err"
ok $? "nofp_chain linked by LLD" || diag "$(cat "$T/cc.err")"
gap "$lld"
ok $? "its executable segment's offset is not its address (LLD's layout)"
readelf -p .comment "$lld" | grep -q 'Linker: .*LLD'
ok $? "its .comment names LLD"

start "$lld" -m both -d 6 -r "$T/ready"
"$SIDESCOPE" profile -p "$(cat "$T/ready")" -F 199 -d 3 --user-only --unwind tables \
	-o "$T/lld.folded" 2> "$T/lld.err"
is "$?" 0 "profile of the LLD-linked program"
n=$(samples "$T/lld.folded")
main=$(share "$T/lld.folded" ';main;')
diag "$n samples, $main% reach main"
ok "$([ "$n" -ge 300 ] && [ "$main" -ge 90 ]; echo $?)" "at least 90% of its stacks reach main ($main%)"
like "$(cat "$T/lld.folded")" ';main;chain_a;chain_b;chain_c;spin_leaf [0-9]+' \
	"its frameless chain, in order"
like "$(cat "$T/lld.folded")" ';main;sort_round;qsort[^;]*;.*cmp_slow [0-9]+' \
	"and through libc's qsort"
is "$(cut "$T/lld.err")" 0 "no walk cut short (but at an object still loading)"
wait "$_job" 2> /dev/null

# a uprobe on one of its functions: chain_c(n) is called with n counting up
start "$lld" -m chain -d 6 -r "$T/ready"
"$SIDESCOPE" uprobe -p "$(cat "$T/ready")" -c 5 "p:$lld:chain_c \"%d\", arg1" \
	> "$T/up.out" 2> "$T/up.err"
is "$?" 0 "uprobe on the LLD-linked program's chain_c"
vals=$(awk '$5 == "chain_c" { print $6 }' "$T/up.out" | tr '\n' ' ')
diag "arguments: $vals"
ok "$(echo "$vals" | awk '{ if (NF != 5) exit 1; for (i = 2; i <= NF; i++) if ($i != $(i - 1) + 1) exit 1 }'; echo $?)" \
	"five hits with its argument, counting up by one ($vals)"
kill "$_job" 2> /dev/null
wait "$_job" 2> /dev/null

# ---- Rust, rustc's defaults ------------------------------------------------
# rustc 1.90 and later link with LLD on x86-64 Linux; an older rustc (Debian's)
# is asked for it, for the same layout
rs="$SIDESCOPE_SRC/tests/progs/rust_hot.rs"
rustc -O -o "$T/rust_hot" "$rs" 2> "$T/rustc.err"
ok $? "rust_hot built with rustc -O" || diag "$(cat "$T/rustc.err")"
if ! gap "$T/rust_hot"; then
	diag "rustc did not link with LLD: asking for it"
	rustc -O -C link-arg=-fuse-ld=lld -o "$T/rust_hot" "$rs" 2>> "$T/rustc.err"
fi
gap "$T/rust_hot"
ok $? "its executable segment's offset is not its address (LLD's layout)"
rustc -O -C symbol-mangling-version=v0 -o "$T/rust_v0" "$rs" 2>> "$T/rustc.err" ||
	rustc -O -Z unstable-options -C symbol-mangling-version=v0 -o "$T/rust_v0" "$rs" \
		2>> "$T/rustc.err"
ok $? "and again with v0 symbol names" || diag "$(cat "$T/rustc.err")"
nm "$T/rust_v0" | grep -q ' _RNv.*4work4spin'
ok $? "whose spin is a v0 symbol"
nm "$T/rust_hot" | grep -q ' _ZN.*4work4spin17h[0-9a-f]*E'
ok $? "where the default build's is a legacy one, with its hash"

for b in rust_hot rust_v0; do
	start "$T/$b" 6 "$T/ready"
	"$SIDESCOPE" profile -p "$(cat "$T/ready")" -F 199 -d 3 --user-only \
		-o "$T/$b.folded" 2> "$T/$b.err"
	is "$?" 0 "profile of $b"
	n=$(samples "$T/$b.folded")
	main=$(share "$T/$b.folded" ';main;')
	whole=$(share "$T/$b.folded" ';rust_hot::main;rust_hot::outer;rust_hot::work::spin [0-9]+$')
	diag "$b: $n samples, $main% reach main, $whole% main;outer;work::spin by their Rust names"
	ok "$([ "$n" -ge 300 ] && [ "$main" -ge 90 ]; echo $?)" "$b: at least 90% reach main ($main%)"
	ok "$([ "$whole" -ge 90 ]; echo $?)" \
		"$b: rust_hot::main;rust_hot::outer;rust_hot::work::spin, no hash ($whole%)"
	like "$(cat "$T/$b.folded")" ';std::rt::lang_start_internal;' \
		"$b: the standard library's v0 names demangled too"
	unlike "$(cat "$T/$b.folded")" '::h[0-9a-f]{16}|_ZN|_RNv' "$b: no mangled name, no hash"
	is "$(cut "$T/$b.err")" 0 "$b: no walk cut short (but at an object still loading)"
	wait "$_job" 2> /dev/null
done

# ---- .NET, started the plain way ---------------------------------------------
# its host (dotnet) is LLD-linked; its JIT code runs from memfd:doublemapper
readelf -p .comment "$(readlink -f "$(command -v dotnet)")" 2>/dev/null | grep -q 'Linker: .*LLD' &&
	diag "the dotnet host is LLD-linked"
start env -u DOTNET_PerfMapEnabled dotnet "$SIDESCOPE_BUILD/hotapp/HotApp.dll" 8 "$T/ready"
pid=$(cat "$T/ready")
grep -q 'memfd:doublemapper' "/proc/$pid/maps"
ok $? "the .NET program runs its JIT code double-mapped (W^X on)"
"$SIDESCOPE" profile -p "$pid" -F 199 -d 3 --user-only -o "$T/net.folded" -o "$T/net.json" \
	2> "$T/net.err"
is "$?" 0 "profile of the .NET program"
n=$(samples "$T/net.folded")
start_main=$(share "$T/net.folded" '^[^;]*;[^;]+;__libc_start_main[^;]*;')
diag "$n samples, $start_main% reach the host's entry point below __libc_start_main"
ok "$([ "$n" -ge 300 ] && [ "$start_main" -ge 90 ]; echo $?)" \
	"at least 90% of its stacks reach the host's outermost frame ($start_main%)"
is "$(cut "$T/net.err")" 0 "no walk cut short (but at an object still loading)"
said=$(sed -n 's/.* \([0-9]*\) user stacks walked by them, \([0-9]*\) of them cut short.*/\1 \2/p' \
	"$T/net.err")
is "$(jq -r '.meta.unwind | "\(.user_stacks_walked) \(.cut_short)"' "$T/net.json")" "$said" \
	"the JSON's walks and cut walks are the summary's ($said)"
wait "$_job" 2> /dev/null
done_testing
