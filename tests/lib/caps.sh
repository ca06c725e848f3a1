# shellcheck shell=sh
# Run a command as root with only the listed capabilities, as a sidecar
# with a least-privilege securityContext would run: root's capabilities on
# exec are its bounding set, so shrinking that set is enough.
#   with_caps bpf,perfmon,sys_ptrace sidescope profile -p 42
#   with_caps "" sidescope ps          # no capabilities at all
# The --bounding-set argument that keeps exactly CAPS.
caps_bounding_set() {
	if [ -n "$1" ]; then
		printf -- '-all,%s' "$(printf '%s' "$1" | sed 's/\([^,]*\)/+\1/g')"
	else
		printf -- '-all'
	fi
}

with_caps() {
	_caps=$1
	shift
	setpriv --inh-caps=-all --bounding-set="$(caps_bounding_set "$_caps")" -- "$@"
}

# with_caps in the background: $! is the command itself (signals reach it).
with_caps_bg() {
	_caps=$1
	shift
	(exec setpriv --inh-caps=-all --bounding-set="$(caps_bounding_set "$_caps")" -- "$@") &
}

# The capabilities the project promises to need, and no more.
LEAST_CAPS="bpf,perfmon,sys_ptrace"
