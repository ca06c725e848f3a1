# shellcheck shell=sh
# common.sh: shared helpers of the sidescope wrapper scripts (POSIX sh, runs
# under busybox sh). Every function is prefixed ss_.
#
# Where a script finds this file: the first regular file of
#   1. $SIDESCOPE_LIB, when set (the tests name the copy under test);
#   2. DIR/lib/common.sh, DIR being the directory of the script ($0): the
#      source tree, scripts/ and scripts/lib/;
#   3. DIR/../lib/sidescope/common.sh: an installed script, PREFIX/bin next
#      to PREFIX/lib/sidescope/ ('make install'; the image: /usr/local).
# Each wrapper script runs the same block right after its "set -eu" (a
# script may set ss_prog just before it):
#   # common.sh, by the rule in its header
#   here=$(dirname -- "$0")
#   for lib in "${SIDESCOPE_LIB:-}" "$here/lib/common.sh" "$here/../lib/sidescope/common.sh"; do
#   	[ -f "$lib" ] && break
#   done
#   # shellcheck source=scripts/lib/common.sh
#   . "$lib"
#
# Environment read here:
#   SIDESCOPE         the sidescope binary (default: sidescope in PATH)
#   SIDESCOPE_OUT     output directory (default /out, else the current one)
#   SIDESCOPE_POD     pod name in file names (default $POD_NAME, hostname)
#   SIDESCOPE_CONTAINER  this container's name for kubectl hints (sidescope)
#   POD_NAMESPACE     namespace for kubectl hints (downward API), optional
#   TMPDIR            the sidecar's private temporary directory (default
#                     /run/sidescope/tmp): never a volume another container
#                     mounts (ss_tmpdir checks)
#
# Messages follow docs/cli.md: one line each, "PROG: error: WHAT" (or
# "warning:"); with ss_json=1 (a script's --json) each is instead one JSON
# object on stderr, {"level":"error","program":"PROG","message":"WHAT"}.
# PROG is ss_prog: the script's file name unless the script set it before
# sourcing this file.

SIDESCOPE=${SIDESCOPE:-sidescope}
ss_prog=${ss_prog:-$(basename -- "$0")}
ss_nl='
'


# shellcheck disable=SC2034 # set by the scripts that take --json
ss_json=0

# String $1 as a JSON string, quotes included, as sidescope's own JSON
# writes strings ('sidescope plumbing json': backslash, quote and control
# characters escaped, C1 controls too, valid UTF-8 kept, each byte of
# invalid UTF-8 as U+FFFD).
ss_json_str() {
	_js=$(printf '%s' "$1" | "$SIDESCOPE" plumbing json) || return 1
	printf '%s' "$_js"
}

# Text from stdin that another program or the app chose (process names,
# their messages), made safe for a terminal line by line as sidescope
# escapes names ('sidescope plumbing tty-safe': C0 controls, DEL, C1 and
# each byte of invalid UTF-8 escaped, backslashes kept, NULs dropped).
ss_tty_safe() { "$SIDESCOPE" plumbing tty-safe; }

# One message on stderr: ss_msg LEVEL TEXT (LEVEL: error, warning, or
# info under --json).
ss_msg() {
	if [ "$ss_json" = 1 ]; then
		printf '{"level":"%s","program":%s,"message":%s}\n' "$1" \
			"$(ss_json_str "$ss_prog")" "$(ss_json_str "$2")" >&2
	else
		printf '%s: %s: %s\n' "$ss_prog" "$1" "$2" >&2
	fi
}
# Progress on stderr: the line as it is, or with --json an "info" object.
ss_info() {
	if [ "$ss_json" = 1 ]; then ss_msg info "$*"; else printf '%s\n' "$*" >&2; fi
}
# Progress on stderr under the program's name, "PROG: TEXT" (with --json an
# "info" object).
ss_note() {
	if [ "$ss_json" = 1 ]; then ss_msg info "$*"; else printf '%s: %s\n' "$ss_prog" "$*" >&2; fi
}
ss_err() { ss_msg error "$*"; }
ss_warn() { ss_msg warning "$*"; }
ss_die() { ss_err "$@"; exit 1; }

# Bad usage: the message, a hint, exit 2 (under --json, the hint is in the
# message: stderr holds JSON lines only).
ss_usage_error() {
	if [ "$ss_json" = 1 ]; then
		ss_err "$* (see '$ss_prog -h')"
	else
		ss_err "$*"
		printf "Run '%s -h' for usage.\n" "$ss_prog" >&2
	fi
	exit 2
}

# True when --json is among the options in "$@" (before a "--"): set
# ss_json before parsing, so that an error in the options is JSON too.
ss_want_json() {
	for _a in "$@"; do
		case "$_a" in
		--) return 1 ;;
		--json) return 0 ;;
		esac
	done
	return 1
}

# Print the comment block at the top of script $1 (its usage text).
ss_usage() {
	sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p;}' "$1"
}

# Timestamped log line to stderr: 2026-12-01T06:00:00Z prog: message
ss_log() { printf '%s %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ss_prog" "$*" >&2; }

ss_is_uint() {
	case "$1" in
	''|*[!0-9]*) return 1 ;;
	*) return 0 ;;
	esac
}

# Check a numeric option: ss_need_uint NAME VALUE [MIN]
ss_need_uint() {
	ss_is_uint "$2" || ss_usage_error "$1 must be a whole number, not '$2'"
	[ "$2" -ge "${3:-0}" ] || ss_usage_error "$1 must be at least ${3:-0}, not '$2'"
}

# A size in bytes, in the grammar of sidescope's sizes ('sidescope plumbing
# size': 512, 64k, 4M, 2Gi, 16KiB, 1MB). Prints the bytes; returns 1 when
# $1 is no such size or more than the shell counts (2^63 - 1 bytes).
ss_size() { "$SIDESCOPE" plumbing size -- "$1"; }

# A string reduced to [A-Za-z0-9._-] (file names, Pyroscope labels).
ss_safe_name() {
	printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-64
}

# True when $1 is a regular file and not a symbolic link to one.
ss_is_file() { [ -f "$1" ] && [ ! -L "$1" ]; }

ss_utc_stamp() { date -u +%Y%m%dT%H%M%SZ; }

ss_pod_name() {
	_n=${SIDESCOPE_POD:-${POD_NAME:-}}
	[ -n "$_n" ] || _n=$(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null || echo pod)
	ss_safe_name "$_n"
}

# A path that no command can take for an option: "-x" becomes "./-x".
ss_path_arg() {
	case "$1" in
	-*) printf './%s\n' "$1" ;;
	*) printf '%s\n' "$1" ;;
	esac
}

ss_out_dir() {
	if [ -n "${SIDESCOPE_OUT:-}" ]; then
		ss_path_arg "$SIDESCOPE_OUT"
	elif [ -d /out ] && [ -w /out ]; then
		echo /out
	else
		pwd
	fi
}

# The process name of PID $1 (comm), made safe for a file name.
ss_comm() {
	_c=$(cat "/proc/$1/comm" 2>/dev/null) || _c=unknown
	ss_safe_name "$_c"
}

# The pod's infrastructure process (pause, catatonit) is never a target.
ss_is_infra() {
	case "$(cat "/proc/$1/comm" 2>/dev/null)" in
	pause|catatonit|tini) return 0 ;;
	esac
	return 1
}

# PIDs of the other containers' processes, without the pod's pause process,
# one a line, optionally only those matching name $1.
ss_other_pids() {
	if [ -n "${1:-}" ]; then
		_all=$("$SIDESCOPE" ps --others -q -n "$1" 2>/dev/null) || _all=""
	else
		_all=$("$SIDESCOPE" ps --others -q) || return 1
	fi
	for _p in $_all; do
		ss_is_infra "$_p" || echo "$_p"
	done
}

# Text the app controls (a process name) made safe for one line on a
# terminal: control characters shown as '?'.
ss_line_safe() { printf '%s' "$1" | LC_ALL=C tr '\000-\037\177' '?'; }

# Check that PID $1 is a process a script can take, by sidescope's rule
# ('sidescope plumbing target': it exists in this PID namespace, it is no
# thread of another, no kernel thread, not exited). Prints nothing; on
# failure says what it is instead, returns 1.
ss_check_pid() {
	_v=$("$SIDESCOPE" plumbing target -- "$1") && return 0
	case "$_v" in
	"thread "*)
		_tgid=${_v#thread }
		ss_err "PID $1 is a thread of process $_tgid ($(ss_line_safe "$(cat "/proc/$_tgid/comm" 2>/dev/null)")); use -p $_tgid"
		;;
	kernel-thread)
		ss_err "PID $1 is a kernel thread ($(ss_line_safe "$(cat "/proc/$1/comm" 2>/dev/null)")): it has no user space"
		;;
	exited)
		ss_err "PID $1 ($(ss_line_safe "$(cat "/proc/$1/comm" 2>/dev/null)")) has exited"
		;;
	*)
		ss_err "no process with PID $1 in this PID namespace (list them: sidescope ps)"
		;;
	esac
	return 1
}

# One process of those that a name matched: ss_pick_one NAME PID...
# (NAME empty: "every other container's process"). Prints the PID when
# there is exactly one; else says what matched and returns 1.
ss_pick_one() {
	_what=$1
	shift
	if [ "$#" -eq 1 ]; then
		echo "$1"
		return 0
	fi
	if [ "$#" -eq 0 ]; then
		if [ -n "$_what" ]; then
			ss_err "no process named '$(ss_line_safe "$_what")' outside this container (list them: sidescope ps)"
		else
			ss_err "no other container's process is visible (needs shareProcessNamespace: true; run 'doctor')"
		fi
		return 1
	fi
	_list=$(printf '%s\n' "$@" | paste -s -d , - | sed 's/,/, /g')
	if [ -n "$_what" ]; then
		ss_err "several processes match '$(ss_line_safe "$_what")': PIDs $_list; give one with -p PID (list them: sidescope ps)"
	else
		ss_err "several processes run outside this container: PIDs $_list; give one with -p PID or -n NAME (list them: sidescope ps)"
	fi
	return 1
}

# Resolve a target: ss_find_target pid PID | name NAME | "" (the only
# process outside this container). Prints one PID; on failure says why and
# what to give instead, returns 1.
ss_find_target() {
	case "${1:-}" in
	pid)
		ss_check_pid "$2" || return 1
		echo "$2"
		return 0
		;;
	name) _t=$2 ;;
	*) _t="" ;;
	esac
	_pids=$(ss_other_pids "$_t") || { ss_err "cannot list the pod's processes"; return 1; }
	# shellcheck disable=SC2086 # PIDs: digits only
	ss_pick_one "$_t" $_pids
}

# The target of a script from its options: ss_add_target HOW VALUE, for
# each of -p PID (HOW "-p"), -n NAME ("-n") and a positional PID|NAME
# (""); sets ss_target_kind (pid or name), ss_target and ss_target_how, the
# words that named it. A second target is bad usage (exit 2).
# shellcheck disable=SC2034 # read by the scripts
ss_target_kind=""
ss_target=""
ss_target_how=""
# shellcheck disable=SC2034
ss_add_target() {
	case "$1" in
	-p) _how="-p $2" ;;
	-n) _how="-n '$2'" ;;
	*) _how="'$2'" ;;
	esac
	[ -z "$ss_target_how" ] ||
		ss_usage_error "one target only, got $ss_target_how and $_how (-p PID, -n NAME or one PID|NAME)"
	case "$1" in
	-p)
		case "$2" in
		*,*) ss_usage_error "one PID only, not '$2' (this script traces one process)" ;;
		esac
		if ! ss_is_uint "$2" || [ "${#2}" -gt 10 ]; then
			ss_usage_error "-p needs a PID, not '$2'"
		fi
		ss_target_kind=pid ;;
	-n)
		[ -n "$2" ] || ss_usage_error "-n needs a NAME"
		ss_target_kind=name ;;
	*)
		if ss_is_uint "$2"; then ss_target_kind=pid; else ss_target_kind=name; fi
		;;
	esac
	ss_target=$2
	ss_target_how=$_how
}

# Check that the -o FILEs in $1 (one a line) can be written, before any
# capture: their directories exist and are writable. Exits 1 naming the
# first that cannot.
ss_check_out_dirs() {
	while IFS= read -r _f; do
		case "$_f" in ""|-) continue ;; esac
		_d=$(dirname -- "$_f")
		[ -d "$_d" ] || ss_die "cannot write '$_f': directory '$_d' does not exist"
		[ -w "$_d" ] || ss_die "cannot write '$_f': directory '$_d' is not writable"
	done <<EOF
$1
EOF
}

# Check FILE $1, given to -o: an existing directory there is the old
# meaning of a script's -o (bad usage, exit 2).
ss_check_out_file() {
	[ "$1" = - ] || [ ! -d "$1" ] ||
		ss_usage_error "'$1' is a directory; the output directory is -O DIR"
}

# The line a user runs on their machine to fetch file $1 from this sidecar.
ss_kubectl_cp_hint() {
	_ns=""
	[ -z "${POD_NAMESPACE:-}" ] || _ns="-n $POD_NAMESPACE "
	printf 'kubectl cp %s-c %s %s:%s ./%s\n' "$_ns" "${SIDESCOPE_CONTAINER:-sidescope}" \
		"${SIDESCOPE_POD:-${POD_NAME:-$(ss_pod_name)}}" "$1" "$(basename -- "$1")"
}

# Run a command in the background and wait for it, passing SIGINT and
# SIGTERM on to it as SIGTERM (sidescope ends a capture cleanly on it and
# still writes its outputs). Returns the command's exit status; sets
# ss_interrupted=1 when a signal came. After the command, INT and TERM are
# only noted (ss_interrupted=1): its outputs are written by then, and a
# signal while the script reports them must not end it with 143 and the
# files there.
# shellcheck disable=SC2034 # read by the scripts that source this
ss_interrupted=0
ss_run() {
	# the trap first: a signal while the child starts is not lost
	_ss_child=""
	trap 'ss_interrupted=1; [ -z "$_ss_child" ] || kill -TERM "$_ss_child" 2>/dev/null || :' INT TERM
	"$@" &
	_ss_child=$!
	[ "$ss_interrupted" = 0 ] || kill -TERM "$_ss_child" 2>/dev/null || :
	while :; do
		_ss_rc=0
		wait "$_ss_child" || _ss_rc=$?
		kill -0 "$_ss_child" 2>/dev/null || break
	done
	trap 'ss_interrupted=1' INT TERM
	return "$_ss_rc"
}

# PIDs (one a line) of processes outside this container's mount namespace
# that can reach path $1 through one of their mounts: the same filesystem
# (major:minor) with a mount root at or above the path's place in it. The
# sidecar's own state must not be where the application can write it.
# Kernel threads, processes we cannot inspect and those of PID 1's mount
# namespace (the pod's pause container; with hostPID, the node itself, which
# is trusted) are skipped.
ss_shared_with() {
	_sp=$(readlink -f -- "$1" 2>/dev/null) || return 0
	[ -e /proc/self/ns/mnt ] || return 0
	# our mount holding the path: longest mount point that is a prefix
	# paths reach awk through ENVIRON: -v would take their backslashes
	# for escape sequences
	_where=$(SS_PATH=$_sp awk '
		function unesc(s) { gsub(/\\040/, " ", s); gsub(/\\011/, "\t", s);
			gsub(/\\012/, "\n", s); gsub(/\\134/, "\\", s); return s }
		BEGIN { p = ENVIRON["SS_PATH"] }
		{ mp = unesc($5)
		  if (mp == "/" || p == mp || index(p, mp "/") == 1) {
			if (length(mp) >= best) { best = length(mp); dev = $3; root = unesc($4); m = mp } } }
		END { if (dev == "") exit 1
		  rest = (m == "/") ? p : substr(p, length(m) + 1)
		  f = (root == "/") ? rest : root rest
		  if (f == "") f = "/"
		  print dev; print f }' /proc/self/mountinfo 2>/dev/null) || return 0
	# the device, a newline, then the path (which may hold newlines too)
	_dev=${_where%%"$ss_nl"*}
	_fsp=${_where#*"$ss_nl"}
	# the mount tables of the processes of other namespaces, read by one
	# grep (which, unlike busybox awk, goes on past a process that exits)
	set --
	for _d in /proc/[0-9]*; do
		# the same namespace: the same nsfs inode. test -ef forks nothing,
		# which counts with hundreds of processes; busybox sh, dash and
		# bash all have it.
		[ -e "$_d/ns/mnt" ] || continue
		# shellcheck disable=SC3013
		[ "$_d/ns/mnt" -ef /proc/self/ns/mnt ] && continue
		# shellcheck disable=SC3013
		[ "$_d/ns/mnt" -ef /proc/1/ns/mnt ] && continue
		# kernel threads (kdevtmpfs has a namespace of its own) have no exe
		[ -e "$_d/exe" ] || continue
		set -- "$@" "$_d/mountinfo"
	done
	[ "$#" -gt 0 ] || return 0
	grep -H '' -- "$@" 2>/dev/null | SS_DEV=$_dev SS_FSPATH=$_fsp awk '
		function unesc(s) { gsub(/\\040/, " ", s); gsub(/\\011/, "\t", s);
			gsub(/\\012/, "\n", s); gsub(/\\134/, "\\", s); return s }
		BEGIN { dev = ENVIRON["SS_DEV"]; f = ENVIRON["SS_FSPATH"] }
		# /proc/PID/mountinfo:ID PARENT MAJ:MIN ROOT ...
		$3 == dev { r = unesc($4)
		  if (r == "/" || f == r || index(f, r "/") == 1) {
			pid = $1; sub(/^\/proc\//, "", pid); sub(/\/mountinfo:.*/, "", pid)
			if (!(pid in seen)) { seen[pid] = 1; print pid } } }'
	return 0
}

# Make (or check) directory $1 as private state of this sidecar: a real
# directory (no link), ours, mode 0700, and out of reach of every other
# container of the pod, and so is the directory holding it (else the app
# could swap it for a link between our checks and our use). Nothing is
# changed on a directory that fails the checks. Prints nothing; on failure
# says why and returns 1.
ss_private_dir() {
	_fix="give TMPDIR a volume of the sidecar's own (an emptyDir mounted only in this container)"
	if [ -L "$1" ]; then
		ss_err "'$1' is a symbolic link; the sidecar's state needs a directory of its own"
		return 1
	fi
	# shellcheck disable=SC2174 # -m applies to the last directory: the one we check
	mkdir -p -m 0700 -- "$1" 2>/dev/null || { ss_err "cannot create '$1'"; return 1; }
	_real=$(readlink -f -- "$1" 2>/dev/null) || { ss_err "cannot resolve '$1'"; return 1; }
	# the volume first: chmod follows links, and nothing may follow one the
	# app could have planted
	_others=$(ss_shared_with "$_real" | tr '\n' ' ')
	if [ -n "$_others" ]; then
		ss_err "'$1' is on a volume that other containers mount (PIDs ${_others% }): the app could alter the sidecar's state there; $_fix"
		return 1
	fi
	# a mount point of its own cannot be renamed from inside the volume
	# above it; anything else can, by whoever writes its parent
	_up=$(dirname -- "$_real")
	if [ "$(stat -c %d -- "$_up" 2>/dev/null)" = "$(stat -c %d -- "$_real" 2>/dev/null)" ]; then
		_others=$(ss_shared_with "$_up" | tr '\n' ' ')
		if [ -n "$_others" ]; then
			ss_err "'$1' is in '$_up', which other containers mount (PIDs ${_others% }): the app could replace it; $_fix"
			return 1
		fi
	fi
	if [ -L "$1" ] || [ ! -d "$_real" ]; then
		ss_err "'$1' changed while it was checked; the sidecar's state needs a directory of its own"
		return 1
	fi
	[ "$(stat -c %u -- "$_real" 2>/dev/null)" = "$(id -u)" ] ||
		{ ss_err "'$1' belongs to another user; the sidecar's state needs a directory of its own"; return 1; }
	chmod 0700 -- "$_real" 2>/dev/null || { ss_err "cannot make '$1' private (chmod 0700)"; return 1; }
	return 0
}

# Warn (one line on stderr) when directory $1, where results go, is on a
# volume that another container mounts: the app could alter or remove
# them there. $2 names the directory for the message ("output directory").
ss_warn_shared() {
	_others=$(ss_shared_with "$1" | tr '\n' ' ')
	[ -z "$_others" ] ||
		ss_warn "${2:-directory} '$1' is on a volume that other containers mount (PIDs ${_others% }): the app could alter or remove the results there"
	return 0
}

# This sidecar's private temporary directory (TMPDIR, default
# /run/sidescope/tmp), made and checked by ss_private_dir; exported as TMPDIR
# so that every command we run keeps its temporary files there too.
ss_tmpdir() {
	TMPDIR=${TMPDIR:-/run/sidescope/tmp}
	ss_private_dir "$TMPDIR" || return 1
	export TMPDIR
	printf '%s\n' "$TMPDIR"
}

# The mount ID of PID $1's root mount (tells its container).
ss_root_mount() { awk '$5 == "/" { print $1; f = 1; exit } END { exit !f }' "/proc/$1/mountinfo" 2>/dev/null; }

# The processes of other containers that could ptrace this one (and so
# reach its files through /proc/PID/root: Linux lets a process ptrace one of
# the same user whose capabilities are a subset of its own), one
# "PID REASON" a line: "ptrace" when their container may hold
# CAP_SYS_PTRACE, "superset" when it may hold every capability we have (a
# process of the same user then needs none). Only from files anyone may
# read: /proc/PID/mountinfo tells the container (its root mount), CapBnd
# what it can gain, uid_map the user namespace.
ss_ptrace_reachers() {
	_own=$(ss_root_mount self) || return 0
	_pid1=$(ss_root_mount 1) || _pid1=$_own
	_map=$(cat /proc/self/uid_map 2>/dev/null)
	_prm=$(sed -n 's/^CapPrm:[[:space:]]*//p' /proc/self/status)
	for _d in /proc/[0-9]*; do
		_p=${_d#/proc/}
		[ "$_p" != 1 ] || continue
		_m=$(ss_root_mount "$_p") || continue
		case "$_m" in "$_own"|"$_pid1") continue ;; esac
		# kernel threads have an empty command line
		[ "$(head -c 1 "$_d/cmdline" 2>/dev/null | wc -c)" -gt 0 ] || continue
		[ "$(cat "$_d/uid_map" 2>/dev/null)" = "$_map" ] || continue
		_bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' "$_d/status" 2>/dev/null)
		[ -n "$_bnd" ] || continue
		if [ $(( (0x$_bnd >> 19) & 1 )) -eq 1 ]; then
			echo "$_p ptrace"
		elif [ $(( 0x$_prm & ~0x$_bnd )) -eq 0 ]; then
			echo "$_p superset"
		fi
	done
}
