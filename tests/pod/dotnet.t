#!/bin/sh
# shellcheck disable=SC2016
# The .NET sample as users deploy it: the sample image (built from the
# machine's .NET runtime by build-local-image) and the sidescope image from
# the Dockerfile, played with examples/dotnet/deployment.yaml under podman.
# Everything runs through 'podman exec' into the sidecar, as 'kubectl exec'
# would: cpu-profile, uprobe-trace and lttng-capture against the app.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
[ -f "$SIDESCOPE_SRC/tests/lib/podman.sh" ] || skip_all "needs tests/lib/podman.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
podman_require
require_dotnet_sample

SAMPLE_IMAGE=localhost/sidescope-dotnet-sample:test
SAMPLE_IMAGE_IN_SPEC=registry.example.com/sidescope-dotnet-sample:latest
SPEC="$SIDESCOPE_SRC/examples/dotnet/deployment.yaml"
URL=http://127.0.0.1:8080

podman_images
ok $? "the sidescope image builds from the Dockerfile"
sh "$SIDESCOPE_SRC/examples/dotnet/build-local-image" -b "$SIDESCOPE_BUILD" -t "$SAMPLE_IMAGE" \
	>"$TMPDIR_TEST/sample-image.log" 2>&1
rc=$?
ok "$rc" "the sample image builds from the installed runtime"
[ "$rc" -eq 0 ] || diag "$(tail -20 "$TMPDIR_TEST/sample-image.log")"

# The deployment as users apply it, with the two test images. One change:
# podman makes emptyDirs root-owned 0755 where Kubernetes makes them 0777,
# so the app's non-root user could not create lttng-ust's wait file in
# /dev/shm and an app started before the session daemon would never
# register; the app runs as root here.
pod_play "$SPEC" "s|$SAMPLE_IMAGE_IN_SPEC|$SAMPLE_IMAGE|g" "s|runAsNonRoot: true|runAsUser: 0|"
ok $? "examples/dotnet/deployment.yaml plays"
pod=$(pod_name_of sampleapp)
sc() { pod_exec "$pod" sidescope "$@"; }

# the sidecar's root is read-only: the load script goes to its own /run
podman --runtime runc cp "$SIDESCOPE_SRC/examples/dotnet/load.sh" "$pod-sidescope:/run/load.sh"
pod_wait_exec 60 "$pod" sidescope sh /run/load.sh -q -n 1 -p 10 -E "$URL" ready
ok $? "the app answers the sidecar on localhost:8080"
out=$(sc doctor 2>&1)
rc=$?
ok "$rc" "doctor passes in the sample's pod"
[ "$rc" -eq 0 ] || diag "$out"
app=$(sc sidescope ps -q --others -n dotnet)
like "$app" '^[0-9]+$' "sidescope ps finds the app's dotnet process (PID $app)"

# --- CPU: cpu-profile under fibonacci load ---
sc sh -c 'echo "$$" > /run/load.pid; exec sh /run/load.sh -q -n 0 -F -p 38 http://127.0.0.1:8080' &
load=$!
on_exit "kill $load"
sc cpu-profile dotnet -d 5 -O /out/cpu >"$TMPDIR_TEST/cpu.log" 2>&1
rc=$?
ok "$rc" "cpu-profile runs with the deployment's capabilities"
[ "$rc" -eq 0 ] || diag "$(cat "$TMPDIR_TEST/cpu.log")"
sc sh -c 'kill "$(cat /run/load.pid)"'
wait "$load"
folded=$(sc sh -c 'cat /out/cpu/*.folded')
like "$folded" 'SampleApp\.Fibonacci::Compute' "the flame graph's stacks name the managed fibonacci method"
like "$folded" 'Kestrel[^;]*;.*SampleApp\.Fibonacci::Compute' "with Kestrel frames below it"
like "$(cat "$TMPDIR_TEST/cpu.log")" 'kubectl cp' "cpu-profile prints how to fetch the files"
mkdir -p "$TMPDIR_TEST/fetched"
podman --runtime runc cp "$pod-sidescope:/out/cpu" "$TMPDIR_TEST/fetched/"
ok "$(ls "$TMPDIR_TEST"/fetched/cpu/*.svg >/dev/null 2>&1; echo $?)" "the SVG flame graph is fetched with cp"
like "$(cat "$TMPDIR_TEST"/fetched/cpu/*.svg 2>/dev/null)" 'Fibonacci' "the SVG shows fibonacci"

# --- uprobe: uprobe-trace on Echo by name ---
set -- "hello, sidescope" "déjà vu: café crème" "你好，世界！" "한국어" "rocket 🚀 👍🏽"
probe='p:/app/SampleApp.dll:SampleApp.EchoProvider.Echo "%s", dotnet_string(arg1)'
sc sh -c 'echo "$$" > /run/uprobe.pid; exec uprobe-trace dotnet "$0"' "$probe" \
	>"$TMPDIR_TEST/uprobe.out" 2>"$TMPDIR_TEST/uprobe.err" &
tracer=$!
on_exit "kill $tracer"
# sidescope says on stderr when the probe is attached (stdout is buffered)
wait_for_match "$TMPDIR_TEST/uprobe.err" '^sidescope uprobe: tracing [0-9]+ probes? in PID' 30
rc=$?
ok "$rc" "uprobe-trace attached to Echo by name"
[ "$rc" -eq 0 ] || diag "$(cat "$TMPDIR_TEST/uprobe.err")"
sc sh /run/load.sh -q -E "$URL" "$@" end
# every call has returned: SIGTERM ends the trace with every event written
sc sh -c 'kill -TERM "$(cat /run/uprobe.pid)"'
wait "$tracer"
is "$(grep -c ' end$' "$TMPDIR_TEST/uprobe.out")" 1 "uprobe-trace printed the last event too"
for t in "$@"; do
	is "$(grep -cF " $t" "$TMPDIR_TEST/uprobe.out")" 1 "uprobe-trace printed \"$t\""
done

# --- LTTng: lttng-capture started after the app ---
sc sh -c 'echo "$$" > /run/lttng.pid; exec lttng-capture -n dotnet -d 120 -O /out/trace' \
	>"$TMPDIR_TEST/lttng.out" 2>&1 &
capture=$!
on_exit "kill $capture"
i=0
until sc lttng list 2>/dev/null | grep -q '\[active\]' || [ "$i" -gt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
ok "$([ "$i" -le 300 ]; echo $?)" "lttng-capture recording (the app registered)"
sc sh /run/load.sh -q -p 15 "$URL" "$@"
sc sh -c 'kill -TERM "$(cat /run/lttng.pid)"'
wait "$capture"
ok $? "lttng-capture ends cleanly"
diag "$(cat "$TMPDIR_TEST/lttng.out")"
trace=$(sc babeltrace2 /out/trace 2>&1)
ok $? "babeltrace2 in the sidecar reads the trace"
is "$(printf '%s\n' "$trace" | grep 'sampleapp:request_start:' | grep -c '/api/fibonacci')" 1 \
	"the fibonacci request's start event"
for t in "$@"; do
	is "$(printf '%s\n' "$trace" | grep 'sampleapp:echo:' | grep -cF "text = \"$t\"")" 1 \
		"the echo event with \"$t\""
done
n=$(printf '%s\n' "$trace" | grep -c "sampleapp:.*vpid = $app,")
ok "$([ "$n" -gt 0 ]; echo $?)" "the app's events carry its PID as the pod shows it ($n)"
is "$(printf '%s\n' "$trace" | grep 'sampleapp:' | grep -vc "vpid = $app,")" 0 \
	"and no event another one"

done_testing
