'use strict';
// Shared helpers for the Node compatibility suites: the scenario runner, results
// file writer, MD5 helpers (spec §4.3) and small assertion utilities.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

// The scenario keys shared with the Python suites, in report order.
const SCENARIOS = [
  'queue_lifecycle',
  'list_queues_pagination',
  'send_receive_delete_attributes',
  'batches_partial_failure',
  'visibility_change_release',
  'delay',
  'long_polling',
  'fifo_order_group_lock_dedup',
  'dead_letter_and_move_task',
  'tags',
  'errors_typed',
];

const SCENARIO_TIMEOUT_MS = 45000;

class NotApplicable {
  constructor(reason) {
    this.reason = reason;
  }
}
const na = (reason) => new NotApplicable(reason);

class CheckError extends Error {}

function check(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

function eq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new CheckError(`${what}: expected ${e}, got ${a}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let counter = 0;
const RUN_ID = `${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
// Queue names: [A-Za-z0-9_-], at most 80 chars including ".fifo".
function qname(tag, suffix) {
  counter += 1;
  const n = `nc-${tag}-${RUN_ID}-${counter}-${suffix}`.replace(/[^A-Za-z0-9_-]/g, '-');
  return n.slice(0, 74);
}

function md5Hex(data) {
  return crypto.createHash('md5').update(data).digest('hex');
}

// MD5OfMessageAttributes / MD5OfMessageSystemAttributes, spec §4.3.
function md5OfAttributes(attrs) {
  const names = Object.keys(attrs || {}).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (names.length === 0) return undefined;
  const h = crypto.createHash('md5');
  const putLen = (buf) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(buf.length, 0);
    h.update(len);
    h.update(buf);
  };
  for (const name of names) {
    const v = attrs[name];
    putLen(Buffer.from(name, 'utf8'));
    putLen(Buffer.from(v.DataType, 'utf8'));
    if (v.StringValue !== undefined && v.StringValue !== null) {
      h.update(Buffer.from([1]));
      putLen(Buffer.from(v.StringValue, 'utf8'));
    } else if (v.BinaryValue !== undefined && v.BinaryValue !== null) {
      h.update(Buffer.from([2]));
      putLen(toBuffer(v.BinaryValue));
    } else if (v.StringListValues && v.StringListValues.length) {
      h.update(Buffer.from([3]));
      for (const s of v.StringListValues) putLen(Buffer.from(s, 'utf8'));
    } else if (v.BinaryListValues && v.BinaryListValues.length) {
      h.update(Buffer.from([4]));
      for (const b of v.BinaryListValues) putLen(toBuffer(b));
    }
  }
  return h.digest('hex');
}

function toBuffer(x) {
  if (Buffer.isBuffer(x)) return x;
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  if (typeof x === 'string') return Buffer.from(x, 'base64');
  throw new Error(`not binary: ${typeof x}`);
}

// Guard against a broken local MD5 implementation (vectors from spec §4.3).
function selfTest() {
  const vectors = [
    [{ Foo: { DataType: 'String', StringValue: 'Bar' } }, 'ae7155c6026991b6d54b11589678bf9c'],
    [{ k: { DataType: 'String', StringValue: 'x' } }, 'a45daa70926828a2f0a1db3418e6feb4'],
    [
      {
        attr1: {
          DataType: 'Binary',
          BinaryValue: Buffer.from('traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01', 'latin1'),
        },
      },
      '8cbe4db156db8a94db8b801b7addb984',
    ],
    [
      {
        AWSTraceHeader: {
          DataType: 'String',
          StringValue: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
        },
      },
      '5ae4d5d7636402d80f4eb6d213245a88',
    ],
    [{ timestamp: { DataType: 'Number', StringValue: '1493147359900' } }, '235c5c510d26fb653d073faed50ae77c'],
  ];
  for (const [attrs, want] of vectors) {
    const got = md5OfAttributes(attrs);
    if (got !== want) throw new Error(`harness MD5 self-test failed: ${got} != ${want}`);
  }
  if (md5Hex('msg') !== '6e2baaf3b97dbeef01c0043275f9a0e7') throw new Error('harness MD5 self-test failed (body)');
}

function errSummary(err) {
  if (!err) return String(err);
  const parts = [];
  if (err.retsuOp) parts.push(`during ${err.retsuOp}:`);
  if (err.name && err.name !== 'Error') parts.push(`name=${err.name}`);
  if (err.code) parts.push(`code=${err.code}`);
  if (err.Code) parts.push(`Code=${err.Code}`);
  const status = err.statusCode || (err.$metadata && err.$metadata.httpStatusCode);
  if (status) parts.push(`status=${status}`);
  parts.push(`message=${JSON.stringify(String(err.message || '').slice(0, 300))}`);
  return parts.join(' ');
}

function withTimeout(promise, ms, what) {
  let t;
  const timeout = new Promise((_, reject) => {
    t = setTimeout(() => reject(new CheckError(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(t));
}

// Runs every scenario in `keys` order (default SCENARIOS; the SNS suite passes its own
// keys and `service: 'sns'`, written into the results). `scenarios` maps key -> async (ctx)
// => detail string | NotApplicable. `naReasons` maps key -> reason for scenarios not
// implemented. `afterEach(key)` may return (or resolve to) extra failure text (e.g. a wire
// check) or null.
async function runSuite({
  client, version, protocol, outFile, scenarios, naReasons = {}, afterEach, beforeEach, only, keys = SCENARIOS, service,
}) {
  selfTest();
  const results = {};
  const t0 = Date.now();
  for (const key of keys) {
    if (only && !only.includes(key)) continue;
    const started = Date.now();
    let status;
    let detail;
    if (!scenarios[key]) {
      status = 'n/a';
      detail = naReasons[key] || 'not expressible with this client';
    } else {
      if (beforeEach) beforeEach(key);
      try {
        const out = await withTimeout(Promise.resolve().then(() => scenarios[key]()), SCENARIO_TIMEOUT_MS, key);
        if (out instanceof NotApplicable) {
          status = 'n/a';
          detail = out.reason;
        } else {
          status = 'pass';
          detail = out || 'ok';
        }
      } catch (err) {
        status = 'fail';
        detail = err instanceof CheckError ? err.message : `unexpected error: ${errSummary(err)}`;
        if (!(err instanceof CheckError) && process.env.COMPAT_DEBUG) console.error(err);
      }
      if (afterEach) {
        const extra = await afterEach(key);
        if (extra && status !== 'n/a') {
          if (status === 'pass') {
            status = 'fail';
            detail = extra;
          } else {
            detail = `${detail}; ${extra}`;
          }
        }
      }
    }
    const ms = Date.now() - started;
    results[key] = { status, detail };
    const line = `[${client} ${protocol}] ${key}: ${status} (${ms} ms)${status === 'pass' ? '' : ` - ${detail}`}`;
    console.log(line);
  }
  const doc = service ? { client, version, protocol, service, results } : { client, version, protocol, results };
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, `${JSON.stringify(doc, null, 2)}\n`);
  const counts = Object.values(results).reduce((m, r) => ((m[r.status] = (m[r.status] || 0) + 1), m), {});
  console.log(
    `[${client} ${protocol}] done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ` +
      `${counts.pass || 0} pass, ${counts.fail || 0} fail, ${counts['n/a'] || 0} n/a -> ${outFile}`,
  );
  return doc;
}

module.exports = {
  SCENARIOS,
  na,
  NotApplicable,
  CheckError,
  check,
  eq,
  sleep,
  qname,
  md5Hex,
  md5OfAttributes,
  toBuffer,
  errSummary,
  runSuite,
};
