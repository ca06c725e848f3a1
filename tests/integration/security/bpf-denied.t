#!/bin/sh
# BPF refused: 'sidescope profile' and 'sidescope uprobe' without the
# capabilities they need (each dropped in turn, and all of them) and under a
# seccomp filter that fails bpf(2) with EPERM, as container runtimes' default
# profiles do. Each time: exit 1, exactly one error line that names what is
# missing and points to 'doctor', and no output file.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/caps.sh"
require_root
require_cmd setpriv
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
T=$TMPDIR_TEST
APP="$SIDESCOPE_BUILD/tests/progs/replace_v1"
DENY="$SIDESCOPE_BUILD/tests/progs/seccomp_deny"
if [ ! -x "$APP" ] || [ ! -x "$DENY" ]; then
	skip_all "needs the test programs (make)"
fi

"$APP" loop > "$T/app.out" &
app=$!
on_exit "kill $app"
wait_for_grep "$T/app.out" "^ready" 10
ok $? "target started"
PROBE="p:$APP:probed_fn \"%d\", arg1"

# refused WANT_RE DESCRIPTION COMMAND...: exit 1, one line matching WANT_RE
# and naming doctor (under --json, one JSON error), no output file
refused() {
	_re=$1
	_what=$2
	shift 2
	rm -rf "$T/out"
	mkdir "$T/out"
	"$@" > "$T/stdout" 2> "$T/stderr"
	_rc=$?
	if [ "$_rc" -eq 1 ] && [ "$(wc -l < "$T/stderr" | tr -d ' ')" = 1 ] &&
		grep -Eq -- "(error: |^\{\"level\":\"error\",.*\"message\":\").*$_re.*run 'doctor'" "$T/stderr" &&
		[ -z "$(ls -A "$T/out")" ] && [ ! -s "$T/stdout" ]; then
		pass "$_what"
		diag "$(cat "$T/stderr")"
	else
		fail "$_what"
		diag "exit $_rc, stderr:" "$(cat "$T/stderr")" "files: $(ls -A "$T/out")"
	fi
}

S=$SIDESCOPE
P="-p $app -d 1"	# digits and options only: split on purpose
# shellcheck disable=SC2086
{
refused "needs CAP_BPF and CAP_PERFMON" "profile, no capabilities" \
	with_caps "" "$S" profile $P -o "$T/out/p.folded" -o "$T/out/p.pb.gz"
refused "needs CAP_BPF;" "profile without CAP_BPF" \
	with_caps perfmon,sys_ptrace "$S" profile $P -o "$T/out/p.folded"
refused "needs CAP_PERFMON;" "profile without CAP_PERFMON" \
	with_caps bpf,sys_ptrace "$S" profile $P -o "$T/out/p.folded"
refused "bpf\(\) denied by seccomp" "profile under seccomp" \
	"$DENY" "$S" profile $P -o "$T/out/p.folded" -o "$T/out/p.svg"
refused "bpf\(\) denied by seccomp" "profile under seccomp, least capabilities" \
	with_caps "$LEAST_CAPS" "$DENY" "$S" profile $P -o "$T/out/p.folded"

# uprobe opens the target's files through /proc/PID/root first
refused "CAP_SYS_PTRACE" "uprobe, no capabilities" \
	with_caps "" "$S" uprobe $P --json -o "$T/out/u.json" "$PROBE"
refused "needs CAP_BPF and CAP_PERFMON" "uprobe with CAP_SYS_PTRACE only" \
	with_caps sys_ptrace "$S" uprobe $P --json -o "$T/out/u.json" "$PROBE"
refused "needs CAP_BPF;" "uprobe without CAP_BPF" \
	with_caps perfmon,sys_ptrace "$S" uprobe $P -o "$T/out/u.txt" "$PROBE"
refused "needs CAP_PERFMON;" "uprobe without CAP_PERFMON" \
	with_caps bpf,sys_ptrace "$S" uprobe $P -o "$T/out/u.txt" "$PROBE"
refused "bpf\(\) denied by seccomp" "uprobe under seccomp" \
	"$DENY" "$S" uprobe $P --json -o "$T/out/u.json" "$PROBE"
}

# the same binaries with what they need still work (the filter is the cause)
"$DENY" true
ok $? "the seccomp helper runs a command"
"$SIDESCOPE" profile -p "$app" -d 1 -o "$T/ok.folded" 2>/dev/null
ok $? "profile works without the filter"

done_testing
