// The Vitest victim (run through orphan.vitest.config.mjs): as
// orphan-victim.mjs, from a Vitest worker with retsu-sqs/vitest's useRetsu.
import { writeFileSync } from 'node:fs';
import { test } from 'vitest';
import { useRetsu } from 'retsu-sqs/vitest';

const retsu = useRetsu({ dataDir: process.env.VICTIM_DIR });

test('blocks with a server running', async () => {
  writeFileSync(process.env.VICTIM_READY, `${retsu.server.pid} ${process.pid}\n`);
  await new Promise(() => setInterval(() => {}, 1000));
}, 600000);
