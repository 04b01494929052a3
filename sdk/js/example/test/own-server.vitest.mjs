// The sample suite under Vitest again, with a server of this file's own
// from useRetsu (started frozen; reset and frozen again before each test).
import { afterAll, describe, test } from 'vitest';
import { useRetsu } from 'retsu-sqs/vitest';
import { sqsSuite } from '../suite.mjs';

describe('own server per file', () => {
  const retsu = useRetsu({ frozenClock: true });
  sqsSuite(test, retsu, afterAll);
});
