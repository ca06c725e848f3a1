#!/bin/sh
# sidescope profile --unwind tables: user stacks of code without frame
# pointers walked in BPF by the objects' .eh_frame tables. A chain of
# frameless functions and a call through libc's qsort (tests/progs/
# nofp_chain), a library dlopen'ed after the capture began (its table
# loaded while sampling), Debian's redis-server under redis-benchmark:
# the samples reach main, in the right order; frame pointers alone do
# not. The summary and the usage errors.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd cc
require_cmd redis-server
require_cmd redis-benchmark
T=$TMPDIR_TEST
nofp="$SIDESCOPE_BUILD/tests/progs/nofp_chain"
late="$SIDESCOPE_BUILD/tests/progs/dlopen_late"

# share FILE PATTERN: percent of the folded file's samples whose line
# matches the awk regex PATTERN
share() {
	awk -v p="$2" '{ n += $NF } $0 ~ p { m += $NF } END { printf "%d", n ? 100 * m / n : 0 }' "$1"
}
samples() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# profile_nofp MODE UNWIND [NAME [OPTION...]]: nofp_chain -m MODE profiled 3 s
# -> $T/NAME.folded and .err (NAME: MODE-UNWIND), tables kept in $T/cache
profile_nofp() {
	_m=$1 _u=$2 _n=${3:-$1-$2}
	shift 2; [ "$#" -gt 0 ] && shift
	rm -f "$T/nofp.pid"
	"$nofp" -m "$_m" -d 6 -r "$T/nofp.pid" > /dev/null & _j=$!
	wait_for_file "$T/nofp.pid" 10
	_hz="-F 199"
	case " $* " in *" --off-cpu "*) _hz= ;; esac	# every switch counts
	# shellcheck disable=SC2086 # no word, or two
	"$SIDESCOPE" profile -p "$(cat "$T/nofp.pid")" $_hz -d 3 --user-only --unwind "$_u" \
		--table-cache "$T/cache" "$@" -o "$T/$_n.folded" 2> "$T/$_n.err"
	_rc=$?
	kill "$_j" 2> /dev/null
	wait "$_j" 2> /dev/null
	return $_rc
}

# ---- a chain of frameless functions ------------------------------------------
profile_nofp chain tables
is "$?" 0 "--unwind tables on a chain without frame pointers"
f="$T/chain-tables.folded"
n=$(samples "$f")
main=$(share "$f" ';main;')
chain=$(share "$f" ';main;chain_a;chain_b;chain_c;spin_leaf ')
diag "chain: $n samples, $main% reach main, $chain% the whole chain"
ok "$([ "$n" -ge 300 ]; echo $?)" "samples taken ($n)"
ok "$([ "$main" -ge 95 ]; echo $?)" "at least 95% of the samples reach main ($main%)"
ok "$([ "$chain" -ge 90 ]; echo $?)" "main;chain_a;chain_b;chain_c;spin_leaf in order ($chain%)"
like "$(grep -o '_start;__libc_start_main[^;]*;__libc_start_call_main;main;' "$f" | head -n 1)" \
	'^_start;__libc_start_main' "above main: libc's start frames and _start, the outermost"
like "$(cat "$T/chain-tables.err")" "unwind tables: [0-9]+ objects, [0-9]+ rows" \
	"the summary says what was loaded"
like "$(cat "$T/chain-tables.err")" "user stacks walked by them, 0 of them cut short" \
	"and that no walk was cut short"

like "$(cat "$T/chain-tables.err")" "built in [0-9]+ ms \(0 from the cache\)" \
	"the first capture builds every table"

# ---- the tables again, from the cache ---------------------------------------
ls "$T/cache"/*.cfi > /dev/null 2>&1
ok "$?" "the tables are kept in the cache directory"
ok "$([ "$(stat -c %a "$T/cache")" = 700 ]; echo $?)" "which is made mode 0700"
profile_nofp chain tables chain-cached
is "$?" 0 "a second capture of the same program"
objs=$(sed -n 's/.*unwind tables: \([0-9]*\) objects.*/\1/p' "$T/chain-cached.err")
like "$(cat "$T/chain-cached.err")" "\(${objs:-x} from the cache\)" \
	"takes all its ${objs:-?} tables from the cache"
main=$(share "$T/chain-cached.folded" ';main;chain_a;chain_b;chain_c;spin_leaf ')
ok "$([ "$main" -ge 90 ]; echo $?)" "and walks the same whole chain ($main%)"
# ---- and the kernel types the BPF program needs ------------------------------
# (a copy of the few the program names, so that a load reads no more of the
# kernel's BTF)
ls "$T/cache"/*.blb > /dev/null 2>&1
ok "$?" "the kernel types the BPF program needs are kept in the cache directory"
profile_nofp chain tables chain-types -v
like "$(cat "$T/chain-types.err")" "kernel types from the cache" "a later capture loads with them"
main=$(share "$T/chain-types.folded" ';main;chain_a;chain_b;chain_c;spin_leaf ')
ok "$([ "$main" -ge 90 ]; echo $?)" "with the same stacks ($main% whole)"
# the verifier's work is most of a capture's start-up: 6,177 instructions
# on 6.18 (13,509 when the walk's first-frame rule linked two registers)
vi=$(sed -n 's/.*program do_sample: \([0-9]*\) instructions verified.*/\1/p' "$T/chain-types.err")
diag "do_sample with tables: ${vi:-?} instructions verified"
ok "$([ "${vi:-99999}" -le 9000 ]; echo $?)" "-v says what the verifier went through (${vi:-none}, at most 9,000)"
# the kernel types' blob, not a symbol table's (sssyms)
blob=$(for b in "$T/cache"/*.blb; do grep -qa sssyms "$b" || echo "$b"; done | head -n 1)
printf 'X' | dd of="${blob:-/dev/null}" bs=1 seek=200 conv=notrunc 2> /dev/null
profile_nofp chain tables chain-types2 -v
is "$?" 0 "a damaged copy of the kernel types"
like "$(cat "$T/chain-types2.err")" "kernel types kept for the next capture" \
	"is not used, and made again"

# ---- and the symbol tables -----------------------------------------------------
# (read, sorted and kept once: a later capture reads one block a file)
syms=$(grep -la sssyms "$T/cache"/*.blb)
ok "$([ -n "$syms" ]; echo $?)" "the symbol tables are kept in the cache directory"
for b in $syms; do
	printf 'X' | dd of="$b" bs=1 seek=100 conv=notrunc 2> /dev/null
	cp "$b" "$T/${b##*/}.bad"
done
profile_nofp chain tables chain-syms
main=$(share "$T/chain-syms.folded" ';main;chain_a;chain_b;chain_c;spin_leaf ')
ok "$([ "$main" -ge 90 ]; echo $?)" "damaged ones are not used: the same names ($main% whole)"
again=0
for b in $syms; do [ -e "$b" ] && ! cmp -s "$b" "$T/${b##*/}.bad" || again=1; done
ok "$again" "and are kept again"

# ---- an object whose path is the app's to choose ------------------------------
# (-v names each table's object: a terminal escape in its path stays escaped)
esc="$T/$(printf 'esc\033[31mdir')"
mkdir -p "$esc" && cp "$nofp" "$esc/nofp_chain"
nofp_saved=$nofp nofp="$esc/nofp_chain"
profile_nofp chain tables chain-esc -v
is "$?" 0 "a capture of a program under a path with a terminal escape"
nofp=$nofp_saved
like "$(cat "$T/chain-esc.err")" 'unwind table of .*esc\\x1b\[31mdir/nofp_chain: [0-9]+ rows' \
	"-v names its table's object escaped"
ok "$(LC_ALL=C grep -q "$(printf '\033')" "$T/chain-esc.err"; [ $? != 0 ]; echo $?)" \
	"and prints no raw escape"

profile_nofp chain tables chain-nocache --table-cache none
like "$(cat "$T/chain-nocache.err")" "\(0 from the cache\)" "--table-cache none builds them"
ok "$([ ! -e none ] && [ ! -e "$T/none" ]; echo $?)" "and keeps none"
chmod 0777 "$T/cache"
profile_nofp chain tables chain-opencache
is "$?" 0 "a cache directory open to other users"
like "$(cat "$T/chain-opencache.err")" "table cache not used: .* is open to other users" \
	"is not used, and the capture says so"
main=$(share "$T/chain-opencache.folded" ';main;')
ok "$([ "$main" -ge 95 ]; echo $?)" "and still walks by tables built afresh ($main%)"
chmod 0700 "$T/cache"

profile_nofp chain fp
is "$?" 0 "--unwind fp on the same program"
fp=$(share "$T/chain-fp.folded" ';main;')
diag "frame pointers: $fp% reach main"
ok "$([ "$fp" -le 10 ]; echo $?)" "frame pointers alone do not get there ($fp%)"

# ---- through libc's qsort ---------------------------------------------------
profile_nofp qsort tables
is "$?" 0 "--unwind tables through libc's qsort"
f="$T/qsort-tables.folded"
main=$(share "$f" ';main;sort_round;')
thru=$(share "$f" ';main;sort_round;[^;]*qsort[^;]*;.*cmp_slow ')
diag "qsort: $(samples "$f") samples, $main% reach main, $thru% main..qsort..cmp_slow"
ok "$([ "$main" -ge 95 ]; echo $?)" "at least 95% reach main through sort_round ($main%)"
ok "$([ "$thru" -ge 90 ]; echo $?)" "cmp_slow under libc's qsort frames under sort_round ($thru%)"

# ---- the vDSO (the kernel's code, no file behind it) --------------------------
profile_nofp vdso tables
is "$?" 0 "--unwind tables on a program reading the clock in a loop"
f="$T/vdso-tables.folded"
in_vdso=$(share "$f" ';__vdso_[a-z_]*( |;)')
main=$(share "$f" ';main( |;)')
diag "vdso: $(samples "$f") samples, $in_vdso% in the vDSO, $main% reach main"
ok "$([ "$in_vdso" -ge 50 ] && [ "$main" -ge 95 ]; echo $?)" \
	"the vDSO's frames walked by its table: $main% reach main ($in_vdso% in the vDSO)"
like "$(cat "$T/vdso-tables.err")" "user stacks walked by them, 0 of them cut short" \
	"none cut short in the vDSO"

# ---- off the CPU: stacks taken at the context switch ---------------------------
# the chain sleeping in libc's nanosleep: walked from the registers the
# thread entered the kernel with
profile_nofp block tables block-tables --off-cpu
is "$?" 0 "--off-cpu --unwind tables on the chain sleeping under libc's frames"
f="$T/block-tables.folded"
main=$(share "$f" ';main;chain_a;chain_b;chain_c;spin_leaf;[^ ]*nanosleep')
diag "off-CPU chain: $(samples "$f") us off the CPU, $main% through the whole chain"
ok "$([ "$(samples "$f")" -ge 1000000 ] && [ "$main" -ge 95 ]; echo $?)" \
	"at least 95% of the time off the CPU under the whole chain ($main%)"
like "$(cat "$T/block-tables.err")" "user stacks walked by them, 0 of them cut short" \
	"none cut short"
profile_nofp block fp block-fp --off-cpu
main=$(share "$T/block-fp.folded" ';main;')
ok "$([ "$main" -le 10 ]; echo $?)" "frame pointers alone do not get there off the CPU ($main%)"

# ---- a library opened after the capture began --------------------------------
cat > "$T/late.c" << 'EOS'
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long late_leaf(unsigned long n)
{
	volatile unsigned long v[4] = { n, 0, 0, 0 };
	unsigned long i;

	for (i = 0; i < 100000; i++)
		v[i & 3] += i;
	return v[0];
}
__attribute__((noinline)) unsigned long late_mid(unsigned long n)
{
	volatile char pad[40];

	pad[n % 40] = (char)n;
	return late_leaf(n) + (unsigned long)pad[0] + sink;
}
EOS
cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -shared -fPIC -o "$T/liblate.so" "$T/late.c"
is "$?" 0 "a library without frame pointers built"
rm -f "$T/late.pid"
"$late" "$T/liblate.so" late_mid -w 700 -d 5 -r "$T/late.pid" > /dev/null & lj=$!
on_exit "kill $lj"
wait_for_file "$T/late.pid" 10
"$SIDESCOPE" profile -p "$(cat "$T/late.pid")" -F 199 -d 4 --user-only --unwind tables \
	-o "$T/late.folded" 2> "$T/late.err"
is "$?" 0 "profiled across the dlopen"
wait "$lj"
in_lib=$(awk '/late_leaf /{ n += $NF } END { print n + 0 }' "$T/late.folded")
reach=$(awk '/;main;late_outer;late_mid;late_leaf /{ n += $NF } END { print n + 0 }' "$T/late.folded")
diag "after the dlopen: $in_lib samples in late_leaf, $reach through main;late_outer;late_mid"
ok "$([ "$in_lib" -ge 200 ] && [ $((reach * 100)) -ge $((in_lib * 90)) ]; echo $?)" \
	"the new library's frames are walked by its table: 90% of its samples reach main"
# not the program's executable nor its C library: its table waits for the
# first walk that reaches it, and is loaded then
like "$(cat "$T/late.err")" "[1-9][0-9]* of them when a walk first reached them" \
	"the library's table loaded when a walk first reached it"

# the whole machine (-a, as --cgroup): the processes sampled so far are
# looked at again at every drain (2 s), so the library's samples after the
# first drain past its dlopen (0.7 s) are walked by its table
rm -f "$T/late.pid"
"$late" "$T/liblate.so" late_mid -w 700 -s -d 7 -r "$T/late.pid" > /dev/null & lj=$!
on_exit "kill $lj"
wait_for_file "$T/late.pid" 10
"$SIDESCOPE" profile -a -F 199 -d 6 --user-only --unwind tables \
	-o "$T/late-n.folded" 2> "$T/late-n.err"
is "$?" 0 "the whole machine profiled across the dlopen"
wait "$lj"
in_lib=$(awk '/late_leaf /{ n += $NF } END { print n + 0 }' "$T/late-n.folded")
reach=$(awk '/;main;late_outer;late_mid;late_leaf /{ n += $NF } END { print n + 0 }' \
	"$T/late-n.folded")
diag "-a, after the dlopen: $in_lib samples in late_leaf, $reach through main"
ok "$([ "$in_lib" -ge 300 ] && [ $((reach * 100)) -ge $((in_lib * 55)) ]; echo $?)" \
	"the new library's table is loaded at a drain: most of its samples reach main"

# ---- redis-server under load ----------------------------------------------------
port=$((20000 + $$ % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	> "$T/redis.log" 2>&1 & rs=$!
on_exit "kill $rs"
wait_for_grep "$T/redis.log" "Ready to accept connections" 10
redis-benchmark -p "$port" -q -n 100000000 -c 20 -t set,get,incr,lpush > /dev/null 2>&1 & rb=$!
on_exit "kill $rb"
sleep 0.5
"$SIDESCOPE" profile -v -p "$rs" -F 199 -d 3 --user-only --unwind tables -o "$T/redis.folded" \
	2> "$T/redis.err"
is "$?" 0 "--unwind tables on Debian's redis-server under redis-benchmark"
kill "$rb" 2> /dev/null
n=$(awk '$1 ~ /^redis-server;/ { n += $NF } END { print n + 0 }' "$T/redis.folded")
main=$(share "$T/redis.folded" '^redis-server;.*;(main|aeMain);')
diag "redis-server: $n samples, $main% reach main or aeMain"
ok "$([ "$n" -ge 100 ] && [ "$main" -ge 95 ]; echo $?)" \
	"at least 95% of redis-server's samples reach main ($main%)"
# its objects' 200,000-odd rows are more than one row map's 65,536: more
# maps are made as the tables need them, and used
rows=$(sed -n 's/.*unwind tables: [0-9]* objects, \([0-9]*\) rows in \([0-9]*\) row map.*/\1 \2/p' \
	"$T/redis.err")
diag "redis-server's tables: rows and row maps: $rows"
# shellcheck disable=SC2086 # two numbers, split on purpose
ok "$(set -- $rows; [ "${1:-0}" -gt 65536 ] && [ "${2:-0}" -ge 2 ]; echo $?)" \
	"its tables fill more than one row map ($rows)"
# of its 18 objects, most are linked (TLS, compression, systemd) and never
# run under the benchmark: their tables are never built nor loaded
idle=$(sed -n 's/.* \([0-9]*\) more mapped but never reached.*/\1/p' "$T/redis.err")
diag "redis-server's objects never reached by a walk: $idle"
ok "$([ "${idle:-0}" -ge 5 ]; echo $?)" "the tables of objects no walk reached are left alone ($idle)"
# and so are their symbols: read when a frame first falls in them
unread=$(sed -n 's/.*symbols: [0-9]* files of the targets, \([0-9]*\) of them mapped but not read.*/\1/p' \
	"$T/redis.err")
diag "redis-server's objects whose symbols were never read: $unread"
ok "$([ "${unread:-0}" -ge 5 ]; echo $?)" "the symbols of objects no frame fell in are not read ($unread)"

# ---- usage errors -------------------------------------------------------------
"$SIDESCOPE" profile -p 1 -d 1 --unwind bogus > /dev/null 2> "$T/e1"
is "$?" 2 "--unwind bogus: a usage error"
like "$(cat "$T/e1")" "invalid --unwind 'bogus' \(auto, fp or tables\)" "naming the choices"
"$SIDESCOPE" profile -p 1 -d 1 --unwind tables --kernel-only > /dev/null 2> "$T/e2"
is "$?" 2 "--unwind tables --kernel-only: a usage error"

done_testing
