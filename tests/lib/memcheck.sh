# shellcheck shell=sh
# Helpers for the leak tests: run under valgrind memcheck, check its log,
# and sample a running process's memory and descriptors. Source after
# tap.sh. With SANITIZE=1 the binaries carry ASan, which valgrind cannot
# run: the same commands then run with ASan, UBSan and LeakSanitizer.

VG_SUPP="$SIDESCOPE_SRC/tests/valgrind.supp"
if [ "${SANITIZE:-0}" = 1 ]; then
	MEMCHECK=sanitizers
else
	MEMCHECK=memcheck
	require_cmd valgrind
fi

# memcheck LOG CMD...: run CMD under memcheck, the report in LOG; exit 99
# on any memory error or definite/indirect leak, else CMD's status.
memcheck() {
	_log=$1
	shift
	if [ "$MEMCHECK" = sanitizers ]; then
		# reports go to LOG.PID, only when there is one
		ASAN_OPTIONS="detect_leaks=1:exitcode=99:log_path=$_log" \
			UBSAN_OPTIONS="print_stacktrace=1:log_path=$_log" "$@"
		return
	fi
	valgrind --tool=memcheck --leak-check=full \
		--errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-fds=yes \
		--error-exitcode=99 --suppressions="$VG_SUPP" \
		--log-file="$_log" "$@"
}

# check_memcheck LOG NAME: TAP checks over a memcheck log: no errors, no
# definite or indirect leak, no descriptor left open that was not inherited.
check_memcheck() {
	if [ "$MEMCHECK" = sanitizers ]; then
		_r=$(cat "$1".* 2> /dev/null)
		is "$(printf '%s' "$_r" | head -c 3000)" "" "$2: no ASan, UBSan or leak report"
		return
	fi
	_s=$(grep -E 'ERROR SUMMARY:' "$1" | sed 's/^==[0-9]*== //')
	diag "$2: $_s"
	diag "$2: $(grep -E 'in use at exit:|definitely lost:|indirectly lost:|All heap blocks' "$1" |
		sed 's/^==[0-9]*== *//' | tr -s ' ' | tr '\n' ';')"
	like "$_s" '^ERROR SUMMARY: 0 errors' "$2: no memory errors"
	if grep -q 'All heap blocks were freed' "$1"; then
		pass "$2: no leaks"
	else
		like "$(grep 'definitely lost:' "$1")" 'definitely lost: 0 bytes' \
			"$2: nothing definitely lost"
		like "$(grep 'indirectly lost:' "$1")" 'indirectly lost: 0 bytes' \
			"$2: nothing indirectly lost"
	fi
	_fds=$(awk '/Open file descriptor [0-9]+:/ {
			n = $0; sub(/.*descriptor /, "", n); sub(/:.*/, "", n)
			if (n + 0 > 2) { getline nx; if (nx !~ /inherited from parent/) print n }
		}' "$1" | tr '\n' ' ')
	is "$_fds" "" "$2: no descriptor of its own left open at exit"
	# valgrind itself fails on what it does not know; make that visible
	if grep -q 'unhandled' "$1"; then
		diag "$2: $(grep 'unhandled' "$1" | sort | uniq -c | tr -s ' ')"
	fi
}

# exec_for_growth CMD...: exec CMD (run it with & so that $! is CMD's PID)
# for a growth measurement. ASan keeps freed memory in a quarantine of up
# to 256 MB, which would read as growth: no quarantine then.
exec_for_growth() {
	if [ "$MEMCHECK" = sanitizers ]; then
		ASAN_OPTIONS="quarantine_size_mb=0:thread_local_quarantine_size_kb=0" exec "$@"
	fi
	exec "$@"
}

# sample_proc PID OUT SECONDS: every SECONDS while PID lives, append
# "ELAPSED RSS_KB FDS" to OUT, and "ELAPSED: COUNT TARGET, ..." (what the
# descriptors name) to OUT.fds. Run in the background.
sample_proc() {
	_t0=$(date +%s)
	while [ -d "/proc/$1" ]; do
		_r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
		_l=$(ls -l "/proc/$1/fd" 2>/dev/null | awk '$1 != "total" { print $NF }')
		_f=$(printf '%s\n' "$_l" | grep -c .)
		_e=$(($(date +%s) - _t0))
		[ -n "$_r" ] && echo "$_e $_r $_f" >> "$2"
		printf '%s: %s\n' "$_e" "$(printf '%s\n' "$_l" | sed 's/:\[[0-9]*\]$//' |
			sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')" \
			>> "$2.fds"
		sleep "$3"
	done
}

# check_growth SAMPLES FROM TO MAX_KB NAME: over the samples taken between
# FROM and TO seconds (after warm-up, while capturing), RSS grows by at most
# MAX_KB and the descriptors stay bounded.
check_growth() {
	_w=$(awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b' "$1")
	diag "$5: samples (seconds RSS-KB fds):" "$(printf '%s\n' "$_w" | tr '\n' ',')"
	_n=$(printf '%s\n' "$_w" | grep -c .)
	ok "$([ "$_n" -ge 4 ]; echo $?)" "$5: $_n samples after warm-up"
	_first=$(printf '%s\n' "$_w" | awk 'NR == 1 { print $2 }')
	_max=$(printf '%s\n' "$_w" | awk '$2 > m { m = $2 } END { print m + 0 }')
	_g=$((_max - ${_first:-0}))
	diag "$5: RSS ${_first} KB after warm-up, at most ${_max} KB later (+${_g} KB)"
	ok "$([ "$_g" -le "$4" ]; echo $?)" "$5: RSS growth after warm-up ${_g} KB <= $4 KB"
	# Descriptors in two kinds. Files (a path) are no more than early on:
	# the unwinder keeps one of each object that waits for a walk to need
	# its table and closes it then. The others (BPF objects, perf events,
	# pipes, devices) stay flat. A transient descriptor (a /proc file being
	# read) may be caught open: compare the least counts of the first and
	# last halves, and allow the most 2 over them.
	_fd=$(awk -F': ' -v a="$2" -v b="$3" '$1 + 0 >= a && $1 + 0 <= b {
		r = 0; f = 0; k = split($2, t, ", ")
		for (i = 1; i <= k; i++) {
			split(t[i], c, " ")
			if (substr(c[2], 1, 1) == "/" && substr(c[2], 1, 5) != "/dev/")
				f += c[1]
			else
				r += c[1]
		}
		n++; R[n] = r; F[n] = f
	} END {
		h = int(n / 2); ra = rb = fa = fb = 1e9; rm = fm = 0
		for (i = 1; i <= n; i++) {
			if (i <= h) { if (R[i] < ra) ra = R[i]; if (F[i] < fa) fa = F[i] }
			else { if (R[i] < rb) rb = R[i]; if (F[i] < fb) fb = F[i] }
			if (R[i] > rm) rm = R[i]; if (F[i] > fm) fm = F[i]
		}
		print ra, rb, rm, fa, fb, fm }' "$1.fds")
	diag "$5: descriptors, least early, least late, most: others $(echo "$_fd" |
		awk '{ print $1, $2, $3 "; files", $4, $5, $6 }')"
	_st=$(echo "$_fd" | awk '{ exit !(NF == 6 && $1 == $2 && $3 <= $1 + 2 &&
		$5 <= $4 && $6 <= $4 + 2) }'; echo $?)
	ok "$_st" "$5: descriptors bounded (others flat, files no more than early)"
	[ "$_st" = 0 ] || diag "$5: the descriptors at each sample:" \
		"$(awk -F: -v a="$2" -v b="$3" '$1 >= a && $1 <= b' "$1.fds")"
}
