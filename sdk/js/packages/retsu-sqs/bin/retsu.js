#!/usr/bin/env node
'use strict';
// `npx retsu ...`: runs the binary of the platform package (or RETSU_BIN).
const { spawnSync } = require('node:child_process');
const { findBinary } = require('../lib/index.js');

let bin;
try {
  bin = findBinary();
} catch (err) {
  process.stderr.write(`retsu: ${err.message}\n`);
  process.exit(127);
}
const r = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
if (r.error) {
  process.stderr.write(`retsu: cannot run ${bin}: ${r.error.message}\n`);
  process.exit(127);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status === null ? 1 : r.status);
