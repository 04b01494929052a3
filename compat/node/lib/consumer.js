'use strict';
// sqs-consumer scenarios. The consumer only receives, deletes and changes visibility, so
// the producer side (queue creation, sends, checks) uses @aws-sdk/client-sqs directly.

const { Consumer } = require('sqs-consumer');
const sqs = require('@aws-sdk/client-sqs');
const { check, eq, sleep, qname, md5OfAttributes, toBuffer, errSummary, CheckError } = require('./harness');
const { CREDS, REGION, BOGUS_ENDPOINT, silentLogger } = require('./adapters');
const { TRACE } = require('./scenarios');

const NA = {
  queue_lifecycle: 'sqs-consumer has no queue management API (it is handed a queue URL)',
  list_queues_pagination: 'sqs-consumer has no ListQueues API',
  delay: 'sqs-consumer does not send messages; delayed delivery is producer/server behaviour covered by the SDK suites',
  dead_letter_and_move_task: 'sqs-consumer has no redrive or message move task API',
  tags: 'sqs-consumer has no tagging API',
};

function makeConsumerScenarios(endpoint) {
  const tag = 'cons';
  const created = [];
  const wire = [];
  const expectedHost = new URL(endpoint).host;
  const capture = (label) => (next, context) => async (args) => {
    const r = args.request;
    wire.push({ op: context.commandName, client: label, host: `${r.hostname}:${r.port}`, ct: r.headers['content-type'] });
    return next(args);
  };
  const common = { region: REGION, credentials: CREDS, maxAttempts: 1 };
  const producer = new sqs.SQSClient({ ...common, endpoint, logger: silentLogger({ redirects: 0 }) });
  const redirects = { redirects: 0 };
  const explicitClient = () => {
    const cl = new sqs.SQSClient({ ...common, endpoint, logger: silentLogger({ redirects: 0 }) });
    cl.middlewareStack.add(capture('consumer-explicit'), { step: 'finalizeRequest', name: 'retsuWireCapture' });
    return cl;
  };
  // No `endpoint`: requests reach Retsu only through useQueueUrlAsEndpoint (default true).
  const queueUrlClient = () => {
    const cl = new sqs.SQSClient({
      ...common,
      endpointProvider: () => ({ url: new URL(BOGUS_ENDPOINT) }),
      logger: silentLogger(redirects),
    });
    cl.middlewareStack.add(capture('consumer-queueurl'), { step: 'finalizeRequest', name: 'retsuWireCapture' });
    return cl;
  };
  const send = (Cmd, params) => producer.send(new sqs[`${Cmd}Command`](params));

  async function createQueue(suffix, Attributes) {
    const fifo = Attributes && Attributes.FifoQueue === 'true';
    const out = await send('CreateQueue', { QueueName: qname(tag, suffix) + (fifo ? '.fifo' : ''), Attributes });
    created.push(out.QueueUrl);
    return out.QueueUrl;
  }
  async function counts(url) {
    const a = (await send('GetQueueAttributes', {
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    })).Attributes || {};
    return [a.ApproximateNumberOfMessages, a.ApproximateNumberOfMessagesNotVisible];
  }

  const consumers = [];
  function consumer(opts) {
    const cons = Consumer.create({ waitTimeSeconds: 1, pollingWaitTimeMs: 0, ...opts });
    const errors = [];
    cons.on('error', (err) => errors.push(err));
    cons.on('processing_error', () => {});
    cons.errorsSeen = errors;
    consumers.push(cons);
    return cons;
  }
  async function stopAll() {
    await Promise.all(
      consumers.splice(0).map(
        (cons) =>
          new Promise((resolve) => {
            if (!cons.status.isRunning) return resolve();
            cons.once('stopped', resolve);
            cons.stop({ abort: true });
            setTimeout(resolve, 2000);
          }),
      ),
    );
  }
  async function until(pred, ms, what) {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new CheckError(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(50);
    }
  }
  function wrap(fn) {
    return async () => {
      try {
        return await fn();
      } finally {
        await stopAll();
        while (created.length) {
          try {
            await send('DeleteQueue', { QueueUrl: created.pop() });
          } catch (_) {
            // ignore
          }
        }
      }
    };
  }
  function unexpectedErrors(cons) {
    const errs = cons.errorsSeen.filter((e) => !(e && e.name === 'AbortError') && !/abort/i.test(String(e && e.message)));
    return errs.length ? `consumer emitted error: ${errSummary(errs[0])}${errs[0].cause ? ` (cause: ${errSummary(errs[0].cause)})` : ''}` : null;
  }

  // -------------------------------------------------------------------------------------
  async function send_receive_delete_attributes() {
    const url = await createQueue('srd');
    const mattrs = {
      s: { DataType: 'String', StringValue: 'hello' },
      n: { DataType: 'Number', StringValue: '42' },
      b: { DataType: 'Binary', BinaryValue: Buffer.from([0, 255, 7]) },
    };
    const seen = [];
    const processed = [];
    const cons = consumer({
      queueUrl: url,
      sqs: queueUrlClient(),
      messageAttributeNames: ['All'],
      messageSystemAttributeNames: ['All'],
      handleMessage: async (m) => {
        seen.push(m);
        return m;
      },
    });
    cons.on('message_processed', (m) => processed.push(m.MessageId));
    cons.start();
    const sent = await send('SendMessage', {
      QueueUrl: url,
      MessageBody: 'consumed <&>',
      MessageAttributes: mattrs,
      MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: TRACE } },
    });
    await until(() => processed.length >= 1, 5000, 'message_processed');
    const m = seen[0];
    eq([m.MessageId, m.Body], [sent.MessageId, 'consumed <&>'], 'handled message');
    const ra = m.MessageAttributes || {};
    eq([ra.s && ra.s.StringValue, ra.n && ra.n.StringValue], ['hello', '42'], 'String/Number attributes');
    eq(toBuffer(ra.b.BinaryValue).toString('hex'), '00ff07', 'Binary attribute');
    eq(m.MD5OfMessageAttributes, md5OfAttributes(mattrs), 'MD5OfMessageAttributes');
    eq((m.Attributes || {}).AWSTraceHeader, TRACE, 'AWSTraceHeader');
    await sleep(200);
    eq(await counts(url), ['0', '0'], 'queue empty after the handler succeeded (message deleted)');
    check(redirects.redirects > 0, 'consumer requests were not redirected to the QueueUrl host');
    const e = unexpectedErrors(cons);
    if (e) throw new CheckError(e);
    eq(seen.length, 1, 'handler invocations');
    return 'handleMessage got body, String/Number/Binary attributes and AWSTraceHeader; message deleted; ' +
      'consumer client had no endpoint (useQueueUrlAsEndpoint)';
  }

  // -------------------------------------------------------------------------------------
  async function visibility_change_release() {
    // Part 1: the handler throws once; the message returns after the 1 s visibility timeout.
    const url = await createQueue('vis', { VisibilityTimeout: '1' });
    const calls = [];
    const processed = [];
    const cons = consumer({
      queueUrl: url,
      sqs: explicitClient(),
      messageSystemAttributeNames: ['ApproximateReceiveCount'],
      handleMessage: async (m) => {
        calls.push({ t: Date.now(), rc: (m.Attributes || {}).ApproximateReceiveCount });
        if (calls.length === 1) throw new Error('handler fails once');
        return m;
      },
    });
    cons.on('message_processed', (m) => processed.push(m.MessageId));
    cons.start();
    await send('SendMessage', { QueueUrl: url, MessageBody: 'retry me' });
    await until(() => processed.length >= 1, 6000, 'message processed after the failure');
    eq(calls.map((c) => c.rc), ['1', '2'], 'ApproximateReceiveCount on the two deliveries');
    const gap = calls[1].t - calls[0].t;
    check(gap >= 800 && gap < 4000, `redelivery ${gap} ms after the failure (visibility timeout 1 s)`);
    await sleep(200);
    eq(await counts(url), ['0', '0'], 'queue empty after processing');

    // Part 2: terminateVisibilityTimeout releases it at once (ChangeMessageVisibility 0)
    // although the queue's visibility timeout is 30 s.
    const url2 = await createQueue('vis30', { VisibilityTimeout: '30' });
    const calls2 = [];
    const processed2 = [];
    const cons2 = consumer({
      queueUrl: url2,
      sqs: explicitClient(),
      terminateVisibilityTimeout: true,
      handleMessage: async (m) => {
        calls2.push(Date.now());
        if (calls2.length === 1) throw new Error('handler fails once');
        return m;
      },
    });
    cons2.on('message_processed', (m) => processed2.push(m.MessageId));
    cons2.start();
    await send('SendMessage', { QueueUrl: url2, MessageBody: 'release me' });
    await until(() => processed2.length >= 1, 5000, 'message released by terminateVisibilityTimeout');
    const gap2 = calls2[1] - calls2[0];
    check(gap2 < 2500, `redelivery after terminateVisibilityTimeout took ${gap2} ms`);
    for (const cn of [cons, cons2]) {
      const e = unexpectedErrors(cn);
      if (e) throw new CheckError(e);
    }
    return `throw once -> redelivered after ${gap} ms (1 s visibility), then deleted; ` +
      `terminateVisibilityTimeout -> redelivered after ${gap2} ms on a 30 s queue`;
  }

  // -------------------------------------------------------------------------------------
  async function batches_partial_failure() {
    const url = await createQueue('batch', { VisibilityTimeout: '1' });
    const attempts = {};
    const acked = new Set();
    let batches = 0;
    const cons = consumer({
      queueUrl: url,
      sqs: explicitClient(),
      batchSize: 10,
      handleMessageBatch: async (msgs) => {
        batches += 1;
        const ok = [];
        for (const m of msgs) {
          attempts[m.Body] = (attempts[m.Body] || 0) + 1;
          const idx = Number(m.Body.slice(1));
          // Even messages succeed at once; odd ones fail on their first delivery.
          if (idx % 2 === 0 || attempts[m.Body] > 1) ok.push(m);
        }
        ok.forEach((m) => acked.add(m.Body));
        return ok;
      },
    });
    const sent = await send('SendMessageBatch', {
      QueueUrl: url,
      Entries: [0, 1, 2, 3, 4, 5].map((i) => ({ Id: `e${i}`, MessageBody: `m${i}` })),
    });
    eq((sent.Successful || []).length, 6, 'SendMessageBatch');
    cons.start();
    await until(() => acked.size === 6, 8000, 'all 6 messages acknowledged');
    await sleep(300);
    eq(await counts(url), ['0', '0'], 'queue empty after the batches');
    eq(Object.entries(attempts).sort().map(([b, n]) => `${b}:${n}`),
      ['m0:1', 'm1:2', 'm2:1', 'm3:2', 'm4:1', 'm5:2'], 'deliveries per message');
    const e = unexpectedErrors(cons);
    if (e) throw new CheckError(e);
    return `handleMessageBatch over ${batches} batches: acknowledged subset deleted (DeleteMessageBatch), the rest redelivered after 1 s`;
  }

  // -------------------------------------------------------------------------------------
  async function long_polling() {
    const url = await createQueue('lp');
    const client = explicitClient();
    let receives = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ReceiveMessageCommand') receives += 1;
        return next(args);
      },
      { step: 'initialize', name: 'countReceives' },
    );
    let handledAt;
    const cons = consumer({
      queueUrl: url,
      sqs: client,
      waitTimeSeconds: 5,
      handleMessage: async (m) => {
        handledAt = Date.now();
        return m;
      },
    });
    cons.start();
    await sleep(700);
    const sentAt = Date.now();
    await send('SendMessage', { QueueUrl: url, MessageBody: 'lp' });
    await until(() => handledAt, 5000, 'handler');
    const latency = handledAt - sentAt;
    check(latency < 1500, `handled ${latency} ms after the send while a 5 s long poll was open`);
    check(receives <= 2, `${receives} ReceiveMessage calls in ~1 s with waitTimeSeconds 5 (not long polling?)`);
    const e = unexpectedErrors(cons);
    if (e) throw new CheckError(e);
    return `handled ${latency} ms after the send; ${receives} ReceiveMessage call(s) with waitTimeSeconds 5`;
  }

  // -------------------------------------------------------------------------------------
  async function fifo_order_group_lock_dedup() {
    const url = await createQueue('fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' });
    const order = [];
    let active = 0;
    let maxActive = 0;
    const cons = consumer({
      queueUrl: url,
      sqs: explicitClient(),
      suppressFifoWarning: true,
      batchSize: 1,
      messageSystemAttributeNames: ['MessageGroupId'],
      handleMessage: async (m) => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        order.push(m.Body);
        await sleep(20);
        active -= 1;
        return m;
      },
    });
    const bodies = ['f1', 'f2', 'f3', 'f4', 'f5'];
    await send('SendMessageBatch', {
      QueueUrl: url,
      Entries: bodies.map((b) => ({ Id: b, MessageBody: b, MessageGroupId: 'g' })),
    });
    await send('SendMessage', { QueueUrl: url, MessageBody: 'f1', MessageGroupId: 'g' }); // content-based duplicate
    cons.start();
    await until(() => order.length >= 5, 8000, '5 FIFO messages');
    await sleep(300);
    eq(order, bodies, 'FIFO processing order (duplicate dropped)');
    eq(maxActive, 1, 'concurrent handlers in one message group');
    eq(await counts(url), ['0', '0'], 'queue empty');
    const e = unexpectedErrors(cons);
    if (e) throw new CheckError(e);
    return 'one group processed in send order, one at a time, content-based duplicate not delivered';
  }

  // -------------------------------------------------------------------------------------
  async function errors_typed() {
    const base = await createQueue('err');
    const missing = base.replace(/[^/]+$/, qname(tag, 'missing'));
    const cons = consumer({ queueUrl: missing, sqs: explicitClient(), handleMessage: async (m) => m });
    cons.start();
    await until(() => cons.errorsSeen.length > 0, 5000, 'an error event');
    await stopAll();
    const err = cons.errorsSeen[0];
    eq([err.name, err.code], ['SQSError', 'QueueDoesNotExist'], 'consumer error event (name, code) for a missing queue');
    return `missing queue -> 'error' event SQSError code=${err.code} status=${err.statusCode}; ` +
      'bad receipt handle, empty batch and bad attribute name cannot be provoked through the consumer API';
  }

  const scenarios = {
    send_receive_delete_attributes,
    batches_partial_failure,
    visibility_change_release,
    long_polling,
    fifo_order_group_lock_dedup,
    errors_typed,
  };
  for (const k of Object.keys(scenarios)) scenarios[k] = wrap(scenarios[k]);
  const wireProblems = () => {
    const bad = [];
    for (const w of wire) {
      if (!String(w.ct).startsWith('application/x-amz-json-1.0')) bad.push(`${w.op}: Content-Type ${w.ct}`);
      if (w.host !== expectedHost) bad.push(`${w.op} (${w.client}): sent to ${w.host}`);
    }
    wire.length = 0;
    return bad.length ? `wire check: ${[...new Set(bad)].slice(0, 5).join('; ')}` : null;
  };
  return { scenarios, naReasons: NA, wireProblems };
}

module.exports = { makeConsumerScenarios };
