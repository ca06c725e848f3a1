#!/usr/bin/env node
// A loopback stand-in for a Grafana Pyroscope server's HTTP ingest API,
// strict about what it accepts, for the periodic-capture tests.
//
//   node pyroscope-receiver.js DIR [--fail-first N] [--host 127.0.0.1]
//
// Listens on an ephemeral port and writes it to DIR/port. Each POST /ingest
// is checked: query name=APP.cpu{k=v,...} (labels), from <= until (UNIX
// seconds), format=pprof, sampleRate a positive integer if present; body
// gzip whose content walks as protobuf and holds a pprof Profile's
// sample_type (1), sample (2) and string_table (6) fields with "" first.
// Accepted bodies go to DIR/N.pb.gz with the query (and the X-Scope-OrgID
// header as "tenant") in DIR/N.json; rejected
// requests get 400 and a line in DIR/rejected. The first N requests get 503
// (--fail-first), to exercise the client's retries. SIGTERM ends it.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');

const dir = process.argv[2];
if (!dir) {
  console.error('usage: pyroscope-receiver.js DIR [--fail-first N] [--host ADDR]');
  process.exit(2);
}
let failFirst = 0;
let host = '127.0.0.1';
for (let i = 3; i < process.argv.length; i += 2) {
  if (process.argv[i] === '--fail-first') failFirst = parseInt(process.argv[i + 1], 10);
  else if (process.argv[i] === '--host') host = process.argv[i + 1];
  else { console.error(`unknown option ${process.argv[i]}`); process.exit(2); }
}

// Walk a protobuf message; returns {field: [values]} (varints as numbers,
// length-delimited as Buffers) or throws on malformed wire data.
function walk(buf) {
  const fields = {};
  let i = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (field === 0) throw new Error('field number 0');
    let val;
    if (wire === 0) val = varint();
    else if (wire === 1) { if (i + 8 > buf.length) throw new Error('truncated fixed64'); val = buf.subarray(i, i + 8); i += 8; }
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new Error('truncated bytes');
      val = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 5) { if (i + 4 > buf.length) throw new Error('truncated fixed32'); val = buf.subarray(i, i + 4); i += 4; }
    else throw new Error(`wire type ${wire}`);
    (fields[field] = fields[field] || []).push(val);
  }
  return fields;
}

function check(req, url, body) {
  if (req.method !== 'POST') return `method ${req.method}, want POST`;
  if (url.pathname !== '/ingest') return `path ${url.pathname}, want /ingest`;
  const q = url.searchParams;
  const name = q.get('name') || '';
  const m = name.match(/^([A-Za-z0-9._-]+)\.cpu\{([^{}]*)\}$/);
  if (!m) return `name '${name}' is not APP.cpu{labels}`;
  for (const kv of m[2].split(',')) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9._-]+$/.test(kv)) return `bad label '${kv}'`;
  }
  const from = q.get('from');
  const until = q.get('until');
  if (!/^\d+$/.test(from || '') || !/^\d+$/.test(until || '')) return 'from and until must be UNIX seconds';
  if (Number(from) > Number(until)) return 'from is after until';
  if (Math.abs(Number(until) - Date.now() / 1000) > 3600) return 'until is not near now';
  if (q.get('format') !== 'pprof') return `format '${q.get('format')}', want pprof`;
  if (q.has('sampleRate') && !/^[1-9]\d*$/.test(q.get('sampleRate'))) return 'bad sampleRate';
  const ct = req.headers['content-type'] || '';
  if (ct !== 'application/octet-stream') return `content-type '${ct}'`;
  if (Number(req.headers['content-length']) !== body.length) return 'content-length does not match the body';
  if (body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) return 'body is not gzip';
  let raw;
  try { raw = zlib.gunzipSync(body); } catch (e) { return `gunzip: ${e.message}`; }
  let f;
  try { f = walk(raw); } catch (e) { return `protobuf: ${e.message}`; }
  if (!f[1]) return 'no sample_type';
  if (!f[6] || f[6][0].length !== 0) return 'string_table must start with ""';
  for (const st of f[1]) walk(st);
  return null;
}

fs.mkdirSync(dir, { recursive: true });
let n = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    n++;
    if (n <= failFirst) {
      res.writeHead(503);
      res.end('try later\n');
      return;
    }
    const url = new URL(req.url, 'http://x');
    const body = Buffer.concat(chunks);
    const why = check(req, url, body);
    if (why) {
      fs.appendFileSync(path.join(dir, 'rejected'), `${req.method} ${req.url}: ${why}\n`);
      res.writeHead(400);
      res.end(`${why}\n`);
      return;
    }
    const id = String(n).padStart(4, '0');
    fs.writeFileSync(path.join(dir, `${id}.pb.gz`), body);
    const meta = Object.fromEntries(url.searchParams);
    if (req.headers['x-scope-orgid']) meta.tenant = req.headers['x-scope-orgid'];
    fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(meta));
    res.writeHead(200);
    res.end('');
  });
});
server.listen(0, host, () => {
  const tmp = path.join(dir, 'port.tmp');
  fs.writeFileSync(tmp, `${server.address().port}\n`);
  fs.renameSync(tmp, path.join(dir, 'port'));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
