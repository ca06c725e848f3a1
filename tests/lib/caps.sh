# shellcheck shell=sh
# Run a command as root with only the listed capabilities, as a sidecar
# with a least-privilege securityContext would run: root's capabilities on
# exec are its bounding set, so shrinking that set is enough.
#   with_caps bpf,perfmon,sys_ptrace sidescope profile -p 42
#   with_caps "" sidescope ps          # no capabilities at all
with_caps() {
	_caps=$1
	shift
	_set="-all"
	if [ -n "$_caps" ]; then
		_set="-all,$(printf '%s' "$_caps" | sed 's/\([^,]*\)/+\1/g')"
	fi
	setpriv --inh-caps=-all --bounding-set="$_set" -- "$@"
}

# The capabilities the project promises to need, and no more.
LEAST_CAPS="bpf,perfmon,sys_ptrace"
