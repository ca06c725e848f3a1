#!/bin/sh
# Benchmark: what names for a running app's JIT code cost the app. A plain
# .NET program (tests/progs/HotApp) and a plain Java program (bench/
# HotRate.java) run a hot loop for SECONDS (default 10) while 'sidescope
# profile' samples them at 99 Hz, once with --hands-off (no perf map) and
# once asking the runtime for one (.NET: EnablePerfMap; Java: jcmd
# Compiler.perfmap, again every 5 s), ROUNDS times each, interleaved. Prints
# the app's rounds per second both ways and their ratio (the cost of the
# perf map on the app, profiling's own cost being in both), the share of
# samples named, and how long the request took (-v).
#   sh bench/jitnames.sh [SECONDS] [ROUNDS]     (root; run 'make' first)
set -eu
B=${SIDESCOPE_BUILD:-build}
S="$B/sidescope"
SECS=${1:-10}
ROUNDS=${2:-3}
HOT="$B/hotapp/HotApp.dll"
[ -x "$S" ] && [ -f "$HOT" ] || { echo "jitnames.sh: run 'make' first" >&2; exit 1; }
command -v javac > /dev/null || { echo "jitnames.sh: needs javac" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
javac -d "$W" bench/HotRate.java

# run APP MODE: the app for SECS under a profile (MODE: names or hands-off);
# prints "rounds-per-second named-percent"
run() {
	rm -f "$W/ready" "$W/out"
	case $1 in
	dotnet) env -u DOTNET_PerfMapEnabled dotnet "$HOT" "$SECS" "$W/ready" > "$W/out" & ;;
	java) java -cp "$W" HotRate "$SECS" "$W/ready" > "$W/out" & ;;
	esac
	_app=$!
	while [ ! -s "$W/ready" ]; do sleep 0.05; done
	_opt=""
	[ "$2" = hands-off ] && _opt=--hands-off
	# shellcheck disable=SC2086
	"$S" profile -p "$(cat "$W/ready")" -d "$((SECS - 1))" $_opt -v -o "$W/p.folded" \
		2> "$W/p.err" || true
	wait "$_app"
	_rounds=$(awk '{ print $NF }' "$W/out")
	_named=$(awk '{ n += $NF } /HotApp::|HotRate\./ { m += $NF } END { printf "%d", n ? 100 * m / n : 0 }' \
		"$W/p.folded")
	echo "$((_rounds / SECS)) $_named"
}

printf '%-7s %-10s %14s %8s\n' app mode rounds/s named
for app in dotnet java; do
	a=0 b=0 na=0 nb=0
	for r in $(seq "$ROUNDS"); do
		set -- $(run "$app" hands-off)
		a=$((a + $1)); na=$((na + $2))
		printf '%-7s %-10s %14s %7s%%\n' "$app" hands-off "$1" "$2"
		set -- $(run "$app" names)
		b=$((b + $1)); nb=$((nb + $2))
		printf '%-7s %-10s %14s %7s%%\n' "$app" names "$1" "$2"
	done
	echo "$app: mean rounds/s $((a / ROUNDS)) hands-off, $((b / ROUNDS)) with names" \
		"(ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a ? b / a : 0 }')), named" \
		"$((na / ROUNDS))% -> $((nb / ROUNDS))%"
done
