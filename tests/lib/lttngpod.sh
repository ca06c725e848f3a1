# shellcheck shell=sh
# lttng-capture in a simulated pod (tests/lib/pod.sh, pod_start
# --share-lttng): the app with lttng-ust tracepoints, the capture script in
# the sidecar, and looks at the pod's LTTng daemons and sessions.
# Source after tap.sh and pod.sh; sets APP and CAP; needs T (a temp dir).

. "$SIDESCOPE_SRC/tests/lib/caps.sh"

APP="$SIDESCOPE_BUILD/tests/progs/lttng_app"
CAP="$SIDESCOPE_SRC/scripts/lttng-capture"

# Stop the pod's lttng-sessiond by its PID file, in the sidecar's own
# /var/run/lttng (the pod's teardown takes whatever is left). The simulated pod's PID 1 does not reap: a dead
# daemon stays a zombie.
lttngpod_stop_daemon() {
	# shellcheck disable=SC2016
	pod_sidecar sh -c 'p=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) || exit 0
		kill "$p" 2>/dev/null || exit 0
		for i in $(seq 100); do
			s=$(sed "s/.*) //" "/proc/$p/stat" 2>/dev/null | cut -c1)
			[ -z "$s" ] || [ "$s" = Z ] && exit 0
			sleep 0.05
		done
		kill -9 "$p"'
}

# The LTTng daemons alive in the pod (zombies are dead), one "PID NAME" a
# line; empty when there are none.
lttngpod_daemons() {
	# shellcheck disable=SC2016
	pod_sidecar sh -c 'for d in /proc/[0-9]*; do
		c=$(cat "$d/comm" 2>/dev/null) || continue
		case "$c" in lttng-sessiond|lttng-consumerd|lttng-relayd|lttng-runas) ;; *) continue ;; esac
		s=$(sed "s/.*) //" "$d/stat" 2>/dev/null | cut -c1)
		[ -z "$s" ] || [ "$s" = Z ] || echo "${d#/proc/} $c"
	done'
}

# The pod's LTTng sessions, one name a line (none, or no daemon: empty).
# Bounded: a wedged daemon must fail the test, not hang it.
lttngpod_sessions() {
	timeout 10 nsenter -t "$POD_PAUSE" --pid --mount -- lttng list 2>/dev/null |
		sed -n 's/^ *[0-9][0-9]*) \(.*\) \[[a-z]*\]$/\1/p'
}

# lttngpod_app TAG [lttng_app options]: the app in its own container, in
# the background; sets $app (its PID in the pod). Emits once $T/TAG.go exists.
lttngpod_app() {
	_tag=$1
	shift
	pod_app "$APP" -r "$T/$_tag.ready" -g "$T/$_tag.go" "$@"
	wait_for_file "$T/$_tag.ready" 10 || return 1
	app=$(cat "$T/$_tag.ready")
	_h=$(pod_host_pid "$app") && on_exit "kill $_h"
}

# lttngpod_capture TAG [lttng-capture options]: in the background, in the
# sidecar, from the directory $T/cwd; stdout in $T/TAG.out, stderr in
# $T/TAG.err, the script's PID in $T/TAG.cap.pid; sets $cap_bg. With
# LTTNGPOD_CAPS set (to a list for caps.sh's with_caps, maybe empty), with
# only those capabilities.
lttngpod_capture() {
	_tag=$1
	shift
	mkdir -p "$T/cwd"
	rm -f "$T/$_tag.cap.pid"
	_bound=""
	[ -z "${LTTNGPOD_CAPS+set}" ] || _bound=$(caps_bounding_set "$LTTNGPOD_CAPS")
	# shellcheck disable=SC2016
	# perl: a background job starts with SIGINT ignored, which a shell cannot
	# trap; restore it so that the test can press "Ctrl-C". The script runs
	# in a child whose PID is the one signalled; the parent gives its death
	# by a signal as 128+N: nsenter, SIGINT ignored in a background job,
	# cannot pass it on and said 1 (a signal before the script's traps)
	pod_sidecar sh -c 'cd "$1/cwd" || exit 1; b=$3; shift 3
		[ -z "$b" ] || set -- setpriv --inh-caps=-all --bounding-set="$b" -- "$@"
		exec "$@"' sh "$T" - "$_bound" \
		perl -e 'my $f = shift; my $c = fork // die "fork: $!";
			if (!$c) { $SIG{INT} = "DEFAULT"; open(my $h, ">", "$f.new") or die "$f: $!";
				print $h "$$\n"; close $h; rename("$f.new", $f) or die "$f: $!";
				exec @ARGV or die "exec: $!" }
			waitpid($c, 0); exit(($? & 127) ? 128 + ($? & 127) : $? >> 8)' \
		"$T/$_tag.cap.pid" busybox sh "$CAP" "$@" >"$T/$_tag.out" 2>"$T/$_tag.err" &
	cap_bg=$!
	on_exit "kill $cap_bg"
	wait_for_file "$T/$_tag.cap.pid" 10
}

# lttngpod_signal TAG SIGNAL: signal the capture script (only it)
lttngpod_signal() {
	pod_sidecar kill -"$2" "$(cat "$T/$1.cap.pid")"
}
