# shellcheck shell=sh
# A simulated pod without Kubernetes: one PID namespace shared by an "app"
# and a "sidecar", each in its own mount namespace. The app gets a private
# /tmp (a tmpfs), like a container's; the sidecar sees the host's /tmp, and
# has a volume of its own at /run/sidescope (its TMPDIR) that the app's
# mount namespace does not hold, like an emptyDir mounted only in the sidecar.
# Source after tap.sh. Needs root and util-linux (unshare, nsenter).

POD_PAUSE=""	# host PID of the pod's PID 1
POD_APP_CGROUP=""	# the app "container"'s cgroup (v2), when one could be made

# Start the pod: a PID namespace whose PID 1 just waits, with /proc mounted
# for that namespace in a mount namespace of its own. With --share-lttng the
# pod gets the podspecs' LTTng layout, tmpfs standing for emptyDirs the
# host does not see: the sidecar's own /var/run/lttng (lttng-sessiond's
# control sockets), which no app holds; the app-socket directory, 0777
# like an emptyDir, that the sidecar has at /run/lttng-apps and every app
# at /var/run/lttng; a shared /dev/shm (0777). Those apps (pod_app,
# pod_outsider) are root without CAP_SYS_PTRACE, as in a pod.
pod_start() {
	_ready="$TMPDIR_TEST/pod.pause"
	_pre="mkdir -p /run/sidescope && mount -t tmpfs -o mode=0700 tmpfs /run/sidescope"
	if [ "${1:-}" = --share-lttng ]; then
		mkdir -p /run/lttng /run/lttng-apps /dev/shm
		_pre="$_pre && mount -t tmpfs -o mode=0755 tmpfs /run/lttng &&
			mount -t tmpfs -o mode=0777 tmpfs /run/lttng-apps &&
			mount -t tmpfs -o mode=0777 tmpfs /dev/shm"
		POD_LTTNG_APPS=/run/lttng-apps	# read by the apps' init
		export POD_LTTNG_APPS
	fi
	# shellcheck disable=SC2016
	unshare --pid --fork --mount --propagation private --mount-proc \
		sh -c "$_pre"' && echo "$$" > "$1" && exec sleep 100000' sh "$_ready" &
	_unshare=$!
	on_exit "kill $_unshare"
	wait_for_file "$_ready" 10 || return 1
	POD_PAUSE=$(cat "/proc/$_unshare/task/$_unshare/children" | tr -d ' ')
	[ -n "$POD_PAUSE" ] || return 1
	on_exit "kill -9 $POD_PAUSE"
	# the app's own cgroup stands for its container's
	_cgroot=/sys/fs/cgroup
	[ -f "$_cgroot/cgroup.procs" ] && [ ! -d "$_cgroot/unified" ] || _cgroot=/sys/fs/cgroup/unified
	if [ -f "$_cgroot/cgroup.procs" ]; then
		POD_APP_CGROUP="$_cgroot/sidescope-test-$$-app"
		mkdir -p "$POD_APP_CGROUP" && on_exit "for _i in 1 2 3 4 5 6 7 8 9 10; do rmdir '$POD_APP_CGROUP' && break; sleep 0.1; done" || POD_APP_CGROUP=""
	fi
}

# The app's container init: join its cgroup, put a private tmpfs on /tmp,
# and keep the source and build trees reachable when they live under /tmp
# (a checkout in /tmp would otherwise vanish under the new mount).
# shellcheck disable=SC2016
_POD_APP_INIT='
	cg=$0
	[ -z "$cg" ] || echo "$$" > "$cg/cgroup.procs" || exit 1
	umount -l /run/sidescope || exit 1	# the volume of the sidecar alone
	keep=""
	for d in "$SIDESCOPE_SRC" "$SIDESCOPE_BUILD"; do
		case "$d/" in /tmp/*) keep="$keep $d" ;; esac
	done
	if [ -n "$keep" ]; then
		old=/mnt	# only this mount namespace sees the bind
		mount --bind /tmp "$old" || exit 1
	fi
	mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
	for d in $keep; do
		mkdir -p "$d" && mount --bind "$old${d#/tmp}" "$d" || exit 1
	done
	# pod_start --share-lttng: the app-socket directory at /var/run/lttng in
	# place of the sidecar private one, and no CAP_SYS_PTRACE (a pod gives
	# its app none; with it the app could reach the sidecar through
	# /proc/PID/root)
	if [ -n "${POD_LTTNG_APPS:-}" ]; then
		umount -l /run/lttng && mount --bind "$POD_LTTNG_APPS" /run/lttng &&
			umount -l "$POD_LTTNG_APPS" || exit 1
		set -- setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace -- "$@"
	fi
	exec "$@"'

# Run a command as the app, in the background, in its own mount namespace
# with a private /tmp. Prints nothing; the caller learns PIDs from files
# the command writes (see pod_pid_of).
pod_app() {
	nsenter -t "$POD_PAUSE" --pid --mount -- \
		unshare --mount --propagation private \
		sh -c "$_POD_APP_INIT" "$POD_APP_CGROUP" "$@" &
}

# Run a command as the sidecar, in the foreground: same PID namespace,
# the pod's /proc, the host's files, its private TMPDIR.
pod_sidecar() {
	nsenter -t "$POD_PAUSE" --pid --mount -- env TMPDIR=/run/sidescope/tmp "$@"
}

# Host PID of the process whose PID in the pod namespace is $1.
pod_host_pid() {
	for _s in /proc/[0-9]*/status; do
		_l=$(grep '^NSpid:' "$_s" 2>/dev/null) || continue
		# shellcheck disable=SC2086
		set -- "$1" $_l
		[ "$#" -eq 4 ] && [ "$4" = "$1" ] || continue
		_p=${_s#/proc/}
		_p=${_p%/status}
		_ns=$(readlink "/proc/$_p/ns/pid" 2>/dev/null)
		[ "$_ns" = "$(readlink "/proc/$POD_PAUSE/ns/pid")" ] && { echo "$_p"; return 0; }
	done
	return 1
}

# Run a command in the pod's mount namespace (with pod_start --share-lttng,
# the app-socket directory at /var/run/lttng and the shared /dev/shm) but in
# the host's PID namespace, in the background: an app the pod's processes
# cannot see. It mounts the /proc of its PID namespace first: umount reads
# /proc/self, which the pod's /proc does not have for it.
pod_outsider() {
	# shellcheck disable=SC2016
	nsenter -t "$POD_PAUSE" --mount -- \
		unshare --mount --propagation private \
		sh -c 'mount -t proc proc /proc && umount -l /run/sidescope &&
			mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
			if [ -n "${POD_LTTNG_APPS:-}" ]; then	# as in the app init above
				umount -l /run/lttng && mount --bind "$POD_LTTNG_APPS" /run/lttng &&
					umount -l "$POD_LTTNG_APPS" || exit 1
				set -- setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace -- "$@"
			fi
			exec "$@"' sh "$@" &
}
