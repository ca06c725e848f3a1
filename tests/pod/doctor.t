#!/bin/sh
# doctor in real pods that lack what sidescope needs: the cpu-profiling
# podspec without shareProcessNamespace, and without the added
# capabilities (a sidecar the app could then ptrace). Each time doctor
# fails and names the fix; the LTTng podspec (CAP_SYS_PTRACE alone) passes
# 'doctor lttng', the layout it checks included; with the sidecar mounting
# the app's LTTng volume at /var/run/lttng, as podspecs did before, it fails.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
podman_require
podman_images
ok_or_bail $? "images built"

# 1. no shared PID namespace
pod_play "$SIDESCOPE_SRC/podspecs/cpu-profiling.yaml" \
	's/sidescope-cpu/sidescope-nopidns/g' 's/shareProcessNamespace: true/shareProcessNamespace: false/'
ok $? "pod without shareProcessNamespace plays"
pod=$(pod_name_of sidescope-nopidns)
res=$(pod_exec "$pod" sidescope doctor profile 2>&1)
is "$?" 1 "doctor fails"
like "$res" "FAIL  no other container's process is visible" "no app process visible"
like "$res" "fix: set shareProcessNamespace: true in the pod spec" "fix: shareProcessNamespace"
pm kube down "$POD_SPEC" >/dev/null 2>&1

# 2. no added capabilities (and the default seccomp profile)
pod_play "$SIDESCOPE_SRC/podspecs/cpu-profiling.yaml" \
	's/sidescope-cpu/sidescope-nocaps/g' 's/add: \["BPF", "PERFMON", "SYS_PTRACE"\]/add: []/' \
	'/container.seccomp.security.alpha.kubernetes.io/d' '/seccompProfile:/,/localhostProfile:/d'
ok $? "pod without the capabilities plays"
pod=$(pod_name_of sidescope-nocaps)
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
res=$(pod_exec "$pod" sidescope doctor profile 2>&1)
is "$?" 1 "doctor fails"
diag "$res"
like "$res" "FAIL  capabilities: missing CAP_BPF CAP_PERFMON CAP_SYS_PTRACE" "names the missing capabilities"
like "$res" 'fix: securityContext.capabilities.add: \["BPF", "PERFMON", "SYS_PTRACE"\]' "and the securityContext fix"
like "$res" "WARN  seccomp filter active" "warns about the seccomp filter"
like "$res" "seccompProfile: Localhost with podspecs/seccomp/sidescope.json on the node, or type: Unconfined" \
	"with the seccomp fix"
like "$res" "FAIL  PIDs .* of another container may hold every capability this sidecar has" \
	"a sidecar without capabilities is one the app could ptrace"
pm kube down "$POD_SPEC" >/dev/null 2>&1

# 3. LTTng needs no capability
pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml"
ok $? "lttng.yaml plays"
pod=$(pod_name_of sidescope-lttng)
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
res=$(pod_exec "$pod" sidescope doctor lttng 2>&1)
is "$?" 0 "doctor lttng passes with no capabilities"
diag "$res"
like "$res" "PASS  LTTng control directory /var/run/lttng: this sidecar's own" "the control directory is private"
like "$res" "PASS  LTTng app-socket directory /run/lttng-apps is the /var/run/lttng of PIDs" \
	"the app-socket directory is the app's /var/run/lttng"
like "$res" "PASS  no other container can ptrace this one" "the app cannot ptrace the sidecar"
unlike "$res" "capabilities" "and no capability is checked"
is "$(pod_exec "$pod" sidescope sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)" 0000000000080000 \
	"the LTTng sidecar has CAP_SYS_PTRACE only"
pm kube down "$POD_SPEC" >/dev/null 2>&1

# 4. the layout before: the sidecar mounts the app's LTTng volume at
# /var/run/lttng (lttng-sessiond's control sockets where the app is)
pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml" 's/sidescope-lttng/sidescope-oldlttng/g' \
	's|mountPath: /run/lttng-apps|mountPath: /var/run/lttng|'
ok $? "lttng.yaml with the old layout plays"
pod=$(pod_name_of sidescope-oldlttng)
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
res=$(pod_exec "$pod" sidescope doctor lttng 2>&1)
is "$?" 1 "doctor lttng fails"
diag "$res"
like "$res" "FAIL  LTTng control directory /var/run/lttng is on a volume other containers mount" "says why"
like "$res" "FAIL  LTTng app-socket directory /run/lttng-apps does not exist" "and what is missing"
res=$(pod_exec "$pod" sidescope lttng-capture -d 1 2>&1)
is "$?" 1 "lttng-capture refuses to run"
like "$res" "error: /var/run/lttng is on a volume that other containers mount" "in one line saying why"

done_testing
