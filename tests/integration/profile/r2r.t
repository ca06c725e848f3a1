#!/bin/sh
# sidescope profile names .NET ReadyToRun frames from the image itself: the
# R2R sample (built by make with crossgen2) spinning in its precompiled
# Fibonacci.Compute, profiled directly and in a simulated pod where its
# .dll exists only in the app's private /tmp (read through /proc/PID/root).
# Reports the share of samples whose leaf is named, with and without R2R
# naming (SIDESCOPE_NO_R2R=1 turns it off, for this comparison; the
# profiler reads it where it installs the R2R hook).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd dotnet unshare nsenter
T=$TMPDIR_TEST
PUB="$SIDESCOPE_BUILD/r2r/publish"
[ -f "$PUB/R2RSample.dll" ] || skip_all "no R2R sample (needs the .NET SDK; make builds it)"
"$SIDESCOPE" profile --help >/dev/null 2>&1 || skip_all "needs 'sidescope profile'"

# tiering off keeps the precompiled bodies in use; the perf map names the
# runtime's call thunks between them
export DOTNET_TieredCompilation=0 DOTNET_PerfMapEnabled=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

# leaf_share FOLDED: "NAMED TOTAL" samples, a leaf being named unless it is
# [unknown] or module+0xOFFSET
leaf_share() {
	awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";");
	       t += n; if (f[k] !~ /^\[unknown\]/ && f[k] !~ /\+0x[0-9a-f]+$/) named += n }
	     END { print named + 0, t + 0 }' "$1"
}

dotnet "$PUB/R2RSample.dll" spin "$T/app.ready" >/dev/null &
app=$!
on_exit "kill $app"
on_exit "rm -f /tmp/perf-$app.map /tmp/perfinfo-$app.map"
wait_for_file "$T/app.ready" 30
ok $? "the R2R sample started"

"$SIDESCOPE" profile -p "$app" -d 2 -F 199 -o "$T/r2r.folded" 2>"$T/err"
is "$?" 0 "profile of the R2R sample"
out=$(cat "$T/r2r.folded")
like "$out" ';SampleApp\.Deep\.Names\.Fibonacci\.Compute_\[r\] [0-9]+$' \
	"the precompiled method is the leaf, kind suffix _[r]"
like "$out" ';SampleApp\.Program\.Main_\[r\];' "Main is named under the runtime's frames"
unlike "$out" 'R2RSample\.dll\+0x' "no unnamed frame in the sample's image"
share=$(leaf_share "$T/r2r.folded")
named=${share% *} total=${share#* }
ok "$([ "$total" -gt 50 ] && [ $((named * 100)) -ge $((total * 95)) ]; echo $?)" \
	"at least 95% of samples have a named leaf ($named of $total)"

SIDESCOPE_NO_R2R=1 "$SIDESCOPE" profile -p "$app" -d 2 -F 199 -o "$T/nor2r.folded" 2>"$T/err"
is "$?" 0 "profile with perf maps only"
like "$(cat "$T/nor2r.folded")" 'R2RSample\.dll\+0x' "without R2R naming: module+offset frames"
share=$(leaf_share "$T/nor2r.folded")
diag "named leaf: with R2R $named of $total, perf maps only ${share% *} of ${share#* }"
kill "$app"
wait "$app" 2>/dev/null

pod_start || skip_all "cannot create PID and mount namespaces"
# the image only in the app's private /tmp: the sidecar must go through
# /proc/PID/root to read it
# shellcheck disable=SC2016
pod_app sh -c 'mkdir /tmp/app && cp "$1"/* /tmp/app/ &&
	exec dotnet /tmp/app/R2RSample.dll spin "$2"' sh "$PUB" "$T/pod.ready"
wait_for_file "$T/pod.ready" 30
ok $? "the sample started in the pod"
papp=$(cat "$T/pod.ready")
host=$(pod_host_pid "$papp")
on_exit "kill $host"
ok "$([ ! -e /tmp/app/R2RSample.dll ]; echo $?)" \
	"the image is not in the sidecar's /tmp"
pod_sidecar "$SIDESCOPE" profile -p "$papp" -d 2 -F 199 -o "$T/pod.folded" 2>"$T/err"
is "$?" 0 "profile from the sidecar"
like "$(cat "$T/pod.folded")" ';SampleApp\.Deep\.Names\.Fibonacci\.Compute_\[r\] [0-9]+$' \
	"R2R frames named through /proc/PID/root"
done_testing
