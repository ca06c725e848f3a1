#!/bin/sh
# shellcheck disable=SC2016 # code for the shells in other namespaces
# doctor in a simulated pod (shared PID namespace, the app in its own mount
# namespace with a perf map in its private /tmp, root without
# CAP_SYS_PTRACE): PASS with exactly the least capabilities, FAIL with the
# right fix without them, without a shared PID namespace, with an
# unwritable or read-only output directory, with an output directory or
# TMPDIR on a volume the app mounts too, and with an app that could ptrace
# the sidecar. Its probe file follows no planted link and opens no FIFO.
# A read-only or missing output directory is one FAIL line with the fix,
# never a shell error, and the other checks still run; --json gives the
# same checks as one JSON array (jq).
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd busybox unshare nsenter setpriv jq
doctor="$SIDESCOPE_SRC/scripts/doctor"
export SIDESCOPE

like "$(busybox sh "$doctor" -h)" "^doctor: check that this sidecar" "-h prints the usage"
busybox sh "$doctor" kernel >/dev/null 2>&1
is "$?" 2 "unknown technique exits 2"
err=$(busybox sh "$doctor" -o /out 2>&1)
is "$?" 2 "-o DIR: exit 2"
like "$err" "^doctor: error: -o is a file in every command; the output directory is -O DIR" "-o DIR: says -O DIR"

# shellcheck disable=SC2119 # no --share-lttng
pod_start || skip_all "cannot create PID and mount namespaces"
ready="$TMPDIR_TEST/app.ready"
# the app as pods run it: root without CAP_SYS_PTRACE
pod_app setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace -- \
	"$SIDESCOPE_BUILD/tests/progs/podapp" "$ready"
wait_for_file "$ready" 10
ok $? "app started in the simulated pod"
app=$(cat "$ready")
on_exit "kill $(pod_host_pid "$app")"
# an output directory of the sidecar's own: in its private volume
out="/run/sidescope/out dir"
pod_sidecar mkdir -p "$out"

# the sidecar with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE
as_sidecar() { # CAPS CMD...
	_caps=$1
	shift
	_set="-all"
	[ -z "$_caps" ] || _set="-all,$(printf '%s' "$_caps" | sed 's/\([^,]*\)/+\1/g')"
	pod_sidecar setpriv --inh-caps=-all --bounding-set="$_set" -- "$@"
}

res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -O "$out" 2>&1)
is "$?" 0 "least capabilities: doctor profile passes"
diag "$res"
like "$res" "PASS  capabilities CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE" "capabilities decoded from CapEff"
like "$res" "PASS  shared PID namespace: other containers' processes visible \\(.*$app" "the app is visible"
like "$res" "PASS  perf maps visible for PIDs .*$app" "its perf map is found in its private /tmp"
like "$res" "PASS  kernel BTF" "BTF"
like "$res" "PASS  output directory $out writable" "output directory with a space"
like "$res" "PASS  output directory $out: this sidecar's own" "the output directory is private"
like "$res" "PASS  TMPDIR /run/sidescope/tmp: this sidecar's own" "so is TMPDIR"
like "$res" "PASS  no other container can ptrace this one" "and the app cannot ptrace the sidecar"
unlike "$res" "FAIL" "no failure"
res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile --json -O "$out" 2>&1)
is "$?" 0 "--json, least capabilities: exit 0"
is "$(printf '%s' "$res" | jq -r '[.[] | select(.status == "FAIL")] | length')" 0 "--json: no FAIL"
is "$(printf '%s' "$res" | jq -r '.[] | select(.check == "capabilities") | .detail')" \
	"capabilities CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE (CapEff $(as_sidecar "$LEAST_CAPS" sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status))" \
	"--json: the detail is the text's line"

res=$(as_sidecar "" busybox sh "$doctor" profile -O "$out" 2>&1)
is "$?" 1 "no capabilities: doctor fails"
like "$res" "FAIL  capabilities: missing CAP_BPF CAP_PERFMON CAP_SYS_PTRACE" "names the missing capabilities"
like "$res" 'fix: securityContext.capabilities.add: \["BPF", "PERFMON", "SYS_PTRACE"\]' "and the podspec fix"
like "$res" "FAIL  perf_event_paranoid" "perf_event_paranoid without CAP_PERFMON"
like "$res" "FAIL  PIDs .*$app.* of another container may hold every capability this sidecar has" \
	"no capabilities: the app could ptrace the sidecar"
like "$res" 'fix: add "SYS_PTRACE" to this sidecar' "with the fix"

res=$(as_sidecar "bpf,perfmon" busybox sh "$doctor" uprobe -O "$out" 2>&1)
like "$res" "missing CAP_SYS_PTRACE \\(" "only the one missing capability is named"
res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" uprobe -O "$out" 2>&1)
is "$?" 0 "least capabilities: doctor uprobe passes"
like "$res" "PASS  uprobes work: probe attached through a uprobe_multi link, event received" \
	"doctor uprobe really attaches and fires a probe"
# uprobe perf events, the fallback for kernels before 6.6, need CAP_SYS_ADMIN
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS" busybox sh "$doctor" uprobe -O "$out" 2>&1)
is "$?" 1 "perf event uprobes without CAP_SYS_ADMIN: doctor uprobe fails"
like "$res" "FAIL  uprobes: Permission denied \\(uprobe perf events need CAP_SYS_ADMIN" \
	"and says CAP_SYS_ADMIN is what perf event uprobes need"
like "$res" 'fix: kernels before 6.6: add "SYS_ADMIN"' "with the fix"
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS" busybox sh "$doctor" -O "$out" 2>&1)
like "$res" "WARN  uprobes: Permission denied" "plain doctor only warns about it"
res=$(SIDESCOPE_UPROBE_LINK=perf as_sidecar "$LEAST_CAPS,sys_admin" busybox sh "$doctor" uprobe -O "$out" 2>&1)
is "$?" 0 "perf event uprobes: doctor uprobe passes with CAP_SYS_ADMIN added"
like "$res" "PASS  uprobes work: probe attached through a perf event" "through a perf event"

# alone in a PID namespace: nothing else to see
res=$(unshare --pid --fork --mount-proc busybox sh "$doctor" profile -O "$out" 2>&1)
is "$?" 1 "no shared PID namespace: doctor fails"
like "$res" "FAIL  no other container's process is visible" "says so"
like "$res" "fix: set shareProcessNamespace: true in the pod spec" "with the fix"

res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -O /proc/sidescope-out 2>&1)
is "$?" 1 "an output directory that cannot be made fails"
like "$res" "FAIL  output directory /proc/sidescope-out does not exist and cannot be made: " "says which"
like "$res" "fix: mount a writable emptyDir at /proc/sidescope-out \\(or give -O DIR\\)" "with the fix"

# places the app reaches too (in this simulated pod, the host's files)
shared="$TMPDIR_TEST/shared out"
mkdir -p "$shared"
res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -O "$shared" 2>&1)
is "$?" 1 "an output directory the app mounts too fails"
like "$res" "FAIL  output directory $shared is on a volume other containers mount \\(PIDs .*$app" \
	"names it and the app"
like "$res" "fix: give the output directory an emptyDir mounted only in this sidecar" "with the fix"
res=$(pod_sidecar env TMPDIR="$TMPDIR_TEST/tmpd" busybox sh "$doctor" profile -O "$out" 2>&1)
is "$?" 1 "a TMPDIR the app mounts too fails"
like "$res" "FAIL  TMPDIR $TMPDIR_TEST/tmpd is on a volume other containers mount" "says so"
like "$res" "fix: give this sidecar an emptyDir of its own at /run" "with the fix"

# an app container with CAP_SYS_PTRACE (pod_app alone keeps every capability)
pod_app sleep 1000
tracer=$!
on_exit "kill $tracer"
res=""
for _i in $(seq 50); do
	res=$(as_sidecar "$LEAST_CAPS" busybox sh "$doctor" profile -O "$out" 2>&1)
	case "$res" in *"may hold CAP_SYS_PTRACE"*) break ;; esac
	sleep 0.1
done
like "$res" "FAIL  PIDs .* of another container may hold CAP_SYS_PTRACE: they could ptrace this sidecar" \
	"an app with CAP_SYS_PTRACE fails"
like "$res" "fix: take SYS_PTRACE from the app container" "with the fix"
kill "$tracer"

# a read-only output directory: one FAIL line with the fix, no shell error
ro="$TMPDIR_TEST/ro"
mkdir -p "$ro"
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs -o ro tmpfs "$1" && busybox sh "$2" profile -O "$1"' sh "$ro" "$doctor" 2>&1)
is "$?" 1 "read-only output directory: doctor fails"
like "$res" "FAIL  output directory $ro is not writable: Read-only file system" "says so"
like "$res" "fix: mount a writable emptyDir at $ro" "with the fix"
unlike "$res" "^sh: |can.t create|cannot create" "and no shell error"
like "$res" "PASS  TMPDIR " "the checks after it ran"
like "$res" "doctor: [0-9]+ check\\(s\\) failed" "to the summary"

# the default output directory, /out, missing under a read-only root
# (readOnlyRootFilesystem without the emptyDir): a FAIL naming /out and
# -O DIR, the other checks still run
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs -o ro tmpfs /mnt && busybox sh "$1" profile -O /mnt/out' sh "$doctor" 2>&1)
is "$?" 1 "a missing output directory under a read-only root: doctor fails"
like "$res" "FAIL  output directory /mnt/out does not exist and cannot be made: Read-only file system" "says so"
like "$res" "fix: mount a writable emptyDir at /mnt/out \\(or give -O DIR\\)" "with the fix"
unlike "$res" "^sh: |can.t create|cannot create" "and no shell error"
like "$res" "PASS  TMPDIR " "the checks after it ran"
# (the root read-only in this mount namespace alone: nothing is made on it)
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -o remount,bind,ro / && cd / && env -u SIDESCOPE_OUT busybox sh "$1" profile' sh "$doctor" 2>&1)
like "$res" "(PASS|FAIL)  output directory /out " \
	"no -O and no SIDESCOPE_OUT: /out is checked, not the working directory"
unlike "$res" "output directory / " "not the working directory"

# --json: the same checks, one array, each with check, status, detail and
# (when not PASS) fix
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs -o ro tmpfs "$1" && busybox sh "$2" profile --json -O "$1"' sh "$ro" "$doctor" 2>"$TMPDIR_TEST/json.err")
is "$?" 1 "--json, a read-only output directory: exit 1"
is "$(cat "$TMPDIR_TEST/json.err")" "" "--json: nothing on stderr"
printf '%s' "$res" | jq -e 'type == "array" and length > 5' >/dev/null
ok $? "--json: one JSON array of checks"
is "$(printf '%s' "$res" | jq -r '[.[] | .status] | unique | map(select(. != "PASS" and . != "WARN" and . != "FAIL")) | length')" 0 \
	"--json: every status is PASS, WARN or FAIL"
is "$(printf '%s' "$res" | jq -r '[.[] | select(.status != "PASS" and (.fix | type) != "string")] | length')" 0 \
	"--json: every WARN and FAIL has its fix"
is "$(printf '%s' "$res" | jq -r '.[] | select(.check == "output_dir") | "\(.status) \(.detail)"')" \
	"FAIL output directory $ro is not writable: Read-only file system" "--json: the output directory's FAIL"
like "$(printf '%s' "$res" | jq -r '.[] | select(.check == "output_dir") | .fix')" "^mount a writable emptyDir at $ro " \
	"--json: with the fix"
is "$(printf '%s' "$res" | jq -r '[.[] | .check] | length == (unique | length)')" true "--json: each check once"
txt=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs -o ro tmpfs "$1" && busybox sh "$2" profile -O "$1"' sh "$ro" "$doctor" 2>&1)
is "$(printf '%s' "$res" | jq -r '.[] | .status' | tr '\n' ' ')" \
	"$(printf '%s\n' "$txt" | sed -n 's/^\(PASS\|WARN\|FAIL\)  .*/\1/p' | tr '\n' ' ')" \
	"--json: the same checks as the text, in order"

# the probe: as PID 1 of a PID namespace, where a name made from the PID
# would be .doctor-probe.1, planted as a FIFO and as a link
for kind in fifo link; do
	d="$TMPDIR_TEST/probe-$kind"
	mkdir -p "$d"
	if [ "$kind" = fifo ]; then mkfifo "$d/.doctor-probe.1"; else ln -s "$TMPDIR_TEST/victim" "$d/.doctor-probe.1"; fi
	res=$(timeout -s KILL 20 unshare --kill-child --pid --fork --mount-proc busybox sh "$doctor" profile -O "$d" 2>&1)
	ok "$([ $? -lt 124 ]; echo $?)" "a planted $kind in the output directory: doctor does not hang"
	like "$res" "PASS  output directory $d writable" "a planted $kind: the directory is writable"
	is "$(find "$d" -mindepth 1 -printf '%f %y\n')" ".doctor-probe.1 $(echo "$kind" | cut -c1 | sed 's/f/p/')" \
		"a planted $kind: left as it was, no probe left"
done
ok "$([ ! -e "$TMPDIR_TEST/victim" ]; echo $?)" "nothing was written through the link"

# LTTng: failures count only when asked for (the LTTng layout itself is
# checked in lttng/hostile.t)
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs none /run && busybox sh "$1" -O /run/out' sh "$doctor" 2>&1)
like "$res" "WARN  LTTng app-socket directory /run/lttng-apps does not exist" \
	"all checks: a missing app-socket directory warns"
like "$res" "PASS  LTTng control directory /var/run/lttng: this sidecar's own" "the control directory can be made"
res=$(unshare --pid --fork --mount-proc --mount sh -c \
	'mount -t tmpfs none /run && busybox sh "$1" lttng -O /run/out' sh "$doctor" 2>&1)
is "$?" 1 "doctor lttng fails without the app-socket directory"
like "$res" "FAIL  LTTng app-socket directory /run/lttng-apps does not exist" "says so"
like "$res" "fix: mount the emptyDir the app has at /var/run/lttng at /run/lttng-apps in this sidecar" "with the fix"
unlike "$res" "capabilities" "and checks no capabilities"

done_testing
