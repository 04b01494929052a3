// End-to-end test of the console: the real `retsu` binary on a free port,
// Debian's chromium driven by playwright-core, the SQS API called directly
// (as an SDK would) to check what the console shows and that looking never
// consumes. Screenshots go to console/test-artifacts/; with --update-docs,
// one per screen is also copied to docs/ for the README.
//
//   node test/e2e.mjs [--update-docs]
//   RETSU_BIN=target/release/retsu node test/e2e.mjs
//
// The server serves the console it embeds (scripts/console-test.sh builds
// it from this tree); RETSU_CONSOLE_DIR=console/static makes a binary built
// earlier serve the files here instead.

import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const artifacts = join(repo, 'console', 'test-artifacts');
const docs = join(repo, 'docs');
const BIN = process.env.RETSU_BIN || join(repo, 'target', 'debug', 'retsu');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const updateDocs = process.argv.includes('--update-docs');
const WAIT_MS = 15000;
// The screenshots the README shows (docs/console-NAME.png).
const DOC_SHOTS = ['queues', 'queue', 'fifo-queue', 'message', 'dead-letters', 'time', 'queues-dark-narrow', 'topics', 'cluster'];
const CONSOLE_DIR = process.env.RETSU_CONSOLE_DIR;

let passed = 0;
let failed = 0;
const skipped = [];
function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}${detail ? `: ${detail}` : ''}`);
  }
  return ok;
}

// ---- the server ----
async function startServer(extra = []) {
  const child = spawn(BIN, ['--host', '127.0.0.1', '--port', '0', ...extra], {
    env: { ...process.env, RETSU_LOG_LEVEL: 'info', NO_COLOR: '1', ...(CONSOLE_DIR ? { RETSU_CONSOLE_DIR: CONSOLE_DIR } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const endpoint = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`retsu did not start:\n${log}`)), 20000);
    const on = (chunk) => {
      log += chunk;
      const m = log.match(/listening on (http:\/\/[0-9.:]+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`retsu exited (${code}):\n${log}`)));
  });
  return { child, endpoint };
}

// ---- a cluster node on PostgreSQL (RETSU_TEST_POSTGRES: scripts/postgres.sh run …) ----
async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
async function startNode(store, id) {
  const port = await freePort();
  const child = spawn(BIN, ['--host', '127.0.0.1', '--port', String(port), '--store', store,
    '--cluster-secret', 'console-e2e-cluster-secret', '--node-id', id, '--node-url', `http://127.0.0.1:${port}`, '--lease', '3'], {
    env: { ...process.env, RETSU_LOG_LEVEL: 'info', NO_COLOR: '1', ...(CONSOLE_DIR ? { RETSU_CONSOLE_DIR: CONSOLE_DIR } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const endpoint = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`node ${id} did not start:\n${log}`)), 20000);
    const on = (chunk) => {
      log += chunk;
      const m = log.match(/retsu ready (http:\/\/[0-9.:]+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`node ${id} exited (${code}):\n${log}`)));
  });
  return { child, endpoint, id };
}

// ---- the SQS API, called the way an SDK does (AWS JSON 1.0) ----
let EP;
async function sqs(action, params) {
  const res = await fetch(`${EP}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `AmazonSQS.${action}` },
    body: JSON.stringify(params),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${action}: ${JSON.stringify(body)}`);
  return body;
}
// ---- the SNS API, called the way an SDK does (query protocol, XML answers) ----
async function snsCall(action, params = {}, endpoint = EP) {
  const body = new URLSearchParams({ Action: action, Version: '2010-03-31', ...params });
  const res = await fetch(`${endpoint}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${action}: ${text}`);
  return text;
}
function xmlText(xml, tag) {
  const m = xml.match(new RegExp(`<${tag}>([^<]*)</${tag}>`));
  return m ? m[1] : null;
}
async function counts(url) {
  const { Attributes: a } = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] });
  return { available: Number(a.ApproximateNumberOfMessages), inflight: Number(a.ApproximateNumberOfMessagesNotVisible), delayed: Number(a.ApproximateNumberOfMessagesDelayed) };
}
/**
 * Whether the server serves an admin endpoint: its JSON, and not the admin
 * API's answer to a path it does not know.
 */
async function serves(path) {
  const res = await fetch(`${EP}/_retsu/${path}`);
  if (!(res.headers.get('content-type') || '').includes('application/json')) return false;
  const body = await res.json();
  return !(res.status === 404 && /^no admin endpoint/.test(body.error && body.error.message));
}

async function waitFor(what, fn, timeout = WAIT_MS) {
  const until = Date.now() + timeout;
  let last;
  while (Date.now() < until) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// ---- accessibility: axe-core, no serious or critical violation (strict: none at all) ----
async function axe(page, screen, { strict = false } = {}) {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = result.violations.filter((v) => strict || v.impact === 'serious' || v.impact === 'critical');
  check(`axe: no ${strict ? '' : 'serious '}violations on ${screen}`, bad.length === 0,
    bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`).join('; '));
}

async function shot(page, name) {
  // Toasts from earlier steps would cover the screen.
  const toasts = (v) => page.evaluate((vis) => { document.querySelector('.toasts').style.visibility = vis; }, v);
  await toasts('hidden');
  const file = join(artifacts, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await toasts('');
  if (updateDocs && DOC_SHOTS.includes(name)) copyFileSync(file, join(docs, `console-${name}.png`));
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  if (updateDocs) mkdirSync(docs, { recursive: true });
  const { child, endpoint } = await startServer();
  EP = endpoint;
  const userDataDir = mkdtempSync(join(tmpdir(), 'retsu-console-'));
  let context;
  try {
    // ---- "/" for a browser, SQS for everyone else ----
    let res = await fetch(`${EP}/`, { headers: { Accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    check('GET / asking for HTML redirects to the console', res.status === 303 && res.headers.get('location') === '/_retsu/ui/',
      `${res.status} ${res.headers.get('location')}`);
    res = await fetch(`${EP}/`);
    check('GET / from a non-browser stays SQS', res.status === 404 && (await res.text()).includes('UnknownOperation'));
    res = await fetch(`${EP}/?Action=ListQueues`, { headers: { Accept: 'text/html' } });
    check('GET /?Action=… stays SQS even asking for HTML', res.status === 200 && (await res.text()).includes('ListQueuesResponse'));
    res = await fetch(`${EP}/_retsu/ui/app.js`);
    check('assets are served with their type', res.status === 200 && res.headers.get('content-type').startsWith('text/javascript'));

    const has = {
      queues: await serves('queues'),
      clock: await serves('clock'),
      history: await serves('messages/none'),
      events: await serves('events'),
      faults: await serves('faults'),
      topics: await serves('topics'),
    };
    console.log(`# admin endpoints served: ${JSON.stringify(has)}`);

    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 860 },
      colorScheme: 'light',
    });
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(WAIT_MS);
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // Endpoints of a newer server answer 404 here and the page says so:
    // those failed loads are expected, script errors are not.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
    });
    // Every request the page makes: none may receive a message.
    const receives = [];
    page.on('request', (r) => {
      const target = r.headers()['x-amz-target'] || '';
      if (target.endsWith('ReceiveMessage') || /Action=ReceiveMessage/.test(`${r.url()} ${r.postData() || ''}`)) receives.push(r.url());
    });

    // ---- queues screen; create a queue with a new dead-letter queue ----
    await page.goto(`${EP}/`);
    check('the browser lands on the console', page.url() === `${EP}/_retsu/ui/`, page.url());
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    await page.getByTestId('create-queue').click();
    const dialog = page.getByRole('dialog', { name: 'Create a queue' });
    await dialog.getByLabel('Name', { exact: true }).fill('orders');
    await dialog.getByLabel('Send messages that fail to').selectOption('new');
    await dialog.getByLabel('after this many receives (maxReceiveCount)').fill('1');
    await dialog.getByTestId('create-queue-submit').click();
    await page.getByTestId('queue-row-orders').waitFor();
    await page.getByTestId('queue-row-orders-dlq').waitFor();
    const { QueueUrl: url } = await sqs('GetQueueUrl', { QueueName: 'orders' });
    const { QueueUrl: dlqUrl } = await sqs('GetQueueUrl', { QueueName: 'orders-dlq' });
    const { Attributes: attrs } = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['RedrivePolicy'] });
    const policy = JSON.parse(attrs.RedrivePolicy);
    check('created through SQS with the dead-letter wiring', policy.deadLetterTargetArn.endsWith(':orders-dlq') && policy.maxReceiveCount === 1, attrs.RedrivePolicy);
    check('the queues screen shows the wiring', (await page.getByTestId('queue-row-orders').innerText()).includes('orders-dlq'));

    // ---- a queue: send messages, see them counted and peeked ----
    await page.getByTestId('queue-row-orders').getByRole('link', { name: 'orders', exact: true }).click();
    await page.getByRole('heading', { name: 'orders', level: 1 }).waitFor();
    for (const body of ['first order', 'second order', 'third order']) {
      await page.getByLabel('Body', { exact: true }).fill(body);
      await page.getByTestId('send-submit').click();
      await page.getByText(/^Sent /).last().waitFor();
    }
    await waitFor('3 available in the console', async () => (await page.getByTestId('q-available').innerText()) === '3');
    check('sent messages are counted', true);
    await waitFor('3 peeked rows', async () => (await page.getByTestId('message-row').count()) === 3);
    check('sent messages are peeked', (await page.getByTestId('message-row').first().innerText()).includes('order'));
    await page.waitForTimeout(2500); // a few more polls: each one peeks again
    await shot(page, 'queue');
    await axe(page, 'queue');

    // ---- attributes and tags, edited here, land in SQS ----
    await page.getByLabel('MaximumMessageSize', { exact: true }).fill('2048');
    await page.getByTestId('save-attrs').click();
    await page.getByText('Saved MaximumMessageSize').waitFor();
    const { Attributes: edited } = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['MaximumMessageSize'] });
    check('an attribute edited in the console is set through SQS', edited.MaximumMessageSize === '2048', edited.MaximumMessageSize);
    await page.getByLabel('Key', { exact: true }).fill('team');
    await page.getByLabel('Value', { exact: true }).fill('billing');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.getByRole('button', { name: 'Remove tag team' }).waitFor();
    const { Tags: tags } = await sqs('ListQueueTags', { QueueUrl: url });
    check('a tag added in the console is on the queue', tags && tags.team === 'billing', JSON.stringify(tags));

    // ---- peeking changed nothing: the first real receive is receive #1 ----
    let c = await counts(url);
    check('peeking left every message visible', c.available === 3 && c.inflight === 0, JSON.stringify(c));
    const got = await sqs('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 1, VisibilityTimeout: 60, AttributeNames: ['ApproximateReceiveCount'] });
    const first = got.Messages[0];
    check('after many peeks the first receive has ApproximateReceiveCount 1', first.Attributes.ApproximateReceiveCount === '1', first.Attributes.ApproximateReceiveCount);
    const row = page.locator(`[data-message-id="${first.MessageId}"]`);
    await waitFor('the received message in flight', async () => (await row.getAttribute('data-state')) === 'inflight');
    check('the console shows it in flight with 1 receive', (await row.getByTestId('receive-count').innerText()) === '1');

    // ---- its history ----
    await row.getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Message / }).waitFor();
    if (has.history) {
      await waitFor('sent and received in the history', async () => (await page.locator('[data-testid="history"] [data-kind="received"]').count()) === 1);
      check('history shows sent → received', (await page.locator('[data-testid="history"] [data-kind="sent"]').count()) === 1);
    } else {
      await page.getByTestId('unavailable').waitFor();
      check('without a history endpoint the message page says so and shows the message', (await page.locator('pre.body').innerText()) !== '');
      skipped.push('history from the server (it has no /_retsu/messages yet): drawn from a contract-shaped fixture instead');
    }
    await shot(page, has.history ? 'message-early' : 'message');
    await axe(page, 'message');
    if (!has.history) {
      // The drawing itself, from an answer in the contract's shape
      // (admin-api.md): a stale-handle delete and an expiry must read as such.
      const t0 = Date.parse('2026-12-01T10:00:00Z');
      const ev = (seq, s, kind, extra = {}) => ({ seq, at_ms: t0 + s * 1000, kind, queue: { region: 'us-east-1', account: '000000000000', name: 'orders' },
        message_id: first.MessageId, receive_count: 0, visible_at_ms: null, receipt_handle: null, detail: null, ...extra });
      const fixture = { message_id: first.MessageId, truncated: false, current: null, events: [
        ev(1, 0, 'sent', { visible_at_ms: t0 + 5000 }), ev(2, 5, 'delay_ended'),
        ev(3, 6, 'received', { receive_count: 1, receipt_handle: 'AQEB-first-handle', visible_at_ms: t0 + 36000 }),
        ev(4, 36, 'released', { receive_count: 1 }),
        ev(5, 40, 'received', { receive_count: 2, receipt_handle: 'AQEB-second-handle', visible_at_ms: t0 + 70000 }),
        ev(6, 41, 'stale_delete', { receive_count: 2, receipt_handle: 'AQEB-first-handle' }),
        ev(7, 42, 'visibility_changed', { receive_count: 2, visible_at_ms: t0 + 42000 }),
        ev(8, 345600, 'expired', { receive_count: 2 }),
      ] };
      await page.route('**/_retsu/messages/*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(fixture) }));
      const steps = page.locator('[data-testid="history"] li');
      await waitFor('the fixture history drawn', async () => (await steps.count()) === 8);
      const stale = page.locator('[data-kind="stale_delete"]');
      check('a stale-handle delete reads as removing nothing', (await stale.innerText()).includes('removed nothing') && (await stale.getAttribute('class')).includes('odd'));
      const expired = page.locator('[data-kind="expired"]');
      check('an expiry reads as an expiry, ending in Expired', (await expired.innerText()).includes('Expired') && (await expired.getAttribute('class')).includes('odd'));
      check('the path goes Delayed → Available → In flight → Available → In flight → … → Expired',
        (await page.locator('[data-kind="sent"] .states').innerText()).includes('Delayed')
        && (await page.locator('[data-kind="released"] .states').innerText()).replace(/\s+/g, ' ').includes('In flight → Available')
        && (await page.locator('[data-kind="visibility_changed"] .states').innerText()).replace(/\s+/g, ' ').includes('In flight → Available'));
      check('the state machine marks Expired as current', (await page.locator('ol.machine .current').innerText()).includes('Expired'));
      await shot(page, 'message-fixture');
      await axe(page, 'message (fixture history)');
      await page.unroute('**/_retsu/messages/*');
    }

    // ---- time: advance past the visibility timeout, the message returns ----
    if (has.clock) {
      await page.getByRole('link', { name: 'Time & faults' }).click();
      await page.getByRole('heading', { name: 'Time & faults', level: 1 }).waitFor();
      await page.getByLabel('Advance by', { exact: true }).fill('61s');
      await page.getByTestId('clock-advance').click();
      await page.getByText(/^Clock advanced by 61s/).waitFor();
      await shot(page, 'time');
      await axe(page, 'time');
      if (has.faults) {
        await page.getByTestId('faults-apply').click();
        await waitFor('faults on', async () => (await page.getByTestId('faults-now').getAttribute('data-active')) === 'true');
        check('Apply faults turns the aws-like profile on in the server', (await (await fetch(`${EP}/_retsu/faults`)).json()).active === true);
        await page.getByTestId('faults-clear').click();
        await waitFor('faults off', async () => (await page.getByTestId('faults-now').getAttribute('data-active')) === 'false');
        check('Clear all faults turns them off', (await (await fetch(`${EP}/_retsu/faults`)).json()).active === false);
      } else {
        skipped.push('faults from the server (it has no /_retsu/faults yet): drawn from a fixture in the shape the faults branch answers');
        const scope = { seed: 7, profile: 'aws-like', queue: null, duplicate: 0.05, reorder: 0.1, short_receive: 0.2, throttle: 0.01,
          internal_error: 0.01, latency_ms: [0, 50], injected: { duplicate: 3, throttle: 1 } };
        await page.route('**/_retsu/faults', (route) => route.fulfill({ status: 200, contentType: 'application/json',
          body: JSON.stringify({ active: true, server: scope, queues: [{ ...scope, queue: 'us-east-1/000000000000/orders', profile: null }] }) }));
        const panel = page.getByTestId('faults-now');
        await panel.waitFor();
        check('the faults panel marks faults on and lists each scope with what it injected',
          (await panel.getAttribute('data-active')) === 'true' && (await panel.innerText()).includes('every queue')
          && (await panel.innerText()).includes('us-east-1/000000000000/orders') && (await panel.innerText()).includes('duplicate: 3'));
        await shot(page, 'time-faults-fixture');
        await axe(page, 'time (fixture faults)');
        await page.unroute('**/_retsu/faults');
      }
      await page.getByTestId('clock-freeze').click();
      await page.getByTestId('clock-badge').getByText(/frozen/).waitFor();
      const frozen = await (await fetch(`${EP}/_retsu/clock`)).json();
      check('Freeze freezes the server clock', frozen.frozen === true);
      await page.getByTestId('clock-resume').click();
      await page.getByTestId('clock-freeze').waitFor();
      check('Resume lets it run again', (await (await fetch(`${EP}/_retsu/clock`)).json()).frozen === false);
      await page.goBack();
      await page.goBack();
      await page.getByRole('heading', { name: 'orders', level: 1 }).waitFor();
      await waitFor('the message available again', async () => (await row.getAttribute('data-state')) === 'available');
      check('advancing the clock expired the visibility timeout', (await row.getByTestId('receive-count').innerText()) === '1');
      c = await counts(url);
      check('SQS agrees: all 3 visible again', c.available === 3 && c.inflight === 0, JSON.stringify(c));
      if (has.history) {
        await row.getByRole('link').first().click();
        const released = page.locator('[data-testid="history"] [data-kind="released"]');
        await released.waitFor();
        check('the history shows the timeout returning it: In flight → Available',
          (await released.locator('.states').innerText()).replace(/\s+/g, ' ').includes('In flight → Available'));
        await page.goBack();
        await page.getByRole('heading', { name: 'orders', level: 1 }).waitFor();
      }
    } else {
      check('clock endpoint served', false, 'no /_retsu/clock');
    }

    // ---- dead letters: every message passes maxReceiveCount 1 ----
    for (let i = 0; i < 4 && (await counts(url)).available > 0; i++) {
      await sqs('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
    }
    c = await counts(dlqUrl);
    check('all three messages dead-lettered', c.available === 3, JSON.stringify(c));
    await page.getByRole('link', { name: 'Dead letters' }).click();
    const dlq = page.getByTestId('dlq-orders-dlq');
    await waitFor('3 dead letters shown', async () => (await dlq.getByTestId('message-row').count()) === 3);
    check('dead letters show their source queue', (await dlq.getByTestId('message-row').first().innerText()).includes('orders'));
    await shot(page, 'dead-letters');
    await axe(page, 'dead-letters');
    await dlq.getByTestId(`restore-${first.MessageId}`).click();
    await page.getByText('Restored to orders').waitFor();
    await waitFor('2 dead letters left', async () => (await dlq.getByTestId('message-row').count()) === 2);
    const back = await sqs('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, AttributeNames: ['All'] });
    check('the restored message is back in orders with its id and body',
      back.Messages && back.Messages.length === 1 && back.Messages[0].MessageId === first.MessageId && back.Messages[0].Body === first.Body,
      JSON.stringify(back.Messages));
    check('its receive count restarted (this receive is #1)', back.Messages && back.Messages[0].Attributes.ApproximateReceiveCount === '1');
    if (has.history) {
      // The whole life so far, drawn from the server's history.
      await page.goto(`${EP}/_retsu/ui/#/messages/${first.MessageId}`);
      const history = page.getByTestId('history');
      await history.locator('[data-kind="restored_in"]').waitFor();
      const kinds = await history.locator('li').evaluateAll((lis) => lis.map((li) => li.dataset.kind));
      const order = ['sent', 'received', 'released', 'dead_lettered', 'restored_in', 'received'];
      let at = 0;
      for (const k of kinds) if (k === order[at]) at++;
      check('the message page follows its whole life: sent, received, released, dead-lettered, restored, received again',
        at === order.length, kinds.join(','));
      check('the state machine shows it went through Dead-letter',
        (await page.locator('ol.machine .st-deadletter').getAttribute('class')).includes('visited'));
      await shot(page, 'message');
      await axe(page, 'message (full history)');
      await page.getByRole('link', { name: 'Dead letters' }).click();
      await dlq.getByTestId('message-row').first().waitFor();
    }

    // ---- delete one dead letter (no receipt handle needed) ----
    const doomed = await dlq.getByTestId('message-row').first().getAttribute('data-message-id');
    await dlq.getByTestId(`delete-msg-${doomed}`).click();
    await page.getByTestId(`delete-msg-${doomed}-confirm`).click();
    await waitFor('1 dead letter left', async () => (await dlq.getByTestId('message-row').count()) === 1);
    check('a dead letter deleted in the console is gone from SQS', (await counts(dlqUrl)).available === 1);

    // ---- redrive the rest with a message move task ----
    await dlq.getByTestId('redrive-orders-dlq').click();
    await page.getByTestId('redrive-orders-dlq-confirm').click();
    await dlq.getByTestId('move-task').first().waitFor();
    await waitFor('the dead-letter queue empty', async () => (await counts(dlqUrl)).available === 0);
    await waitFor('the move task completed in the console', async () => (await dlq.getByTestId('move-task').first().getAttribute('data-status')) === 'COMPLETED');
    c = await counts(url);
    check('redrive moved the last dead letter back to orders', c.available + c.inflight === 2, JSON.stringify(c));

    // ---- purge, with its confirmation ----
    await page.getByRole('link', { name: 'Queues' }).click();
    const ordersRow = page.getByTestId('queue-row-orders');
    await ordersRow.waitFor();
    await waitFor('orders counted 2', async () => {
      const r = ordersRow;
      return Number(await r.getByTestId('count-available').innerText()) + Number(await r.getByTestId('count-inflight').innerText()) === 2;
    });
    if (has.events) {
      check('activity charts show rates from the event log',
        (await ordersRow.innerText()).includes('sent/s') && (await ordersRow.locator('.spark canvas').count()) === 1);
      await waitFor('rates follow the live event stream', async () =>
        (await page.getByTestId('rates-source').innerText()).includes('live from the event stream'));
      check('the queues screen follows the live event stream', true);
      // A message sent now shows in the rates without a poll of the log.
      await sqs('SendMessage', { QueueUrl: url, MessageBody: 'live rate' });
      await waitFor('the live send counted', async () => /sent\/s (?!0\.0\b)[0-9.]+/.test(await ordersRow.innerText()));
    }
    await shot(page, 'queues');
    await axe(page, 'queues');
    await page.getByTestId('purge-orders').click();
    await page.getByRole('dialog', { name: 'Purge orders?' }).waitFor();
    await page.getByTestId('purge-orders-confirm').click();
    await waitFor('orders empty in the console', async () => (await ordersRow.getByTestId('count-available').innerText()) === '0');
    c = await counts(url);
    check('purge emptied the queue', c.available === 0 && c.inflight === 0, JSON.stringify(c));

    // ---- a FIFO queue: messages by group, an in-flight message locks its group ----
    const { QueueUrl: fifoUrl } = await sqs('CreateQueue', { QueueName: 'jobs.fifo', Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' } });
    for (const [group, body] of [['tenant-a', 'a1'], ['tenant-a', 'a2'], ['tenant-a', 'a3'], ['tenant-b', 'b1']]) {
      await sqs('SendMessage', { QueueUrl: fifoUrl, MessageBody: body, MessageGroupId: group });
    }
    const taken = await sqs('ReceiveMessage', { QueueUrl: fifoUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 300 });
    check('SQS hands out the head of a group', taken.Messages[0].Body === 'a1', taken.Messages[0].Body);
    await page.goto(`${EP}/_retsu/ui/#/queues/us-east-1/000000000000/jobs.fifo`);
    const groupA = page.getByTestId('fifo-group').filter({ hasText: 'tenant-a' });
    await groupA.getByText(/locked by/).waitFor();
    check('the group with a message in flight shows its lock', (await groupA.locator('[data-state="inflight"]').count()) === 1);
    check('the messages behind it wait', (await groupA.getByText('waiting').count()) === 2);
    check('the other group is unlocked', (await page.getByTestId('fifo-group').filter({ hasText: 'tenant-b' }).getByText('unlocked').count()) === 1);
    await shot(page, 'fifo-queue');
    await axe(page, 'fifo queue');

    // ---- delete a queue, confirmed ----
    await page.goto(`${EP}/_retsu/ui/#/queues`);
    await page.getByTestId('delete-orders-dlq').click();
    await page.getByTestId('delete-orders-dlq-confirm').click();
    await waitFor('orders-dlq gone from the list', async () => (await page.getByTestId('queue-row-orders-dlq').count()) === 0);
    const gone = await sqs('GetQueueUrl', { QueueName: 'orders-dlq' }).then(() => false, (e) => e.message.includes('QueueDoesNotExist') || e.message.includes('NonExistentQueue'));
    check('a queue deleted in the console no longer exists', gone);

    // ---- topics: a raw subscription with a filter policy; publish from the form, follow the fan-out live ----
    if (has.topics) {
      const { QueueUrl: notifiedUrl } = await sqs('CreateQueue', { QueueName: 'notified' });
      const { Attributes: na } = await sqs('GetQueueAttributes', { QueueUrl: notifiedUrl, AttributeNames: ['QueueArn'] });
      const topicArn = xmlText(await snsCall('CreateTopic', { Name: 'order-events' }), 'TopicArn');
      const filter = { color: ['red', 'green'] };
      await snsCall('Subscribe', {
        TopicArn: topicArn, Protocol: 'sqs', Endpoint: na.QueueArn, ReturnSubscriptionArn: 'true',
        'Attributes.entry.1.key': 'RawMessageDelivery', 'Attributes.entry.1.value': 'true',
        'Attributes.entry.2.key': 'FilterPolicy', 'Attributes.entry.2.value': JSON.stringify(filter),
      });
      await snsCall('CreateTopic', { Name: 'audit.fifo', 'Attributes.entry.1.key': 'FifoTopic', 'Attributes.entry.1.value': 'true' });

      await page.getByRole('link', { name: 'Topics', exact: true }).click();
      await page.getByRole('heading', { name: 'Topics', level: 1 }).waitFor();
      const topicRow = page.getByTestId('topic-row-order-events');
      await topicRow.waitFor();
      check('the topics table lists the topic with its subscription count', (await topicRow.getByTestId('subscription-count').innerText()) === '1');
      const fifoRow = page.getByTestId('topic-row-audit.fifo');
      check('a FIFO topic carries the FIFO badge, a standard one does not',
        (await fifoRow.innerText()).includes('FIFO') && !(await topicRow.innerText()).includes('FIFO'));
      await topicRow.getByRole('link', { name: 'order-events' }).click();
      const detail = page.getByTestId('topic-detail');
      await detail.getByRole('heading', { name: 'order-events', level: 2 }).waitFor();
      await waitFor('focus on the topic\'s details', () => page.evaluate(() => document.activeElement.id === 'topic-title'), 3000);
      check('choosing a topic moves focus to its details', true);
      check('the chosen topic is marked current', (await topicRow.getByRole('link', { name: 'order-events' }).getAttribute('aria-current')) === 'true');
      const sub = detail.getByTestId('subscription');
      const subText = await sub.innerText();
      const policyText = await sub.getByTestId('filter-policy').innerText();
      check('the subscription shows its queue and raw delivery', subText.includes('notified') && subText.includes('raw'), subText);
      check('the filter policy is pretty-printed', policyText.includes('\n  "color": [') && JSON.stringify(JSON.parse(policyText)) === JSON.stringify(filter), policyText);
      check('the filter policy scope is shown', (await sub.getByTestId('filter-scope').innerText()).includes('MessageAttributes'));
      check('a standard topic has no group or deduplication ID fields', (await detail.getByLabel('Message group ID').count()) === 0);
      await waitFor('the topics screen live from the event stream', async () =>
        (await page.getByTestId('topics-source').getAttribute('data-live')) === 'true');
      check('the topics screen follows the live event stream', (await page.getByTestId('topics-source').innerText()).includes('live'));

      const form = detail.getByTestId('publish-form');
      let lastId = null;
      const publish = async (message, attrs) => {
        await form.getByLabel('Message', { exact: true }).fill(message);
        for (let i = 0; i < attrs.length; i++) {
          if ((await form.getByLabel(`Attribute ${i + 1} name`).count()) === 0) await form.getByRole('button', { name: 'Add attribute' }).click();
          await form.getByLabel(`Attribute ${i + 1} name`).fill(attrs[i][0]);
          await form.getByLabel(`Attribute ${i + 1} value`).fill(attrs[i][1]);
        }
        await form.getByTestId('publish-submit').click();
        lastId = await waitFor(`"${message}" published`, async () => {
          const ids = form.getByTestId('published-id');
          const id = (await ids.count()) ? await ids.innerText() : null;
          return id && id !== lastId ? id : null;
        });
        return lastId;
      };
      // Live: while the stream is open the list is re-read on each step,
      // and polled only every 15 s, so a step in a few seconds came by the stream.
      const LIVE_MS = 5000;
      const redId = await publish('a red order', [['color', 'red'], ['source', 'console']]);
      const delivered = detail.locator(`[data-testid="step"][data-kind="delivered"][data-message-id="${redId}"]`);
      await delivered.waitFor({ timeout: LIVE_MS });
      check('a matching publish shows its delivered step, live', (await delivered.innerText()).includes('notified'));
      check('and its published step', (await detail.locator(`[data-testid="step"][data-kind="published"][data-message-id="${redId}"]`).count()) === 1);
      const blueId = await publish('a blue order', [['color', 'blue'], ['source', 'console']]);
      const filtered = detail.locator(`[data-testid="step"][data-kind="filtered_out"][data-message-id="${blueId}"]`);
      await filtered.waitFor({ timeout: LIVE_MS });
      const why = await filtered.getByTestId('step-detail').innerText();
      check('a non-matching publish shows a filtered_out step saying why, live', why.includes('color') && why.includes('blue'), why);
      check('the filtered-out message reached no queue', (await counts(notifiedUrl)).available === 1);
      const deliveredAs = await delivered.getByTestId('delivered-link').getAttribute('href').then((h) => decodeURIComponent(h.split('/').pop()));
      const stored = await (await fetch(`${EP}/_retsu/messages/${deliveredAs}`)).json();
      check('the raw delivery carries the body and both attributes from the form',
        stored.current && stored.current.body === 'a red order'
        && stored.current.message_attributes.color.StringValue === 'red' && stored.current.message_attributes.source.StringValue === 'console',
        JSON.stringify(stored.current));
      await shot(page, 'topics');
      await axe(page, 'topics', { strict: true });

      // The delivered step leads to the SQS message, whose history names the publish.
      await delivered.getByTestId('delivered-link').click();
      await page.getByRole('heading', { name: `Message ${deliveredAs}`, level: 1 }).waitFor();
      const sent = page.locator('[data-testid="history"] [data-kind="sent"]');
      await sent.waitFor();
      check('the delivered link opens the message, sent from the topic', (await sent.innerText()).includes(topicArn) && (await sent.innerText()).includes(redId));
      check('following it consumed nothing', (await counts(notifiedUrl)).available === 1);
      await page.goBack();
      await detail.getByRole('heading', { name: 'order-events', level: 2 }).waitFor();

      // A FIFO topic: group and deduplication IDs; SNS's own error is shown.
      await fifoRow.getByRole('link', { name: 'audit.fifo' }).click();
      await detail.getByRole('heading', { name: 'audit.fifo', level: 2 }).waitFor();
      await form.getByLabel('Message', { exact: true }).fill('audited');
      await form.getByLabel('Message group ID').fill('tenant-a');
      await form.getByTestId('publish-submit').click();
      const publishError = form.getByTestId('publish-error');
      await publishError.waitFor();
      check('publishing to a FIFO topic without a deduplication ID shows SNS\'s error', /dedup/i.test(await publishError.innerText()), await publishError.innerText());
      await form.getByLabel(/^Deduplication ID/).fill('audit-1');
      await form.getByTestId('publish-submit').click();
      await form.getByTestId('published-id').waitFor();
      check('with group and deduplication IDs it publishes, with a sequence number',
        (await form.getByTestId('publish-result').innerText()).includes('sequence number'));
      await axe(page, 'topics (FIFO topic)', { strict: true });

      // The inbox: what an SMS subscription was sent, recorded rather than
      // sent, and a pending e-mail subscription's confirmation token.
      const alertsArn = xmlText(await snsCall('CreateTopic', { Name: 'alerts' }), 'TopicArn');
      await snsCall('Subscribe', { TopicArn: alertsArn, Protocol: 'sms', Endpoint: '+15550100' });
      await snsCall('Subscribe', { TopicArn: alertsArn, Protocol: 'email', Endpoint: 'ops@example.com' });
      await snsCall('Publish', { TopicArn: alertsArn, Message: 'disk almost full' });
      const alertsRow = page.getByTestId('topic-row-alerts');
      await alertsRow.waitFor();
      await alertsRow.getByRole('link', { name: 'alerts' }).click();
      await detail.getByRole('heading', { name: 'alerts', level: 2 }).waitFor();
      const sms = detail.locator('[data-testid="inbox-record"][data-protocol="sms"]');
      await sms.waitFor({ timeout: 5000 });
      check('the inbox shows the SMS a publish would have sent, with its number',
        (await sms.getByTestId('inbox-payload').innerText()) === 'disk almost full' && (await sms.innerText()).includes('+15550100'),
        await sms.innerText());
      const confirmation = detail.locator('[data-testid="inbox-record"][data-protocol="email"]');
      const token = await detail.getByTestId('subscription-token').innerText();
      check('a pending e-mail subscription shows its token, and its confirmation mail carries it',
        /^[0-9a-f]{32,}$/.test(token) && (await confirmation.getByTestId('inbox-payload').innerText()).includes(token), token);
      await axe(page, 'topics (inbox)', { strict: true });
    } else {
      skipped.push('topics (this server has no /_retsu/topics)');
    }

    // ---- Lambda: a function made through the admin API, a mapping, its invocations ----
    if (await serves('lambda/mappings')) {
      // A command function that refuses every batch: each invocation fails with its reason.
      let res = await fetch(`${EP}/_retsu/functions/refuser`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ command: ['sh', '-c', 'cat >/dev/null; echo refused >&2; exit 3'] }),
      });
      check('a function is made through the admin API', res.status === 201, String(res.status));
      const { QueueUrl: handedUrl } = await sqs('CreateQueue', { QueueName: 'handed' });
      const { MessageId: handedId } = await sqs('SendMessage', { QueueUrl: handedUrl, MessageBody: 'for the function' });
      res = await fetch(`${EP}/2015-03-31/event-source-mappings/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ FunctionName: 'refuser', EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:handed', BatchSize: 1 }),
      });
      const mapping = await res.json();
      check('a mapping is created through Lambda\'s API', res.status === 202, JSON.stringify(mapping));
      await waitFor('a failed invocation', async () => {
        const log = await (await fetch(`${EP}/_retsu/lambda/invocations`)).json();
        return log.invocations.some((r) => r.result === 'failed');
      });
      await page.goto(`${EP}/_retsu/ui/#/lambda`);
      const invoked = page.getByTestId('lambda-invocations');
      await invoked.waitFor();
      const invokedText = await invoked.innerText();
      check('the Lambda screen lists the mapping and its failed invocation',
        (await page.getByText(mapping.UUID).count()) > 0 && invokedText.includes('refuser') && invokedText.includes('failed'), invokedText);
      await axe(page, 'lambda', { strict: true });
      // The message's own page lists the invocations that carried it.
      await page.goto(`${EP}/_retsu/ui/#/messages/${handedId}`);
      const carried = page.getByTestId('message-invocations');
      await carried.waitFor();
      check('a message\'s page lists the invocations that carried it, with the result',
        (await carried.innerText()).includes('refuser') && (await carried.innerText()).includes('failed'), await carried.innerText());
      await axe(page, 'message (Lambda invocations)', { strict: true });
      // Leave the server as it was: no mapping, no function, no queue.
      await fetch(`${EP}/2015-03-31/event-source-mappings/${mapping.UUID}`, { method: 'DELETE' });
      await fetch(`${EP}/_retsu/functions/refuser`, { method: 'DELETE' });
      await sqs('DeleteQueue', { QueueUrl: handedUrl });
    } else {
      skipped.push('lambda (this server has no /_retsu/lambda/mappings)');
    }

    // ---- dark, narrow ----
    await page.goto(`${EP}/_retsu/ui/#/queues`);
    await page.getByTestId('queue-row-jobs.fifo').waitFor();
    // The oldest-message alarm: past the threshold the age turns red.
    const oldest = page.getByTestId('queue-row-jobs.fifo').getByTestId('oldest');
    check('under the threshold the oldest age is not an alarm', !(await oldest.getAttribute('class')).includes('alarm'));
    await page.getByLabel('Oldest-message alarm at').fill('1');
    await waitFor('the oldest age past 1 s shown as an alarm', async () => (await oldest.getAttribute('class')).includes('alarm'));
    check('past the threshold the oldest age is an alarm', (await oldest.innerText()).includes('past the alarm'));
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 420, height: 860 });
    await page.waitForTimeout(300);
    await shot(page, 'queues-dark-narrow');
    await axe(page, 'queues (dark, narrow)');
    await page.getByRole('link', { name: 'Time & faults' }).click();
    await page.getByRole('heading', { name: 'Time & faults', level: 1 }).waitFor();
    await axe(page, 'time (dark, narrow)');
    if (has.topics) {
      await page.getByRole('link', { name: 'Topics', exact: true }).click();
      await page.getByTestId('topic-row-order-events').getByRole('link', { name: 'order-events' }).click();
      await page.getByTestId('topic-detail').getByTestId('step').first().waitFor();
      await shot(page, 'topics-dark-narrow');
      await axe(page, 'topics (dark, narrow)', { strict: true });
    }

    // ---- keyboard: the skip link and a focusable primary action ----
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${EP}/_retsu/ui/#/queues`);
    await page.reload(); // a fresh load: nothing focused yet
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    check('the first Tab reaches the skip link', await page.evaluate(() => document.activeElement.textContent === 'Skip to content'));
    await page.getByTestId('create-queue').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Create a queue' }).waitFor();
    await page.keyboard.press('Escape');
    check('Escape closes the dialog', !(await page.getByRole('dialog', { name: 'Create a queue' }).isVisible()));

    // ---- a server with --admin-token: the page asks for it, then works ----
    const guarded = await startServer(['--admin-token', 's3cret']);
    try {
      await fetch(`${guarded.endpoint}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.CreateQueue' },
        body: JSON.stringify({ QueueName: 'guarded' }),
      });
      await page.goto(`${guarded.endpoint}/_retsu/ui/#/queues`);
      await page.getByText('This server needs an admin token').waitFor();
      check('without the token the console says it needs one', true);
      page.once('dialog', (d) => d.accept('s3cret'));
      await page.getByRole('button', { name: 'Token' }).click();
      await page.getByTestId('queue-row-guarded').waitFor();
      check('with the token the console shows the queues', true);
      if (has.topics) {
        // EventSource cannot send the token: the topics screen polls, and
        // publishing (SNS's API, not the admin API) needs none.
        await snsCall('CreateTopic', { Name: 'guarded-topic' }, guarded.endpoint);
        await page.getByRole('link', { name: 'Topics', exact: true }).click();
        const row = page.getByTestId('topic-row-guarded-topic');
        await row.waitFor();
        check('with an admin token the topics screen polls', (await page.getByTestId('topics-source').getAttribute('data-live')) === 'false');
        await row.getByRole('link', { name: 'guarded-topic' }).click();
        const form = page.getByTestId('publish-form');
        await form.getByLabel('Message', { exact: true }).fill('behind a token');
        await form.getByTestId('publish-submit').click();
        const id = await form.getByTestId('published-id').innerText();
        await page.locator(`[data-testid="step"][data-kind="published"][data-message-id="${id}"]`).waitFor();
        check('and publishing from it works, the step found by polling', true);
      }
    } finally {
      guarded.child.kill('SIGTERM');
    }

    // ---- a cluster: the Cluster screen lists the nodes and drains the holder ----
    if (process.env.RETSU_TEST_POSTGRES) {
      const db = `console_e2e_${process.pid}`;
      execFileSync('psql', [process.env.RETSU_TEST_POSTGRES, '-q', '-c', `CREATE DATABASE ${db}`]);
      const store = process.env.RETSU_TEST_POSTGRES.replace(/\/[^/]*$/, `/${db}`);
      const nodes = [];
      try {
        nodes.push(await startNode(store, 'e2e-a'));
        nodes.push(await startNode(store, 'e2e-b'));
        const view = async () => (await fetch(`${nodes[0].endpoint}/_retsu/cluster`)).json();
        const first = await waitFor('a lease holder', async () => {
          const v = await view();
          return v.lease.live && v.nodes.length === 2 ? v.lease.holder : null;
        });
        await page.goto(`${nodes[0].endpoint}/_retsu/ui/#/queues`);
        await page.getByRole('link', { name: 'Cluster', exact: true }).click();
        await page.getByRole('heading', { name: 'Cluster', level: 1 }).waitFor();
        await page.locator(`[data-testid="node-${first}"][data-state="holder"]`).waitFor();
        check('the cluster screen shows both nodes and the holder',
          (await page.getByTestId('cluster-nodes').locator('tbody tr').count()) === 2);
        await axe(page, 'cluster');
        await shot(page, 'cluster');
        await page.getByTestId(`drain-${first}`).click();
        await page.getByTestId(`drain-${first}-confirm`).click();
        const other = first === 'e2e-a' ? 'e2e-b' : 'e2e-a';
        await page.locator(`[data-testid="node-${first}"][data-state="draining"]`).waitFor();
        await page.locator(`[data-testid="node-${other}"][data-state="holder"]`).waitFor();
        check('draining the holder from the screen hands the lease to the other node', true);
        await page.locator('.toasts .toast', { hasText: `${first} is drained: it holds no shard` }).waitFor();
        check('and the drain is answered once the node holds no shard', true);
        await page.getByTestId(`undrain-${first}`).click();
        await page.locator(`[data-testid="node-${first}"][data-state="candidate"]`).waitFor();
        check('and undraining it makes it a candidate again', true);
      } finally {
        for (const n of nodes) n.child.kill('SIGTERM');
      }
    } else {
      skipped.push('the cluster screen: RETSU_TEST_POSTGRES is not set (scripts/postgres.sh run … gives one)');
    }

    check('the page never called ReceiveMessage', receives.length === 0, receives.join(', '));
    check('no script errors in the page', pageErrors.length === 0, pageErrors.join(' | '));
  } catch (e) {
    failed++;
    console.log(`not ok - ${e.stack || e}`);
    if (context && context.pages()[0]) await context.pages()[0].screenshot({ path: join(artifacts, 'failure.png') }).catch(() => {});
  } finally {
    if (context) await context.close().catch(() => {});
    child.kill('SIGTERM');
    rmSync(userDataDir, { recursive: true, force: true });
  }
  for (const s of skipped) console.log(`# skipped: ${s}`);
  console.log(`console: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
