#!/bin/sh
# shellcheck disable=SC2016 # commands for the shell in the container
# podspecs/cpu-profiling.yaml as a real pod (podman, runc): the image built
# from the Dockerfile, the least-privilege sidecar (three capabilities, a
# read-only root filesystem and /tmp, the podspecs' own seccomp profile)
# next to the test app (a JIT-like process with a perf map). What a user
# does through kubectl exec: doctor, sidescope ps, cpu-profile, kubectl cp;
# then SIGTERM ends the idle sidecar at once.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
podman_require
require_pprof
podman_images
ok_or_bail $? "images built (sidescope from the Dockerfile, test app)"
size=$(pm image inspect --format '{{.Size}}' "$SIDESCOPE_IMAGE")
base=$(pm image inspect --format '{{.Size}}' "$BASE_IMAGE")
diag "image: $((size / 1000000)) MB, $(((size - base) / 1000000)) MB over the Debian base"
ok "$(pm run --rm "$SIDESCOPE_IMAGE" sh -c '! command -v cc && ! command -v clang && ! ls /usr/src/linux-headers* >/dev/null 2>&1'; echo $?)" \
	"the runtime image has no compiler and no kernel headers"

missing=$(pm run --rm "$SIDESCOPE_IMAGE" sh -c 'for c in sidescope doctor cpu-profile uprobe-trace capture-loop \
	busybox lttng-sessiond lttng babeltrace2 curl flock; do command -v "$c" >/dev/null || echo "$c"; done
	[ -f /usr/local/lib/sidescope/common.sh ] || echo common.sh')
is "$missing" "" "the image has sidescope, the scripts and their tools"

pod_play "$SIDESCOPE_SRC/podspecs/cpu-profiling.yaml"
ok_or_bail $? "cpu-profiling.yaml plays"
pod=$(pod_name_of sidescope-cpu)
ex() { pod_exec "$pod" sidescope "$@"; }
# ok when the command fails
fails() { _d=$1; shift; if "$@" >/dev/null 2>&1; then fail "$_d"; else pass "$_d"; fi; }
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
ok $? "the sidecar sees the app's process"
app=$(ex sidescope ps -n podapp -q)
is "$(ex sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)" 000000c000080000 \
	"the sidecar has exactly CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE"
is "$(ex sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)" 2 \
	"a seccomp filter: podspecs/seccomp/sidescope.json from the annotation"
res=$(ex unshare -U true 2>&1)
like "$res" "Operation not permitted" "the profile refuses what the sidecar never does (unshare)"
if [ "$(uname -m)" = x86_64 ]; then
	# ptrace(PTRACE_TRACEME), system call 101: the runtime's default profile
	# allows it, this one does not; and bpf() works (doctor below)
	is "$(ex perl -e 'print syscall(101, 0, 0, 0, 0) == -1 ? $! + 0 : 0')" 1 \
		"and ptrace(), which a default profile allows: the profile is ours"
fi
fails "the root filesystem is read-only" ex sh -c 'echo x > /usr/local/x'
fails "the app's /tmp is read-only in the sidecar" ex sh -c 'echo x > /tmp/x'
ex sh -c 'echo x > /run/sidescope-probe && rm /run/sidescope-probe && echo x > /out/probe && rm /out/probe'
ok $? "its own /run and /out are writable"

res=$(ex doctor profile 2>&1)
is "$?" 0 "doctor profile passes in the least-privilege pod"
diag "$res"
like "$res" "PASS  perf maps visible for PIDs $app" "the app's perf map is visible"

# every thread's stack now: the task iterator and the catch on a CPU work
# with these capabilities and this seccomp profile (no ptrace)
res=$(ex sidescope stacks -n podapp 2>&1)
is "$?" 0 "sidescope stacks -n podapp in the least-privilege pod"
like "$res" "PodApp\\.Jit::Spin\\(\\)  \\(\\[jit\\]\\)" "its thread in its JIT frame, named by the perf map"
like "$res" "jit_driver  \\(podapp\\)" "over its native frames"

if ex sidescope profile --help >/dev/null 2>&1; then
	res=$(ex cpu-profile -d 3 2>&1)
	is "$?" 0 "cpu-profile -d 3"
	diag "$res"
	svg=$(printf '%s\n' "$res" | sed -n "s|^kubectl cp -c sidescope $pod:\\(/out/.*\\.svg\\) .*|\\1|p")
	like "$svg" "^/out/$pod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.svg\$" "kubectl cp line for <pod>-<target>-<pid>-<UTC>.svg"
	base=${svg%.svg}
	folded=$(ex cat "$base.folded")
	like "$folded" "PodApp\\.Jit::Spin\\(\\)" "folded stacks hold the JIT frame from the perf map"
	like "$folded" "run_app" "and the app's native frames"
	mkdir -p "$TMPDIR_TEST/fetched"
	pm cp "$pod-sidescope:$svg" "$TMPDIR_TEST/fetched/" && pm cp "$pod-sidescope:$base.pb.gz" "$TMPDIR_TEST/fetched/"
	ok $? "podman cp (kubectl cp) fetches the files"
	f="$TMPDIR_TEST/fetched/$(basename "$svg")"
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$f"
		ok $? "the flame graph is well-formed SVG"
	fi
	like "$(cat "$f")" "PodApp\\.Jit::Spin" "the flame graph names the JIT frame"
	like "$("$PPROF" -top "$TMPDIR_TEST/fetched/$(basename "$base").pb.gz" 2>&1)" "PodApp\\.Jit::Spin" \
		"pprof reads the profile"

	# SIGTERM to cpu-profile (what Ctrl-C or a pod shutdown sends) ends the
	# capture early with every output written
	ex cpu-profile -d 0 -O /out/term >"$TMPDIR_TEST/term.out" 2>&1 &
	cpb=$!
	on_exit "kill $cpb"
	# the capture itself: sidescope profile (the script also asks sidescope
	# plumbing questions, which end at once)
	pod_wait_exec 60 "$pod" sidescope sh -c 'for p in $(sidescope ps -n sidescope -q); do
		tr "\0" " " < /proc/$p/cmdline | grep -q " profile " && exit 0; done; exit 1'
	ok $? "cpu-profile -d 0 runs until stopped" || diag "$(cat "$TMPDIR_TEST/term.out")"
	ex sh -c 'kill -TERM $(sidescope ps -n cpu-profile -q)'
	wait "$cpb"
	is "$?" 0 "SIGTERM: cpu-profile ends with status 0"
	is "$(ex sh -c 'ls /out/term | sed "s/.*Z\.//" | sort | tr "\n" " "')" "folded pb.gz svg " \
		"and leaves all three files"

	# -o FILE: that file alone; -o DIR: refused with the fix
	ex mkdir -p /out/one
	res=$(ex cpu-profile -n podapp -d 1 -o /out/one/p.svg 2>&1)
	is "$?" 0 "cpu-profile -n NAME -o FILE"
	is "$(ex ls /out/one)" "p.svg" "writes that file alone"
	like "$res" "kubectl cp -c sidescope $pod:/out/one/p.svg \\./p\\.svg" "and prints its kubectl cp line"
	res=$(ex cpu-profile -d 1 -o /out/one 2>&1)
	is "$?" 2 "cpu-profile -o DIR: exit 2"
	like "$res" "^cpu-profile: error: '/out/one' is a directory; the output directory is -O DIR" "says -O DIR"
else
	# 'sidescope profile' is not on this branch yet: what exists is checked
	diag "sidescope profile is not available yet: cpu-profile is checked up to the call"
	res=$(ex cpu-profile -d 1 2>&1)
	is "$?" 1 "cpu-profile fails cleanly without 'sidescope profile'"
	like "$res" "profiling PID $app \\(podapp\\)" "after finding the only app process by itself"
fi

res=$(ex cpu-profile no-such-name 2>&1)
is "$?" 1 "an unknown target name fails"
like "$res" "no process named 'no-such-name'" "and says so"
ex cpu-profile -d x >/dev/null 2>&1
is "$?" 2 "a bad option value exits 2"

t0=$(date +%s)
pm stop -t 20 "$pod-sidescope" >/dev/null
ok $? "podman stop (SIGTERM) the idle sidecar"
ok "$([ $(($(date +%s) - t0)) -le 3 ]; echo $?)" "it ends at once"
is "$(pm inspect --format '{{.State.ExitCode}}' "$pod-sidescope")" 0 "with status 0"

done_testing
