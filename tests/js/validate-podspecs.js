#!/usr/bin/env node
// Offline validation of Kubernetes YAML: every document against the
// Kubernetes schemas (kubernetes-models), then a strict walk that rejects
// keys the schemas do not know (kubernetes-models lets them through; a
// cluster would drop them silently or refuse them under strict field
// validation). The walk follows the models' TypeScript declarations.
//
//   node validate-podspecs.js FILE.yaml...
// Prints one line per document, "ok FILE#N Kind/name" or "error FILE#N ...",
// and exits 1 when any document is invalid.
'use strict';
const fs = require('fs');
const path = require('path');
const YAML = require('yaml');

const NM = path.join(__dirname, 'node_modules');

function modelDir(apiVersion) {
  const parts = apiVersion.split('/');
  return parts.length === 1
    ? path.join(NM, 'kubernetes-models', parts[0])
    : path.join(NM, 'kubernetes-models', parts[0], parts[1]);
}

// --- the declarations: interface name -> properties and their types -------
const ifaceCache = new Map();

function resolveImport(fromFile, spec) {
  const base = spec.startsWith('.')
    ? path.resolve(path.dirname(fromFile), spec)
    : path.join(NM, spec);
  return base + '.d.ts';
}

// Parse the first exported interface of a .d.ts file: {props, imports},
// or null when the file declares a type alias (Quantity, IntOrString...).
function loadDecl(file) {
  if (ifaceCache.has(file)) return ifaceCache.get(file);
  const text = fs.readFileSync(file, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
  const imports = {};
  for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
    for (const name of m[1].split(',').map((s) => s.trim())) {
      imports[name] = resolveImport(file, m[2]);
    }
  }
  const m = text.match(/export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)\n\}/);
  let decl = null;
  if (m) {
    const props = {};
    // a property: 4 spaces, "name", optional ?, type up to the ; at depth 0
    const body = m[1];
    const re = /^ {4}"([^"]+)"\??: /gm;
    let pm;
    while ((pm = re.exec(body)) !== null) {
      let i = re.lastIndex;
      let depth = 0;
      let j = i;
      for (; j < body.length; j++) {
        const c = body[j];
        if (c === '{' || c === '<' || c === '(') depth++;
        else if (c === '}' || c === '>' || c === ')') depth--;
        else if (c === ';' && depth === 0) break;
      }
      props[pm[1]] = body.slice(i, j).trim();
    }
    decl = { props, imports, file };
  }
  ifaceCache.set(file, decl);
  return decl;
}

function strictWalk(value, type, decl, where, errors) {
  if (value === null || value === undefined) return;
  type = type.trim();
  const arr = type.match(/^Array<([\s\S]+)>$/);
  if (arr) {
    if (Array.isArray(value)) value.forEach((v, i) => strictWalk(v, arr[1], decl, `${where}[${i}]`, errors));
    return;
  }
  if (type.startsWith('{')) return; // a map: any keys
  if (!/^I\w+$/.test(type) || !decl.imports[type]) return; // primitive, union, literal
  const sub = loadDecl(decl.imports[type]);
  if (!sub || typeof value !== 'object' || Array.isArray(value)) return;
  checkObject(value, sub, where, errors);
}

function checkObject(obj, decl, where, errors) {
  for (const [k, v] of Object.entries(obj)) {
    if (!(k in decl.props)) {
      errors.push(`${where}.${k}: unknown key (not in ${path.basename(decl.file, '.d.ts')})`);
      continue;
    }
    strictWalk(v, decl.props[k], decl, `${where}.${k}`, errors);
  }
}

// --- one document ------------------------------------------------------------
function validateDoc(obj) {
  const errors = [];
  if (!obj || typeof obj !== 'object') return ['not a mapping'];
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['apiVersion and kind are required'];
  const dir = modelDir(apiVersion);
  const jsFile = path.join(dir, `${kind}.js`);
  if (!fs.existsSync(jsFile)) return [`unknown kind ${apiVersion} ${kind}`];
  const Model = require(jsFile)[kind];
  try {
    new Model(obj).validate();
  } catch (e) {
    const details = (e.errors || []).map((x) => `${x.instancePath || '/'} ${x.message}`).join('; ');
    errors.push(`schema: ${details || e.message}`);
  }
  const decl = loadDecl(path.join(dir, `${kind}.d.ts`));
  checkObject(obj, decl, kind, errors);
  return errors;
}

let failed = 0;
for (const file of process.argv.slice(2)) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
  docs.forEach((doc, i) => {
    const tag = `${file}#${i + 1}`;
    if (doc.errors.length) {
      failed++;
      console.log(`error ${tag}: yaml: ${doc.errors.map((e) => e.message).join('; ')}`);
      return;
    }
    const obj = doc.toJS();
    const errors = validateDoc(obj);
    const name = `${obj && obj.kind}/${obj && obj.metadata && obj.metadata.name}`;
    if (errors.length) {
      failed++;
      for (const e of errors) console.log(`error ${tag} ${name}: ${e}`);
    } else {
      console.log(`ok ${tag} ${name}`);
    }
  });
}
process.exit(failed ? 1 : 0);
