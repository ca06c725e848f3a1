#!/bin/sh
# CPU profile of the real .NET sample in a simulated pod: under load on
# /api/fibonacci, sidescope profile (run as the sidecar, in the pod's PID
# namespace) shows the managed fibonacci method, named through the
# runtime's perf map in the app's private /tmp, with ASP.NET Core frames
# below it.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
require_root
require_cmd unshare nsenter curl
require_dotnet_sample
"$SIDESCOPE" profile --help >/dev/null 2>&1 || skip_all "needs 'sidescope profile'"

pod_start || skip_all "cannot create PID and mount namespaces"
dotnet_start pod
ok $? "the sample started in the pod"
diag "app: pid $DOTNET_PID in the pod, $DOTNET_HOST_PID on the host, $DOTNET_URL"

# One request first: its reply means Fibonacci.Compute has been compiled
# before sampling starts. The deployment does not ask for a perf map:
# sidescope asks the runtime for one (rt/rtnames).
is "$(dotnet_get '/api/fibonacci?pos=20')" "6765" "fibonacci(20) is right"
map="/proc/$DOTNET_HOST_PID/root/tmp/perf-$DOTNET_PID.map"
ok "$([ ! -e "$map" ]; echo $?)" "no perf map before the profile"

sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -q -n 0 -F -p 38 "$DOTNET_URL" &
load=$!
on_exit "kill $load"

out="$TMPDIR_TEST/fib.folded"
pod_sidecar "$SIDESCOPE" profile -p "$DOTNET_PID" -F 199 -d 5 -o "$out" \
	2>"$TMPDIR_TEST/profile.err"
ok $? "profile -p (pod PID) runs as the sidecar"
kill "$load" 2>/dev/null
[ -s "$out" ] || diag "$(cat "$TMPDIR_TEST/profile.err")"
like "$(cat "$TMPDIR_TEST/profile.err")" "\\(.NET\\): its perf map switched on for this capture" \
	"the runtime was asked for its perf map"
ok "$(grep -q 'SampleApp.Fibonacci::Compute' "$map"; echo $?)" \
	"which, in the app's /tmp, names the JIT-compiled fibonacci method"
ok "$([ ! -e "/tmp/perf-$DOTNET_PID.map" ] || [ "$DOTNET_PID" -lt 3 ]; echo $?)" \
	"the perf map is only in the app's private /tmp"

total=$(awk '{ n += $NF } END { print n + 0 }' "$out")
fib=$(awk '/SampleApp\.Fibonacci::Compute/ { n += $NF } END { print n + 0 }' "$out")
diag "samples: $total in all, $fib in fibonacci"
ok "$([ "$total" -ge 200 ]; echo $?)" "enough samples ($total)"
ok "$([ "$fib" -ge $((total / 2)) ]; echo $?)" \
	"fibonacci is in at least half the stacks ($fib of $total)"
# the recursion: Compute calling Compute, outermost first in folded stacks
like "$(cat "$out")" 'SampleApp\.Fibonacci::Compute[^;]*;[^;]*SampleApp\.Fibonacci::Compute' \
	"recursive fibonacci frames, caller before callee"
# ASP.NET Core below it: Kestrel and the hosting pipeline, named through the
# perf map (JIT-compiled) or by module (ReadyToRun code in the framework)
aspnet=$(grep 'SampleApp\.Fibonacci::Compute' "$out" |
	grep -c 'Microsoft\.AspNetCore\.[A-Za-z.]*Kestrel[^;]*;.*SampleApp\.Fibonacci::Compute')
ok "$([ "$aspnet" -gt 0 ]; echo $?)" "Kestrel frames are below fibonacci ($aspnet stacks)"
like "$(grep 'SampleApp\.Fibonacci::Compute' "$out" | head -n 20)" \
	'Microsoft\.AspNetCore\.(Http|Routing|HostFiltering|Hosting)[^;]*;.*SampleApp\.Fibonacci::Compute' \
	"ASP.NET Core request pipeline frames are below fibonacci"
# ReadyToRun code (issue 10): the framework's precompiled frames are named
# from the images themselves, with ReadyToRun left on
ok "$(dotnet_env | grep -q '^DOTNET_ReadyToRun=0'; [ $? -ne 0 ]; echo $?)" \
	"the sample runs with ReadyToRun code in use (no DOTNET_ReadyToRun=0)"
r2r=$(awk '{ n = $NF; k = gsub(/_\[r\]/, "&"); if (k) s += n } END { print s + 0 }' "$out")
like "$(cat "$out")" '(System|Microsoft\.AspNetCore)\.[A-Za-z0-9_.`+<>]*[^;]*_\[r\]' \
	"framework ReadyToRun frames are named (kind R2R; $r2r stacks)"
named=$(awk '{ n = $NF; $NF = ""; k = gsub(/_\[r\]/, "&"); s += k * n } END { print s + 0 }' "$out")
unnamed=$(awk '{ n = $NF; $NF = ""; k = gsub(/\.dll\+0x[0-9a-f]+/, "&"); s += k * n } END { print s + 0 }' "$out")
diag "frames in .dll mappings: $named named, $unnamed unnamed"
ok "$([ $((unnamed * 10)) -le $((named + unnamed)) ] && [ "$named" -gt 0 ]; echo $?)" \
	"unnamed frames in .dll mappings are under 10% ($unnamed of $((named + unnamed)))"
# mixed mode (--unwind tables): JIT code keeps frame pointers and has no
# table, the runtime's and libc's native code have tables; the walk goes
# from one to the other and back, down to the thread's first frame
# (clone3, whose return address is undefined)
sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -q -n 0 -F -p 38 "$DOTNET_URL" &
load2=$!
on_exit "kill $load2"
mixed="$TMPDIR_TEST/mixed.folded"
pod_sidecar "$SIDESCOPE" profile -p "$DOTNET_PID" -F 199 -d 4 --unwind tables -o "$mixed" \
	2>"$TMPDIR_TEST/mixed.err"
ok $? "profile --unwind tables on the .NET sample"
like "$(cat "$TMPDIR_TEST/mixed.err")" "[0-9]+ \\.NET assemblies \\(PE images\\): their code by frame pointer" \
	"the assemblies' code said to go by frame pointers, in one line"
ok "$(grep -c 'no unwind table for .*\.dll' "$TMPDIR_TEST/mixed.err" | grep -qx 0; echo $?)" \
	"and not one line for each assembly"
kill "$load2" 2>/dev/null
mfib=$(awk '/SampleApp\.Fibonacci::Compute/ { n += $NF } END { print n + 0 }' "$mixed")
mroot=$(awk '/SampleApp\.Fibonacci::Compute/ && /;(clone3|__clone3|clone);/ { n += $NF }
	END { print n + 0 }' "$mixed")
froot=$(awk '/SampleApp\.Fibonacci::Compute/ && /;(clone3|__clone3|clone);/ { n += $NF }
	END { print n + 0 }' "$out")
diag "fibonacci stacks from the thread's start: $mroot of $mfib with tables, $froot of $fib by frame pointers"
ok "$([ "$mfib" -ge 100 ] && [ $((mroot * 100)) -ge $((mfib * 90)) ]; echo $?)" \
	"with tables, 90% of the fibonacci stacks go down to the thread's start ($mroot of $mfib)"
like "$(grep 'SampleApp\.Fibonacci::Compute' "$mixed" | head -n 20)" \
	'libcoreclr\.so[^;]*;.*Microsoft\.AspNetCore[^;]*;.*SampleApp\.Fibonacci::Compute' \
	"native runtime frames (tables) below JIT and ReadyToRun frames (frame pointers)"
like "$(cat "$TMPDIR_TEST/mixed.err")" "unwind tables: [0-9]+ objects" "the tables' summary"

# the heaviest stack, for the log
awk '/SampleApp\.Fibonacci::Compute/ { print $NF "\t" $0 }' "$out" | sort -n | tail -n 1 |
	cut -f 2- | tr ';' '\n' | grep -v 'Fibonacci::Compute' | cut -c 1-76 |
	while IFS= read -r l; do diag "  $l"; done

done_testing
