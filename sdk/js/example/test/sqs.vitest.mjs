// The sample suite under Vitest, on the one server that retsu-sqs/vitest/setup
// (globalSetup in vitest.config.mjs) started for the run; reset before each test.
import { afterAll, inject, test } from 'vitest';
import { useSharedRetsu } from 'retsu-sqs/vitest';
import { sqsSuite } from '../suite.mjs';

const retsu = useSharedRetsu();

test('the global setup provides the endpoint (inject and RETSU_ENDPOINT)', () => {
  if (inject('retsuEndpoint') !== retsu.endpoint || process.env.RETSU_ENDPOINT !== retsu.endpoint) {
    throw new Error(`endpoint mismatch: ${inject('retsuEndpoint')} ${process.env.RETSU_ENDPOINT} ${retsu.endpoint}`);
  }
});

sqsSuite(test, retsu, afterAll);
