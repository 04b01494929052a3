'use strict';
// Usage: node index.js <client> <endpoint-url> <results-file> [scenario,...]
//   client: client-sqs-v3 | aws-sdk-v2-json | aws-sdk-v2-query | sqs-consumer | sqs-producer
//           | client-sns-v3 (@aws-sdk/client-sns, the SNS scenarios; lib/sns.js)
// Runs every scenario for one client and writes its results JSON. Exits 0 whether
// scenarios pass or fail; non-zero only if the suite itself could not run.

process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';

const { runSuite } = require('./lib/harness');
const { makeV3, makeV2, pkgVersion } = require('./lib/adapters');
const { makeScenarios } = require('./lib/scenarios');

async function main() {
  const [clientId, endpoint, outFile, onlyArg] = process.argv.slice(2);
  if (!clientId || !endpoint || !outFile) {
    console.error('usage: node index.js <client-sqs-v3|aws-sdk-v2-json|aws-sdk-v2-query|sqs-consumer|sqs-producer|client-sns-v3> <endpoint-url> <results-file> [scenarios]');
    process.exit(2);
  }
  const only = onlyArg ? onlyArg.split(',') : undefined;
  let suite;
  if (clientId === 'client-sns-v3') {
    const { SNS_SCENARIOS, makeSnsSuite } = require('./lib/sns');
    const { scenarios, beforeEach, afterEach } = makeSnsSuite(endpoint);
    suite = {
      client: '@aws-sdk/client-sns',
      version: pkgVersion('@aws-sdk/client-sns'),
      protocol: 'query',
      service: 'sns',
      keys: SNS_SCENARIOS,
      scenarios,
      beforeEach,
      afterEach,
    };
  } else if (clientId === 'sqs-consumer') {
    const { makeConsumerScenarios } = require('./lib/consumer');
    const { scenarios, naReasons, wireProblems } = makeConsumerScenarios(endpoint);
    suite = {
      client: 'sqs-consumer',
      version: pkgVersion('sqs-consumer'),
      protocol: 'json',
      scenarios,
      naReasons,
      afterEach: wireProblems,
    };
  } else if (clientId === 'sqs-producer') {
    const { makeProducerScenarios } = require('./lib/producer');
    const { scenarios, naReasons, wireProblems } = makeProducerScenarios(endpoint);
    suite = {
      client: 'sqs-producer',
      version: pkgVersion('sqs-producer'),
      protocol: 'json',
      scenarios,
      naReasons,
      afterEach: wireProblems,
    };
  } else {
    let adapter;
    if (clientId === 'client-sqs-v3') adapter = makeV3(endpoint);
    else if (clientId === 'aws-sdk-v2-json') adapter = makeV2('aws-sdk', endpoint, 'json');
    else if (clientId === 'aws-sdk-v2-query') adapter = makeV2('aws-sdk-query', endpoint, 'query');
    else throw new Error(`unknown client ${clientId}`);
    suite = {
      client: adapter.client,
      version: adapter.version,
      protocol: adapter.protocol,
      scenarios: makeScenarios(adapter, endpoint, clientId.replace(/^aws-sdk-|^client-sqs-/, '')),
      beforeEach: () => {
        adapter.wire.length = 0;
      },
      afterEach: adapter.wireProblems,
    };
  }
  await runSuite({ ...suite, outFile, only });
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`suite could not run: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
