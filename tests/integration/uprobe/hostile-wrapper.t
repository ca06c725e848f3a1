#!/bin/sh
# uprobe-trace next to a hostile app, in a simulated pod whose /tmp the app
# and the sidecar share (the podspecs' emptyDir): the app appends
# '-oFILE' to every file that appears in that /tmp, which once turned into
# an option of 'sidescope uprobe' (the probes went through a file there).
# The trace still works, no file is written outside the output directory
# and nothing of the sidecar's appears in the shared /tmp; a probe that
# reads like an option stays a (bad) probe; a TMPDIR on the shared volume
# is refused.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/appender.sh"
require_root
require_cmd busybox unshare nsenter mount umount timeout
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
scripts="$SIDESCOPE_SRC/scripts"
export SIDESCOPE_LIB="$scripts/lib/common.sh" SIDESCOPE_POD=pod
bin="$SIDESCOPE_BUILD/tests/progs/podapp"
[ -x "$bin" ] || skip_all "needs $bin (make)"

T=$TMPDIR_TEST
# the shared /tmp, mounted before the pod starts: both namespaces hold it
vol="$T/vol"
mkdir -p "$vol"
mount -t tmpfs -o mode=0777 tmpfs "$vol" || skip_all "cannot mount a tmpfs"
on_exit "umount -l '$vol'"
pod_start || skip_all "cannot create PID and mount namespaces"

# shellcheck disable=SC2016 # the app's script
pod_app sh -c 'echo "$$" > "$1" && exec "$2" "$3"' sh "$T/app.pid" "$bin" "$T/app.ready"
wait_for_file "$T/app.ready" 10
ok $? "the target started"
app=$(cat "$T/app.pid")
stolen="$T/stolen.txt"
rounds="$T/rounds"
pod_app_appender "-o$stolen" "$rounds" "$vol"
appender_wait_rounds "$rounds" 1
ok $? "the app rewrites every file in the shared /tmp"
echo 'p:/bin/true:main' > "$vol/bait"
appender_wait_rounds "$rounds" 2
like "$(cat "$vol/bait")" "^-o$stolen\$" "it reached a file put there"

# the sidecar, its /tmp the shared volume (as in the podspecs); sc's
# arguments go to env
sc() {
	# shellcheck disable=SC2016
	pod_sidecar unshare --mount --propagation private \
		sh -c 'mount --bind "$1" /tmp && shift && exec "$@"' sh "$vol" env "$@"
}
probe="p:$bin:greet_utf16 \"%s\", str16(arg1, arg2)"
out=/run/sidescope/out
touch "$T/before"
# no TMPDIR, as in an image from before it set one: the default is the
# sidecar's own /run/sidescope/tmp, not /tmp. The target by name: finding
# it takes a 'sidescope ps', the time the app once had to rewrite the probes.
sc -u TMPDIR timeout 60 busybox sh "$scripts/uprobe-trace" -c 2 -d 30 -O "$out" -- podapp "$probe" \
	>"$T/up.out" 2>"$T/up.err"
is "$?" 0 "uprobe-trace, TMPDIR unset, the app rewriting /tmp: exit 0"
[ -s "$T/up.err" ] && diag "$(cat "$T/up.err")"
f=$(pod_sidecar ls "$out")
like "$f" "^pod-podapp-$app-[0-9]{8}T[0-9]{6}Z\\.txt\$" "one trace file in the output directory"
is "$(pod_sidecar grep -c 'greet_utf16 h.llo w.rld' "$out/$f")" 2 "both events traced"
appender_wait_rounds "$rounds" 1
ok "$([ ! -e "$stolen" ]; echo $?)" "the app's '-o' never reached sidescope uprobe"
is "$(ls -A "$vol")" "bait" "nothing of the sidecar's in the shared /tmp"
is "$(pod_sidecar find /run/sidescope/tmp -type f)" "" "nor in its TMPDIR"
is "$(find "$T" -newer "$T/before" -type f | grep -v -e "^$vol/bait\$" -e "^$rounds" -e '/up\.\(out\|err\)$')" "" \
	"no other file written"

# a probe that reads like an option, after '--': a bad probe, no option
sc timeout 60 busybox sh "$scripts/uprobe-trace" -c 1 -d 5 -O "$out" -- "$app" "$probe" \
	"-o$T/stolen2.txt:x" >/dev/null 2>"$T/up2.err"
is "$?" 2 "a probe '-oFILE:x': exit 2"
like "$(cat "$T/up2.err")" "^sidescope uprobe: " "sidescope uprobe saw a usage error and said so"
ok "$([ ! -e "$T/stolen2.txt" ] && [ ! -e "$T/stolen2.txt:x" ]; echo $?)" "and opened no file"

# a TMPDIR on the shared volume: refused before anything runs
sc TMPDIR=/tmp timeout 60 busybox sh "$scripts/uprobe-trace" -c 1 -- "$app" "$probe" \
	>/dev/null 2>"$T/up3.err"
is "$?" 1 "TMPDIR=/tmp, the shared volume: exit 1"
like "$(cat "$T/up3.err")" "^uprobe-trace: error: '/tmp' is on a volume that other containers mount \\(PIDs [0-9 ]+\\)" \
	"and says why"
is "$(ls -A "$vol")" "bait" "nothing was made there"
done_testing
