// The sample suite under node:test, with a server for this file from
// retsu-sqs/node-test (started frozen; reset, and frozen again, before each test).
import { after, test } from 'node:test';
import { useRetsu } from 'retsu-sqs/node-test';
import { sqsSuite } from '../suite.mjs';

const retsu = useRetsu({ frozenClock: true });

sqsSuite(test, retsu, after);
