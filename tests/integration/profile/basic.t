#!/bin/sh
# sidescope profile against the bundled workload: the known call tree,
# every output format read by its consumer, signals, exits and errors.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
. "$SIDESCOPE_SRC/tests/lib/pprof.sh"
require_root
require_cmd jq setpriv xmllint
require_pprof
T=$TMPDIR_TEST

"$SIDESCOPE_BUILD/workload" -t 2 -r "$T/wl.ready" >/dev/null &
wl=$!
on_exit "kill $wl"
wait_for_file "$T/wl.ready" 10
ok $? "workload started"

"$SIDESCOPE" profile -p "$wl" -d 3 -o "$T/p.folded" -o "$T/p.pb.gz" -o "$T/p.json" 2>"$T/err"
is "$?" 0 "profile -p writes three outputs"
total=$(awk '{ n += $NF } END { print n + 0 }' "$T/p.folded")
good=$(awk '/(^|;)main;run_workers;worker_loop;compute_outer;compute_middle;compute_inner;hash_leaf($|;| )/ ||
	/(^|;)main;run_workers;worker_loop;parse_outer;parse_inner;checksum_leaf($|;| )/ ||
	/^workload;((__)?clone3?;)?(start_thread|clone3?);.*worker_loop;(compute_outer;compute_middle;compute_inner;hash_leaf|parse_outer;parse_inner;checksum_leaf)($|;| )/ { n += $NF }
	END { print n + 0 }' "$T/p.folded")
diag "$good of $total samples in the expected call tree"
ok "$([ "$total" -gt 100 ]; echo $?)" "enough samples ($total)"
ok "$([ $((good * 100)) -ge $((total * 90)) ]; echo $?)" ">= 90% of samples show the expected frames in order"
like "$(cat "$T/p.folded")" '^workload;.* [0-9]+$' "folded lines: comm;frames count"

out=$("$PPROF" -top "$T/p.pb.gz" 2>&1)
ok $? "pprof -top reads the profile"
like "$out" "hash_leaf" "pprof -top names hash_leaf"
out=$("$PPROF" -raw "$T/p.pb.gz" 2>&1)
ok $? "pprof -raw reads the profile"
like "$out" "pid:\[$wl\]" "pprof samples carry the pid label"
like "$out" "samples/count cpu/nanoseconds" "sample types"
like "$out" "Build ID: [0-9a-f]+|build.?id|[0-9a-f]{40}" "mappings carry build ids"

is "$(jq -r '.stacks[0].pid' "$T/p.json")" "$wl" "json: pid"
is "$(jq -r '[.stacks[].count] | add' "$T/p.json")" "$total" "json and folded agree on the total"
is "$(jq -r '.meta.hz' "$T/p.json")" 99 "json: frequency"
ok "$(jq -e '.meta.lost | has("stack_store_full")' "$T/p.json" >/dev/null; echo $?)" \
	"json: lost-stack counters in the metadata"
is "$(jq -r '.functions[] | select(.name == "hash_leaf") | .kind' "$T/p.json")" native "json: kind"

# flame graph output, and sidescope flame reading our pprof
"$SIDESCOPE" profile -p "$wl" -d 1 -o "$T/p.svg" 2>/dev/null
is "$?" 0 "profile -o x.svg"
xmllint --noout "$T/p.svg"
ok $? "the SVG is well-formed XML"
like "$(cat "$T/p.svg")" "compute_inner" "the SVG names the workload's frames"
"$SIDESCOPE" profile -p "$wl" -d 1 --format svg -o "$T/p.out" 2>/dev/null
xmllint --noout "$T/p.out"
ok $? "--format svg overrides the extension"
"$SIDESCOPE" flame "$T/p.pb.gz" -o "$T/from-pprof.svg" 2>/dev/null
ok $? "sidescope flame reads the pprof output"

out=$("$SIDESCOPE" profile -n workload -d 1 2>/dev/null)
is "$?" 0 "profile -n with the default top table"
like "$(printf '%s\n' "$out" | sed -n 2p)" "SELF%.*TOTAL%.*FUNCTION" "top table header"
like "$out" "hash_leaf" "top table names the leaf"
is "$(printf '%s\n' "$out" | awk 'length > 80' | wc -l | tr -d ' ')" 0 "top table fits 80 columns"

# a cgroup (a container): only its processes
cgr=/sys/fs/cgroup
[ -f "$cgr/cgroup.procs" ] && [ ! -d "$cgr/unified" ] || cgr=/sys/fs/cgroup/unified
cg="$cgr/sidescope-test-$$"
if mkdir "$cg" 2>/dev/null; then
	on_exit "rmdir '$cg'"
	sh -c 'echo "$$" > "$1/cgroup.procs" && exec "$2" -d 3 -r "$3"' sh "$cg" \
		"$SIDESCOPE_BUILD/workload" "$T/cg.ready" >/dev/null &
	cgwl=$!
	wait_for_file "$T/cg.ready" 10
	"$SIDESCOPE" profile --cgroup "$cg" -d 1 -o "$T/cg.json" 2>/dev/null
	is "$?" 0 "profile --cgroup"
	is "$(jq -r '[.stacks[].pid] | unique | join(",")' "$T/cg.json")" "$cgwl" \
		"--cgroup: only the cgroup's process"
	wait "$cgwl"
else
	fail "cannot create a cgroup under $cgr"
fi

# the target exits mid-capture: the profile is still written and symbolized
"$SIDESCOPE_BUILD/workload" -d 1 -r "$T/short.ready" >/dev/null &
short=$!
wait_for_file "$T/short.ready" 10
"$SIDESCOPE" profile -p "$short" -d 20 -o "$T/short.folded" 2>"$T/err"
is "$?" 0 "target exiting mid-capture: exit 0"
like "$(cat "$T/err")" "exited; stopping" "stops once every target has exited"
like "$(cat "$T/short.folded")" "compute_inner;hash_leaf" "exited target still symbolized"
wait "$short"

# SIGTERM mid-capture: every output still written
"$SIDESCOPE" profile -v -p "$wl" -d 0 -o "$T/term.folded" -o "$T/term.pb.gz" \
	-o "$T/term.json" 2>"$T/term.err" &
prof=$!
on_exit "kill $prof"
wait_for_grep "$T/term.err" "sampling at" 10
ok $? "the capture started"
# two periodic drains, so both count maps were swapped and drained
wait_for_grep "$T/term.err" "drain 2:" 10
ok $? "two periodic drains ran"
wait_for_grep "$T/term.err" "drain 3:" 10
kill -TERM "$prof"
wait "$prof"
is "$?" 0 "SIGTERM: exit 0"
like "$(cat "$T/term.folded")" "hash_leaf" "SIGTERM: folded output written"
"$PPROF" -top "$T/term.pb.gz" >/dev/null 2>&1
ok $? "SIGTERM: pprof output readable"
# drains swapped the count maps several times: not one increment lost
is "$(jq -r '.meta.samples_in_profile' "$T/term.json")" "$(jq -r '.meta.samples' "$T/term.json")" \
	"every sample counted in BPF is in the profile, across drains"
# a steady workload: a later drain adds the counts of keys named before to
# their stacks, and with no new stack leaves the stack store as it was
like "$(cat "$T/term.err")" "drain [2-9]: [a-z]+ map, [0-9]+ keys, [1-9][0-9]* named before" \
	"keys named at an earlier drain counted without naming them again"
like "$(cat "$T/term.err")" "stack store left as it was" "a drain without a new stack leaves the store"
unlike "$(cat "$T/term.folded")" "\[lost (user|kernel) stack\]" "no stack lost across drains"

# errors
"$SIDESCOPE" profile -p 2147483000 -d 1 >/dev/null 2>"$T/err"
is "$?" 1 "missing PID exits 1"
like "$(cat "$T/err")" "no process with PID 2147483000" "missing PID is named"
"$SIDESCOPE" profile -n no-such-process-name -d 1 >/dev/null 2>"$T/err"
is "$?" 1 "name matching nothing exits 1"
like "$(cat "$T/err")" "no process matches 'no-such-process-name'" "the name is named"
"$SIDESCOPE" profile -d 1 >/dev/null 2>&1
is "$?" 2 "no target: usage error"
"$SIDESCOPE" profile -p "$wl" -F 0 >/dev/null 2>&1
is "$?" 2 "bad frequency: usage error"
"$SIDESCOPE" profile -p "$wl" -o out.unknown >/dev/null 2>&1
is "$?" 2 "unknown output extension: usage error"
with_caps "$LEAST_CAPS" "$SIDESCOPE" profile -p "$wl" -d 1 -o "$T/least.folded" 2>"$T/err"
is "$?" 0 "with only CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE: exit 0"
like "$(cat "$T/least.folded")" "compute_inner;hash_leaf" "least privilege: user frames symbolized"
# kernel frames show up only when a sample lands in the kernel: then the
# missing CAP_SYSLOG must be named; without any, no warning is due
if grep -q '_\[k\]' "$T/least.folded"; then
	like "$(cat "$T/err")" "CAP_SYSLOG" "least privilege: hidden kernel symbols are named"
else
	unlike "$(cat "$T/err")" "kernel symbols" "least privilege: no kernel frames, no kernel warning"
fi
with_caps "" "$SIDESCOPE" profile -p "$wl" -d 1 >/dev/null 2>"$T/err"
is "$?" 1 "without capabilities: exit 1"
like "$(cat "$T/err")" "CAP_BPF.*doctor" "without capabilities: names CAP_BPF and doctor"
is "$(wc -l < "$T/err" | tr -d ' ')" 1 "without capabilities: one line"
"$SIDESCOPE" profile --help | grep -q '^EXAMPLES:'
ok $? "profile --help has examples"

done_testing
