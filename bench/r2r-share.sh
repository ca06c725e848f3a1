#!/bin/sh
# bench/r2r-share.sh: share of CPU samples whose leaf frame has a name, for
# the .NET sample (examples/dotnet) under load on both endpoints, with the
# deployment's settings (ReadyToRun code kept in use, perf map on):
#   sidescope with perf maps only (SIDESCOPE_NO_R2R=1)
#   sidescope with ReadyToRun naming (the default)
#   perf record -g + perf script, with the same perf map
# The three run at once over the same load. Needs root, dotnet, perf, curl.
# USAGE: sh bench/r2r-share.sh [SECONDS]
set -eu
secs=${1:-10}
build=${SIDESCOPE_BUILD:-build}
ss="$build/sidescope"
app="$build/dotnet/app/SampleApp.dll"
out=$(mktemp -d "${TMPDIR:-/tmp}/r2r-share.XXXXXX")
[ -f "$app" ] || { echo "r2r-share: build the sample first (make)" >&2; exit 1; }

port=$((20000 + $$ % 20000))
# word splitting wanted: one VAR=VALUE per word
# shellcheck disable=SC2046
env $(awk '/- name: DOTNET_|- name: ASPNETCORE_/ { n = $3 }
	n != "" && /value:/ { v = $2; gsub(/"/, "", v); print n "=" v; n = "" }' \
	examples/dotnet/deployment.yaml | grep -v '^ASPNETCORE_URLS=' | sort -u) \
	ASPNETCORE_URLS="http://127.0.0.1:$port" dotnet "$app" >"$out/app.log" 2>&1 &
pid=$!
loader=""
cleanup() {
	[ -z "$loader" ] || kill "$loader" 2>/dev/null || true
	kill "$pid" 2>/dev/null || true
	if [ -n "${KEEP:-}" ]; then echo "kept $out" >&2; else rm -rf "$out"; fi
}
trap cleanup EXIT INT TERM
i=0
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
	i=$((i + 1))
	[ "$i" -lt 200 ] || { echo "r2r-share: the sample did not start" >&2; exit 1; }
	sleep 0.1
done
(
	while :; do
		curl -sf "http://127.0.0.1:$port/api/fibonacci?pos=22" >/dev/null || true
		curl -sf "http://127.0.0.1:$port/api/echo?echo=h%C3%A9llo" >/dev/null || true
	done
) &
loader=$!
sleep 2	# past start-up: measure the steady state

SIDESCOPE_NO_R2R=1 "$ss" profile -p "$pid" -F 99 -d "$secs" -o "$out/maps.folded" 2>/dev/null &
p1=$!
"$ss" profile -p "$pid" -F 99 -d "$secs" -o "$out/r2r.folded" 2>/dev/null &
p2=$!
perf record -q -F 99 -g -p "$pid" -o "$out/perf.data" -- sleep "$secs" >/dev/null 2>&1
wait "$p1" "$p2"
perf script -i "$out/perf.data" -F ip,sym,dso 2>/dev/null > "$out/perf.txt"

# folded: the leaf is the last frame; unnamed is [unknown] or module+0xOFF
share_folded() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); leaf = f[k];
		t += n; if (leaf !~ /^\[unknown\]/ && leaf !~ /\+0x[0-9a-f]+(_\[[a-z]\])?$/) named += n }
		END { printf "%d of %d (%.1f%%)", named, t, t ? 100 * named / t : 0 }' "$1"
}
# perf script: the first frame line of each sample is its leaf
share_perf() {
	awk 'BEGIN { first = 1 } /^$/ { first = 1; next }
		first && /^[ \t]+[0-9a-f]+ / { t++; if ($2 != "[unknown]") named++; first = 0 }
		END { printf "%d of %d (%.1f%%)", named, t, t ? 100 * named / t : 0 }' "$1"
}
printf '%-40s %s\n' "profiler" "samples with a named leaf"
printf '%-40s %s\n' "sidescope, perf maps only" "$(share_folded "$out/maps.folded")"
printf '%-40s %s\n' "sidescope, perf maps + ReadyToRun" "$(share_folded "$out/r2r.folded")"
printf '%-40s %s\n' "perf record -g + perf script" "$(share_perf "$out/perf.txt")"
echo "R2R frames named: $(grep -o '[^;]*_\[r\]' "$out/r2r.folded" | sort | uniq -c | sort -rn | head -5 | awk '{ $1 = ""; print }' | tr '\n' '|')"
