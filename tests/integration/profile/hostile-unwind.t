#!/bin/sh
# The hostile app against --unwind tables: the unwind tables are built from
# the app's own ELF files, so their size and the work they take are the
# app's to choose. Two attacks, each program made here:
#  - a capture that never ends: one function whose FDE has 200,000 rows
#    (a nop and a .cfi_adjust_cfa_offset, alternating). A builder that
#    replays the FDE for every row took two minutes and ignored SIGTERM;
#    `-d 3` must end on time, and SIGTERM end `-d 0` within seconds, with
#    the profile written.
#  - another process's stacks cut short: an attacker maps 66 libraries of
#    32,700 one-byte FDEs each (and 256 small ones first, so that the
#    unwinder loads the large ones when it first sees the process, not when
#    a walk reaches them), enough rows to fill every row map. A victim
#    profiled with it, spinning in libm's cbrt without frame pointers, must
#    still have its stacks walked to main: each process has a share of the
#    rows, and the attacker cannot take the last of them.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd cc awk timeout
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T=$TMPDIR_TEST

# share FILE PATTERN [PREFIX]: percent of the folded file's samples (of the
# lines starting with PREFIX) whose line matches the awk regex PATTERN
share() {
	awk -v p="$2" -v pre="${3:-}" 'index($0, pre) == 1 { n += $NF; if ($0 ~ p) m += $NF }
		END { printf "%d", n ? 100 * m / n : 0 }' "$1"
}
samples() {
	awk -v pre="${2:-}" 'index($0, pre) == 1 { n += $NF } END { print n + 0 }' "$1"
}

# wait_gone PID SECONDS: true once PID has exited (reaped by the shell)
wait_gone() {
	_i=$(($2 * 10))
	while kill -0 "$1" 2> /dev/null && [ "$_i" -gt 0 ]; do
		sleep 0.1
		_i=$((_i - 1))
	done
	! kill -0 "$1" 2> /dev/null
}

# ---- one FDE of 200,000 rows ------------------------------------------------
{
	printf '\t.text\n\t.globl long_fde\n\t.type long_fde,@function\nlong_fde:\n\t.cfi_startproc\n'
	awk 'BEGIN { for (i = 0; i < 100000; i++)
		printf "\tnop\n\t.cfi_adjust_cfa_offset 8\n\tnop\n\t.cfi_adjust_cfa_offset -8\n" }'
	printf '\tret\n\t.cfi_endproc\n\t.size long_fde, .-long_fde\n'
	printf '\t.section .note.GNU-stack,"",@progbits\n'
} > "$T/long.s"
cat > "$T/long_main.c" << 'EOS'
#include <stdio.h>
#include <unistd.h>
void long_fde(void);
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");

	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		long_fde();
}
EOS
cc -O1 -o "$T/long_fde" "$T/long_main.c" "$T/long.s"
is "$?" 0 "a program with an FDE of 200,000 rows built"

"$T/long_fde" "$T/long.pid" & lp=$!
on_exit "kill $lp"
wait_for_file "$T/long.pid" 10
t0=$(date +%s)
timeout -s KILL 20 "$SIDESCOPE" profile -v -p "$lp" -F 99 -d 3 --user-only --unwind tables \
	--table-cache none -o "$T/long.folded" 2> "$T/long.err"
rc=$?
secs=$(($(date +%s) - t0))
diag "profile -d 3 of it: exit $rc after ${secs}s"
ok "$([ "$rc" = 0 ] && [ "$secs" -le 15 ]; echo $?)" "profile -d 3 of it ends within 15 s (${secs}s)"
like "$(cat "$T/long.err")" "unwind table of .*long_fde: [0-9]+ rows" "its table is built"
ok "$([ "$(samples "$T/long.folded")" -gt 0 ]; echo $?)" "and its profile written"

# SIGTERM 2 s into a capture without an end (the time a user waits before
# giving up; no state of the capture to wait for: the old builder had
# not begun sampling by then)
rm -f "$T/term.folded"
"$SIDESCOPE" profile -p "$lp" -F 99 -d 0 --user-only --unwind tables --table-cache none \
	-o "$T/term.folded" 2> "$T/term.err" & sp=$!
on_exit "kill -9 $sp"
sleep 2
kill -TERM "$sp"
t0=$(date +%s)
wait_gone "$sp" 5
gone=$?
secs=$(($(date +%s) - t0))
[ "$gone" = 0 ] || kill -9 "$sp"
wait "$sp"
rc=$?
ok "$gone" "SIGTERM 2 s into -d 0 ends it within 5 s (${secs}s, exit $rc)"
is "$rc" 0 "with exit status 0"
ok "$([ -s "$T/term.folded" ]; echo $?)" "and its profile written"
kill "$lp" 2> /dev/null
wait "$lp" 2> /dev/null

# ---- the rows of every row map, taken by one process -------------------------
# 32,700 one-byte FDEs, each CFA offset unlike the last's: a row each, two
# such tables to a row map of 65,536 with no room left for another table
{
	printf '\t.text\n\t.globl big_spin\n\t.type big_spin,@function\nbig_spin:\n'
	# shellcheck disable=SC2016 # assembly: $1 is an immediate
	printf '\t.cfi_startproc\n\tmov %%edi, %%eax\n1:\tsub $1, %%eax\n\tjnz 1b\n\tret\n'
	printf '\t.cfi_endproc\n\t.size big_spin, .-big_spin\n'
	awk 'BEGIN { for (i = 0; i < 32700; i++)
		printf "\t.cfi_startproc\n%s\tnop\n\t.cfi_endproc\n",
			i % 2 ? "\t.cfi_def_cfa_offset 16\n" : "" }'
	printf '\t.section .note.GNU-stack,"",@progbits\n'
} > "$T/big.s"
cc -shared -o "$T/big.so" "$T/big.s"
is "$?" 0 "a library of 32,700 one-byte FDEs built"
printf 'int small_one(void) { return 1; }\n' > "$T/small.c"
cc -shared -fPIC -o "$T/small.so" "$T/small.c"
mkdir -p "$T/libs"
i=0
while [ "$i" -lt 66 ]; do
	cp "$T/big.so" "$T/libs/big$i.so"	# a file of its own: a table of its own
	echo "$T/libs/big$i.so"
	i=$((i + 1))
done > "$T/libs.list"
i=0
while [ "$i" -lt 256 ]; do
	cp "$T/small.so" "$T/libs/small$i.so"
	echo "$T/libs/small$i.so"
	i=$((i + 1))
done >> "$T/libs.list"
cat > "$T/attacker.c" << 'EOS'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* attacker LIST PIDFILE: every library LIST names opened (the large ones
 * first, so that the small ones, opened last, are mapped below them and
 * come first in its maps), then a spin through the large ones */
int main(int argc, char **argv)
{
	void (*spin[128])(int);
	char path[4096];
	int n = 0, i;
	FILE *f = fopen(argv[1], "r");

	while (f && fgets(path, sizeof(path), f)) {
		void *h;

		path[strcspn(path, "\n")] = '\0';
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return fprintf(stderr, "%s\n", dlerror()), 1;
		if (n < 128 && (spin[n] = (void (*)(int))dlsym(h, "big_spin")))
			n++;
	}
	f = fopen(argv[2], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		for (i = 0; i < n; i++)
			spin[i](100000);
}
EOS
cc -O2 -o "$T/attacker" "$T/attacker.c"
is "$?" 0 "the attacker built"
cat > "$T/victim.c" << 'EOS'
#include <math.h>
#include <stdio.h>
#include <unistd.h>
static volatile double sink;
__attribute__((noinline)) static void work(int n)
{
	double x = 1;
	int i;

	for (i = 0; i < n; i++)
		x += cbrt(x + i);
	sink = x;
}
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");

	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		work(1000000);
}
EOS
cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o "$T/victim" "$T/victim.c" -lm
is "$?" 0 "the victim built (libm's cbrt in a loop, no frame pointers)"

"$T/attacker" "$T/libs.list" "$T/attacker.pid" & ap=$!
on_exit "kill $ap"
wait_for_file "$T/attacker.pid" 20
ok "$?" "the attacker maps its $(wc -l < "$T/libs.list") libraries"
"$T/victim" "$T/victim.pid" & vp=$!
on_exit "kill $vp"
wait_for_file "$T/victim.pid" 10
t0=$(date +%s)
timeout -s KILL 60 "$SIDESCOPE" profile -v -p "$ap,$vp" -F 199 -d 3 --user-only \
	--unwind tables --table-cache none -o "$T/both.folded" 2> "$T/both.err"
rc=$?
secs=$(($(date +%s) - t0))
is "$rc" 0 "both profiled together (${secs}s)"
n=$(samples "$T/both.folded" victim)
main=$(share "$T/both.folded" ';main;' victim)
cbrt=$(share "$T/both.folded" ';main;work[^;]*;.*cbrt' victim)
diag "victim: $n samples, $main% reach main, $cbrt% main;work;..cbrt" \
	"$(grep -E 'unwind tables' "$T/both.err")"
ok "$([ "$n" -ge 100 ] && [ "$main" -ge 90 ]; echo $?)" \
	"the victim's stacks keep their frames: $main% reach main"
ok "$([ "$cbrt" -ge 30 ]; echo $?)" "through libm's table ($cbrt% in cbrt under main;work)"
# over its share of the rows, or (slower builds: a sanitizer's) of the time
out=$(sed -n "s/.*unwind tables left out: \([0-9]*\) objects over their process's share .*, \([0-9]*\) over their process's .*/\1 \2/p" \
	"$T/both.err")
# shellcheck disable=SC2086 # two numbers, split on purpose
ok "$(set -- $out; [ $((${1:-0} + ${2:-0})) -ge 1 ]; echo $?)" \
	"the attacker's tables beyond its share are left out, and said (${out:-none})"
like "$(cat "$T/both.err")" "no unwind table for .*/libs/big[0-9]+\.so \((over its process's share of the table rows|its process's time for building tables spent)\)" \
	"-v names them and why"
kill "$ap" "$vp" 2> /dev/null
wait "$ap" "$vp" 2> /dev/null

done_testing
