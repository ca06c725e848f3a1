#!/bin/sh
# sidescope dotnet-methods over the ReadyToRun sample that make builds with
# crossgen2: names, offsets (checked against the machine code in the file),
# overloads, globs, JSON, errors and exit codes.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd jq od

dll="$SIDESCOPE_BUILD/r2r/publish/R2RSample.dll"
il="$SIDESCOPE_BUILD/r2r/R2RSample.il.dll"
{ [ -f "$dll" ] && [ -f "$il" ]; } || skip_all "no R2R sample (needs the .NET SDK; make builds it)"

out=$("$SIDESCOPE" dotnet-methods "$dll")
ok $? "lists the sample's methods"
like "$out" '^ +RVA +OFFSET +SIZE K METHOD$' "header line"
like "$out" ' S SampleApp\.EchoProvider\.Echo\(System\.String\)$' "static Echo listed"
like "$out" ' I SampleApp\.EchoProvider\.EchoInstance\(System\.String\)$' "instance method marked I"
like "$out" 'SampleApp\.EchoProvider\+Inner\+Innermost\.Twice' "nested types joined by +"
is "$(printf '%s\n' "$out" | awk 'length > 80' | wc -l)" 0 "text fits 80 columns"

out=$("$SIDESCOPE" dotnet-methods --json "$dll" 'SampleApp.EchoProvider.Add(System.Int32,System.Int32)')
ok $? "one overload by parameter list"
is "$(printf '%s' "$out" | jq length)" 1 "exactly one match"
off=$(printf '%s' "$out" | jq -r '.[0].file_offset')
size=$(printf '%s' "$out" | jq -r '.[0].size')
is "$(od -An -tx1 -j "$off" -N "$size" "$dll" | tr -d ' \n')" "8d0437c3" \
	"the file offset holds Add's code: lea eax,[rdi+rsi]; ret"

out=$("$SIDESCOPE" dotnet-methods --json "$dll" EchoProvider.Add)
is "$(printf '%s' "$out" | jq length)" 3 "a name with overloads lists all three"
is "$(printf '%s' "$out" | jq -r '[.[].static] | unique | .[]')" true "all static"

out=$("$SIDESCOPE" dotnet-methods --json "$dll" 'SampleApp.Generics.Identity*')
is "$(printf '%s' "$out" | jq -r '.[].name' | sort | tr '\n' ' ')" \
	"SampleApp.Generics.Identity[System.Int32] SampleApp.Generics.Identity[System.__Canon] " \
	"glob lists both generic instantiations"

out=$("$SIDESCOPE" dotnet-methods -p $$ "$dll" Fibonacci.Compute)
ok $? "-p reads the file through /proc/PID/root"
like "$out" 'SampleApp\.Deep\.Names\.Fibonacci\.Compute\(System\.Int32\)' "suffix lookup"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
"$SIDESCOPE" dotnet-methods -o "$tmp/m.json" --json "$dll" >/dev/null
ok $? "-o writes a file"
is "$(jq length "$tmp/m.json")" "$("$SIDESCOPE" dotnet-methods --json "$dll" | jq length)" \
	"-o file holds every method"

err=$("$SIDESCOPE" dotnet-methods "$il" 2>&1 >/dev/null)
is $? 1 "IL-only assembly: exit 1"
like "$err" 'IL-only assembly' "IL-only assembly: says so"
head -c 700 "$dll" > "$tmp/cut.dll"
err=$("$SIDESCOPE" dotnet-methods "$tmp/cut.dll" 2>&1 >/dev/null)
is $? 1 "truncated image: exit 1"
like "$err" 'truncated PE file' "truncated image: says so"
err=$("$SIDESCOPE" dotnet-methods "$dll" No.Such.Method 2>&1 >/dev/null)
is $? 1 "unknown method: exit 1"
like "$err" "no method with code matches 'No.Such.Method'" "unknown method: says so"
err=$("$SIDESCOPE" dotnet-methods "$dll" EchoProvider.JitOnly 2>&1 >/dev/null)
is $? 1 "method without precompiled code: exit 1"
like "$err" 'has no precompiled code' "method without precompiled code: says so"
"$SIDESCOPE" dotnet-methods >/dev/null 2>&1
is $? 2 "no FILE: usage error"
"$SIDESCOPE" dotnet-methods --bogus "$dll" >/dev/null 2>&1
is $? 2 "bad option: usage error"
"$SIDESCOPE" dotnet-methods --help | grep -q '^EXAMPLES:'
ok $? "help has examples"
done_testing
