// Run with node_modules/retsu-sqs-linux-x64 moved away, RETSU_BIN unset and no
// retsu on PATH: the error names the platform and RETSU_BIN.
'use strict';
const assert = require('node:assert/strict');
const { startRetsu, RetsuError } = require('retsu-sqs');

startRetsu().then(
  async (s) => { await s.stop(); console.error('missing platform check: started anyway'); process.exit(1); },
  (err) => {
    assert.ok(err instanceof RetsuError, String(err));
    for (const part of ['linux/x64', 'retsu-sqs-linux-x64', 'RETSU_BIN', 'PATH']) {
      assert.ok(err.message.includes(part), `"${part}" not in: ${err.message}`);
    }
    console.log(`missing platform check: ok (${err.message})`);
  },
).catch((err) => { console.error(err); process.exit(1); });
