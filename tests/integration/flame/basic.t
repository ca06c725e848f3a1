#!/bin/sh
# sidescope flame end to end: inputs detected by content (folded, pprof,
# gzip'd or not, stdin, several merged), well-formed output, a golden file,
# the same graph from pprof and folded, neutral self-diff, diff colours,
# options, errors and exit codes.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd xmllint gzip cmp awk timeout

data=$SIDESCOPE_SRC/tests/data/flame
t=$TMPDIR_TEST
fl() { "$SIDESCOPE" flame "$@"; }
# the SVG without its script, which the browser test covers
noscript() { sed '/^<script><!\[CDATA\[$/,/^\]\]><\/script>$/d' "$1"; }
frames() { grep -c '^<g data-n=' "$1"; }

out=$(fl --help)
ok $? "--help exits 0"
like "$out" "^USAGE: sidescope flame" "help has USAGE"
like "$out" "EXAMPLES:" "help has EXAMPLES"
is "$(printf '%s\n' "$out" | awk 'length > 80' | wc -l)" "0" "help fits 80 columns"

fl --diff "$data/same.folded" 2>/dev/null
is $? 2 "--diff with one input: usage error"
fl --colors rainbow "$data/same.folded" 2>/dev/null
is $? 2 "unknown colour scheme: usage error"
fl --width wide "$data/same.folded" 2>/dev/null
is $? 2 "bad width: usage error"
fl --min-width -1 "$data/same.folded" 2>/dev/null
is $? 2 "negative minimum width: usage error"
fl --normalize "$data/same.folded" 2>/dev/null
is $? 2 "--normalize without --diff: usage error"

# folded file -> SVG, well-formed, golden (script left out)
fl "$data/browser.folded" -o "$t/browser.svg" --title "Browser test" --subtitle "five stacks"
ok $? "folded to SVG"
xmllint --noout "$t/browser.svg"
ok $? "well-formed XML"
noscript "$t/browser.svg" > "$t/browser.noscript.svg"
if [ "${SIDESCOPE_UPDATE_GOLDEN:-0}" = 1 ]; then
	cp "$t/browser.noscript.svg" "$data/cli.svg"
fi
cmp -s "$t/browser.noscript.svg" "$data/cli.svg"
rc=$?
ok "$rc" "matches the golden file tests/data/flame/cli.svg"
[ "$rc" -eq 0 ] || diag "$(diff "$data/cli.svg" "$t/browser.noscript.svg" | head -20)"
is "$(stat -c %a "$t/browser.svg")" "640" "output mode 0640"
is "$(find "$t" -name '.browser.svg.*' | wc -l)" "0" "no temporary file left"
is "$(grep -c 'http' "$t/browser.svg")" "$(grep -c 'http://www.w3.org/2000/svg' "$t/browser.svg")" \
	"self-contained: no link but the SVG namespace"

# a FIFO named as -o (one the app may have planted in a shared directory)
# is refused at once, never waited on; a pipe the operator's shell opened
# is written through its descriptor, not replaced by a renamed file
mkfifo "$t/fifo"
timeout 20 "$SIDESCOPE" flame "$data/browser.folded" -o "$t/fifo" 2>"$t/fifo.err"
is "$?" 1 "a FIFO as -o: refused without waiting for a reader"
like "$(cat "$t/fifo.err")" "cannot write .*/fifo: is a FIFO, not a regular file" \
	"a FIFO as -o: one clear line"
cat "$t/fifo" > "$t/from-fifo.svg" &
reader=$!
on_exit "kill $reader"
fl "$data/browser.folded" -o /dev/fd/3 --title "Browser test" --subtitle "five stacks" 3>"$t/fifo"
ok $? "output to a pipe through /dev/fd/3"
wait "$reader"
[ -p "$t/fifo" ]
ok $? "the FIFO is still a FIFO"
cmp -s "$t/from-fifo.svg" "$t/browser.svg"
ok $? "the SVG came through the pipe"

# pprof and folded inputs of the same profile: the same graph
fl "$data/same.folded" -o "$t/same-folded.svg" && fl "$data/same.pb.gz" -o "$t/same-pprof.svg"
ok $? "folded and pprof inputs read"
cmp -s "$t/same-folded.svg" "$t/same-pprof.svg"
ok $? "pprof and folded of the same profile give the same SVG"
gzip -dc "$data/same.pb.gz" > "$t/same.pb"
fl < "$t/same.pb" > "$t/same-stdin.svg"
cmp -s "$t/same-folded.svg" "$t/same-stdin.svg"
ok $? "plain pprof on stdin: the same SVG"
gzip -c "$data/same.folded" | fl - -o "$t/same-gzfolded.svg"
cmp -s "$t/same-folded.svg" "$t/same-gzfolded.svg"
ok $? "gzip'd folded text on stdin ('-'): the same SVG"
like "$(grep -o '<title>[^<]*</title>' "$t/same-pprof.svg" | tr '\n' ' ')" \
	'Main\(\)</title> <title>App.Work::Run\(\)</title> <title>inlined_helper</title> <title>memcpy' \
	"pprof frames named; inlined frames under their caller"

# several inputs merge
head -2 "$data/browser.folded" > "$t/part1.folded"
tail -n +3 "$data/browser.folded" > "$t/part2.folded"
fl "$t/part1.folded" "$t/part2.folded" -o "$t/parts.svg" --title "Browser test" \
	--subtitle "five stacks"
cmp -s "$t/parts.svg" "$t/browser.svg"
ok $? "two inputs merge into the graph of their union"

# differential: a profile against itself is neutral, even across formats
fl --diff "$data/same.folded" "$data/same.pb.gz" -o "$t/self.svg"
ok $? "diff of a profile with itself"
xmllint --noout "$t/self.svg"
ok $? "diff SVG well-formed"
n=$(frames "$t/self.svg")
is "$(grep -c '^<g data-n=.*fill="#fafafa"' "$t/self.svg")" "$n" "every one of the $n frames neutral"
printf 'main;a 50\nmain;b;c 30\nmain;d 20\n' > "$t/before.folded"
printf 'main;a 80\nmain;b;c 30\nmain;d 10\n' > "$t/after.folded"
fl --diff "$t/before.folded" "$t/after.folded" -o "$t/diff.svg"
like "$(grep '<title>a</title>' "$t/diff.svg")" 'data-b="50">.*fill="#ff3c3c"' "grown frame red"
like "$(grep '<title>d</title>' "$t/diff.svg")" 'data-b="20">.*fill="#[0-9a-f]{4}ff"' "shrunk frame blue"
like "$(grep '<title>c</title>' "$t/diff.svg")" 'fill="#fafafa"' "unchanged frame neutral"
printf 'main;a 100\nmain;b;c 60\nmain;d 40\n' > "$t/double.folded"
fl --diff --normalize "$t/before.folded" "$t/double.folded" -o "$t/norm.svg"
is "$(grep -c '^<g data-n=.*fill="#fafafa"' "$t/norm.svg")" "$(frames "$t/norm.svg")" \
	"--normalize: a doubled profile is neutral"

# options reach the file
fl "$data/browser.folded" --inverted --reverse --colors hash --width 900 --min-width 2 \
	--title 'T<&>' --subtitle 'S"q' --unit ms -o "$t/opts.svg"
ok $? "all options"
xmllint --noout "$t/opts.svg"
ok $? "well-formed with all options"
like "$(head -3 "$t/opts.svg")" 'width="900".*data-inverted="1".*data-unit="ms"' "width, inverted, unit"
like "$(cat "$t/opts.svg")" '<text id="title" x="450" y="24">T&lt;&amp;&gt;</text>' "title escaped"
like "$(cat "$t/opts.svg")" '<text id="subtitle"[^>]*>S&quot;q</text>' "subtitle escaped"
like "$(grep '<title>lex</title>' "$t/opts.svg")" 'y="80"' "reverse + inverted: leaf lex right under the root"

# hostile and broken input
printf 'main;ok 5\nthis line has no count\nmain;\xff\x01<&> 2\n' > "$t/bad.folded"
fl "$t/bad.folded" -o "$t/bad.svg" 2> "$t/bad.err"
ok $? "bad lines do not fail the run"
like "$(cat "$t/bad.err")" "skipped 1 malformed line in .*bad.folded \(first: line 2" "bad lines reported"
xmllint --noout "$t/bad.svg"
ok $? "invalid UTF-8 and markup in names: still well-formed"
: > "$t/empty"
fl "$t/empty" -o "$t/empty.svg" 2> "$t/empty.err"
is $? 1 "empty input fails"
like "$(cat "$t/empty.err")" "no samples" "empty input: message"
[ ! -e "$t/empty.svg" ]
ok $? "no output file after a failure"
head -c 3000 /dev/urandom | tr -d '\n' | sed 's/^/\x01/' > "$t/junk"
fl "$t/junk" -o "$t/junk.svg" 2> "$t/junk.err"
is $? 1 "binary junk fails"
like "$(cat "$t/junk.err")" "neither folded stacks nor a pprof profile|no samples" "junk: message"
fl "$t/missing.folded" 2> "$t/missing.err"
is $? 1 "missing input fails"
like "$(cat "$t/missing.err")" "cannot open .*missing.folded: No such file" "missing input: message"

# a large profile stays light: narrow frames merged, and the file says so
awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++) {
	s = "main"; d = 10 + int(rand() * 30);
	for (j = 0; j < d; j++) s = s ";f" j "_" int(rand() * 9);
	print s, 1 + int(rand() * 50) } }' > "$t/large.folded"
fl "$t/large.folded" -o "$t/large.svg"
ok $? "large input"
size=$(wc -c < "$t/large.svg")
ok "$([ "$size" -lt 5000000 ]; echo $?)" "large profile SVG under 5 MB ($size bytes)"
like "$(grep -o '[0-9]* frames narrower than [0-9.]* px merged' "$t/large.svg" | head -1)" \
	"^[1-9][0-9]* frames narrower" "the file says how many frames were merged"
xmllint --noout "$t/large.svg"
ok $? "large SVG well-formed"

done_testing
