#!/bin/sh
# sidescope ctf summary and chrome over damaged traces: an empty directory,
# missing, empty, truncated and corrupt metadata, stream files cut in the
# packet header or mid-packet, garbage appended, and random byte damage.
# Each gives exit 0 (what could be read) or 1 with one line of error, never
# a crash (run it under 'make SANITIZE=1 test' too), and chrome leaves no
# partial file behind. SIDESCOPE_SEED=N replays the random damage.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd babeltrace2 jq awk od timeout dd

# under SANITIZE=1: babeltrace2's own leak on damaged metadata is not ours
# (the full unwind reaches the frame the suppression names)
LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$SIDESCOPE_SRC/tests/data/ctf/lsan-babeltrace2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

# a hang is a failure: every run of sidescope is bounded (exit 124)
ss() { timeout 60 "$SIDESCOPE" "$@"; }

DATA="$SIDESCOPE_SRC/tests/data/ctf/small"
T=$TMPDIR_TEST
REL=session/ust/uid/0/64-bit

# fresh NAME: a copy of the fixture in $T/NAME; prints the trace dir
fresh() {
	rm -rf "${T:?}/$1"
	cp -r "$DATA" "$T/$1"
	echo "$T/$1/$REL"
}

# cut FILE BYTES: keep the first BYTES of FILE
cut_to() {
	head -c "$2" "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

# check NAME RE: both subcommands on $T/NAME fail with exit 1 and one line
# matching RE, chrome leaves no file
check_fails() {
	ss ctf summary "$T/$1" >"$T/$1.out" 2>"$T/$1.err"
	is "$?" 1 "$1: summary exits 1"
	is "$(wc -l < "$T/$1.err" | tr -d ' ')" 1 "$1: one line of error"
	like "$(cat "$T/$1.err")" "$2" "$1: the error says what"
	ss ctf chrome "$T/$1" -o "$T/$1.json" 2>"$T/$1.cerr"
	is "$?" 1 "$1: chrome exits 1"
	is "$(wc -l < "$T/$1.cerr" | tr -d ' ')" 1 "$1: chrome, one line of error"
	ok "$([ ! -e "$T/$1.json" ] && ! find "$T" -maxdepth 1 -name "$1.json.*" | grep -q .; echo $?)" \
		"$1: chrome leaves no partial or temporary file"
}

mkdir "$T/empty"
check_fails empty "error: no CTF trace under '.*empty' \\(no 'metadata' file"

d=$(fresh nometa)
rm "$d/metadata"
check_fails nometa "error: no CTF trace under '.*nometa'"

d=$(fresh emptymeta)
: > "$d/metadata"
check_fails emptymeta "error: trace '.*emptymeta' is damaged: '.*/metadata' is empty"

d=$(fresh halfmeta)
cut_to "$d/metadata" $(( $(stat -c %s "$d/metadata") / 2 ))
check_fails halfmeta "error: trace '.*halfmeta' is damaged: '.*/metadata' is cut short: its packet at byte 0 needs 4096 bytes, [0-9]+ are there"

# babeltrace2 2.0 loops forever on such a metadata file: sidescope must not
# hand it over (a hang here is a failure, not a wait)
d=$(fresh cutmetahead)
cut_to "$d/metadata" 20
check_fails cutmetahead "error: trace '.*cutmetahead' is damaged: '.*/metadata' is cut short in the packet header at byte 0"

d=$(fresh badmeta)
printf 'this is not CTF metadata\n' > "$d/metadata"
check_fails badmeta "error: opening trace '.*badmeta' failed: .+"

d=$(fresh cuthead)
cut_to "$d/ch_0" 20
check_fails cuthead "error: opening trace '.*cuthead' failed: .*ch_0"

d=$(fresh cutmid)
cut_to "$d/ch_0" $(( $(stat -c %s "$d/ch_0") / 2 ))
check_fails cutmid "error: opening trace '.*cutmid' failed: .*ch_0"

# garbage after the last packet: not a packet header
d=$(fresh tail)
printf 'garbage after the last packet' >> "$d/ch_1"
check_fails tail "error: opening trace '.*tail' failed: "

# a stream file of zero bytes (lttng leaves those for idle CPUs) is fine
d=$(fresh zero)
: > "$d/ch_1"
rm -f "$d/index/ch_1.idx"
ss ctf summary "$T/zero" --json > "$T/zero.json" 2>"$T/zero.err"
is "$?" 0 "an empty stream file: summary reads the rest"
is "$(jq .events "$T/zero.json")" "$(babeltrace2 "$T/zero" 2>/dev/null | wc -l | tr -d ' ')" \
	"an empty stream file: the count babeltrace2 gives"

# random damage: flip bytes in the metadata and the streams; any exit but
# 0 or 1 (a crash, a sanitizer report) fails
seed=${SIDESCOPE_SEED:-$(date +%s)}
diag "seed $seed (SIDESCOPE_SEED=$seed replays it)" | tee /dev/stderr
n=40
bad=0
awk -v seed="$seed" -v n="$n" 'BEGIN { srand(seed); split("metadata ch_0 ch_1", f, " ")
	for (i = 0; i < n; i++) printf "%s %d %d %d\n", f[int(rand() * 3) + 1],
		int(rand() * 4096), int(rand() * 256), int(rand() * 8) + 1 }' > "$T/plan"
i=0
while read -r file off byte count; do
	i=$((i + 1))
	d=$(fresh "rnd")
	size=$(stat -c %s "$d/$file")
	[ "$off" -lt "$size" ] || off=$((off % size))
	# COUNT bytes of value BYTE at OFF
	awk -v b="$byte" -v c="$count" 'BEGIN { for (j = 0; j < c; j++) printf "%c", b }' |
		dd of="$d/$file" bs=1 seek="$off" conv=notrunc 2>/dev/null
	for sub in summary chrome; do
		if [ "$sub" = chrome ]; then
			ss ctf chrome "$T/rnd" -o "$T/rnd.json" >/dev/null 2>"$T/rnd.err"
		else
			ss ctf summary "$T/rnd" >/dev/null 2>"$T/rnd.err"
		fi
		rc=$?
		if [ "$rc" -gt 1 ] || grep -q -e 'Sanitizer' -e 'runtime error' "$T/rnd.err" ||
		   { [ "$rc" = 1 ] && [ "$(grep -c 'error' "$T/rnd.err")" != 1 ]; }; then
			bad=$((bad + 1))
			# on stderr too: prove shows it without -v
			diag "damage $i ($file at $off: $count x $byte), $sub: exit $rc" "$(head -n 5 "$T/rnd.err")" |
				tee /dev/stderr
		fi
		if [ "$sub" = chrome ] && [ "$rc" = 0 ] && ! jq -e . "$T/rnd.json" >/dev/null 2>&1; then
			bad=$((bad + 1))
			diag "damage $i ($file at $off: $count x $byte): chrome wrote invalid JSON"
		fi
		rm -f "$T/rnd.json"
	done
done < "$T/plan"
is "$bad" 0 "$n random damages: exit 0 or 1 with one line, never a crash"

# -v: every cause of the error follows the one line
ss ctf summary -v "$T/cutmid" >/dev/null 2>"$T/v.err"
like "$(cat "$T/v.err")" "caused by: " "-v: the causes follow"
done_testing
