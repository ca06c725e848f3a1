# shellcheck shell=sh
# An app that appends a line of its choosing to every file it can find in
# the directories it is given, over and over: what a compromised app does to
# a shared emptyDir (0777, no sticky bit) to steer a sidecar that keeps
# state or arguments there. Source after tap.sh and pod.sh, after pod_start.

# Start the appender as the pod's app: PAYLOAD is appended (as a line of
# its own) once to each regular file found under DIR...; after each pass
# over them all the number of passes is in file ROUNDS; the app's PID in the
# pod is in ROUNDS.pid.
pod_app_appender() { # PAYLOAD ROUNDS DIR...
	# shellcheck disable=SC2016 # the app's own script
	pod_app sh -c '
		echo "$$" > "$2.pid"
		payload=$1 rounds=$2
		shift 2
		n=0
		while :; do
			find "$@" -type f 2>/dev/null | while IFS= read -r f; do
				grep -qxF -- "$payload" "$f" 2>/dev/null && continue
				# a line of its own, and no empty line before it
				nl=""
				[ -z "$(tail -c 1 "$f" 2>/dev/null)" ] || nl="\n"
				printf "$nl%s\n" "$payload" >> "$f" 2>/dev/null
			done
			n=$((n + 1))
			echo "$n" > "$rounds.new" && mv -f "$rounds.new" "$rounds"
			sleep 0.01
		done' sh "$@"
}

# Wait until the appender has made N more passes than it had made when
# called (at most SECONDS, default 10).
appender_wait_rounds() { # ROUNDS N [SECONDS]
	_r0=$(cat "$1" 2>/dev/null || echo 0)
	_w=$(( ${3:-10} * 20 ))
	while [ "$(cat "$1" 2>/dev/null || echo 0)" -lt $((_r0 + $2)) ] && [ "$_w" -gt 0 ]; do
		sleep 0.05
		_w=$((_w - 1))
	done
	[ "$(cat "$1" 2>/dev/null || echo 0)" -ge $((_r0 + $2)) ]
}
