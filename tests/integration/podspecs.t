#!/bin/sh
# Every podspec validated offline against the Kubernetes schemas
# (kubernetes-models) plus a strict unknown-key check, and the promises the
# podspecs make checked field by field: shared PID namespace, least
# privilege, seccomp for podman and for clusters, sized output volumes.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
. "$SIDESCOPE_SRC/tests/lib/podman.sh"
require_cmd node jq
js="$SIDESCOPE_SRC/tests/js"
[ -d "$js/node_modules/kubernetes-models" ] && [ -d "$js/node_modules/yaml" ] ||
	skip_all "tests/js/node_modules missing (cd tests/js && npm ci)"
validate() { node "$js/validate-podspecs.js" "$@"; }
specs="cpu-profiling lttng dynamic-tracing all-in-one periodic-capture cronjob"

for s in $specs; do
	f="$SIDESCOPE_SRC/podspecs/$s.yaml"
	out=$(validate "$f")
	ok $? "$s.yaml: valid, no unknown keys"
	[ -z "$(printf '%s\n' "$out" | grep '^error')" ] || diag "$out"
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
		is "$caps" "" "$s: no capabilities added"
		is "$(printf '%s' "$j" | jq "[$templates | .c.securityContext.seccompProfile == null] | all")" true \
			"$s: default seccomp"
		is "$(printf '%s' "$j" | jq -r "[$templates | .c.volumeMounts[].mountPath] | sort | join(\" \")")" \
			"/dev/shm /out /var/run/lttng" "$s: /var/run/lttng and /dev/shm shared"
		continue
	fi
	case "$s" in
	all-in-one) want="BPF,PERFMON,SYSLOG,SYS_PTRACE" ;;
	*) want="BPF,PERFMON,SYS_PTRACE" ;;
	esac
	is "$caps" "$want" "$s: adds exactly $want"
	is "$(printf '%s' "$j" | jq "[$templates | .c.securityContext.seccompProfile.type == \"Unconfined\"] | all")" true \
		"$s: seccompProfile Unconfined (clusters)"
	is "$(printf '%s' "$j" | jq "[$templates | .t.metadata.annotations[\"container.seccomp.security.alpha.kubernetes.io/sidescope\"] == \"unconfined\"] | all")" true \
		"$s: seccomp annotation (podman kube play)"
done

j=$(json "$SIDESCOPE_SRC/podspecs/periodic-capture.yaml")
is "$(printf '%s' "$j" | jq -r '.[0].spec.template.spec.initContainers[0] | .name + " " + .restartPolicy')" \
	"sidescope Always" "periodic: native sidecar (init container, restartPolicy Always)"
is "$(printf '%s' "$j" | jq -r '[.[].spec.template.spec | (.initContainers // []) + .containers | .[] | .env // [] | .[] | select(.name == "SIDESCOPE_SCHEDULE") | .value] | join(" ")')" \
	"5m 5m" "periodic: both forms set SIDESCOPE_SCHEDULE"
j=$(json "$SIDESCOPE_SRC/podspecs/cronjob.yaml")
is "$(printf '%s' "$j" | jq -r '.[] | select(.kind == "CronJob") | .spec.concurrencyPolicy')" Forbid "cronjob: concurrencyPolicy Forbid"
is "$(printf '%s' "$j" | jq -c '[.[] | select(.kind == "Role") | .rules[] | {r: .resources[0], v: (.verbs | sort)}]')" \
	'[{"r":"pods","v":["get","list"]},{"r":"pods/exec","v":["create","get"]}]' "cronjob: Role allows exactly pods get/list and pods/exec get/create"
is "$(printf '%s' "$j" | jq -r '[(.[] | select(.kind == "CronJob") | .spec.jobTemplate.spec.template.spec.serviceAccountName), (.[] | select(.kind == "RoleBinding") | .subjects[0].name), (.[] | select(.kind == "ServiceAccount") | .metadata.name)] | unique | length')" \
	1 "cronjob: runs as the bound ServiceAccount"
like "$(printf '%s' "$j" | jq -r '.[] | select(.kind == "CronJob") | .spec.jobTemplate.spec.template.spec.containers[0].command[2]')" \
	'kubectl exec "\$pod" -c sidescope -- ' "cronjob: execs into the sidescope container"

done_testing
