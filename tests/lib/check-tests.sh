# shellcheck shell=sh
# Run by make before prove, from the source root: sh tests/lib/check-tests.sh
# TEST... Fails, naming each file, when a test to run is missing or not
# executable: prove --exec '' stops the whole run at a test it cannot
# execute, after reporting "All tests successful" for those before it. Also
# when a .t file under tests/integration is not FEATURE/NAME.t in lowercase
# words joined by '-' (docs/architecture.md): the runner's wildcard takes
# only those, and would never run it.
set -eu
bad=0
for t in "$@"; do
	if [ ! -f "$t" ]; then
		echo "$t: no such test" >&2
		bad=1
	elif [ ! -x "$t" ]; then
		echo "$t: not executable, so prove cannot run it (chmod +x, and commit the mode)" >&2
		bad=1
	fi
done
w='[a-z0-9][a-z0-9]*(-[a-z0-9][a-z0-9]*)*'
odd=$(find tests/integration -name '*.t' | grep -Ev "^tests/integration/$w/$w\\.t\$" || true)
if [ -n "$odd" ]; then
	printf '%s\n' "$odd" |
		sed 's|$|: not tests/integration/FEATURE/NAME.t in lowercase words joined by -, so make test would not run it|' >&2
	bad=1
fi
exit "$bad"
