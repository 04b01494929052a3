'use strict';
// sqs-producer scenarios. The producer only sends (always SendMessageBatch, in chunks of
// `batchSize`) and reads the queue size, so the checks on what arrived use
// @aws-sdk/client-sqs directly. The producer is handed its own SQSClient, whose every
// request is captured for the wire check.

const { Producer } = require('sqs-producer');
const sqs = require('@aws-sdk/client-sqs');
const { check, eq, sleep, qname, md5Hex, md5OfAttributes, toBuffer, CheckError } = require('./harness');
const { CREDS, REGION, silentLogger } = require('./adapters');

const NA = {
  queue_lifecycle: 'sqs-producer has no queue management API (it is handed a queue URL)',
  list_queues_pagination: 'sqs-producer has no ListQueues API',
  visibility_change_release: 'sqs-producer does not receive messages',
  long_polling: 'sqs-producer does not receive messages',
  dead_letter_and_move_task: 'sqs-producer has no redrive or message move task API',
  tags: 'sqs-producer has no tagging API',
};

function makeProducerScenarios(endpoint) {
  const tag = 'prod';
  const created = [];
  const wire = [];
  const expectedHost = new URL(endpoint).host;
  const common = { region: REGION, credentials: CREDS, maxAttempts: 1 };
  const checker = new sqs.SQSClient({ ...common, endpoint, logger: silentLogger({ redirects: 0 }) });
  const producerClient = new sqs.SQSClient({ ...common, endpoint, logger: silentLogger({ redirects: 0 }) });
  producerClient.middlewareStack.add(
    (next, context) => async (args) => {
      const r = args.request;
      wire.push({ op: context.commandName, host: `${r.hostname}:${r.port}`, ct: r.headers['content-type'] });
      return next(args);
    },
    { step: 'finalizeRequest', name: 'retsuWireCapture' },
  );
  const send = (Cmd, params) => checker.send(new sqs[`${Cmd}Command`](params));
  const producer = (queueUrl, opts = {}) => Producer.create({ queueUrl, sqs: producerClient, ...opts });

  async function createQueue(suffix, Attributes) {
    const fifo = Attributes && Attributes.FifoQueue === 'true';
    const out = await send('CreateQueue', { QueueName: qname(tag, suffix) + (fifo ? '.fifo' : ''), Attributes });
    created.push(out.QueueUrl);
    return out.QueueUrl;
  }
  async function drain(url, n, ms, extra = {}) {
    const got = [];
    const deadline = Date.now() + ms;
    while (got.length < n && Date.now() < deadline) {
      const out = await send('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, ...extra });
      for (const m of out.Messages || []) {
        got.push(m);
        await send('DeleteMessage', { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      }
    }
    return got;
  }
  function wrap(fn) {
    return async () => {
      try {
        return await fn();
      } finally {
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

  // -------------------------------------------------------------------------------------
  async function send_receive_delete_attributes() {
    const url = await createQueue('srd');
    const p = producer(url);
    const mattrs = {
      s: { DataType: 'String', StringValue: 'hello \u2713' },
      n: { DataType: 'Number', StringValue: '42' },
      b: { DataType: 'Binary', BinaryValue: Buffer.from([0, 255, 7]) },
    };
    const body = 'produced <&> "\u00e9" \ud83d\ude00';
    const res = await p.send({ id: 'one', body, messageAttributes: mattrs });
    eq(res.length, 1, 'successful entries');
    eq(res[0].Id, 'one', 'entry id');
    eq(res[0].MD5OfMessageBody, md5Hex(body), 'MD5OfMessageBody');
    eq(res[0].MD5OfMessageAttributes, md5OfAttributes(mattrs), 'MD5OfMessageAttributes');
    // A plain string is both the body and the entry Id (so it must be a valid batch entry id).
    await p.send(['plain-string-body']);
    eq(await p.queueSize(), 2, 'producer.queueSize()');
    const got = await drain(url, 2, 5000, { MessageAttributeNames: ['All'] });
    const m = got.find((x) => x.MessageId === res[0].MessageId);
    check(m, 'the attributed message did not arrive');
    eq(m.Body, body, 'body');
    eq(m.MD5OfMessageAttributes, md5OfAttributes(mattrs), 'received MD5OfMessageAttributes');
    eq(toBuffer(m.MessageAttributes.b.BinaryValue).toString('hex'), '00ff07', 'binary attribute');
    eq(m.MessageAttributes.n.StringValue, '42', 'number attribute');
    check(got.some((x) => x.Body === 'plain-string-body'), 'the plain string message did not arrive');
    eq(await p.queueSize(), 0, 'queueSize after the consumer deleted both');
    return 'message objects with String/Number/Binary attributes and plain strings sent; MD5s and queueSize ok';
  }

  async function batches_partial_failure() {
    const url = await createQueue('batch', { MaximumMessageSize: '1024' });
    const p = producer(url);
    const msgs = Array.from({ length: 23 }, (_, i) => ({ id: `m${i}`, body: `body ${i}` }));
    wire.length = 0;
    const res = await p.send(msgs);
    eq(res.length, 23, 'successful entries over the batches');
    eq(wire.filter((w) => w.op === 'SendMessageBatchCommand').length, 3, 'SendMessageBatch calls for 23 messages (10 + 10 + 3)');
    eq((await drain(url, 23, 8000)).length, 23, 'messages that arrived');
    let err;
    try {
      await p.send([{ id: 'ok', body: 'fits' }, { id: 'big', body: 'x'.repeat(2000) }, { id: 'ok2', body: 'fits too' }]);
    } catch (e) {
      err = e;
    }
    check(err, 'a batch with an oversized message did not throw');
    eq(err.name === 'FailedMessagesError' || err.constructor.name === 'FailedMessagesError', true, `error type ${err.name}`);
    eq(err.failedMessages, ['big'], 'FailedMessagesError.failedMessages');
    eq((await drain(url, 2, 5000)).map((x) => x.Body).sort(), ['fits', 'fits too'], 'the entries that succeeded arrived');
    return '23 messages in 3 SendMessageBatch calls; partial failure -> FailedMessagesError([big]), the rest delivered';
  }

  async function delay() {
    const url = await createQueue('delay');
    const p = producer(url);
    const t0 = Date.now();
    await p.send([{ id: 'later', body: 'later', delaySeconds: 1 }, { id: 'now', body: 'now' }]);
    const first = await send('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10 });
    eq((first.Messages || []).map((m) => m.Body), ['now'], 'visible at once');
    await send('DeleteMessage', { QueueUrl: url, ReceiptHandle: first.Messages[0].ReceiptHandle });
    await sleep(Math.max(0, 1300 - (Date.now() - t0)));
    eq((await drain(url, 1, 3000)).map((m) => m.Body), ['later'], 'visible after 1.3 s');
    return 'per-message delaySeconds in a batch holds that entry back 1 s';
  }

  async function fifo_order_group_lock_dedup() {
    const url = await createQueue('fifo', { FifoQueue: 'true' });
    const p = producer(url);
    const msgs = Array.from({ length: 12 }, (_, i) => ({ id: `f${i}`, body: `f${i}`, groupId: 'g1', deduplicationId: `d${i}` }));
    const res = await p.send(msgs);
    eq(res.length, 12, 'FIFO entries accepted');
    check(res.every((r) => /^\d+$/.test(r.SequenceNumber || '')), 'SequenceNumber on every FIFO entry');
    await p.send([{ id: 'dup', body: 'f3 again', groupId: 'g1', deduplicationId: 'd3' }]);
    const got = await drain(url, 12, 8000);
    eq(got.map((m) => m.Body), msgs.map((m) => m.body), 'FIFO order over two batches, duplicate dropped');
    return '12 messages of one group over two SendMessageBatch calls arrive in order; a re-used deduplicationId is dropped';
  }

  async function errors_typed() {
    const url = await createQueue('err');
    const missing = url.replace(/[^/]+$/, qname(tag, 'missing'));
    let err;
    try {
      await producer(missing).send(['x']);
    } catch (e) {
      err = e;
    }
    check(err, 'send to a missing queue succeeded');
    eq(err.name, 'QueueDoesNotExist', 'error name for a missing queue');
    check(err instanceof sqs.QueueDoesNotExist, 'not an instance of QueueDoesNotExist');
    return `missing queue -> ${err.name} (HTTP ${err.$metadata && err.$metadata.httpStatusCode})`;
  }

  const scenarios = { send_receive_delete_attributes, batches_partial_failure, delay, fifo_order_group_lock_dedup, errors_typed };
  for (const k of Object.keys(scenarios)) scenarios[k] = wrap(scenarios[k]);
  const wireProblems = () => {
    const bad = [];
    if (wire.length === 0) bad.push('no request from the producer was seen');
    for (const w of wire) {
      if (!String(w.ct).startsWith('application/x-amz-json-1.0')) bad.push(`${w.op}: Content-Type ${w.ct}`);
      if (w.host !== expectedHost) bad.push(`${w.op}: sent to ${w.host}`);
    }
    wire.length = 0;
    return bad.length ? `wire check: ${[...new Set(bad)].slice(0, 5).join('; ')}` : null;
  };
  return { scenarios, naReasons: NA, wireProblems };
}

module.exports = { makeProducerScenarios };
