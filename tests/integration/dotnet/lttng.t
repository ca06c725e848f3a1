#!/bin/sh
# LTTng on the real .NET sample in a simulated pod: the app (own mount
# namespace, started before any session daemon) emits its events through
# its tracepoint provider; scripts/lttng-capture, run as the sidecar,
# starts the daemon, waits for the app to register over the shared
# app-socket directory (the app's /var/run/lttng) and /dev/shm, and records
# them; babeltrace2 reads them.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
require_root
require_cmd unshare nsenter curl lttng lttng-sessiond babeltrace2
require_dotnet_sample
CAPTURE="$SIDESCOPE_SRC/scripts/lttng-capture"
[ -f "$CAPTURE" ] || skip_all "needs scripts/lttng-capture"
[ -f "$DOTNET_APP_DIR/libsampleapp-tp.so" ] || skip_all "the sample's tracepoint provider is not built"

# The pod's emptyDirs as the podspecs have them: the sidecar's own
# /var/run/lttng, the app-socket directory (the sidecar's /run/lttng-apps,
# the app's /var/run/lttng) and /dev/shm, seen by nothing else on the
# machine. The session daemon lives in the pod's PID namespace and ends
# with it.
pod_start --share-lttng || skip_all "cannot create PID and mount namespaces"
pass "the pod has the LTTng layout of the podspecs"
dotnet_start pod
ok $? "the sample started in the pod, before any session daemon"
diag "app: pid $DOTNET_PID in the pod, $DOTNET_HOST_PID on the host, $DOTNET_URL"
grep -q 'liblttng-ust\.so' "/proc/$DOTNET_HOST_PID/maps"
ok $? "the app loaded lttng-ust through its tracepoint provider"

outdir="$TMPDIR_TEST/trace"
sidecar_bg "$TMPDIR_TEST/capture.pid" sh "$CAPTURE" -p "$DOTNET_PID" -d 120 -O "$outdir" \
	>"$TMPDIR_TEST/capture.out" 2>"$TMPDIR_TEST/capture.err"
capture=$!
on_exit "kill $capture"
# the session is recording once lttng lists it as active
i=0
until pod_sidecar lttng list 2>/dev/null | grep -q '\[active\]'; do
	i=$((i + 1))
	if [ "$i" -gt 300 ] || ! kill -0 "$capture" 2>/dev/null; then
		diag "no active session:" "$(cat "$TMPDIR_TEST/capture.out" "$TMPDIR_TEST/capture.err")"
		break
	fi
	sleep 0.1
done
ok "$(kill -0 "$capture" 2>/dev/null; echo $?)" "lttng-capture is recording"

set -- "hello, sidescope" "déjà vu: café crème" "你好，世界" "rocket 🚀 👍🏽"
sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -q -p 20 "$DOTNET_URL" "$@"
ok $? "load on both endpoints"

sidecar_signal "$TMPDIR_TEST/capture.pid" TERM
wait "$capture"
ok $? "lttng-capture ends cleanly on SIGTERM"
diag "$(cat "$TMPDIR_TEST/capture.out" "$TMPDIR_TEST/capture.err")"

text="$TMPDIR_TEST/trace.txt"
babeltrace2 "$outdir" >"$text" 2>"$TMPDIR_TEST/bt.err"
ok $? "babeltrace2 reads the trace"
for ev in request_start request_stop echo; do
	n=$(grep -c "sampleapp:$ev:" "$text")
	ok "$([ "$n" -gt 0 ]; echo $?)" "sampleapp:$ev events recorded ($n)"
done
is "$(grep 'sampleapp:request_start:' "$text" | grep -c 'path = "/api/fibonacci"')" 1 \
	"one request_start for /api/fibonacci"
is "$(grep 'sampleapp:request_stop:' "$text" | grep 'path = "/api/echo"' | grep -c 'status = 200')" \
	"$#" "one request_stop with status 200 per echo"
for t in "$@"; do
	is "$(grep 'sampleapp:echo:' "$text" | grep -cF "text = \"$t\"")" 1 "echo event with \"$t\""
done
unlike "$(grep 'sampleapp:' "$text" | grep -v "vpid = $DOTNET_PID," | head -n 3)" . \
	"every event carries the app's pod PID as vpid"

if "$SIDESCOPE" ctf --help >/dev/null 2>&1; then
	summary=$("$SIDESCOPE" ctf summary "$outdir" 2>&1)
	ok $? "sidescope ctf summary reads the trace"
	like "$summary" 'sampleapp:echo' "the summary lists sampleapp:echo"
fi

# The runtime's own events need libcoreclrtraceptprovider.so to load, and
# Microsoft's builds link it against liblttng-ust.so.0.
prov=$(dirname "$(dotnet --list-runtimes | awk '/^Microsoft.NETCore.App 10\./ { v = $2; p = $3 } END { gsub(/[][]/, "", p); print p "/" v "/x" }')")/libcoreclrtraceptprovider.so
if [ -f "$prov" ] && ldd "$prov" | grep -q 'liblttng-ust\.so\.[0-9]* => not found'; then
	diag "runtime events unavailable here: $(ldd "$prov" | grep 'not found' | tr -s '\t ' ' ')"
fi

done_testing
