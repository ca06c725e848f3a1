#!/bin/sh
# doctor in real pods that lack what sidescope needs: the cpu-profiling
# podspec without shareProcessNamespace, and without the added
# capabilities. Each time doctor fails and names the fix; the LTTng podspec
# (no capabilities at all) passes 'doctor lttng'.
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
	'/container.seccomp.security.alpha.kubernetes.io/d' '/seccompProfile:/,/type: Unconfined/d'
ok $? "pod without the capabilities plays"
pod=$(pod_name_of sidescope-nocaps)
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
res=$(pod_exec "$pod" sidescope doctor profile 2>&1)
is "$?" 1 "doctor fails"
diag "$res"
like "$res" "FAIL  capabilities: missing CAP_BPF CAP_PERFMON CAP_SYS_PTRACE" "names the missing capabilities"
like "$res" 'fix: securityContext.capabilities.add: \["BPF", "PERFMON", "SYS_PTRACE"\]' "and the securityContext fix"
like "$res" "WARN  seccomp filter active" "warns about the seccomp filter"
like "$res" "seccompProfile.type: Unconfined" "with the seccomp fix"
pm kube down "$POD_SPEC" >/dev/null 2>&1

# 3. LTTng needs no capability
pod_play "$SIDESCOPE_SRC/podspecs/lttng.yaml"
ok $? "lttng.yaml plays"
pod=$(pod_name_of sidescope-lttng)
pod_wait_exec 20 "$pod" sidescope sh -c 'sidescope ps -n podapp -q | grep -q .'
res=$(pod_exec "$pod" sidescope doctor lttng 2>&1)
is "$?" 0 "doctor lttng passes with no capabilities"
diag "$res"
like "$res" "PASS  /var/run/lttng shared with PIDs" "/var/run/lttng is shared with the app"
unlike "$res" "capabilities" "and no capability is checked"
cap=$(pod_exec "$pod" sidescope sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
is "$(( (0x$cap >> 39 & 1) + (0x$cap >> 38 & 1) + (0x$cap >> 19 & 1) + (0x$cap >> 21 & 1) ))" 0 \
	"the LTTng sidecar has none of CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_SYS_ADMIN"

done_testing
