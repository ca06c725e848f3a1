#!/bin/sh
# sidescope uprobe on a Go program built here (tests/progs/go_target.go):
# arguments read from Go's registers (reg(ax), gostr(reg(bx), reg(cx))),
# return probes placed on the RET instructions (a uretprobe would kill the
# program), --latency, a refusal in one line, a probe inside an
# instruction refused, and ps naming the runtime. After every probe the
# program must still be running and printing.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_root
require_cmd jq go
[ -r /sys/kernel/btf/vmlinux ] || skip_all "needs kernel BTF"
[ "$(uname -m)" = x86_64 ] || skip_all "needs x86-64 (Go register names)"

# Build offline, with private caches.
G="$TMPDIR_TEST/go_target"
if ! (cd "$TMPDIR_TEST" && GOCACHE="$TMPDIR_TEST/gocache" GOPATH="$TMPDIR_TEST/gopath" \
	GO111MODULE=off GOFLAGS='' GOPROXY=off CGO_ENABLED=0 \
	go build -o "$G" "$SIDESCOPE_SRC/tests/progs/go_target.go") > "$TMPDIR_TEST/build.log" 2>&1; then
	diag "$(cat "$TMPDIR_TEST/build.log")"
	skip_all "go build failed"
fi

"$G" > "$TMPDIR_TEST/go.out" 2> "$TMPDIR_TEST/go.err" &
GPID=$!
on_exit "kill $GPID"
wait_for_grep "$TMPDIR_TEST/go.out" '^call ' 10 || diag "the Go program did not start"

# The last call number the program printed.
last_call() { awk '$1 == "call" { n = $2 } END { print n + 0 }' "$TMPDIR_TEST/go.out"; }

# alive WHAT: the program still runs and prints calls after WHAT.
alive() {
	_n=$(last_call)
	wait_for_grep "$TMPDIR_TEST/go.out" "^call $((_n + 5)) " 10
	ok $? "the Go program still prints after $1"
	kill -0 "$GPID" 2> /dev/null
	ok $? "the Go program is still running after $1"
}

# uprobe ARGS...: trace the Go program; output in OUT/ERR, status in RC.
RUN=0
uprobe() {
	RUN=$((RUN + 1))
	OUT="$TMPDIR_TEST/out$RUN"
	ERR="$TMPDIR_TEST/err$RUN"
	"$SIDESCOPE" uprobe -p "$GPID" "$@" > "$OUT" 2> "$ERR"
	RC=$?
}

# Every line of the program's output with the call's number, word, result.
calls() { awk '$1 == "call" { print $2, $3, $5 }' "$TMPDIR_TEST/go.out"; }

# --- entry: Go's ABIInternal passes n in ax, s in bx (pointer) and cx (length)
uprobe --json -c 20 -d 10 "p:$G:main.work \"n=%d s=%s\", reg(ax), gostr(reg(bx), reg(cx))"
is "$RC" 0 "entry probe with reg() and gostr() exits 0"
is "$(jq -r 'select(.type == "entry") | .probe' "$OUT" | wc -l | tr -d ' ')" 20 "20 calls traced"
seen=$(jq -r 'select(.type == "entry") | "\(.args[0].value) \(.args[1].value) \(.args[1].length)"' "$OUT")
want=$(printf '%s\n' "$seen" | while read -r n _; do
	case $((n % 3)) in 0) w=alpha ;; 1) w=beta ;; *) w=gamma ;; esac
	echo "$n $w ${#w}"
done)
is "$seen" "$want" "reg(ax) is n; gostr(reg(bx), reg(cx)) the word of n, its length counted"
first=$(printf '%s\n' "$seen" | head -1 | cut -d' ' -f1)
last=$(printf '%s\n' "$seen" | tail -1 | cut -d' ' -f1)
is "$((last - first))" 19 "consecutive calls, none missed"
is "$(jq -r 'select(.type == "entry") | .args[1].type' "$OUT" | sort -u)" gostr "JSON type gostr"
alive "entry probes"

# gostr(HDR): measure(p *string) has the header's address in ax
uprobe --json -c 9 -d 10 "p:$G:main.measure \"%s\", gostr(reg(ax))"
is "$(jq -r 'select(.type == "entry") | "\(.args[0].value) \(.args[0].length)"' "$OUT" | sort -u | tr '\n' ' ')" \
	"alpha 5 beta 4 gamma 5 " "gostr(HDR): pointer at HDR, length at HDR+8"
# MAX cuts the copy; the length stays the string's
uprobe --json -c 9 -d 10 "p:$G:main.work \"%s\", gostr(reg(bx), reg(cx), 2)"
is "$(jq -r 'select(.type == "entry") | "\(.args[0].value) \(.args[0].length) \(.args[0].truncated)"' "$OUT" | sort -u | tr '\n' ' ')" \
	"al 5 true be 4 true ga 5 true " "gostr(P, L, MAX): cut at MAX, the length kept, marked truncated"

# --- return probe: on each RET, retval is RAX
uprobe --json -c 20 -d 10 "r:$G:main.work \"%d\", retval"
is "$RC" 0 "r: on a Go function exits 0"
is "$(jq -r 'select(.type == "return") | .probe' "$OUT" | wc -l | tr -d ' ')" 20 "20 returns traced"
alive "a return probe"
bad=0
for r in $(jq -r 'select(.type == "return") | .args[0].value' "$OUT"); do
	calls | awk -v r="$r" '$3 == r { f = 1 } END { exit !f }' || { bad=1; diag "retval $r was never returned"; }
done
is "$bad" 0 "every retval is a result the program printed (n*2 + len(s))"
# the same through perf event links: one per RET
SIDESCOPE_UPROBE_LINK=perf uprobe --json -c 5 -d 10 "r:$G:main.work \"%d\", retval"
is "$(jq -r 'select(.type == "return") | .probe' "$OUT" | wc -l | tr -d ' ')" 5 \
	"r: on Go through perf event links"
alive "a return probe through perf event links"
unlike "$(cat "$TMPDIR_TEST/go.err")" "fatal error|unknown caller pc|SIGILL" "no Go runtime error"

# --- --latency: the return half on the RETs too
uprobe -d 1 --latency "p:$G:main.work"
is "$RC" 0 "--latency on a Go function exits 0"
like "$(cat "$OUT")" "latency of main.work: [1-9][0-9]* calls" "a histogram of calls"
alive "--latency"
uprobe -d 1 --latency --json "r:$G:main.work \"%d\", retval"
is "$(jq -r 'select(.type == "latency") | .calls > 0' "$OUT")" true "--latency with r: counts calls"
alive "--latency with r:"

# --- refusals: a function with no RET (main.main loops forever), an offset
# inside an instruction
uprobe -d 1 "r:$G:main.main"
is "$RC" 1 "r: on a function with no RET refused"
is "$(grep -c error "$ERR")" 1 "in one line"
like "$(cat "$ERR")" "main.main is Go code with no RET.*refusing a return probe" "saying why"
if command -v strip > /dev/null; then
	strip -o "$G.stripped" "$G"
	"$SIDESCOPE" uprobe -d 1 "r:$G.stripped:0x1000" > /dev/null 2> "$TMPDIR_TEST/err.stripped"
	is "$?" 1 "r: on a stripped Go binary refused"
	like "$(cat "$TMPDIR_TEST/err.stripped")" "is Go code, and its RETs cannot be found \(.*no symbol table" \
		"saying that the function's bounds are unknown"
fi
uprobe -d 1 "p:$G:main.work+2"
is "$RC" 1 "a probe inside an instruction refused"
like "$(cat "$ERR")" "inside an instruction of main.work .*start at \+0x0 and \+0x5" \
	"naming the instructions around it"
alive "the refusals"

# --- ps
is "$("$SIDESCOPE" ps -p "$GPID" --json | jq -r '.[0].runtime')" go "ps names the runtime go"
like "$("$SIDESCOPE" ps -p "$GPID")" "^ *$GPID .* go +" "in the text table too"

done_testing
