# shellcheck shell=sh
# TAP helpers for the shell tests. Source it, call the checks, end with
# done_testing. Needs: SIDESCOPE (the binary) and SIDESCOPE_SRC from make.

# a machine whose profile sets debuginfod servers (Debian's
# libdebuginfod-common can) would make every capture ask them: the tests
# that mean to set them
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_MAXSIZE

_tap_n=0
_tap_failed=0
_tap_cleanups=""

ok() { # ok COND_EXIT_STATUS DESCRIPTION
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
}

pass() { ok 0 "$1"; }
fail() { ok 1 "$1"; }

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

is() { # is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "got:  '$1'" "want: '$2'"
	fi
}

like() { # like GOT EXTENDED_REGEX DESCRIPTION
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "got: $(printf '%s' "$1" | head -c 2000)" "want match: $2"
	fi
}

unlike() { # unlike GOT EXTENDED_REGEX DESCRIPTION
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		ok 1 "$3"
		diag "got: $(printf '%s' "$1" | head -c 2000)" "must not match: $2"
	else
		ok 0 "$3"
	fi
}

# Skip the whole file: a TAP skip, or a failure under SIDESCOPE_REQUIRE_ALL=1
# so that a green CI means every layer really ran.
skip_all() {
	if [ "${SIDESCOPE_REQUIRE_ALL:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - required but unavailable: $1"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root"
}

require_cmd() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_all "needs $_c"
	done
}

# Run at exit, last registered first.
on_exit() { _tap_cleanups="$1
$_tap_cleanups"; }

_tap_exit() {
	_rc=$?
	set +e
	printf '%s\n' "$_tap_cleanups" | while IFS= read -r _c; do
		[ -n "$_c" ] && eval "$_c" >/dev/null 2>&1
	done
	exit "$_rc"
}
trap _tap_exit EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Wait until a file exists (a target's "ready" signal), at most N seconds.
wait_for_file() { # wait_for_file PATH [SECONDS]
	_w=$(( ${2:-10} * 20 ))
	while [ ! -s "$1" ] && [ "$_w" -gt 0 ]; do
		sleep 0.05
		_w=$((_w - 1))
	done
	[ -s "$1" ]
}

# Wait until FILE holds a line matching the extended regex RE (a target's or
# a tracer's progress message), at most N seconds (default 10).
wait_for_grep() { # FILE RE [SECONDS]
	_w=$(( ${3:-10} * 20 ))
	while ! grep -Eq -- "$2" "$1" 2>/dev/null && [ "$_w" -gt 0 ]; do
		sleep 0.05
		_w=$((_w - 1))
	done
	grep -Eq -- "$2" "$1" 2>/dev/null
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}

: "${SIDESCOPE:?run through make test}"
: "${SIDESCOPE_SRC:?run through make test}"
SIDESCOPE_BUILD=${SIDESCOPE_BUILD:-$(dirname "$SIDESCOPE")}
export SIDESCOPE SIDESCOPE_SRC SIDESCOPE_BUILD
# Not under /tmp: simulated containers mount their own /tmp over it.
mkdir -p "$SIDESCOPE_BUILD/tmp"
TMPDIR_TEST=$(mktemp -d "$SIDESCOPE_BUILD/tmp/test.XXXXXX")
on_exit "rm -rf '$TMPDIR_TEST'"
