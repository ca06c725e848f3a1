#!/bin/sh
# sidescope stacks on JIT runtimes started the ordinary way, as the app of a
# simulated pod: the .NET sample under load shows its request thread in the
# managed fibonacci method (named through the perf map sidescope asks the
# runtime for, switched off again after), under ASP.NET Core's frames; a
# plain Java program shows its methods (the JVM asked for its perf map).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
require_root
require_cmd unshare nsenter curl java javac
require_dotnet_sample
T=$TMPDIR_TEST
pod_start || skip_all "cannot create PID and mount namespaces"

# ---- the .NET sample ---------------------------------------------------------
dotnet_start pod
ok $? "the sample started in the pod (pod PID $DOTNET_PID)"
is "$(dotnet_get '/api/fibonacci?pos=20')" "6765" "fibonacci(20) is right"
sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -q -n 0 -F -p 38 "$DOTNET_URL" &
load=$!
on_exit "kill $load"
sleep 1
pod_sidecar "$SIDESCOPE" stacks -p "$DOTNET_PID" --every 0.3 -c 6 -o "$T/net.txt" 2> "$T/net.err"
ok $? "stacks --every 0.3 -c 6 of the sample under load"
kill "$load" 2>/dev/null
like "$(cat "$T/net.err")" "\\(.NET\\): its perf map switched on for this capture, off again at its end" \
	"the runtime was asked for its perf map, and left as it was"
n=$(grep -c 'SampleApp\.Fibonacci::Compute' "$T/net.txt")
diag "$n frames of SampleApp.Fibonacci::Compute in 6 snapshots"
ok "$([ "$n" -gt 0 ]; echo $?)" "a request thread is in the managed fibonacci method, by name"
like "$(awk '/^$/ { p = 0 } /SampleApp\.Fibonacci::Compute/ { p = 1 } p' "$T/net.txt")" \
	'Microsoft\.AspNetCore\.' "with ASP.NET Core's frames below it"
like "$(cat "$T/net.txt")" '"\.NET ThreadPool|\.NET TP Worker|\.NET Long Running' \
	"the runtime's threads by their names"

# ---- a plain Java program -----------------------------------------------------
mkdir -p "$T/classes"
javac -d "$T/classes" "$SIDESCOPE_SRC/tests/progs/HotJava.java" 2> "$T/javac.err"
ok $? "javac compiled tests/progs/HotJava.java" || diag "$(cat "$T/javac.err")"
rm -f "$T/jvm.pid"
# shellcheck disable=SC2016
pod_app sh -c 'echo "$$" > "$0"; exec "$@"' "$T/jvm.pid" java -cp "$T/classes" HotJava /tmp/jready
wait_for_file "$T/jvm.pid" 20
JVM=$(cat "$T/jvm.pid")
JHOST=$(pod_host_pid "$JVM")
on_exit "kill -9 $JHOST"
wait_for_file "/proc/$JHOST/root/tmp/jready" 60
ok $? "HotJava started as the pod's app (pod PID $JVM), with no flag"
pod_sidecar "$SIDESCOPE" stacks -p "$JVM" > "$T/jvm.txt" 2> "$T/jvm.err"
ok $? "stacks -p of the JVM"
like "$(cat "$T/jvm.err")" "\\(JVM\\): its perf map written" "the JVM was asked for its perf map"
like "$(cat "$T/jvm.txt")" 'HotJava\.(hotAlpha|hotBeta|main)' "its thread is in HotJava's methods, by name"
like "$(cat "$T/jvm.txt")" '"C2 CompilerThre|"VM Thread"' "the JVM's own threads"
done_testing
