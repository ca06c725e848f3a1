#!/bin/sh
# uprobes on the real .NET sample in a simulated pod: the ReadyToRun body of
# the static SampleApp.EchoProvider.Echo(string) in SampleApp.dll, probed
# from the sidecar's side, prints every string the test sends through
# /api/echo, non-ASCII included, exactly. First by raw file offset (from the
# r2rmap crossgen2 wrote), then by method name (sidescope's ReadyToRun
# reader), then the reason for the sample's settings: with tiered
# compilation left on, the probe stops firing once Echo is recompiled.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
require_root
require_cmd unshare nsenter curl od
require_dotnet_sample
"$SIDESCOPE" uprobe --help >/dev/null 2>&1 || skip_all "needs 'sidescope uprobe'"

LOAD="$SIDESCOPE_SRC/examples/dotnet/load.sh"
# what sidescope uprobe prints on stderr once its probes are attached
ATTACHED='^sidescope uprobe: tracing [0-9]+ probes? in PID'
# What the test sends: ASCII, accented Latin, CJK, Hangul, emoji with
# surrogate pairs, a ZWJ sequence, URL metacharacters, one character.
set -- \
	"hello, sidescope" \
	"déjà vu: café crème, naïve façade" \
	"Grüße aus Köln – ½ € für Ø" \
	"你好，世界！日本語のテキスト" \
	"한국어 텍스트" \
	"rocket 🚀 thumbs 👍🏽 family 👨‍👩‍👧" \
	"a+b=c & 100% ?#/" \
	"x"

# Lines of $1 that end with " $2": the probe's formatted text ends a line.
count_suffix() {
	awk -v t=" $2" 'length($0) >= length(t) && substr($0, length($0) - length(t) + 1) == t' "$1" | wc -l
}

# probe LABEL SPEC TEXT...: trace SPEC as the sidecar while the texts are
# echoed; the output goes to $TMPDIR_TEST/LABEL.out. The tracer says on
# stderr when its probes are attached (its stdout, a file here, is
# buffered); a marker ends the texts, then SIGTERM, which ends the capture
# with every queued event written.
probe() {
	_label=$1 _spec=$2
	shift 2
	_out="$TMPDIR_TEST/$_label.out"
	_err="$TMPDIR_TEST/$_label.err"
	# shellcheck disable=SC2086 # PROBE_OPTS: options, split on blanks
	sidecar_bg "$TMPDIR_TEST/$_label.pid" "$SIDESCOPE" uprobe -p "$DOTNET_PID" $PROBE_OPTS \
		"$_spec" >"$_out" 2>"$_err"
	_tracer=$!
	on_exit "kill $_tracer"
	if ! wait_for_match "$_err" "$ATTACHED" 20 || ! kill -0 "$_tracer" 2>/dev/null; then
		diag "the tracer did not start:" "$(cat "$_err")"
		sidecar_signal "$TMPDIR_TEST/$_label.pid" TERM 2>/dev/null
		wait "$_tracer"
		return 1
	fi
	sh "$LOAD" -q -E "$DOTNET_URL" "$@"
	ok $? "$_label: every echo reply equals what was sent"
	sh "$LOAD" -q -E "$DOTNET_URL" "end-$_label"
	sidecar_signal "$TMPDIR_TEST/$_label.pid" TERM
	wait "$_tracer"
	ok $? "$_label: the tracer exits 0 on SIGTERM"
	[ -n "$PROBE_OPTS" ] ||
		is "$(count_suffix "$_out" "end-$_label")" 1 "$_label: the last event is there too"
}
PROBE_OPTS=""

# check LABEL TEXT...: each text appears exactly once, decoded to UTF-8.
check() {
	_out="$TMPDIR_TEST/$1.out"
	shift
	for _t in "$@"; do
		is "$(count_suffix "$_out" "$_t")" 1 "$(basename "$_out" .out): \"$_t\" printed once, exactly"
	done
}

pod_start || skip_all "cannot create PID and mount namespaces"
dotnet_start pod
ok $? "the sample started in the pod"
diag "app: pid $DOTNET_PID in the pod, $DOTNET_HOST_PID on the host, $DOTNET_URL"
dll="$DOTNET_APP_DLL"

# 1. by file offset: the uprobe machinery and dotnet_string on real strings
off=$(dotnet_r2r_offset 'SampleApp.EchoProvider::Echo(')
ok $? "crossgen2's r2rmap gives Echo's file offset ($off)"
m=$("$SIDESCOPE" dotnet-methods "$dll" SampleApp.EchoProvider.Echo 2>&1 | awk 'NR == 2 { print "0x" $2 }')
is "$m" "$off" "sidescope's ReadyToRun reader and crossgen2 agree on Echo's file offset"
if probe offset "p:$dll:$off \"%s\", dotnet_string(arg1)" "$@"; then
	check offset "$@"
	is "$(grep -v -e ' end-offset$' "$TMPDIR_TEST/offset.out" | grep -c .)" \
		"$#" "offset: one line per call, nothing else"
else
	fail "offset: the probe on Echo's ReadyToRun code fired"
fi

# 2. by name, as a user writes it: sidescope reads the ReadyToRun image
if probe name "p:$dll:SampleApp.EchoProvider.Echo \"%s\", dotnet_string(arg1)" "$@"; then
	check name "$@"
else
	fail "name: SampleApp.EchoProvider.Echo resolved by name and probed"
	diag "$(cat "$TMPDIR_TEST/name.err")"
fi

# 2b. with which strings and from where Echo is called, counted in BPF:
# every text once, decoded from the .NET string; the callers' frames named
PROBE_OPTS="--stacks --by dotnet_string(arg1) --top 50"
if probe agg "p:$dll:SampleApp.EchoProvider.Echo" "$@"; then
	for t in "$@" end-agg; do
		is "$(awk -v t="$t" '$0 == sprintf("%10d  \"%s\"", 1, t)' "$TMPDIR_TEST/agg.out" | wc -l)" 1 \
			"--by dotnet_string(arg1): \"$t\" counted once"
	done
	like "$(cat "$TMPDIR_TEST/agg.out")" "^$(($# + 1)) hits over" "--stacks: every call's stack"
	like "$(awk '$NF ~ /^SampleApp\.EchoProvider\.Echo/ { print $2 }' "$TMPDIR_TEST/agg.out")" "^$(($# + 1))\$" \
		"--stacks: Echo (ReadyToRun code) is the leaf of every stack"
	diag "$(head -12 "$TMPDIR_TEST/agg.out")"
else
	fail "agg: --stacks --by on Echo"
	diag "$(cat "$TMPDIR_TEST/agg.err")"
fi
PROBE_OPTS=""

# 3. why the sample turns tiered compilation off: with it on, Echo is
# recompiled into JIT memory after about 30 calls and the probe on its
# ReadyToRun body goes quiet. The native tracepoint wrapper the app calls
# from Echo (an ELF function, always hit) tells when the calls went past.
kill "$DOTNET_HOST_PID"
# (its perf map: the test's way to see Echo recompiled)
dotnet_start pod DOTNET_TieredCompilation=1 DOTNET_PerfMapEnabled=1
ok $? "the sample restarted with tiered compilation on"
tp="$DOTNET_APP_DIR/libsampleapp-tp.so"
out="$TMPDIR_TEST/tiered.out"
sidecar_bg "$TMPDIR_TEST/tiered.pid" "$SIDESCOPE" uprobe -p "$DOTNET_PID" \
	"p:$dll:$off \"r2r %s\", dotnet_string(arg1)" \
	"p:$tp:sampleapp_tp_echo \"native %s\", str(arg1)" >"$out" 2>"$TMPDIR_TEST/tiered.err"
tracer=$!
on_exit "kill $tracer"
wait_for_match "$TMPDIR_TEST/tiered.err" "$ATTACHED" 20
ok $? "tiered: the tracer attached"
sh "$LOAD" -q -E "$DOTNET_URL" "before tier-up"
# call Echo until the runtime's perf map lists it: it was recompiled
map="/proc/$DOTNET_HOST_PID/root/tmp/perf-$DOTNET_PID.map"
i=0
until grep -q 'SampleApp.EchoProvider::Echo' "$map" || [ "$i" -gt 100 ]; do
	sh "$LOAD" -q -E "$DOTNET_URL" w w w w w w w w w w
	i=$((i + 1))
	sleep 0.1
done
ok "$(grep -q 'SampleApp.EchoProvider::Echo' "$map"; echo $?)" "tiered: Echo was recompiled (perf map)"
sh "$LOAD" -q -E "$DOTNET_URL" "after tier-up"
sidecar_signal "$TMPDIR_TEST/tiered.pid" TERM
wait "$tracer"
is "$(count_suffix "$out" "r2r before tier-up")" 1 "tiered: the probe fired before Echo was recompiled"
is "$(count_suffix "$out" "native after tier-up")" 1 "tiered: the call went through the native wrapper"
is "$(count_suffix "$out" "r2r after tier-up")" 0 "tiered: the ReadyToRun body was not run any more"

done_testing
