#!/bin/sh
# The .NET sample itself, on the machine's runtime: what the other dotnet
# tests and the walkthrough rely on. Endpoints and load.sh (non-ASCII echo
# round trips), the ReadyToRun build (Echo precompiled, Fibonacci left to
# the JIT), the deployment's settings in force (perf map in /tmp naming the
# JIT-compiled fibonacci, JIT code not in a memfd double mapping), the
# tracepoint provider loaded with lttng-ust.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/dotnet.sh"
require_cmd curl od
require_dotnet_sample

is "$(dotnet_env | tr '\n' ' ')" "DOTNET_TieredCompilation=0 " \
	"the deployment's .NET settings: tiering off for uprobes, nothing for profiles"

# the build: R2R code for Echo, none for Fibonacci (AggressiveOptimization)
map="$DOTNET_APP_DIR/SampleApp.ni.r2rmap"
like "$(cat "$map")" ' System\.String SampleApp\.EchoProvider::Echo\(System\.String\)$' \
	"crossgen2 precompiled EchoProvider.Echo"
unlike "$(cat "$map")" 'Fibonacci' "crossgen2 left Fibonacci.Compute to the JIT"
off=$(dotnet_r2r_offset 'SampleApp.EchoProvider::Echo(')
like "$off" '^0x[0-9a-f]+$' "Echo's file offset from the PE section table ($off)"
is "$(od -An -tx1 -j 0 -N 2 "$DOTNET_APP_DLL" | tr -d ' ')" "4d5a" "SampleApp.dll is a PE file"

dotnet_start host
ok $? "the sample starts and listens on 127.0.0.1 ($DOTNET_URL)"
is "$(dotnet_get /healthz)" "ok" "/healthz"
is "$(dotnet_get '/api/fibonacci?pos=25')" "75025" "/api/fibonacci?pos=25"
if curl -fsS -o /dev/null "$DOTNET_URL/api/fibonacci?pos=99" 2>/dev/null; then
	fail "/api/fibonacci refuses pos=99"
else
	pass "/api/fibonacci refuses pos=99"
fi
is "$(dotnet_get '/api/echo?echo=d%C3%A9j%C3%A0%20%F0%9F%9A%80')" "déjà 🚀" "/api/echo decodes UTF-8"
out=$(sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -n 2 -p 20 "$DOTNET_URL")
ok $? "load.sh: two rounds, every echo reply checked"
is "$(printf '%s\n' "$out" | grep -c '^echo: ')" 14 "load.sh echoed its seven texts twice"
like "$out" 'echo: 你好，世界！日本語のテキスト' "CJK round trip"
like "$out" 'echo: rocket 🚀 thumbs 👍🏽 family 👨‍👩‍👧' "emoji round trip"
sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -q -E "$DOTNET_URL" "é" "中" "🚀"
ok $? "load.sh with texts from the command line"
sh "$SIDESCOPE_SRC/examples/dotnet/load.sh" -n x "$DOTNET_URL" 2>/dev/null
is "$?" 2 "load.sh: a bad count exits 2"

ok "$([ ! -e "/tmp/perf-$DOTNET_PID.map" ]; echo $?)" \
	"the app writes no perf map of its own (profile asks the runtime for one)"
like "$(grep -c 'doublemapper' "/proc/$DOTNET_HOST_PID/maps")" '^[1-9]' \
	"W^X on: its JIT code double-mapped (memfd:doublemapper), as .NET runs by default"
like "$(cat "/proc/$DOTNET_HOST_PID/maps")" 'libsampleapp-tp\.so' "the tracepoint provider is loaded"
like "$(cat "/proc/$DOTNET_HOST_PID/maps")" 'liblttng-ust\.so' "with lttng-ust"

# the deployment passes the project's offline validator, where there is one
js="$SIDESCOPE_SRC/tests/js"
if [ -f "$js/validate-podspecs.js" ] && [ -d "$js/node_modules/kubernetes-models" ] &&
		command -v node >/dev/null 2>&1; then
	v=$(node "$js/validate-podspecs.js" "$SIDESCOPE_SRC/examples/dotnet/deployment.yaml" 2>&1)
	ok $? "deployment.yaml: valid Kubernetes objects, no unknown keys"
	unlike "$v" '^error' "deployment.yaml: no validator errors"
fi

done_testing
