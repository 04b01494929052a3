// Compiled with tsc --noEmit (module nodenext) against the installed package.
import { startRetsu, connectRetsu, RetsuError, RetsuAdminError, type RetsuServer, type PeekedMessage } from 'retsu-sqs';
import { useRetsu } from 'retsu-sqs/node-test';
import { useSharedRetsu } from 'retsu-sqs/vitest';
import setup, { createGlobalSetup } from 'retsu-sqs/vitest/setup';

export async function typed(): Promise<void> {
  const s: RetsuServer = await startRetsu({ frozenClock: true, args: ['--log-level', 'warn'], dataDir: '/tmp/x', config: undefined, startTimeoutMs: 5000 });
  const url: string = s.queueUrl('q');
  const now: Date = await s.clock.now();
  const status = await s.clock.advance(30);
  const frozen: boolean = status.frozen;
  const msgs: PeekedMessage[] = await s.peek('q', { state: 'inflight' });
  const count: number = msgs[0].receive_count;
  const h = await s.history(msgs[0].message_id);
  const kinds: string[] = h.events.map((e) => e.kind);
  await s.reset();
  await s.stop();
  const c = connectRetsu(s.endpoint);
  void [url, now, frozen, count, kinds, c.region, useRetsu, useSharedRetsu, setup, createGlobalSetup({ frozenClock: true })];
  try { await s.clock.resume(); } catch (e) {
    if (e instanceof RetsuAdminError) { const code: string | undefined = e.code; void code; }
    if (e instanceof RetsuError) { const exit: number | null = e.exitCode; void exit; }
  }
}
