// Run as a node:test file (`node orphan-victim.mjs` or `node --test
// orphan-victim.mjs`) with VICTIM_DIR and VICTIM_READY set: its one test
// starts a server through the fixture, writes "RETSU_PID TEST_PID" to
// VICTIM_READY, and blocks until killed.
import { writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { useRetsu } from 'retsu-sqs/node-test';

const retsu = useRetsu({ dataDir: process.env.VICTIM_DIR });

test('blocks with a server running', async () => {
  writeFileSync(process.env.VICTIM_READY, `${retsu.server.pid} ${process.pid}\n`);
  await new Promise(() => setInterval(() => {}, 1000));
});
