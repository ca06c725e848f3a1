#!/bin/sh
# shellcheck disable=SC2016 # jq programs
# Every podspec validated offline against the Kubernetes schemas
# (kubernetes-models) plus a strict unknown-key check, and the promises the
# podspecs make checked field by field: shared PID namespace, least
# privilege for every sidecar (tests/js/check-least-privilege.js: drop ALL
# then only what it needs, no privilege escalation, a read-only root with
# emptyDirs of its own at /run and /out, the app's /tmp read-only, LTTng's
# control directory its own, a Localhost or RuntimeDefault seccomp profile
# and the podman annotation that says the same), the shipped seccomp
# profile, sized output volumes.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
require_cmd node jq
js="$SIDESCOPE_SRC/tests/js"
{ [ -d "$js/node_modules/kubernetes-models" ] && [ -d "$js/node_modules/yaml" ]; } ||
	skip_all "tests/js/node_modules missing (cd tests/js && npm ci)"
validate() { node "$js/validate-podspecs.js" "$@"; }
least() { node "$js/check-least-privilege.js" "$@"; }
specs="cpu-profiling lttng dynamic-tracing all-in-one periodic-capture cronjob"

for s in $specs; do
	f="$SIDESCOPE_SRC/podspecs/$s.yaml"
	out=$(validate "$f")
	ok $? "$s.yaml: valid, no unknown keys"
	! printf '%s\n' "$out" | grep -q '^error' || diag "$out"
done
ok "$([ -s "$SIDESCOPE_SRC/podspecs/kubectl-debug.md" ]; echo $?)" "kubectl-debug.md exists"

# The validator must be able to fail: a typo at each depth, a bad type, a
# bad enum value.
src="$SIDESCOPE_SRC/podspecs/cpu-profiling.yaml"
bad="$TMPDIR_TEST/bad.yaml"
sed 's/shareProcessNamespace:/shareProcessNamespaces:/' "$src" > "$bad"
like "$(validate "$bad")" "spec.shareProcessNamespaces: unknown key" "unknown key in the pod spec is caught"
sed 's/      add: \["BPF"/      addd: ["BPF"/' "$src" > "$bad"
like "$(validate "$bad")" "capabilities.addd: unknown key" "unknown key deep in securityContext is caught"
sed 's/sizeLimit: 512Mi/sizeLimt: 512Mi/' "$src" > "$bad"
like "$(validate "$bad")" "emptyDir.sizeLimt: unknown key" "unknown key in a volume is caught"
sed 's/replicas: 1/replicas: one/' "$src" > "$bad"
like "$(validate "$bad")" "replicas must be integer" "wrong type is caught"
sed 's/concurrencyPolicy: Forbid/concurrencyPolicy: Never/' "$SIDESCOPE_SRC/podspecs/cronjob.yaml" > "$bad"
validate "$bad" >/dev/null
is "$?" 1 "bad enum value fails the file"

# --- least privilege ------------------------------------------------------------
for s in cpu-profiling lttng dynamic-tracing all-in-one periodic-capture; do
	out=$(least "$SIDESCOPE_SRC/podspecs/$s.yaml")
	ok $? "$s.yaml: every sidecar at least privilege"
	! printf '%s\n' "$out" | grep -q '^error' || diag "$out"
done
# the checker must be able to fail: each rule broken once
src="$SIDESCOPE_SRC/podspecs/all-in-one.yaml"
least_breaks() { # DESCRIPTION EXPECTED_ERROR SED_EXPR...
	_d=$1
	_want=$2
	shift 2
	cp "$src" "$bad"
	for _e in "$@"; do sed -i -e "$_e" "$bad"; done
	like "$(least "$bad")" "$_want" "caught: $_d"
}
least_breaks "capabilities not dropped" 'capabilities.drop must be \["ALL"\]' '/drop: \["ALL"\]/d'
least_breaks "a capability it does not need" "capability NET_ADMIN is not one" 's/add: \["BPF"/add: ["NET_ADMIN", "BPF"/'
least_breaks "no SYS_PTRACE" "lacks SYS_PTRACE" 's/"SYS_PTRACE", //'
least_breaks "privilege escalation" "allowPrivilegeEscalation must be false" '/- name: sidescope$/,$ s/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/'
least_breaks "a writable root" "readOnlyRootFilesystem must be true" '/readOnlyRootFilesystem: true/d'
least_breaks "a writable /tmp" "/tmp .* must be mounted readOnly" '/- name: sidescope$/,$ {/readOnly: true/d}'
least_breaks "no /run of its own" "no emptyDir of its own at /run" '/- name: sidescope$/,$ s|mountPath: /run$|mountPath: /srv|'
least_breaks "a /run the app mounts too" "volume run at /run is mounted by another container" \
	'/- name: app$/,/- name: tmp$/ s|- name: tmp$|- name: run\n              mountPath: /run\n            - name: tmp|'
least_breaks "the LTTng control directory shared" "LTTng's control directory must stay the sidecar's own" \
	's|mountPath: /run/lttng-apps|mountPath: /var/run/lttng|'
least_breaks "a host path" "volume out at /out is not an emptyDir" \
	'/^        - name: out$/,$ s|emptyDir:|hostPath:\n            path: /srv/out\n          x:|' '/sizeLimit: 1Gi/d' '/          x:/d'
least_breaks "seccomp Unconfined" "seccompProfile type Unconfined" 's/type: Localhost/type: Unconfined/'
least_breaks "annotation and field disagree" "annotation .* must be localhost/sidescope.json" \
	's|seccomp.security.alpha.kubernetes.io/sidescope: localhost/sidescope.json|seccomp.security.alpha.kubernetes.io/sidescope: unconfined|'
least_breaks "a profile not shipped" "seccomp profile other.json is not in podspecs/seccomp/" \
	's/localhostProfile: sidescope.json/localhostProfile: other.json/'
out=$(least "$SIDESCOPE_SRC/examples/dotnet/deployment.yaml")
ok $? "examples/dotnet/deployment.yaml: the sidecar at least privilege, the LTTng layout"
[ -z "$out" ] || diag "$out"

# the seccomp profile: valid, allows by default, denies what the sidecar
# never does, and nothing it does
prof="$SIDESCOPE_SRC/podspecs/seccomp/sidescope.json"
is "$(jq -r .defaultAction "$prof")" SCMP_ACT_ALLOW "seccomp profile: allows by default"
denied=$(jq -r '[.syscalls[] | select(.action == "SCMP_ACT_ERRNO" and (.args // []) == []) | .names[]] | sort | join(" ")' "$prof")
for sc in mount umount2 pivot_root unshare setns init_module finit_module kexec_load reboot ptrace \
	process_vm_writev open_by_handle_at keyctl userfaultfd io_uring_setup clone3; do
	case " $denied " in *" $sc "*) pass "seccomp profile: denies $sc" ;; *) fail "seccomp profile: denies $sc" ;; esac
done
for sc in bpf perf_event_open openat2 memfd_create setgroups clone execve; do
	case " $denied " in *" $sc "*) fail "seccomp profile: allows $sc" ;; *) pass "seccomp profile: allows $sc" ;; esac
done
is "$(jq -c '[.syscalls[] | select(.names == ["clone"]) | .args[0] | [.index, .value, .op]]' "$prof")" \
	'[[0,268435456,"SCMP_CMP_MASKED_EQ"]]' "seccomp profile: clone with CLONE_NEWUSER denied"

# --- the podspecs' promises ---------------------------------------------------
json() { # all documents of a YAML file as one JSON array
	NODE_PATH="$js/node_modules" node -e '
		const YAML = require("yaml"), fs = require("fs");
		console.log(JSON.stringify(YAML.parseAllDocuments(fs.readFileSync(process.argv[1], "utf8")).map(d => d.toJS())));
	' "$1"
}
# the pod templates that hold a container named sidescope, with that container
templates='.[] | select(.kind == "Deployment") | .spec.template |
	. as $t | ((.spec.containers // []) + (.spec.initContainers // []))[] |
	select(.name == "sidescope") | {t: $t, c: .}'

for s in cpu-profiling lttng dynamic-tracing all-in-one periodic-capture; do
	j=$(json "$SIDESCOPE_SRC/podspecs/$s.yaml")
	n=$(printf '%s' "$j" | jq "[$templates] | length")
	ok "$([ "$n" -ge 1 ]; echo $?)" "$s: has a sidescope container"
	is "$(printf '%s' "$j" | jq "[$templates | .t.spec.shareProcessNamespace == true] | all")" true \
		"$s: shareProcessNamespace: true"
	is "$(printf '%s' "$j" | jq "[$templates | .c.securityContext.privileged != true] | all")" true \
		"$s: not privileged (only as a commented fallback)"
	is "$(printf '%s' "$j" | jq "[$templates | .c.image == \"$SIDESCOPE_IMAGE_IN_SPEC\"] | all")" true \
		"$s: sidecar image is $SIDESCOPE_IMAGE_IN_SPEC"
	is "$(printf '%s' "$j" | jq "[$templates | .t.spec.volumes[] | select(.name == \"out\") | .emptyDir.sizeLimit != null] | all")" true \
		"$s: output emptyDir has a sizeLimit"
	caps=$(printf '%s' "$j" | jq -r "[$templates | .c.securityContext.capabilities.add // [] | sort | join(\",\")] | unique | join(\" \")")
	if [ "$s" = lttng ]; then
		is "$caps" "SYS_PTRACE" "$s: adds SYS_PTRACE alone (LTTng needs none; without one the app could ptrace it)"
		is "$(printf '%s' "$j" | jq -r "[$templates | .c.securityContext.seccompProfile.type] | unique | join(\" \")")" \
			RuntimeDefault "$s: the runtime's default seccomp profile"
		is "$(printf '%s' "$j" | jq -r "[$templates | .c.volumeMounts[].mountPath] | sort | join(\" \")")" \
			"/dev/shm /out /run /run/lttng-apps" "$s: its own /run and /out, the app's LTTng directory at /run/lttng-apps, /dev/shm"
		continue
	fi
	case "$s" in
	all-in-one) want="BPF,PERFMON,SYSLOG,SYS_PTRACE" ;;
	*) want="BPF,PERFMON,SYS_PTRACE" ;;
	esac
	is "$caps" "$want" "$s: adds exactly $want"
	is "$(printf '%s' "$j" | jq -r "[$templates | .c.securityContext.seccompProfile | .type + \" \" + .localhostProfile] | unique | join(\",\")")" \
		"Localhost sidescope.json" "$s: seccomp profile seccomp/sidescope.json (clusters)"
	is "$(printf '%s' "$j" | jq "[$templates | .t.metadata.annotations[\"container.seccomp.security.alpha.kubernetes.io/sidescope\"] == \"localhost/sidescope.json\"] | all")" true \
		"$s: the same in the seccomp annotation (podman kube play)"
done

j=$(json "$SIDESCOPE_SRC/podspecs/periodic-capture.yaml")
is "$(printf '%s' "$j" | jq -r '.[0].spec.template.spec.initContainers[0] | .name + " " + .restartPolicy')" \
	"sidescope Always" "periodic: native sidecar (init container, restartPolicy Always)"
is "$(printf '%s' "$j" | jq -r '[.[].spec.template.spec | (.initContainers // []) + .containers | .[] | .env // [] | .[] | select(.name == "SIDESCOPE_SCHEDULE") | .value] | join(" ")')" \
	"5m 5m" "periodic: both forms set SIDESCOPE_SCHEDULE"
# LTTng agents read the daemon's port when the app starts: the sidecar first
for s in lttng all-in-one; do
	j=$(json "$SIDESCOPE_SRC/podspecs/$s.yaml")
	is "$(printf '%s' "$j" | jq -r '.[0].spec.template.spec.initContainers[0] | .name + " " + .restartPolicy + " " + (.startupProbe.exec.command | join(" "))')" \
		"sidescope Always test -e /run/sidescope/tmp/sidecar.ready" \
		"$s: native sidecar, the app held back until lttng-sessiond is up"
done
j=$(json "$SIDESCOPE_SRC/podspecs/cronjob.yaml")
is "$(printf '%s' "$j" | jq -r '.[] | select(.kind == "CronJob") | .spec.concurrencyPolicy')" Forbid "cronjob: concurrencyPolicy Forbid"
is "$(printf '%s' "$j" | jq -c '[.[] | select(.kind == "Role") | .rules[] | {r: .resources[0], v: (.verbs | sort)}]')" \
	'[{"r":"pods","v":["get","list"]},{"r":"pods/exec","v":["create","get"]}]' "cronjob: Role allows exactly pods get/list and pods/exec get/create"
is "$(printf '%s' "$j" | jq -r '[(.[] | select(.kind == "CronJob") | .spec.jobTemplate.spec.template.spec.serviceAccountName), (.[] | select(.kind == "RoleBinding") | .subjects[0].name), (.[] | select(.kind == "ServiceAccount") | .metadata.name)] | unique | length')" \
	1 "cronjob: runs as the bound ServiceAccount"
like "$(printf '%s' "$j" | jq -r '.[] | select(.kind == "CronJob") | .spec.jobTemplate.spec.template.spec.containers[0].command[2]')" \
	'kubectl exec "\$pod" -c sidescope -- ' "cronjob: execs into the sidescope container"

done_testing
