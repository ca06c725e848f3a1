# shellcheck shell=sh
# Helpers of the fault tests. Source after tap.sh.

# The seed of the random schedules, printed so that a failure can be
# replayed with FAULTS_SEED=N.
FAULTS_SEED=${FAULTS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
diag "FAULTS_SEED=$FAULTS_SEED"

# A seeded list of N "DELAY SIGNAL" lines, DELAY in 0..MAX seconds, SIGNAL
# INT or TERM.
fault_schedule() { # N MAX
	awk -v s="$FAULTS_SEED" -v n="$1" -v max="$2" 'BEGIN {
		srand(s)
		for (i = 0; i < n; i++)
			printf "%.3f %s\n", rand() * max, rand() < 0.5 ? "INT" : "TERM"
	}'
}

signum() { case "$1" in INT) echo 2 ;; TERM) echo 15 ;; esac; }

# IDs of the BPF programs named like sidescope's (ARGS: names) above id
# FLOOR that no process holds open: programs a run left behind. A program
# whose owner just exited is freed shortly after: ask again for a while.
bpf_prog_ids() { # NAME...
	_sel=$(printf '.name == "%s" or ' "$@")
	bpftool prog list -j 2>/dev/null | jq -r ".[] | select(${_sel}false) | .id"
}
bpf_orphans() { # FLOOR NAME...
	_floor=$1
	shift
	_try=0
	while :; do
		_held=$(cat /proc/[0-9]*/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u)
		_orph=""
		for _id in $(bpf_prog_ids "$@"); do
			[ "$_id" -gt "$_floor" ] || continue
			printf '%s\n' "$_held" | grep -qx "$_id" || _orph="$_orph $_id"
		done
		_try=$((_try + 1))
		if [ -z "$_orph" ] || [ "$_try" -ge 50 ]; then
			break
		fi
		sleep 0.1
	done
	echo "${_orph# }"
}
bpf_max_prog_id() {
	bpftool prog list -j 2>/dev/null | jq -r '[.[].id] | max // 0'
}

# Files in DIR other than the listed names (temporaries left behind).
stray_files() { # DIR NAME...
	_d=$1
	shift
	for _f in "$_d"/* "$_d"/.[!.]*; do
		[ -e "$_f" ] || continue
		_f=${_f##*/}
		_keep=0
		for _n in "$@"; do
			[ "$_f" = "$_n" ] && _keep=1
		done
		[ "$_keep" = 1 ] || printf '%s ' "$_f"
	done
}
