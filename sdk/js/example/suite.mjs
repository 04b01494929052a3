// The sample suite, written once and run under node:test and under Vitest:
// `test` is the runner's test function, `retsu` a fixture from retsu-sqs/node-test
// or retsu-sqs/vitest (reset before each test). Only the fixture, the official
// AWS SDK and node:assert are used.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { RetsuAdminError, RetsuError, startRetsu } from 'retsu-sqs';

const clients = new Map();
function sqsFor(retsu) {
  const endpoint = retsu.endpoint;
  if (!clients.has(endpoint)) {
    clients.set(endpoint, new SQSClient({
      endpoint,
      region: retsu.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    }));
  }
  return clients.get(endpoint);
}

async function createQueue(sqs, name, attributes = {}) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return out.QueueUrl;
}

async function receive(sqs, queueUrl, max = 1) {
  const out = await sqs.send(new ReceiveMessageCommand({
    QueueUrl: queueUrl,
    MaxNumberOfMessages: max,
    WaitTimeSeconds: 0,
    MessageSystemAttributeNames: ['All'],
  }));
  return out.Messages || [];
}

async function counts(sqs, queueUrl) {
  const out = await sqs.send(new GetQueueAttributesCommand({
    QueueUrl: queueUrl,
    AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
  }));
  return {
    visible: Number(out.Attributes.ApproximateNumberOfMessages),
    notVisible: Number(out.Attributes.ApproximateNumberOfMessagesNotVisible),
  };
}

const scratchDirs = [];
function removeScratch() {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', removeScratch);
function scratch(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `retsu-js-${prefix}-`));
  scratchDirs.push(dir);
  return dir;
}

function script(text, shebang = '/bin/sh') {
  const file = join(scratch('bin'), 'fake-retsu');
  writeFileSync(file, `#!${shebang}\n${text}\n`);
  chmodSync(file, 0o755);
  return file;
}

// Whether a process is alive (a zombie counts as gone).
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

// Pids of live (non-zombie) processes whose command line contains `needle`.
export function pidsWith(needle) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmd.includes(needle)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      pids.push(Number(entry));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

function withEnv(name, value, fn) {
  const before = process.env[name];
  if (value === undefined) delete process.env[name]; else process.env[name] = value;
  const restore = () => { if (before === undefined) delete process.env[name]; else process.env[name] = before; };
  return Promise.resolve().then(fn).finally(restore);
}

// `after` (the runner's after-all hook) removes the scratch files.
export function sqsSuite(test, retsu, after) {
  if (after) after(removeScratch);
  test('sends and receives', async () => {
    const sqs = sqsFor(retsu);
    const url = await createQueue(sqs, 'greetings');
    assert.equal(url, retsu.queueUrl('greetings'));
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'hello retsu' }));
    const [msg] = await receive(sqs, url);
    assert.equal(msg.Body, 'hello retsu');
    assert.equal(msg.MessageId, sent.MessageId);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: msg.ReceiptHandle }));
    assert.deepEqual(await counts(sqs, url), { visible: 0, notVisible: 0 });
  });

  test('a frozen clock moved past the visibility timeout brings the message back with ApproximateReceiveCount 2', async () => {
    const sqs = sqsFor(retsu);
    const frozen = await retsu.clock.freeze();
    assert.equal(frozen.frozen, true);
    const url = await createQueue(sqs, 'visibility', { VisibilityTimeout: '30' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'again' }));
    const [first] = await receive(sqs, url);
    assert.equal(first.Attributes.ApproximateReceiveCount, '1');
    assert.deepEqual(await receive(sqs, url), [], 'in flight: hidden');
    const t0 = await retsu.clock.now();
    await retsu.clock.advance(29);
    assert.deepEqual(await receive(sqs, url), [], 'still hidden one second before the deadline');
    await retsu.clock.advance(2);
    const t1 = await retsu.clock.now();
    assert.equal(t1.getTime() - t0.getTime(), 31000, 'the clock moved by exactly 31 s');
    const [second] = await receive(sqs, url);
    assert.ok(second, 'visible again after the timeout');
    assert.equal(second.MessageId, first.MessageId);
    assert.equal(second.Attributes.ApproximateReceiveCount, '2');
  });

  test('receives alone drive a message into the dead-letter queue', async () => {
    const sqs = sqsFor(retsu);
    await retsu.clock.freeze();
    const dlqUrl = await createQueue(sqs, 'jobs-dlq');
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] })))
      .Attributes.QueueArn;
    const url = await createQueue(sqs, 'jobs', {
      VisibilityTimeout: '10',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
    });
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));
    for (let i = 1; i <= 2; i++) {
      const [m] = await receive(sqs, url);
      assert.equal(m.Attributes.ApproximateReceiveCount, String(i));
      await retsu.clock.advance(11);
    }
    // The receive after the last allowed one moves it instead of returning it.
    assert.deepEqual(await receive(sqs, url), []);
    const [dead] = await receive(sqs, dlqUrl);
    assert.equal(dead.MessageId, sent.MessageId);
    assert.equal(dead.Body, 'poison');
    const history = await retsu.history(sent.MessageId);
    const kinds = history.events.map((e) => e.kind);
    assert.ok(kinds.includes('dead_lettered'), `history: ${kinds.join(', ')}`);
    assert.equal(kinds.filter((k) => k === 'received').length >= 2, true);
  });

  test('peek shows every message with its state and changes nothing', async () => {
    const sqs = sqsFor(retsu);
    await retsu.clock.freeze();
    const url = await createQueue(sqs, 'peeked', { VisibilityTimeout: '60' });
    const a = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a' }));
    const b = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'b' }));
    const [taken] = await receive(sqs, url);
    assert.equal(taken.MessageId, a.MessageId);

    const peeked = await retsu.peek('peeked');
    const byId = Object.fromEntries(peeked.map((m) => [m.message_id, m]));
    assert.equal(peeked.length, 2);
    assert.equal(byId[a.MessageId].state, 'inflight');
    assert.equal(byId[a.MessageId].receive_count, 1);
    assert.equal(byId[b.MessageId].state, 'available');
    assert.equal(byId[b.MessageId].receive_count, 0);
    assert.equal(byId[b.MessageId].body, 'b');
    const available = await retsu.peek('peeked', { state: 'available' });
    assert.deepEqual(available.map((m) => m.message_id), [b.MessageId]);

    // Through SQS: the same counts, and b's first receive is still its first.
    assert.deepEqual(await counts(sqs, url), { visible: 1, notVisible: 1 });
    const [next] = await receive(sqs, url);
    assert.equal(next.MessageId, b.MessageId);
    assert.equal(next.Attributes.ApproximateReceiveCount, '1');
    assert.deepEqual(await receive(sqs, url), [], 'a stays in flight: peek did not release it');
  });

  test('reset between tests (1/2): leaves a queue and a message behind', async () => {
    const sqs = sqsFor(retsu);
    const url = await createQueue(sqs, 'leftover');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'stale' }));
    assert.equal((await retsu.peek('leftover')).length, 1);
  });

  test('reset between tests (2/2): the next test starts empty', async () => {
    const sqs = sqsFor(retsu);
    const listed = await sqs.send(new ListQueuesCommand({}));
    assert.deepEqual(listed.QueueUrls || [], []);
    await assert.rejects(sqs.send(new GetQueueUrlCommand({ QueueName: 'leftover' })),
      (err) => /NonExistentQueue|QueueDoesNotExist/.test(err.name + err.message));
    await assert.rejects(retsu.peek('leftover'),
      (err) => err instanceof RetsuAdminError && err.status === 404 && err.code === 'NotFound' && /leftover/.test(err.message));
  });

  test('bad input: a bad config file is an error with exit code 2 and the cause from stderr', async () => {
    const config = join(scratch('config'), 'bad.toml');
    writeFileSync(config, 'port = "not a number\n');
    await assert.rejects(startRetsu({ config }), (err) => {
      assert.ok(err instanceof RetsuError, String(err));
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /exited before it was ready/);
      assert.ok(err.stderr.includes('bad.toml'), err.stderr);
      assert.ok(err.message.includes(err.stderr));
      return true;
    });
  });

  test('bad input: a port in use (through extra args) is an error with exit code 1 and "cannot listen on"', async () => {
    const holder = net.createServer();
    await new Promise((res) => holder.listen(0, '127.0.0.1', res));
    const { port } = holder.address();
    try {
      await assert.rejects(startRetsu({ args: ['--port', String(port)] }), (err) => {
        assert.ok(err instanceof RetsuError);
        assert.equal(err.exitCode, 1);
        assert.match(err.stderr, /cannot listen on/);
        assert.ok(err.stderr.includes(String(port)), err.stderr);
        return true;
      });
    } finally {
      holder.close();
    }
  });

  test('bad input: a stopped server asked to advance its clock is an error', async () => {
    const server = await startRetsu({ frozenClock: true });
    assert.equal((await server.clock.advance(5)).frozen, true);
    await server.stop();
    await server.stop(); // idempotent
    assert.equal(server.running, false);
    await assert.rejects(server.clock.advance(5), (err) => err instanceof RetsuError && /stopped/.test(err.message));
    assert.equal(alive(server.pid), false, 'the process is gone');
  });

  test('bad input: a missing binary is an error naming where it looked', async () => {
    const missing = join(scratch('missing'), 'no-such-retsu');
    await withEnv('RETSU_BIN', missing, () =>
      assert.rejects(startRetsu(), (err) => err instanceof RetsuError && err.message.includes(`RETSU_BIN=${missing}`) &&
        /does not exist/.test(err.message)));
    const notExecutable = join(scratch('noexec'), 'retsu');
    writeFileSync(notExecutable, 'not a program');
    await assert.rejects(startRetsu({ bin: notExecutable }),
      (err) => err instanceof RetsuError && err.message.includes(notExecutable) && /not executable/.test(err.message));
  });

  test('bad input: a binary that exits at start is an error with its exit code and stderr', async () => {
    const bin = script('echo "fatal: cannot open the store" >&2\nexit 3');
    await assert.rejects(startRetsu({ bin }), (err) =>
      err instanceof RetsuError && err.exitCode === 3 && err.stderr.includes('cannot open the store'));
  });

  test('bad input: a binary that never gets ready times out and is killed', async () => {
    const bin = script("process.stderr.write('starting\\n'); setInterval(() => {}, 1000);", process.execPath);
    const t0 = Date.now();
    await assert.rejects(startRetsu({ bin, startTimeoutMs: 1500 }), (err) =>
      err instanceof RetsuError && /within 1500 ms/.test(err.message) && err.stderr.includes('starting'));
    assert.ok(Date.now() - t0 < 6000);
    assert.deepEqual(pidsWith(bin), [], 'the process was killed');
  });
}
