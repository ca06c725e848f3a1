# shellcheck shell=sh
# The .NET sample (examples/dotnet) as a test target: the published
# ReadyToRun build in $SIDESCOPE_BUILD/dotnet/app, run on the machine's .NET
# runtime with the settings examples/dotnet/deployment.yaml uses. Source
# after tap.sh (and pod.sh to run it in a simulated pod).

DOTNET_APP_DIR="$SIDESCOPE_BUILD/dotnet/app"
DOTNET_APP_DLL="$DOTNET_APP_DIR/SampleApp.dll"
DOTNET_URL=""	# http://127.0.0.1:PORT once started
DOTNET_PID=""	# the app's PID as the sidecar sees it (the pod's, in a pod)
DOTNET_HOST_PID=""	# the app's PID on the host

require_dotnet_sample() {
	command -v dotnet >/dev/null 2>&1 || skip_all "needs the .NET runtime (dotnet)"
	dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft.AspNetCore.App 10\.' ||
		skip_all "needs the ASP.NET Core 10 runtime"
	[ -f "$DOTNET_APP_DLL" ] || skip_all "the sample is not built ($DOTNET_APP_DLL; run make)"
}

# The environment the sample runs with, one VAR=VALUE a line, read from the
# deployment users apply, so the tests run what the example promises.
dotnet_env() {
	awk '/- name: DOTNET_|- name: ASPNETCORE_/ { n = $3 }
		n != "" && /value:/ { v = $2; gsub(/"/, "", v); print n "=" v; n = "" }' \
		"$SIDESCOPE_SRC/examples/dotnet/deployment.yaml" |
		grep -v '^ASPNETCORE_URLS=' | sort -u
}

# Start the sample on 127.0.0.1 and a free port; with "pod" as $1, as the
# app of the simulated pod (pod_start first). Extra VAR=VALUE arguments
# override the deployment's settings. Waits for the server to listen.
dotnet_start() {
	_where=$1
	shift
	_ready="$TMPDIR_TEST/dotnet.ready"
	_pidf="$TMPDIR_TEST/dotnet.pid"
	rm -f "$_ready" "$_pidf"
	# shellcheck disable=SC2046
	set -- env $(dotnet_env) "$@" ASPNETCORE_URLS=http://127.0.0.1:0 \
		SAMPLEAPP_READY_FILE="$_ready" DOTNET_CLI_TELEMETRY_OPTOUT=1 \
		dotnet "$DOTNET_APP_DLL"
	# shellcheck disable=SC2016
	if [ "$_where" = pod ]; then
		pod_app sh -c 'echo "$$" > "$0"; exec "$@"' "$_pidf" "$@"
	else
		sh -c 'echo "$$" > "$0"; exec "$@"' "$_pidf" "$@" &
	fi
	_launcher=$!
	on_exit "kill $_launcher"
	wait_for_file "$_pidf" 20 || return 1
	DOTNET_PID=$(cat "$_pidf")
	if [ "$_where" = pod ]; then
		DOTNET_HOST_PID=$(pod_host_pid "$DOTNET_PID") || return 1
	else
		DOTNET_HOST_PID=$DOTNET_PID
	fi
	on_exit "kill $DOTNET_HOST_PID"
	# the first start of a fresh build can be slow on a loaded machine; a
	# start that fails says how far it got, on stderr where prove shows it
	if ! wait_for_file "$_ready" 120; then
		echo "# the sample (host PID $DOTNET_HOST_PID) is not ready after 120 s:" \
			"$(cat "/proc/$DOTNET_HOST_PID/status" 2>/dev/null | grep -E '^(State|Threads):' | tr '\n' ' ')" >&2
		return 1
	fi
	DOTNET_URL=$(head -n 1 "$_ready")
	case "$DOTNET_URL" in http://127.0.0.1:[0-9]*) ;; *) return 1 ;; esac
}

# GET a path of the sample; prints the body, fails on an HTTP error.
dotnet_get() {
	curl -fsS --max-time 60 "$DOTNET_URL$1"
}

# u32 little-endian at byte OFFSET of FILE
_le32() {
	od -An -v -tu4 -j "$2" -N 4 "$1" | tr -d ' '
}
_le16() {
	od -An -v -tu2 -j "$2" -N 2 "$1" | tr -d ' '
}

# File offset of RVA (hex, no 0x) in the PE file $1: through the section
# table, offset = RVA - VirtualAddress + PointerToRawData.
pe_rva_to_offset() {
	_pe=$(_le32 "$1" 60)
	_nsec=$(_le16 "$1" $((_pe + 6)))
	_sec=$((_pe + 24 + $(_le16 "$1" $((_pe + 20)))))
	_rva=$((0x$2))
	_i=0
	while [ "$_i" -lt "$_nsec" ]; do
		_vs=$(_le32 "$1" $((_sec + 40 * _i + 8)))
		_va=$(_le32 "$1" $((_sec + 40 * _i + 12)))
		_raw=$(_le32 "$1" $((_sec + 40 * _i + 20)))
		if [ "$_rva" -ge "$_va" ] && [ "$_rva" -lt $((_va + _vs)) ]; then
			printf '0x%x\n' $((_rva - _va + _raw))
			return 0
		fi
		_i=$((_i + 1))
	done
	return 1
}

# The file offset of a method's ReadyToRun code in SampleApp.dll, from the
# r2rmap crossgen2 wrote next to it (PublishReadyToRunEmitSymbols): an
# answer that does not come from sidescope's own ReadyToRun reader.
dotnet_r2r_offset() { # dotnet_r2r_offset 'SampleApp.EchoProvider::Echo('
	_rva=$(grep -F "$1" "$DOTNET_APP_DIR/SampleApp.ni.r2rmap" | head -n 1 | cut -d ' ' -f 1)
	[ -n "$_rva" ] || return 1
	pe_rva_to_offset "$DOTNET_APP_DLL" "$_rva"
}

# Run a command as the sidecar in the background; its PID in the pod goes to
# PIDFILE, for sidecar_signal (the background job's own PID is that of a
# subshell and nsenter, which do not pass signals on).
sidecar_bg() { # sidecar_bg PIDFILE CMD [ARG...]  (then: job=$!)
	_pf=$1
	shift
	rm -f "$_pf"
	# shellcheck disable=SC2016
	pod_sidecar sh -c 'echo "$$" > "$0"; exec "$@"' "$_pf" "$@" &
}

# Send signal SIG to the command sidecar_bg started; waits for its PID file.
sidecar_signal() { # sidecar_signal PIDFILE SIG
	wait_for_file "$1" 10 || return 1
	pod_sidecar kill "-$2" "$(cat "$1")"
}

# Wait until FILE has a line matching the extended regex, at most N seconds.
wait_for_match() { # wait_for_match FILE REGEX [SECONDS]
	_w=$(( ${3:-10} * 20 ))
	until grep -Eq -- "$2" "$1" 2>/dev/null; do
		[ "$_w" -gt 0 ] || return 1
		sleep 0.05
		_w=$((_w - 1))
	done
}
