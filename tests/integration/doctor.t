#!/bin/sh
# doctor in a simulated pod (shared PID namespace, the app in its own mount
# namespace with a perf map in its private /tmp): PASS with exactly the
# least capabilities, FAIL with the right fix without them, without a
# shared PID namespace, and with an unwritable output directory.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd busybox unshare nsenter setpriv
doctor="$SIDESCOPE_SRC/scripts/doctor"
export SIDESCOPE

like "$(busybox sh "$doctor" -h)" "^doctor: check that this sidecar" "-h prints the usage"
busybox sh "$doctor" kernel >/dev/null 2>&1
is "$?" 2 "unknown technique exits 2"

pod_start || skip_all "cannot create PID and mount namespaces"
ready="$TMPDIR_TEST/app.ready"
pod_app "$SIDESCOPE_BUILD/tests/progs/podapp" "$ready"
wait_for_file "$ready" 10
ok $? "app started in the simulated pod"
app=$(cat "$ready")
on_exit "kill $(pod_host_pid "$app")"
out="$TMPDIR_TEST/out dir"
mkdir -p "$out"

# the sidecar with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE
as_sidecar() { # CAPS CMD...
	_caps=$1
	shift
	_set="-all"
	[ -z "$_caps" ] || _set="-all,$(printf '%s' "$_caps" | sed 's/\([^,]*\)/+\1/g')"
	pod_sidecar setpriv --inh-caps=-all --bounding-set="$_set" -- "$@"
}

res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -o "$out" 2>&1)
is "$?" 0 "least capabilities: doctor profile passes"
diag "$res"
like "$res" "PASS  capabilities CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE" "capabilities decoded from CapEff"
like "$res" "PASS  shared PID namespace: other containers' processes visible \\(.*$app" "the app is visible"
like "$res" "PASS  perf maps visible for PIDs .*$app" "its perf map is found in its private /tmp"
like "$res" "PASS  kernel BTF" "BTF"
like "$res" "PASS  output directory $out writable" "output directory with a space"
unlike "$res" "FAIL" "no failure"

res=$(as_sidecar "" busybox sh "$doctor" profile -o "$out" 2>&1)
is "$?" 1 "no capabilities: doctor fails"
like "$res" "FAIL  capabilities: missing CAP_BPF CAP_PERFMON CAP_SYS_PTRACE" "names the missing capabilities"
like "$res" 'fix: securityContext.capabilities.add: \["BPF", "PERFMON", "SYS_PTRACE"\]' "and the podspec fix"
like "$res" "FAIL  perf_event_paranoid" "perf_event_paranoid without CAP_PERFMON"

res=$(as_sidecar "bpf,perfmon" busybox sh "$doctor" uprobe -o "$out" 2>&1)
like "$res" "missing CAP_SYS_PTRACE \\(" "only the one missing capability is named"
res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" uprobe -o "$out" 2>&1)
is "$?" 0 "least capabilities: doctor uprobe passes"
like "$res" "PASS  uprobes work: probe attached through a uprobe_multi link, event received" \
	"doctor uprobe really attaches and fires a probe"
# uprobe perf events, the fallback for kernels before 6.6, need CAP_SYS_ADMIN
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS" busybox sh "$doctor" uprobe -o "$out" 2>&1)
is "$?" 1 "perf event uprobes without CAP_SYS_ADMIN: doctor uprobe fails"
like "$res" "FAIL  uprobes: Permission denied \\(uprobe perf events need CAP_SYS_ADMIN" \
	"and says CAP_SYS_ADMIN is what perf event uprobes need"
like "$res" 'fix: kernels before 6.6: add "SYS_ADMIN"' "with the fix"
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS" busybox sh "$doctor" -o "$out" 2>&1)
like "$res" "WARN  uprobes: Permission denied" "plain doctor only warns about it"
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS,sys_admin" busybox sh "$doctor" uprobe -o "$out" 2>&1)
is "$?" 0 "perf event uprobes: doctor uprobe passes with CAP_SYS_ADMIN added"
like "$res" "PASS  uprobes work: probe attached through a perf event" "through a perf event"

# alone in a PID namespace: nothing else to see
res=$(unshare --pid --fork --mount-proc busybox sh "$doctor" profile -o "$out" 2>&1)
is "$?" 1 "no shared PID namespace: doctor fails"
like "$res" "FAIL  no other container's process is visible" "says so"
like "$res" "fix: set shareProcessNamespace: true in the pod spec" "with the fix"

res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -o /proc/sidescope-out 2>&1)
is "$?" 1 "unwritable output directory fails"
like "$res" "FAIL  output directory /proc/sidescope-out is not writable" "says which"

# LTTng: failures count only when asked for
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs none /run && busybox sh "$1" -o "$2"' sh "$doctor" "$out" 2>&1)
like "$res" "WARN  /var/run/lttng does not exist" "all checks: a missing /var/run/lttng warns"
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs none /run && busybox sh "$1" lttng -o "$2"' sh "$doctor" "$out" 2>&1)
is "$?" 1 "doctor lttng fails without /var/run/lttng"
like "$res" "FAIL  /var/run/lttng does not exist" "with the LTTng fix"
unlike "$res" "capabilities" "and checks no capabilities"

done_testing
