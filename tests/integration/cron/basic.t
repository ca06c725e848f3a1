#!/bin/sh
# sidescope cron: check prints the canonical form or exits 2 naming the
# field; next prints ISO 8601 times from an epoch or ISO start, in local
# time with its offset; usage errors exit 2; help fits 80 columns.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
S=$SIDESCOPE
export TZ=UTC0

is "$("$S" cron check '*/15 9-17 * * mon-fri')" "0,15,30,45 9-17 * * 1-5" "check: canonical form"
"$S" cron check '*/15 9-17 * * mon-fri' >/dev/null 2>&1
is "$?" 0 "check: exit 0"
e=$("$S" cron check '61 * * * *' 2>&1)
is "$?" 2 "check of a bad expression: exit 2"
is "$e" "sidescope cron: bad cron expression '61 * * * *': minute field '61': 61 is out of range 0-59" \
	"check: the error names the field and the value"
is "$("$S" cron check '61 * * * *' 2>/dev/null)" "" "check: nothing on stdout on error"
e=$("$S" cron check -- '-5 * * * *' 2>&1)
is "$?" 2 "check -- '-5 ...': exit 2"
like "$e" "minute field '-5': .*negative" "an expression that starts with a dash after --"

is "$("$S" cron next '0 0 29 2 *' -c 3 --from 2026-12-01T09:27:00Z | tr '\n' ' ')" \
	"2028-02-29T00:00:00Z 2032-02-29T00:00:00Z 2036-02-29T00:00:00Z " "next: Feb 29s from an ISO time"
is "$("$S" cron next '*/20 * * * *' -c 2 --from 1764581220 | tr '\n' ' ')" \
	"2025-12-01T09:40:00Z 2025-12-01T10:00:00Z " "next: from an epoch"
is "$("$S" cron next '0 12 * * *' -c 1 --from 2026-06-01T13:00+02:00)" "2026-06-01T12:00:00Z" \
	"next: an ISO time with an offset (13:00+02:00 is before 12:00Z)"
is "$(TZ=CET-1CEST,M3.5.0,M10.5.0/3 "$S" cron next '30 2 * * *' -c 2 --from 2026-03-28T12:00Z | tr '\n' ' ')" \
	"2026-03-30T02:30:00+02:00 2026-03-31T02:30:00+02:00 " "next: local time with its offset; a DST gap is skipped"
is "$(TZ=CET-1CEST,M3.5.0,M10.5.0/3 "$S" cron next '0 12 * * *' -c 1 --from 2026-01-10T00:00)" \
	"2026-01-10T12:00:00+01:00" "next: --from without a zone is local time"
# capture-loop passes the schedule after "--": an expression is never an option
is "$("$S" cron next -c 1 --from 2026-12-01T09:27:00Z -- '*/20 * * * *')" "2026-12-01T09:40:00Z" \
	"next: the expression after --"
n=$("$S" cron next '* * * * *' | wc -l)
is "$n" 5 "next: five times by default, from now"

for bad in "next '* * * * *' -c 0" "next '* * * * *' -c 1001" "next '* * * * *' -c x" \
	"next '* * * * *' --from 2026-02-30T00:00Z" "next '* * * * *' --from 2026-01-01" \
	"next '* * * * *' --from yesterday" "check" "bogus '* * * * *'" "" \
	"check '* * * * *' -c 3" "check * * * * *" "next '* * * * *' -n 3"; do
	eval "\"\$S\" cron $bad" >/dev/null 2>"$TMPDIR_TEST/err"
	is "$?" 2 "usage error: cron $bad"
done
like "$(cat "$TMPDIR_TEST/err")" "-n is a name in every sidescope command; the count is -c 3" \
	"next -n: the count is -c, said so"
"$S" cron check '* * * * *' 2>"$TMPDIR_TEST/err" -- extra >/dev/null
like "$(cat "$TMPDIR_TEST/err")" "unexpected argument .*quote the whole expression" \
	"an unquoted expression: say to quote it"
is "$("$S" cron next --json -c 2 --from 2026-12-01T09:27:00Z '*/20 * * * *' | jq -c .next)" \
	'["2026-12-01T09:40:00Z","2026-12-01T10:00:00Z"]' "next --json: the times, for jq"
is "$("$S" cron check --json '*/30 * * * *' | jq -r .canonical)" "0,30 * * * *" \
	"check --json: the canonical form"
"$S" cron check --json '61 * * * *' 2>"$TMPDIR_TEST/err" >/dev/null
is "$?" 2 "check --json, a bad expression: exit 2"
is "$(jq -r .level "$TMPDIR_TEST/err")" error "and the error is JSON"

h=$("$S" cron --help)
ok $? "--help: exit 0"
like "$h" "^sidescope cron: " "--help: summary line"
like "$h" "EXAMPLES:" "--help: examples"
is "$(printf '%s\n' "$h" | awk 'length > 80' | wc -l | tr -d ' ')" 0 "--help fits 80 columns"
like "$("$S" help)" "cron +check a cron schedule" "listed in sidescope help"
done_testing
