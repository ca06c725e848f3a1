#!/bin/sh
# load.sh: drive the sidescope .NET sample: the health endpoint, the
# CPU-heavy /api/fibonacci and /api/echo with ASCII, accented, CJK and emoji
# text (percent-encoded UTF-8). Every echo reply is checked against what was
# sent. Runs under busybox sh; uses curl, else wget, else busybox wget.
#
# USAGE: load.sh [-n ROUNDS] [-p POS] [-F|-E] [-q] [URL] [TEXT...]
#
#   -n ROUNDS  rounds to run (default 1; 0 runs until killed)
#   -p POS     fibonacci position to compute (default 30; 0..45)
#   -F         fibonacci only          -E  echo only
#   -q         print nothing but errors
#   URL        the app (default http://127.0.0.1:8080)
#   TEXT...    texts to echo instead of the built-in set
#
# EXAMPLES:
#   sh load.sh                                   # one round against :8080
#   sh load.sh -n 0 -F -p 35 http://app:8080     # keep a CPU busy
#   sh load.sh -E http://127.0.0.1:8080 'héllo'  # echo one text
set -eu

rounds=1
pos=30
what=both
quiet=0
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
while getopts 'n:p:FEqh' opt; do
	case "$opt" in
	n) rounds=$OPTARG ;;
	p) pos=$OPTARG ;;
	F) what="fib" ;;
	E) what="echo" ;;
	q) quiet=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case "$rounds" in ''|*[!0-9]*) echo "load.sh: -n needs a number, not '$rounds'" >&2; exit 2 ;; esac
case "$pos" in ''|*[!0-9]*) echo "load.sh: -p needs a number, not '$pos'" >&2; exit 2 ;; esac
url=${1:-http://127.0.0.1:8080}
[ "$#" -gt 0 ] && shift
url=${url%/}

if [ "$#" -eq 0 ]; then
	set -- \
		"hello, sidescope" \
		"déjà vu: café crème, naïve façade" \
		"Grüße aus Köln – ½ € für Ø" \
		"你好，世界！日本語のテキスト" \
		"한국어 텍스트" \
		"rocket 🚀 thumbs 👍🏽 family 👨‍👩‍👧" \
		"a+b=c & 100% ?#/"
fi

# (busybox 1.35's wget crashes when given -T, so no timeout there)
if command -v curl >/dev/null 2>&1; then
	get() { curl -fsS --max-time 120 "$1"; }
elif command -v wget >/dev/null 2>&1; then
	get() { wget -q -O - "$1"; }
elif command -v busybox >/dev/null 2>&1; then
	get() { busybox wget -q -O - "$1"; }
else
	echo "load.sh: needs curl, wget or busybox" >&2
	exit 1
fi

# Percent-encode every byte that is not an RFC 3986 unreserved character.
urlencode() {
	printf '%s' "$1" | od -An -v -tx1 | tr -s ' ' '\n' | grep -v '^$' |
		while read -r b; do
			case "$b" in
			3[0-9]|4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a]|2d|2e|5f|7e)
				# shellcheck disable=SC2059
				printf "\\$(printf '%03o' "$((0x$b))")" ;;
			*) printf '%%%s' "$b" ;;
			esac
		done
}

say() { [ "$quiet" = 1 ] || printf '%s\n' "$*"; }

n=0
while [ "$rounds" -eq 0 ] || [ "$n" -lt "$rounds" ]; do
	n=$((n + 1))
	get "$url/healthz" >/dev/null
	if [ "$what" != echo ]; then
		r=$(get "$url/api/fibonacci?pos=$pos")
		say "fibonacci($pos) = $r"
	fi
	if [ "$what" != fib ]; then
		for text in "$@"; do
			r=$(get "$url/api/echo?echo=$(urlencode "$text")")
			if [ "$r" != "$text" ]; then
				printf 'load.sh: echo mismatch: sent "%s", got "%s"\n' "$text" "$r" >&2
				exit 1
			fi
			say "echo: $r"
		done
	fi
done
