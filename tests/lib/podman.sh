# shellcheck shell=sh
# Real pods without Kubernetes: podman builds the image from the Dockerfile
# and plays the podspecs. Source after tap.sh. Needs root, podman, runc and
# debootstrap (see docs in /work/shared/TESTING.md's summary in README).
#
#   podman_require                 skip (or fail under REQUIRE_ALL) if unusable
#   podman_images                  base image (cached), sidescope + test app
#   pod_play SPEC [NAME]           play a copy of SPEC with our image names
#   pod_exec CONTAINER CMD...      exec in a container of the last played pod
#
# Images: localhost/sidescope:test (the Dockerfile's final stage) and
# localhost/sidescope-testapp:test (tests/pod/app.Containerfile). Every
# podspec names the sidecar SIDESCOPE_IMAGE_IN_SPEC and the application
# APP_IMAGE_IN_SPEC; pod_play substitutes both in a copy.

SIDESCOPE_IMAGE_IN_SPEC="ghcr.io/sidescope/sidescope:latest"
APP_IMAGE_IN_SPEC="registry.example.com/your-app:latest"
SIDESCOPE_IMAGE=localhost/sidescope:test
APP_IMAGE=localhost/sidescope-testapp:test
BUILD_IMAGE=localhost/sidescope-build:test
BASE_IMAGE=localhost/sidescope-debian:bookworm

pm() { podman --runtime runc "$@"; }

podman_require() {
	require_root
	require_cmd podman runc debootstrap flock
	grep -q '^default_ulimits *= *\[\]' /etc/containers/containers.conf 2>/dev/null ||
		skip_all "podman needs default_ulimits = [] in /etc/containers/containers.conf (scripts/install-deps)"
	pm info >/dev/null 2>&1 || skip_all "podman --runtime runc info fails"
}

# The Debian mirror apt uses here: the first URIs line of the deb822 file,
# else the first deb line of sources.list, else deb.debian.org.
_podman_mirror() {
	_m=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
	[ -n "$_m" ] || _m=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	printf '%s\n' "${_m:-http://deb.debian.org/debian}"
}

# No image can be pulled: make Debian bookworm from packages once, cached in
# podman's store, and give it the names the Dockerfile's FROM lines use.
podman_base_image() {
	if ! pm image exists "$BASE_IMAGE"; then
		_root=$(mktemp -d "${TMPDIR_TEST:-/tmp}/rootfs.XXXXXX")
		diag "debootstrap bookworm from $(_podman_mirror) (once; cached as $BASE_IMAGE)"
		if ! debootstrap --variant=minbase bookworm "$_root" "$(_podman_mirror)" \
				>"$_root.log" 2>&1; then
			tail -20 "$_root.log" | diag
			rm -rf "$_root"
			return 1
		fi
		# apt inside the image uses the same mirror
		printf 'deb %s bookworm main\n' "$(_podman_mirror)" > "$_root/etc/apt/sources.list"
		rm -rf "$_root/var/cache/apt/archives/"*.deb "$_root/var/lib/apt/lists/"*
		tar -C "$_root" -c . | pm import - "$BASE_IMAGE" >/dev/null || { rm -rf "$_root"; return 1; }
		rm -rf "$_root" "$_root.log"
	fi
	pm tag "$BASE_IMAGE" docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim
}

# Build the sidescope image from the Dockerfile as a user would, and the
# test application from the build stage's outputs. Layers are cached, so
# a rebuild after a small change takes seconds.
podman_build_images() {
	_log="$TMPDIR_TEST/build.log"
	if ! { pm build --pull=never --layers --target build -t "$BUILD_IMAGE" "$SIDESCOPE_SRC" >"$_log" 2>&1 &&
		pm build --pull=never --layers -t "$SIDESCOPE_IMAGE" "$SIDESCOPE_SRC" >>"$_log" 2>&1 &&
		pm build --pull=never --layers -t "$APP_IMAGE" \
			-f "$SIDESCOPE_SRC/tests/pod/app.Containerfile" "$SIDESCOPE_SRC/tests/pod" >>"$_log" 2>&1; }; then
		tail -30 "$_log" | diag
		return 1
	fi
}

# Everything a pod test needs, serialised across concurrent test files.
podman_images() {
	mkdir -p "$SIDESCOPE_BUILD/pod"
	(
		flock 9
		podman_base_image && podman_build_images
	) 9>"$SIDESCOPE_BUILD/pod/images.lock"
}

POD_SPEC=""	# the substituted copy of the last played podspec
POD_VOLUMES='run\|tmp\|out\|lttng\|shm'	# the podspecs' volume names (sed alternatives)
# Where kube play finds the podspecs' Localhost seccomp profiles (the
# kubelet's seccomp root on a node)
POD_SECCOMP_ROOT="$SIDESCOPE_SRC/podspecs/seccomp"
_pod_n=0

# Play a podspec under the test images; registers its teardown.
# Optional sed expressions after SPEC edit the copy further (a test's
# variant, e.g. without shareProcessNamespace).
pod_play() { # pod_play SPEC [SED_EXPR...]
	_src=$1
	shift
	_pod_n=$((_pod_n + 1))
	POD_SPEC="$TMPDIR_TEST/pod$_pod_n-$(basename "$_src")"
	# podman kube play knows no metadata.namespace field reference: drop
	# POD_NAMESPACE (only kubectl hints use it) from the copy
	# podman 4 makes each emptyDir a named volume, shared by every pod that
	# uses the name: give this pod's volumes names of their own
	_sfx="sst$$-$_pod_n"
	sed -e "s|$SIDESCOPE_IMAGE_IN_SPEC|$SIDESCOPE_IMAGE|g" \
	    -e "s|$APP_IMAGE_IN_SPEC|$APP_IMAGE|g" \
	    -e '/- name: POD_NAMESPACE/,/fieldPath: metadata.namespace/d' \
	    -e "s/^\( *- name: \)\($POD_VOLUMES\)\$/\1\2-$_sfx/" "$_src" > "$POD_SPEC" || return 1
	for _e in "$@"; do
		sed -i -e "$_e" "$POD_SPEC" || return 1
	done
	# podman 4 waits for init containers to end: a native sidecar (an init
	# container with restartPolicy: Always, just before "containers:") is
	# played as the pod's first container, without its startupProbe
	if grep -q '^      initContainers:$' "$POD_SPEC" &&
		grep -q '^          restartPolicy: Always$' "$POD_SPEC"; then
		sed -i -e '/^      containers:$/d' -e 's/^      initContainers:$/      containers:/' \
			-e '/^          restartPolicy: Always$/d' \
			-e '/^          startupProbe:$/,/^            failureThreshold:/d' "$POD_SPEC" || return 1
	fi
	_vols=""
	for _v in $(printf '%s' "$POD_VOLUMES" | tr '|' ' ' | sed 's/\\//g'); do
		_vols="$_vols $_v-$_sfx"
	done
	on_exit "podman volume rm -f$_vols"
	on_exit "podman --runtime runc kube down '$POD_SPEC'"
	# A second try after a failed play: podman's first play on a machine
	# also builds its pause image and the kube network, and a failure there
	# (seen once in CI, not reproduced) is the runtime's, not the spec's.
	# Both attempts' output goes to the TAP log.
	for _try in 1 2; do
		pm kube play --quiet --seccomp-profile-root "$POD_SECCOMP_ROOT" "$POD_SPEC" \
			>"$TMPDIR_TEST/play.log" 2>&1 && return 0
		diag "kube play (attempt $_try) failed: $(cat "$TMPDIR_TEST/play.log")"
		pm kube down "$POD_SPEC" >/dev/null 2>&1
		sleep 2
	done
	return 1
}

# The pod podman made for a Deployment named $1 (NAME-pod-0 in podman 4)
# or a Pod named $1.
pod_name_of() {
	for _n in "$1-pod-0" "$1-pod" "$1"; do
		pm pod exists "$_n" && { echo "$_n"; return 0; }
	done
	return 1
}

# Document N (from 1) of a multi-document YAML file, into file $3.
yaml_doc() { # yaml_doc FILE N OUT
	awk -v want="$2" 'BEGIN { n = 1 } /^---$/ { n++; next } n == want' "$1" > "$3"
}

pod_exec() { # pod_exec POD CONTAINER CMD...
	_p=$1
	_c=$2
	shift 2
	pm exec "$_p-$_c" "$@"
}

# Wait until a command run in a container succeeds, at most N seconds.
pod_wait_exec() { # pod_wait_exec SECONDS POD CONTAINER CMD...
	_n=$(( $1 * 10 ))
	shift
	while [ "$_n" -gt 0 ]; do
		pod_exec "$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# ok, and when it failed, end the file here: later checks need this one.
ok_or_bail() { # STATUS DESCRIPTION
	ok "$1" "$2"
	[ "$1" -eq 0 ] || { done_testing; exit 1; }
}
