# shellcheck shell=sh
# Google's pprof, the canonical reader of pprof profiles, built once from
# Debian's Go source package into the build directory. Source after tap.sh.
#   PPROF=$(pprof_tool) || skip_all "..."
pprof_tool() {
	_pp="$SIDESCOPE_BUILD/pprof"
	if [ ! -x "$_pp" ]; then
		command -v go >/dev/null 2>&1 || return 1
		[ -d /usr/share/gocode/src/github.com/google/pprof ] || return 1
		mkdir -p "$SIDESCOPE_BUILD/gocache"
		GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$SIDESCOPE_BUILD/gocache" \
			go build -o "$_pp.tmp" github.com/google/pprof >/dev/null 2>&1 &&
			mv "$_pp.tmp" "$_pp" || return 1
	fi
	echo "$_pp"
}
