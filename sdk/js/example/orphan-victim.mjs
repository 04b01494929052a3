// Run as `node orphan-victim.mjs DATA_DIR`: a node:test file whose one test
// starts a server through the fixture, says so, and blocks until killed.
import { test } from 'node:test';
import { useRetsu } from 'retsu/node-test';

const retsu = useRetsu({ dataDir: process.argv[2] });

test('blocks with a server running', async () => {
  console.log(`VICTIM READY ${retsu.server.pid}`);
  await new Promise(() => setInterval(() => {}, 1000));
});
