#!/bin/sh
# sidescope ps in a simulated pod: the app in its own mount namespace with a
# perf map only in its private /tmp; sidescope in the same PID namespace.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/pod.sh"
require_root
require_cmd unshare nsenter jq ruby php perl erl

pod_start || skip_all "cannot create PID and mount namespaces"
ready="$TMPDIR_TEST/app.ready"
# shellcheck disable=SC2016
pod_app sh -c 'echo "7f0000001000 40 JitFrame::Run()" > "/tmp/perf-$$.map" &&
	exec "$1" -r "$2"' sh "$SIDESCOPE_BUILD/workload" "$ready"
wait_for_file "$ready" 10
ok $? "the app started"
app=$(cat "$ready")
host=$(pod_host_pid "$app")
on_exit "kill $host"
diag "app: pid $app in the pod, $host on the host"

out=$(pod_sidecar "$SIDESCOPE" ps -p "$app" --json)
ok $? "ps -p runs in the pod"
is "$(printf '%s' "$out" | jq -r '.[0].nspid')" "$app" "NSpid is the pod PID"
is "$(printf '%s' "$out" | jq -r '.[0].perf_map')" "/proc/$app/root/tmp/perf-$app.map" \
	"perf map found in the app's private /tmp"
is "$(printf '%s' "$out" | jq -r '.[0].runtime')" "native" "runtime is native"
ok "$([ ! -e "/tmp/perf-$app.map" ] || [ "$app" -eq 1 ]; echo $?)" "the perf map is not in the shared /tmp"

out=$("$SIDESCOPE" ps -p "$host" --json)
is "$(printf '%s' "$out" | jq -r '.[0].pid')" "$host" "host view: PID"
is "$(printf '%s' "$out" | jq -r '.[0].nspid')" "$app" "host view: NSpid is the pod PID"
is "$(printf '%s' "$out" | jq -r '.[0].ns_depth')" "2" "host view: two namespaces deep"
is "$(printf '%s' "$out" | jq -r '.[0].perf_map')" "/proc/$host/root/tmp/perf-$app.map" \
	"host view: perf map through /proc/PID/root"

out=$(pod_sidecar "$SIDESCOPE" ps -n workload -w)
like "$out" "^ +$app +$app .* native +yes +- .*workload -r" "text row: PID, NSPID, runtime, perf map"
out=$(pod_sidecar "$SIDESCOPE" ps -n workload)
is "$(printf '%s\n' "$out" | awk 'length > 79' | wc -l)" "0" "text output fits 80 columns"
is "$(printf '%s\n' "$out" | head -1 | awk '{print $1, $2, $3, $4, $5, $6, $7}')" \
	"PID NSPID CONTAINER RUNTIME PERFMAP UST COMMAND" "header"

out=$(pod_sidecar "$SIDESCOPE" ps -q --others)
like "$out" "^$app\$" "--others -q lists the app's PID"

out=$(pod_sidecar "$SIDESCOPE" ps --json | jq length)
ok $? "full --json list parses"
like "$out" '^[0-9]+$' "json list has a length"

# errors
"$SIDESCOPE" ps --bogus >/dev/null 2>"$TMPDIR_TEST/err"
is "$?" 2 "unknown option exits 2"
like "$(cat "$TMPDIR_TEST/err")" "unrecognized option" "unknown option names the option"
"$SIDESCOPE" ps -p notapid >/dev/null 2>&1
is "$?" 2 "bad PID list exits 2"
"$SIDESCOPE" ps -p 2147483000 >/dev/null 2>"$TMPDIR_TEST/err"
is "$?" 1 "missing PID exits 1"
like "$(cat "$TMPDIR_TEST/err")" "no process with PID 2147483000" "missing PID is named"
"$SIDESCOPE" ps -n no-such-process-name >/dev/null 2>"$TMPDIR_TEST/err"
is "$?" 1 "name matching nothing exits 1"
"$SIDESCOPE" nosuchcommand >/dev/null 2>&1
is "$?" 2 "unknown command exits 2"
"$SIDESCOPE" ps --help | grep -q '^EXAMPLES:'
ok $? "ps --help has examples"
like "$("$SIDESCOPE" --version)" '^sidescope [0-9]+\.[0-9]+\.[0-9]+$' "--version"

# the interpreters users run in pods, as their distributions install them:
# each one's runtime named (Ruby 3.1 read "native" before)
for rt in ruby php perl beam; do
	rm -f "$TMPDIR_TEST/$rt.ready"
	case $rt in
	# each writes its ready file, then sleeps until killed
	ruby) ruby -e 'File.write(ARGV[0], "1"); sleep' "$TMPDIR_TEST/$rt.ready" & ;;
	# shellcheck disable=SC2016 # PHP's own variable
	php) php -r 'file_put_contents($argv[1], "1"); sleep(600);' "$TMPDIR_TEST/$rt.ready" & ;;
	perl) perl -e 'open(my $f, ">", $ARGV[0]) or die; print $f "1"; close($f); sleep' "$TMPDIR_TEST/$rt.ready" & ;;
	beam) erl -noshell -eval "file:write_file(\"$TMPDIR_TEST/$rt.ready\", <<\"1\">>), timer:sleep(600000)." & ;;
	esac
	job=$!
	wait_for_file "$TMPDIR_TEST/$rt.ready" 20
	# erl is a script that execs the VM, beam.smp: the same PID
	is "$("$SIDESCOPE" ps -p "$job" --json | jq -r '.[0].runtime')" "$rt" \
		"$rt: $(readlink "/proc/$job/exe") is named $rt"
	kill "$job" 2>/dev/null
	wait "$job" 2>/dev/null
done

done_testing
