#!/bin/sh
# sidescope uprobe takes .NET methods by name in ReadyToRun images: the R2R
# sample (built by make with crossgen2) spinning in its precompiled
# Fibonacci.Compute(int), probed by name with its int argument; ambiguous
# and JIT-only names refused with the reason.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd dotnet
T=$TMPDIR_TEST
DLL="$SIDESCOPE_BUILD/r2r/publish/R2RSample.dll"
[ -f "$DLL" ] || skip_all "no R2R sample (needs the .NET SDK; make builds it)"
"$SIDESCOPE" uprobe --help >/dev/null 2>&1 || skip_all "needs 'sidescope uprobe'"

# tiering off: the precompiled body stays the one that runs
DOTNET_TieredCompilation=0 DOTNET_CLI_TELEMETRY_OPTOUT=1 \
	dotnet "$DLL" spin "$T/app.ready" >/dev/null &
app=$!
on_exit "kill $app"
wait_for_file "$T/app.ready" 30
ok $? "the R2R sample started"

"$SIDESCOPE" uprobe -p "$app" -c 20 -d 20 \
	"p:$DLL:SampleApp.Deep.Names.Fibonacci.Compute \"pos=%d\", arg1" >"$T/out" 2>"$T/err"
is "$?" 0 "probe on Fibonacci.Compute by name"
is "$(grep -c 'SampleApp.Deep.Names.Fibonacci.Compute pos=[0-9]' "$T/out")" 20 \
	"20 events with the static method's int argument"
# Compute(22) recurses down to 0 and 1; every argument is within 0..22
is "$(awk '{ sub(/.*pos=/, ""); if ($1 < 0 || $1 > 22) bad++ } END { print bad + 0 }' "$T/out")" 0 \
	"arguments are Fibonacci positions (0..22)"

"$SIDESCOPE" uprobe -p "$app" -d 1 \
	"p:$DLL:EchoProvider.Add(System.Int64,System.Int64)" >/dev/null 2>"$T/err"
is "$?" 0 "a parameter list picks one overload"
"$SIDESCOPE" uprobe -p "$app" -d 1 "p:$DLL:SampleApp.EchoProvider.Add" >/dev/null 2>"$T/err"
is "$?" 1 "an ambiguous name fails"
like "$(cat "$T/err")" 'Add\(System\.Int32,System\.Int32\).*' "the overloads are listed"
"$SIDESCOPE" uprobe -p "$app" -d 1 "p:$DLL:SampleApp.EchoProvider.JitOnly" >/dev/null 2>"$T/err"
is "$?" 1 "a method without precompiled code fails"
like "$(cat "$T/err")" 'no precompiled code' "and says why"
done_testing
