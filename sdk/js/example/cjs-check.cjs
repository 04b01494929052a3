// CommonJS: require('retsu-sqs') and the helpers' CJS entries load, and a server
// starts, answers and stops through them.
'use strict';
const assert = require('node:assert/strict');
const retsu = require('retsu-sqs');
const nodeTest = require('retsu-sqs/node-test');
const jest = require('retsu-sqs/jest');
const jestSetup = require('retsu-sqs/jest/global-setup');
const jestTeardown = require('retsu-sqs/jest/global-teardown');

(async () => {
  assert.equal(typeof retsu.startRetsu, 'function');
  assert.equal(typeof nodeTest.useRetsu, 'function');
  assert.equal(typeof jest.useSharedRetsu, 'function');
  assert.equal(typeof jestSetup.createGlobalSetup, 'function');
  const esm = await import('retsu-sqs');
  assert.equal(esm.startRetsu, retsu.startRetsu, 'ESM and CJS share one implementation');
  assert.equal(esm.RetsuError, retsu.RetsuError);

  const server = await retsu.startRetsu({ frozenClock: true });
  assert.match(server.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(server.binary.endsWith('node_modules/retsu-sqs-linux-x64/bin/retsu'), `binary from the platform package, not ${server.binary}`);
  assert.equal(server.region, 'us-east-1');
  assert.equal(server.accountId, '000000000000');
  assert.equal(server.queueUrl('q'), `${server.endpoint}/000000000000/q`);
  const health = await fetch(`${server.endpoint}/health`);
  assert.equal(health.status, 200);
  assert.equal((await server.clock.status()).frozen, true);
  await server.stop();

  // Jest's global setup and teardown, as Jest calls them.
  await jestSetup();
  assert.match(process.env.RETSU_ENDPOINT, /^http:\/\/127\.0\.0\.1:\d+$/);
  const shared = retsu.connectRetsu();
  assert.equal((await shared.reset()).reset, true);
  await jestTeardown();
  await assert.rejects(shared.reset(), retsu.RetsuError);
  console.log('cjs check: ok');
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
