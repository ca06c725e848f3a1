#!/bin/sh
# The hostile app against the symbolizer: an app that is root in its own
# mount namespace of a simulated pod, with a container's default
# capabilities, choosing the files it maps.
# - memory: a process that becomes a new 12 MB executable (a large symbol
#   table) every 0.3 s, deleting the old one: the profiler keeps the
#   symbols of what is still mapped, not of every file it ever saw;
# - names: a copy of libm with its build id kept and its cbrt names changed,
#   mapped under a name that looks like the C library's: another process's
#   cbrt frames are still named from that process's own libm;
# - roots: a process gone before the debug link of its stripped library (no
#   build id) was followed, its PID taken by a process of another mount
#   namespace (the PID set with ns_last_pid, as an app cycling PIDs would
#   get it): no name comes from that other root.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd unshare nsenter setpriv strip objcopy cc timeout mkfifo
[ -x /usr/bin/time ] || skip_all "needs GNU time (/usr/bin/time)"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
PROGS="$SIDESCOPE_BUILD/tests/progs"
for _p in exec_chain cbrt_loop sym_lookalike lib_once; do
	[ -x "$PROGS/$_p" ] || skip_all "needs $PROGS/$_p (make)"
done

pod_start || skip_all "cannot create PID and mount namespaces"

# what a container's root has by default (Docker, containerd, CRI-O)
APP_CAPS="chown,dac_override,fowner,fsetid,kill,setgid,setuid,setpcap,net_bind_service,net_raw,sys_chroot,mknod,audit_write,setfcap"
W=$TMPDIR_TEST

# app NAME [PRE] -- CMD...: CMD as the app (PRE first, as full root in its
# mount namespace), with a container's capabilities, in the background; its
# pod PID is the first line CMD writes to $W/NAME.pid. Sets JOB.
app() {
	_n=$1
	_pre=":"
	shift
	if [ "$1" != -- ]; then
		_pre=$1
		shift
	fi
	shift
	# shellcheck disable=SC2016
	pod_app sh -c "$_pre"' && exec setpriv --inh-caps=-all --bounding-set="$0" -- "$@"' \
		"$(caps_bounding_set "$APP_CAPS")" "$@"
	JOB=$!
	on_exit "kill $JOB"
}

# pid_of NAME: the pod PID in $W/NAME.pid, waited for (the pod's processes
# all end with it)
pid_of() {
	wait_for_file "$W/$1.pid" 20 || return 1
	sed -n 1p "$W/$1.pid"
}

# run NAME CMD...: CMD in the sidecar, at most 90 s; stdout and stderr in
# $W/NAME.out and .err; sets RC, SECS and RSS (MiB, peak)
run() {
	_n=$1
	shift
	_t0=$(date +%s)
	pod_sidecar /usr/bin/time -f '%M' -o "$W/$_n.rss" timeout -s KILL 90 "$@" \
		> "$W/$_n.out" 2> "$W/$_n.err"
	RC=$?
	SECS=$(($(date +%s) - _t0))
	RSS=$(($(tail -n 1 "$W/$_n.rss" 2>/dev/null || echo 0) / 1024))
	[ "$RC" = 0 ] || diag "$_n: exit $RC after ${SECS}s: $(head -c 600 "$W/$_n.err")"
}

# limit MIB: a memory bound, doubled in a SANITIZE=1 build (ASan's shadow,
# redzones and quarantine roughly double what a heap costs)
limit() {
	if [ "${SANITIZE:-0}" = 1 ]; then echo $(($1 * 2)); else echo "$1"; fi
}

# ---- memory: a new executable every 0.3 s ---------------------------------

app chain "mkdir /tmp/chain && cp '$PROGS/exec_chain' /tmp/chain/chain.0" -- \
	/tmp/chain/chain.0 /tmp/chain -i 300 -d 40 -r "$W/chain.pid"
CHAIN=$(pid_of chain)
ok $? "a process that execs a new copy of itself every 0.3 s runs"
run chain "$SIDESCOPE" profile -p "$CHAIN" -d 20 -o "$W/chain.folded"
ok "$([ "$RC" = 0 ] && [ "$SECS" -lt 40 ]; echo $?)" "a 20-s capture of the chain ends, exit 0 (${SECS}s)"
ok "$([ "$RSS" -gt 0 ] && [ "$RSS" -lt "$(limit 300)" ]; echo $?)" \
	"its symbols are kept while mapped, not for the whole capture: ${RSS} MiB peak"
like "$(cat "$W/chain.folded")" ";exec_chain_spin " "the chain is still named"
kill "$(pod_host_pid "$CHAIN")" 2>/dev/null

# ---- names: a look-alike of another process's libm ------------------------

app victim -- "$PROGS/cbrt_loop" -d 60 -r "$W/victim.pid"
VICTIM=$(pid_of victim)
LIBM=$(sed -n 's|.* \(/[^ ]*/libm\.so[^ ]*\)$|\1|p' "/proc/$(pod_host_pid "$VICTIM")/maps" | head -n 1)
ok "$([ -n "$LIBM" ]; echo $?)" "the victim calls cbrt in $LIBM"
# no debug files in the app's root (a look-alike named from libm's own
# debug file would name nothing of its own)
app lookalike "[ ! -d /usr/lib/debug ] || mount -t tmpfs tmpfs /usr/lib/debug" -- "$PROGS/sym_lookalike" "$LIBM" /tmp/libc.so.6.x cbrt 'PWN!' -r "$W/lookalike.pid"
EVIL=$(pid_of lookalike)
ok $? "the app maps a copy of libm, its cbrt names changed, as /tmp/libc.so.6.x"
run lookalike-all "$SIDESCOPE" profile -a -d 2 --user-only -o "$W/lookalike-all.folded"
is "$RC" 0 "profile -a"
like "$(grep '^cbrt_loop' "$W/lookalike-all.folded")" ';cbrt_round;cbrt[a-z0-9]*( |;)' \
	"-a: the victim's cbrt frames are named cbrt"
unlike "$(cat "$W/lookalike-all.folded")" 'PWN' "-a: no name of the look-alike's"
run lookalike-p "$SIDESCOPE" profile -p "$VICTIM,$EVIL" -d 2 --user-only -o "$W/lookalike-p.folded"
is "$RC" 0 "profile -p VICTIM,APP"
like "$(cat "$W/lookalike-p.folded")" ';cbrt_round;cbrt[a-z0-9]*( |;)' \
	"-p: the victim's cbrt frames are named cbrt"
unlike "$(cat "$W/lookalike-p.folded")" 'PWN' "-p: no name of the look-alike's"

# ---- roots: a debug link followed after the PID went to another root ------

# one source, two builds of one layout: the app's stripped library (no build
# id, a debug link) and, in another root, a "debug file" of the same layout
# whose function has another name of the same length
cat > "$W/victim.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
__attribute__((noinline)) static void SPIN(double until)
{
	unsigned long i;

	while (now_s() < until)
		for (i = 0; i < 20000; i++)
			sink += i * 7;
}
void libvictim_run(unsigned long ms)
{
	SPIN(now_s() + ms / 1000.0);
	sink++;
}
EOF
cc -O1 -shared -fPIC -Wl,--build-id=none -DSPIN=spin_in_victim_lib -o "$W/libvictim.full.so" "$W/victim.c" &&
	cc -O1 -shared -fPIC -Wl,--build-id=none -DSPIN=leaked_other_roots -o "$W/other.so" "$W/victim.c" &&
	objcopy --only-keep-debug "$W/libvictim.full.so" "$W/libvictim.debug" &&
	strip --strip-all -o "$W/libvictim.so" "$W/libvictim.full.so" &&
	(cd "$W" && objcopy --add-gnu-debuglink=libvictim.debug libvictim.so)
ok $? "a stripped library without build id, with a debug link, and an ELF file of its layout"
mkdir "$W/lib"
mkfifo "$W/go" "$W/takepid"
# the app's process: the library in its root at $W/lib
app once "mount -t tmpfs tmpfs '$W/lib' && cp '$W/libvictim.so' '$W/lib/'" -- \
	"$PROGS/lib_once" "$W/lib/libvictim.so" libvictim_run "$W/go" -m 200 -r "$W/once.pid"
ONCE_JOB=$JOB
ONCE=$(pid_of once)
ok $? "a process with the stripped library mapped"
# another root: at $W/lib, an ELF file where the library's debug link
# points; once told a PID, it makes the next process of the pod take it
# (one fork after ns_last_pid is set) and writes that process's PID
# shellcheck disable=SC2016
pod_app sh -c 'mount -t tmpfs tmpfs "$1" && mkdir "$1/.debug" && cp "$2" "$1/libvictim.debug" &&
	cp "$2" "$1/.debug/libvictim.debug" || exit 1
	read -r n < "$3"
	echo $((n - 1)) > /proc/sys/kernel/ns_last_pid
	sleep 1000 &
	echo "$!" > "$4"
	wait' sh "$W/lib" "$W/other.so" "$W/takepid" "$W/taken.pid"
on_exit "kill $!"
pod_sidecar "$SIDESCOPE" profile -v -p "$ONCE" -d 10 --user-only -o "$W/once.folded" \
	> /dev/null 2> "$W/once.err" &
PROF=$!
on_exit "kill $PROF"
wait_for_grep "$W/once.err" "sampling at" 20
ok $? "the profiler samples the process"
# it spins in its library for 200 ms and exits, before the first drain
echo go > "$W/go"
wait "$ONCE_JOB"
echo "$ONCE" > "$W/takepid"
wait_for_file "$W/taken.pid" 10
is "$(cat "$W/taken.pid" 2>/dev/null)" "$ONCE" "its PID now names a process of another root"
wait "$PROF"
is "$?" 0 "the capture ends with the process"
like "$(cat "$W/once.folded")" "libvictim" "the library's frames are in the profile"
unlike "$(cat "$W/once.folded")" "leaked_other_roots" \
	"no name from the root that holds the PID now"

done_testing
