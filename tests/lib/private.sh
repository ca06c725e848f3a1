# shellcheck shell=sh
# A workspace no other mount namespace can reach, for tests that run the
# wrapper scripts on the host: the scripts refuse a TMPDIR, state or output
# directory that another container's mounts reach (common.sh,
# ss_shared_with), and on a shared machine another test's simulated pod
# reaches every directory of the host's filesystems.
# Source after tap.sh. Sets TMPDIR (exported) to a private directory.

# As root: re-run this test in a mount namespace of its own with a tmpfs on
# $TMPDIR_TEST, mounted there only. Without root nothing is done: the
# scripts cannot see other users' namespaces then. Call it first, before
# the test starts anything.
private_workspace() {
	if [ "$(id -u)" -eq 0 ] && [ -z "${SIDESCOPE_TEST_PRIVATE:-}" ]; then
		command -v unshare >/dev/null 2>&1 || skip_all "needs unshare"
		# the workspace of this run goes: the re-run makes its own
		rm -rf "$TMPDIR_TEST"
		trap - EXIT
		SIDESCOPE_TEST_PRIVATE=1 exec unshare --mount --propagation private -- sh "$0" "$@"
	fi
	if [ -n "${SIDESCOPE_TEST_PRIVATE:-}" ]; then
		mount -t tmpfs -o mode=0700 tmpfs "$TMPDIR_TEST" ||
			skip_all "cannot mount a tmpfs for a private workspace"
		# last registered, first run: unmount before the directory goes
		on_exit "umount -l '$TMPDIR_TEST'"
	fi
	TMPDIR="$TMPDIR_TEST/run/tmp"
	export TMPDIR
	# other tools the test runs keep their temporary files there too
	mkdir -p "$TMPDIR" && chmod 0700 "$TMPDIR"
}
