#!/usr/bin/env node
// The least-privilege rules of the podspecs, checked offline for every
// sidescope sidecar (a container or init container named "sidescope" in a
// pod template):
//   - capabilities: drop ALL, add only from BPF, PERFMON, SYS_PTRACE,
//     SYSLOG, SYS_ADMIN, SETGID, and SYS_PTRACE always (without it the app
//     could ptrace the sidecar: see podspecs/lttng.yaml);
//   - allowPrivilegeEscalation false, readOnlyRootFilesystem true, not
//     privileged;
//   - every volume it mounts is an emptyDir; /run is one that no other
//     container mounts (TMPDIR, LTTng's control sockets), and so is /out;
//     the app's /tmp is mounted read-only;
//   - nothing at /var/run/lttng or /run/lttng: a volume another container
//     has at /var/run/lttng is the sidecar's /run/lttng-apps;
//   - seccomp: Localhost with a profile in podspecs/seccomp/, or
//     RuntimeDefault, never Unconfined; the podman annotation says the same.
//
//   node check-least-privilege.js FILE.yaml...
// Prints "ok FILE#N Kind/name" or one "error FILE#N Kind/name: ..." line per
// broken rule; exits 1 when a rule is broken.
'use strict';
const fs = require('fs');
const path = require('path');
const YAML = require(path.join(__dirname, 'node_modules', 'yaml'));

const SECCOMP_DIR = path.join(__dirname, '..', '..', 'podspecs', 'seccomp');
const MAY_ADD = new Set(['BPF', 'PERFMON', 'SYS_PTRACE', 'SYSLOG', 'SYS_ADMIN', 'SETGID']);
const ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/sidescope';

// The pod templates of a document (a Pod is its own template).
function templates(doc) {
  if (!doc || typeof doc !== 'object') return [];
  if (doc.kind === 'Pod') return [doc];
  const spec = doc.spec || {};
  if (spec.template) return [spec.template];
  if (spec.jobTemplate && spec.jobTemplate.spec && spec.jobTemplate.spec.template)
    return [spec.jobTemplate.spec.template];
  return [];
}

function under(p, dir) { return p === dir || p.startsWith(dir + '/'); }

function checkSidecar(tpl, c, errors) {
  const spec = tpl.spec || {};
  const all = (spec.containers || []).concat(spec.initContainers || []);
  const others = all.filter((o) => o !== c);
  const sc = c.securityContext || {};
  const caps = sc.capabilities || {};
  const drop = caps.drop || [];
  const add = caps.add || [];
  if (drop.length !== 1 || drop[0] !== 'ALL') errors.push('capabilities.drop must be ["ALL"]');
  for (const a of add) if (!MAY_ADD.has(a)) errors.push(`capability ${a} is not one the sidecar needs`);
  if (!add.includes('SYS_PTRACE'))
    errors.push('capabilities.add lacks SYS_PTRACE (a sidecar without it may be ptraced by the app)');
  if (sc.allowPrivilegeEscalation !== false) errors.push('allowPrivilegeEscalation must be false');
  if (sc.readOnlyRootFilesystem !== true) errors.push('readOnlyRootFilesystem must be true');
  if (sc.privileged === true) errors.push('privileged');

  const volumes = new Map((spec.volumes || []).map((v) => [v.name, v]));
  const mountedByOthers = (name) =>
    others.some((o) => (o.volumeMounts || []).some((m) => m.name === name));
  const mounts = c.volumeMounts || [];
  const at = (p) => mounts.find((m) => m.mountPath === p);
  for (const m of mounts) {
    const v = volumes.get(m.name);
    if (!v || !v.emptyDir) errors.push(`volume ${m.name} at ${m.mountPath} is not an emptyDir`);
    if (under(m.mountPath, '/var/run/lttng') || under(m.mountPath, '/run/lttng'))
      errors.push(`${m.mountPath}: LTTng's control directory must stay the sidecar's own (mount the app's LTTng volume at /run/lttng-apps)`);
  }
  for (const p of ['/run', '/out']) {
    const m = at(p);
    if (!m) errors.push(`no emptyDir of its own at ${p}`);
    else if (mountedByOthers(m.name)) errors.push(`volume ${m.name} at ${p} is mounted by another container too`);
  }
  const tmp = at('/tmp');
  if (tmp && tmp.readOnly !== true) errors.push('/tmp (the app\'s perf maps) must be mounted readOnly');
  for (const o of others) {
    for (const m of o.volumeMounts || []) {
      if (m.mountPath !== '/var/run/lttng') continue;
      const mine = mounts.find((x) => x.name === m.name);
      if (!mine || mine.mountPath !== '/run/lttng-apps')
        errors.push(`volume ${m.name} (${o.name}'s /var/run/lttng) must be the sidecar's /run/lttng-apps`);
    }
  }

  const sp = sc.seccompProfile || (spec.securityContext || {}).seccompProfile;
  const ann = ((tpl.metadata || {}).annotations || {})[ANNOTATION];
  if (!sp) {
    errors.push('no seccompProfile');
  } else if (sp.type === 'Localhost') {
    const file = sp.localhostProfile || '';
    if (!fs.existsSync(path.join(SECCOMP_DIR, file)))
      errors.push(`seccomp profile ${file} is not in podspecs/seccomp/`);
    if (ann !== `localhost/${file}`) errors.push(`annotation ${ANNOTATION} must be localhost/${file}`);
  } else if (sp.type === 'RuntimeDefault') {
    if (ann !== 'runtime/default') errors.push(`annotation ${ANNOTATION} must be runtime/default`);
  } else {
    errors.push(`seccompProfile type ${sp.type}: Localhost or RuntimeDefault`);
  }
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  YAML.parseAllDocuments(fs.readFileSync(file, 'utf8')).forEach((d, i) => {
    const doc = d.toJS();
    const tag = `${file}#${i + 1} ${doc && doc.kind}/${doc && doc.metadata && doc.metadata.name}`;
    for (const tpl of templates(doc)) {
      const spec = tpl.spec || {};
      for (const c of (spec.containers || []).concat(spec.initContainers || [])) {
        if (c.name !== 'sidescope') continue;
        const errors = [];
        checkSidecar(tpl, c, errors);
        if (errors.length) {
          failed++;
          for (const e of errors) console.log(`error ${tag}: ${e}`);
        } else {
          console.log(`ok ${tag}`);
        }
      }
    }
  });
}
process.exit(failed ? 1 : 0);
