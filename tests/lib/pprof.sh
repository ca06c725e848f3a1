# shellcheck shell=sh
# Google's pprof, built once from Debian's Go source package into
# $SIDESCOPE_BUILD/pprof (TESTING.md). Source after tap.sh.
# Sets PPROF, or skips the file when it cannot be built.
require_pprof() {
	PPROF="$SIDESCOPE_BUILD/pprof"
	[ -x "$PPROF" ] && return 0
	require_cmd go
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		skip_all "needs golang-github-google-pprof-dev"
	# one build even when several tests ask at once
	(
		flock 9
		[ -x "$PPROF" ] || GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS='' \
			GOCACHE="$SIDESCOPE_BUILD/go-cache" \
			go build -o "$PPROF.tmp" github.com/google/pprof && mv "$PPROF.tmp" "$PPROF"
	) 9>"$SIDESCOPE_BUILD/pprof.lock" >&2 || skip_all "cannot build pprof"
}
