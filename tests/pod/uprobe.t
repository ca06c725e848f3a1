#!/bin/sh
# podspecs/dynamic-tracing.yaml as a real pod: uprobe-trace in the
# least-privilege sidecar traces the app's greet_utf16() and prints its
# UTF-16 argument decoded; with -o, a file named like every capture that
# podman cp (kubectl cp) fetches.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
podman_require
podman_images
ok_or_bail $? "images built"

pod_play "$SIDESCOPE_SRC/podspecs/dynamic-tracing.yaml"
ok_or_bail $? "dynamic-tracing.yaml plays"
pod=$(pod_name_of sidescope-uprobe)
ex() { pod_exec "$pod" sidescope "$@"; }
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
ok $? "the sidecar sees the app"
app=$(ex sidescope ps -n podapp -q)
res=$(ex doctor uprobe 2>&1)
is "$?" 0 "doctor uprobe passes in the least-privilege sidecar (no CAP_SYS_ADMIN)"
like "$res" "PASS  uprobes work: probe attached through a uprobe_multi link" \
	"a real probe attached through a uprobe_multi link"
probe='p:/usr/local/bin/podapp:greet_utf16 "%s", str16(arg1, arg2)'

if ex sidescope uprobe --help >/dev/null 2>&1; then
	res=$(ex uprobe-trace -c 3 -d 20 "$probe" 2>"$TMPDIR_TEST/err")
	is "$?" 0 "uprobe-trace -c 3"
	diag "$res" "$(cat "$TMPDIR_TEST/err")"
	is "$(printf '%s\n' "$res" | grep -c 'héllo wörld ✓')" 3 \
		"three events with the UTF-16 string decoded"
	like "$res" " $app " "events carry the pod PID"

	res=$(ex uprobe-trace podapp -c 2 -d 20 -O /out --json "$probe" 2>&1)
	is "$?" 0 "uprobe-trace NAME -O /out --json"
	# under --json the kubectl cp line is in a JSON progress line on stderr
	f=$(printf '%s\n' "$res" | sed -n "s|.*kubectl cp -c sidescope $pod:\\(/out/[^ ]*\\.json\\) .*|\\1|p")
	like "$f" "^/out/$pod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.json\$" "the file is <pod>-<target>-<pid>-<UTC>.json"
	pm cp "$pod-sidescope:$f" "$TMPDIR_TEST/events.json"
	ok $? "podman cp fetches it"
	like "$(cat "$TMPDIR_TEST/events.json")" "héllo wörld ✓" "with the decoded string"
else
	diag "sidescope uprobe is not available yet: uprobe-trace is checked up to the call"
	res=$(ex uprobe-trace -c 1 "$probe" 2>&1)
	is "$?" 1 "uprobe-trace fails cleanly without 'sidescope uprobe'"
	like "$res" "tracing PID $app \\(podapp\\) with 1 probe" "after finding the app by itself"
fi
ex uprobe-trace podapp >/dev/null 2>&1
is "$?" 2 "no probe: usage error"

done_testing
