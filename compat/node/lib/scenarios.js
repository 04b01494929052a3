'use strict';
// The shared scenario list, written once against an SDK adapter (see adapters.js).
// Each scenario returns a short detail string on success or throws a CheckError
// describing the first mismatch.

const { check, eq, sleep, qname, md5Hex, md5OfAttributes, toBuffer, errSummary, CheckError, na } = require('./harness');

const TRACE = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
const TRACE_MD5 = '5ae4d5d7636402d80f4eb6d213245a88';

function makeScenarios(c, endpoint, tag) {
  const created = [];
  const endpointHost = new URL(endpoint).host;

  async function createQueue(suffix, Attributes, tags) {
    const fifo = Attributes && Attributes.FifoQueue === 'true';
    const name = qname(tag, suffix) + (fifo ? '.fifo' : '');
    const params = { QueueName: name };
    if (Attributes) params.Attributes = Attributes;
    if (tags) params.tags = tags;
    const out = await c.call('CreateQueue', params);
    check(typeof out.QueueUrl === 'string', `CreateQueue ${name}: no QueueUrl in ${JSON.stringify(out)}`);
    created.push(out.QueueUrl);
    return out.QueueUrl;
  }

  async function attrs(url, names) {
    const out = await c.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: names });
    return out.Attributes || {};
  }

  async function arn(url) {
    return (await attrs(url, ['QueueArn'])).QueueArn;
  }

  async function cleanup() {
    while (created.length) {
      const url = created.pop();
      try {
        await c.call('DeleteQueue', { QueueUrl: url });
      } catch (_) {
        // already deleted by the scenario, or the server is unhappy: not this scenario's verdict
      }
    }
  }

  async function receive(url, extra = {}) {
    const out = await c.call('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, ...extra });
    return out.Messages || [];
  }

  // Receive until `n` messages have arrived or `ms` elapsed.
  async function receiveN(url, n, ms, extra = {}) {
    const got = [];
    const deadline = Date.now() + ms;
    while (got.length < n && Date.now() < deadline) {
      const msgs = await receive(url, extra);
      got.push(...msgs);
      if (got.length < n && msgs.length === 0) await sleep(100);
    }
    return got;
  }

  async function expectError(promise, expected, what) {
    let out;
    try {
      out = await promise;
    } catch (err) {
      const code = c.code(err);
      if (code !== expected) {
        throw new CheckError(`${what}: expected error ${expected}, got ${errSummary(err)}`);
      }
      return err;
    }
    throw new CheckError(`${what}: expected error ${expected}, but the call succeeded: ${JSON.stringify(out).slice(0, 200)}`);
  }

  const sys = (names) => ({ [c.systemAttrParam]: names });

  function wrap(fn) {
    return async () => {
      try {
        return await fn();
      } finally {
        await cleanup();
      }
    };
  }

  // -------------------------------------------------------------------------------------
  async function queue_lifecycle() {
    const notes = [];
    const url = await createQueue('life', { VisibilityTimeout: '5', MessageRetentionPeriod: '3600' });
    const name = url.split('/').pop();
    check(new URL(url).host === endpointHost, `QueueUrl ${url} does not point back at the endpoint ${endpoint}`);
    check(/^\/\d{12}\//.test(new URL(url).pathname), `QueueUrl path is not /<12-digit account>/<name>: ${url}`);
    const got = await c.call('GetQueueUrl', { QueueName: name });
    eq(got.QueueUrl, url, 'GetQueueUrl');

    const all = await attrs(url, ['All']);
    eq(all.VisibilityTimeout, '5', 'VisibilityTimeout');
    eq(all.MessageRetentionPeriod, '3600', 'MessageRetentionPeriod');
    eq(all.DelaySeconds, '0', 'DelaySeconds');
    eq(all.MaximumMessageSize, '1048576', 'MaximumMessageSize');
    eq(all.ApproximateNumberOfMessages, '0', 'ApproximateNumberOfMessages');
    check(/^arn:aws:sqs:[a-z0-9-]+:\d{12}:/.test(all.QueueArn || '') && all.QueueArn.endsWith(`:${name}`),
      `QueueArn ${all.QueueArn}`);
    check(/^\d{10}$/.test(all.CreatedTimestamp || ''), `CreatedTimestamp (epoch seconds) ${all.CreatedTimestamp}`);
    check(all.FifoQueue === undefined, `standard queue lists FifoQueue=${all.FifoQueue}`);

    // An empty AttributeNames list selects nothing (query SDKs send it as a bare `AttributeName=`).
    const none = await c.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: [] }).catch((err) => {
      throw new CheckError(`GetQueueAttributes with AttributeNames=[]: expected an empty result, got ${errSummary(err)}`);
    });
    eq(Object.keys(none.Attributes || {}), [], 'GetQueueAttributes with an empty AttributeNames list');

    await c.call('SetQueueAttributes', { QueueUrl: url, Attributes: { VisibilityTimeout: '7' } });
    eq((await attrs(url, ['VisibilityTimeout'])).VisibilityTimeout, '7', 'VisibilityTimeout after SetQueueAttributes');

    // CreateQueue is idempotent for identical (or no) attributes, and refuses different ones.
    eq((await c.call('CreateQueue', { QueueName: name })).QueueUrl, url, 'CreateQueue again, no attributes');
    eq((await c.call('CreateQueue', { QueueName: name, Attributes: { VisibilityTimeout: '7' } })).QueueUrl, url,
      'CreateQueue again, same attributes');
    await expectError(c.call('CreateQueue', { QueueName: name, Attributes: { VisibilityTimeout: '9' } }),
      c.errs.QueueNameExists, 'CreateQueue with a different VisibilityTimeout');

    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'to be purged' });
    eq((await attrs(url, ['ApproximateNumberOfMessages'])).ApproximateNumberOfMessages, '1', 'count before purge');
    await c.call('PurgeQueue', { QueueUrl: url });
    eq((await attrs(url, ['ApproximateNumberOfMessages'])).ApproximateNumberOfMessages, '0', 'count after purge');

    if (c.viaQueueUrlClient) {
      // The queue-URL client really is pointed somewhere unreachable: without a QueueUrl
      // to redirect by, its request fails. Its queue-scoped calls above reached Retsu.
      let err;
      try {
        await c.viaQueueUrlClient('ListQueues', {});
      } catch (e) {
        err = e;
      }
      check(err && /ECONNREFUSED|connect/i.test(`${err.code} ${err.message}`),
        `ListQueues on the client without endpoint should fail to connect, got ${err ? errSummary(err) : 'success'}`);
      for (let i = c.wire.length - 1; i >= 0; i--) if (c.wire[i].op === 'ListQueuesCommand') c.wire.splice(i, 1);
      // And the explicit-endpoint client handles queue-scoped calls too.
      const viaExplicit = await c.explicit('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['QueueArn'] });
      eq(viaExplicit.Attributes.QueueArn, all.QueueArn, 'GetQueueAttributes via the explicit-endpoint client');
      check(c.redirects.redirects > 0, 'the SDK never redirected a request to the QueueUrl host');
      notes.push(`queue-scoped calls reached Retsu through useQueueUrlAsEndpoint (${c.redirects.redirects} redirects so far)`);
    }

    await c.call('DeleteQueue', { QueueUrl: url });
    await expectError(c.call('GetQueueUrl', { QueueName: name }), c.errs.QueueDoesNotExist, 'GetQueueUrl after DeleteQueue');
    await expectError(c.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] }),
      c.errs.QueueDoesNotExist, 'GetQueueAttributes after DeleteQueue');
    return ['create/get-url/attributes/set/idempotent create/QueueNameExists/purge/delete ok', ...notes].join('; ');
  }

  // -------------------------------------------------------------------------------------
  async function list_queues_pagination() {
    const prefix = `${qname(tag, 'lq')}-`;
    const urls = [];
    for (let i = 0; i < 5; i++) {
      const out = await c.call('CreateQueue', { QueueName: `${prefix}${i}` });
      created.push(out.QueueUrl);
      urls.push(out.QueueUrl);
    }
    const other = await createQueue('other');
    urls.sort();

    const whole = await c.call('ListQueues', { QueueNamePrefix: prefix });
    eq([...(whole.QueueUrls || [])].sort(), urls, 'ListQueues with prefix');
    check(!whole.NextToken, `NextToken without MaxResults: ${whole.NextToken}`);

    const seen = [];
    let token;
    let pages = 0;
    do {
      const params = { QueueNamePrefix: prefix, MaxResults: 2 };
      if (token) params.NextToken = token;
      const page = await c.call('ListQueues', params);
      pages += 1;
      const got = page.QueueUrls || [];
      check(got.length <= 2, `page ${pages} has ${got.length} URLs with MaxResults 2`);
      seen.push(...got);
      token = page.NextToken;
      check(pages <= 5, 'pagination does not terminate');
    } while (token);
    eq([...seen].sort(), urls, 'URLs over all pages');
    eq(pages, 3, 'page count for 5 queues, MaxResults 2');

    let viaPaginator = '';
    if (c.sdk && c.sdk.paginateListQueues) {
      const collected = [];
      for await (const page of c.sdk.paginateListQueues({ client: c.explicitClient, pageSize: 2 }, { QueueNamePrefix: prefix })) {
        collected.push(...(page.QueueUrls || []));
      }
      eq([...collected].sort(), urls, 'paginateListQueues');
      viaPaginator = '; paginateListQueues ok';
    }

    const none = await c.call('ListQueues', { QueueNamePrefix: `${prefix}zzz` });
    check(!none.QueueUrls || none.QueueUrls.length === 0, `prefix with no match returned ${JSON.stringify(none.QueueUrls)}`);
    const everything = await c.call('ListQueues', {});
    const everySet = new Set(everything.QueueUrls || []);
    check(urls.every((u) => everySet.has(u)) && everySet.has(other), 'ListQueues without prefix misses created queues');
    return `prefix filter, 3 pages of MaxResults 2, empty match, unfiltered list ok${viaPaginator}`;
  }

  // -------------------------------------------------------------------------------------
  async function send_receive_delete_attributes() {
    const url = await createQueue('srd');
    const body = 'h\u00e9llo <w\u00f6rld> & "quotes" \'apos\' \u2713 \ud83d\ude00 \r\n\ttab ]]>';
    const mattrs = {
      s: { DataType: 'String', StringValue: 'hello \u2713' },
      n: { DataType: 'Number', StringValue: '12.5' },
      b: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 254, 255]) },
      'custom.t': { DataType: 'Number.float', StringValue: '3.14' },
    };
    const sent = await c.call('SendMessage', {
      QueueUrl: url,
      MessageBody: body,
      MessageAttributes: mattrs,
      MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: TRACE } },
    });
    check(typeof sent.MessageId === 'string' && sent.MessageId.length > 0, 'SendMessage: no MessageId');
    eq(sent.MD5OfMessageBody, md5Hex(body), 'MD5OfMessageBody');
    eq(sent.MD5OfMessageAttributes, md5OfAttributes(mattrs), 'MD5OfMessageAttributes');
    eq(sent.MD5OfMessageSystemAttributes, TRACE_MD5, 'MD5OfMessageSystemAttributes');
    check(!sent.SequenceNumber, 'standard queue returned a SequenceNumber');

    // 1st receive: a filtered attribute selection, message left visible (VisibilityTimeout 0).
    const r1 = await receive(url, {
      VisibilityTimeout: 0,
      MessageAttributeNames: ['s', 'n'],
      ...sys(['AWSTraceHeader', 'ApproximateReceiveCount']),
    });
    eq(r1.length, 1, 'messages on 1st receive');
    const m1 = r1[0];
    eq(m1.MessageId, sent.MessageId, 'MessageId');
    eq(m1.Body, body, 'Body round trip');
    eq(m1.MD5OfBody, md5Hex(body), 'MD5OfBody');
    eq(Object.keys(m1.MessageAttributes || {}).sort(), ['n', 's'], 'filtered MessageAttributes');
    const filtered = { s: mattrs.s, n: mattrs.n };
    eq(m1.MD5OfMessageAttributes, md5OfAttributes(filtered), 'MD5OfMessageAttributes over the returned subset');
    eq((m1.Attributes || {}).AWSTraceHeader, TRACE, 'AWSTraceHeader system attribute');
    eq((m1.Attributes || {}).ApproximateReceiveCount, '1', 'ApproximateReceiveCount on 1st receive');

    // 2nd receive: everything.
    const before = Date.now();
    const r2 = await receive(url, { MessageAttributeNames: ['All'], ...sys(['All']) });
    eq(r2.length, 1, 'messages on 2nd receive');
    const m2 = r2[0];
    eq(m2.MessageId, sent.MessageId, 'MessageId on 2nd receive');
    check(m2.ReceiptHandle && m2.ReceiptHandle !== m1.ReceiptHandle, 'a receive must issue a new ReceiptHandle');
    const ra = m2.MessageAttributes || {};
    eq(Object.keys(ra).sort(), Object.keys(mattrs).sort(), 'MessageAttributes names');
    for (const k of ['s', 'n', 'custom.t']) {
      eq([ra[k].DataType, ra[k].StringValue], [mattrs[k].DataType, mattrs[k].StringValue], `attribute ${k}`);
    }
    eq(ra.b.DataType, 'Binary', 'attribute b DataType');
    eq(toBuffer(ra.b.BinaryValue).toString('hex'), '000102feff', 'attribute b bytes');
    eq(m2.MD5OfMessageAttributes, md5OfAttributes(mattrs), 'MD5OfMessageAttributes on receive (All)');
    const sa = m2.Attributes || {};
    eq(sa.AWSTraceHeader, TRACE, 'AWSTraceHeader (All)');
    eq(sa.ApproximateReceiveCount, '2', 'ApproximateReceiveCount on 2nd receive');
    check(sa.SenderId, 'SenderId missing');
    check(/^\d{13}$/.test(sa.SentTimestamp || '') && Math.abs(Number(sa.SentTimestamp) - before) < 60000,
      `SentTimestamp (epoch ms) ${sa.SentTimestamp}`);
    check(/^\d{13}$/.test(sa.ApproximateFirstReceiveTimestamp || ''),
      `ApproximateFirstReceiveTimestamp ${sa.ApproximateFirstReceiveTimestamp}`);

    eq((await receive(url)).length, 0, 'messages while the only one is in flight');
    const counts = await attrs(url, ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']);
    eq([counts.ApproximateNumberOfMessages, counts.ApproximateNumberOfMessagesNotVisible], ['0', '1'], 'visible/in-flight counts');

    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: m2.ReceiptHandle });
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: m2.ReceiptHandle }); // repeat delete succeeds
    eq((await receive(url)).length, 0, 'messages after delete');
    const after = await attrs(url, ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']);
    eq([after.ApproximateNumberOfMessages, after.ApproximateNumberOfMessagesNotVisible], ['0', '0'], 'counts after delete');

    const notes = ['String/Number/Binary/custom-type attributes, AWSTraceHeader, MD5s (body, attributes, filtered, system) ok'];
    if (c.md5Middleware) {
      const mw = c.md5Middleware();
      eq(mw.length, 3, `SDK MD5 middleware installed (${mw.join(',')})`);
      // And once more through the explicit-endpoint client.
      const s2 = await c.explicit('SendMessage', { QueueUrl: url, MessageBody: 'explicit' });
      eq(s2.MD5OfMessageBody, md5Hex('explicit'), 'MD5OfMessageBody (explicit client)');
      const r3 = await c.explicit('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 1 });
      eq(((r3.Messages || [])[0] || {}).Body, 'explicit', 'receive via the explicit-endpoint client');
      notes.push('SDK MD5 validation on (send/batch/receive middleware), both clients');
    }
    return notes.join('; ');
  }

  // -------------------------------------------------------------------------------------
  async function batches_partial_failure() {
    const url = await createQueue('batch', { MaximumMessageSize: '1024' });
    const kAttr = { k: { DataType: 'String', StringValue: 'x' } };
    const out = await c.call('SendMessageBatch', {
      QueueUrl: url,
      Entries: [
        { Id: 'ok1', MessageBody: 'one' },
        { Id: 'ok2', MessageBody: 'two', MessageAttributes: kAttr },
        { Id: 'big', MessageBody: 'x'.repeat(2000) },
        { Id: 'bad', MessageBody: 'bad \u0000 char' },
      ],
    });
    const ok = out.Successful || [];
    const failed = out.Failed || [];
    eq(ok.map((e) => e.Id).sort(), ['ok1', 'ok2'], 'SendMessageBatch Successful ids');
    eq(failed.map((e) => e.Id).sort(), ['bad', 'big'], 'SendMessageBatch Failed ids');
    const byId = Object.fromEntries(ok.map((e) => [e.Id, e]));
    eq(byId.ok1.MD5OfMessageBody, md5Hex('one'), 'ok1 MD5OfMessageBody');
    eq(byId.ok2.MD5OfMessageAttributes, 'a45daa70926828a2f0a1db3418e6feb4', 'ok2 MD5OfMessageAttributes');
    check(byId.ok1.MessageId && byId.ok2.MessageId, 'Successful entries need MessageId');
    const f = Object.fromEntries(failed.map((e) => [e.Id, e]));
    eq([f.big.Code, f.big.SenderFault], ['InvalidParameterValue', true], 'oversize entry failure (Code, SenderFault)');
    eq([f.bad.Code, f.bad.SenderFault], ['InvalidMessageContents', true], 'invalid-character entry failure (Code, SenderFault)');

    const got = await receiveN(url, 2, 3000);
    eq(got.map((m) => m.Body).sort(), ['one', 'two'], 'received bodies');
    const h = Object.fromEntries(got.map((m) => [m.Body, m.ReceiptHandle]));

    const cv = await c.call('ChangeMessageVisibilityBatch', {
      QueueUrl: url,
      Entries: [
        { Id: 'v1', ReceiptHandle: h.one, VisibilityTimeout: 0 },
        { Id: 'v2', ReceiptHandle: 'garbage', VisibilityTimeout: 0 },
      ],
    });
    eq((cv.Successful || []).map((e) => e.Id), ['v1'], 'ChangeMessageVisibilityBatch Successful');
    eq((cv.Failed || []).map((e) => [e.Id, e.Code]), [['v2', 'ReceiptHandleIsInvalid']], 'ChangeMessageVisibilityBatch Failed');

    const again = await receive(url);
    eq(again.map((m) => m.Body), ['one'], 'message released by ChangeMessageVisibilityBatch');

    const del = await c.call('DeleteMessageBatch', {
      QueueUrl: url,
      Entries: [
        { Id: 'd1', ReceiptHandle: again[0].ReceiptHandle },
        { Id: 'd2', ReceiptHandle: h.two },
        { Id: 'd3', ReceiptHandle: 'garbage' },
      ],
    });
    eq((del.Successful || []).map((e) => e.Id).sort(), ['d1', 'd2'], 'DeleteMessageBatch Successful');
    eq((del.Failed || []).map((e) => [e.Id, e.Code]), [['d3', 'ReceiptHandleIsInvalid']], 'DeleteMessageBatch Failed');
    const counts = await attrs(url, ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']);
    eq([counts.ApproximateNumberOfMessages, counts.ApproximateNumberOfMessagesNotVisible], ['0', '0'], 'counts after batch delete');
    return 'send batch 2 ok + 2 failed (InvalidParameterValue, InvalidMessageContents); visibility batch and delete batch with one bad handle each ok';
  }

  // -------------------------------------------------------------------------------------
  async function visibility_change_release() {
    const url = await createQueue('vis', { VisibilityTimeout: '30' });
    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'v' });
    const rc = (m) => (m.Attributes || {}).ApproximateReceiveCount;
    const rx = (extra) => receive(url, { ...sys(['ApproximateReceiveCount']), ...extra });

    const r1 = await rx();
    eq(r1.length, 1, 'first receive');
    eq((await rx()).length, 0, 'receive while in flight (30 s queue timeout)');

    await c.call('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: r1[0].ReceiptHandle, VisibilityTimeout: 0 });
    const r2 = await rx();
    eq(r2.length, 1, 'receive after ChangeMessageVisibility 0 (release)');
    eq(rc(r2[0]), '2', 'ApproximateReceiveCount after release');

    await c.call('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: r2[0].ReceiptHandle, VisibilityTimeout: 1 });
    eq((await rx()).length, 0, 'receive right after ChangeMessageVisibility 1');
    await sleep(1300);
    const r3 = await rx({ VisibilityTimeout: 1 });
    eq(r3.length, 1, 'receive 1.3 s after ChangeMessageVisibility 1');
    eq(rc(r3[0]), '3', 'ApproximateReceiveCount');

    // The receive-level VisibilityTimeout 1 overrides the queue's 30 s.
    eq((await rx()).length, 0, 'receive right after a receive with VisibilityTimeout 1');
    await sleep(1300);
    const r4 = await rx();
    eq(r4.length, 1, 'receive 1.3 s after a receive with VisibilityTimeout 1');
    eq(rc(r4[0]), '4', 'ApproximateReceiveCount');

    // Extending works too: back to hidden for 30 s.
    await c.call('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: r4[0].ReceiptHandle, VisibilityTimeout: 30 });
    eq((await rx()).length, 0, 'receive after extending visibility');
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: r4[0].ReceiptHandle });
    await expectError(
      c.call('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: 'garbage', VisibilityTimeout: 0 }),
      c.errs.ReceiptHandleIsInvalid, 'ChangeMessageVisibility with a malformed handle');
    return 'hidden while in flight; released by ChangeMessageVisibility 0; 1 s change and 1 s receive override expire; extend ok';
  }

  // -------------------------------------------------------------------------------------
  async function delay() {
    const q1 = await createQueue('delay');
    const q2 = await createQueue('qdelay', { DelaySeconds: '1' });
    await c.call('SendMessage', { QueueUrl: q1, MessageBody: 'per-message', DelaySeconds: 1 });
    await c.call('SendMessageBatch', {
      QueueUrl: q1,
      Entries: [
        { Id: 'now', MessageBody: 'batch-now', DelaySeconds: 0 },
        { Id: 'later', MessageBody: 'batch-later', DelaySeconds: 1 },
      ],
    });
    await c.call('SendMessage', { QueueUrl: q2, MessageBody: 'queue-delay' });
    const t0 = Date.now();
    eq((await receive(q1)).map((m) => m.Body), ['batch-now'], 'immediately visible on q1');
    eq((await receive(q2)).length, 0, 'immediately visible on the DelaySeconds=1 queue');
    const a = await attrs(q1, ['ApproximateNumberOfMessagesDelayed']);
    eq(a.ApproximateNumberOfMessagesDelayed, '2', 'ApproximateNumberOfMessagesDelayed');
    await sleep(Math.max(0, 1300 - (Date.now() - t0)));
    const late = await receiveN(q1, 2, 2000);
    eq(late.map((m) => m.Body).sort(), ['batch-later', 'per-message'], 'visible on q1 after 1.3 s');
    eq((await receiveN(q2, 1, 2000)).map((m) => m.Body), ['queue-delay'], 'visible on the delay queue after 1.3 s');
    return 'per-message, per-batch-entry and queue DelaySeconds=1 hold messages back, then release them';
  }

  // -------------------------------------------------------------------------------------
  async function long_polling() {
    const url = await createQueue('lp');
    let t = Date.now();
    const empty = await receive(url, { WaitTimeSeconds: 1 });
    const emptyMs = Date.now() - t;
    eq(empty.length, 0, 'long poll on an empty queue');
    check(emptyMs >= 900 && emptyMs < 3500, `empty 1 s long poll took ${emptyMs} ms`);

    t = Date.now();
    const pending = receive(url, { WaitTimeSeconds: 5 });
    await sleep(500);
    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'wake up' });
    const got = await pending;
    const gotMs = Date.now() - t;
    eq(got.map((m) => m.Body), ['wake up'], 'long poll result');
    check(gotMs >= 400 && gotMs < 2500, `long poll returned after ${gotMs} ms (message sent at ~500 ms)`);
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: got[0].ReceiptHandle });

    await c.call('SetQueueAttributes', { QueueUrl: url, Attributes: { ReceiveMessageWaitTimeSeconds: '1' } });
    t = Date.now();
    const out = await c.call('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 1 });
    const queueMs = Date.now() - t;
    eq((out.Messages || []).length, 0, 'queue-default long poll');
    check(queueMs >= 900 && queueMs < 3500, `queue ReceiveMessageWaitTimeSeconds=1 poll took ${queueMs} ms`);
    return `empty 1 s poll ${emptyMs} ms; woke after ${gotMs} ms on a send at 500 ms; queue-default wait ${queueMs} ms`;
  }

  // -------------------------------------------------------------------------------------
  async function fifo_order_group_lock_dedup() {
    const url = await createQueue('fifo', { FifoQueue: 'true' });
    const a = await attrs(url, ['All']);
    eq([a.FifoQueue, a.ContentBasedDeduplication], ['true', 'false'], 'FIFO attributes');
    const seq = [];
    const ids = {};
    for (const b of ['a1', 'a2', 'a3']) {
      const s = await c.call('SendMessage', { QueueUrl: url, MessageBody: b, MessageGroupId: 'g1', MessageDeduplicationId: b });
      check(/^\d+$/.test(s.SequenceNumber || ''), `SequenceNumber for ${b}: ${s.SequenceNumber}`);
      seq.push(BigInt(s.SequenceNumber));
      ids[b] = s.MessageId;
    }
    check(seq[0] < seq[1] && seq[1] < seq[2], `SequenceNumbers not increasing: ${seq.join(',')}`);
    const dup = await c.call('SendMessage', { QueueUrl: url, MessageBody: 'a1', MessageGroupId: 'g1', MessageDeduplicationId: 'a1' });
    check(dup.MessageId, 'duplicate send must still succeed');

    const all = sys(['All']);
    const r1 = await receive(url, { MaxNumberOfMessages: 1, ...all });
    eq(r1.map((m) => m.Body), ['a1'], 'first FIFO receive');
    const at = r1[0].Attributes || {};
    eq([at.MessageGroupId, at.MessageDeduplicationId, at.SequenceNumber], ['g1', 'a1', String(seq[0])],
      'FIFO system attributes (MessageGroupId, MessageDeduplicationId, SequenceNumber)');
    eq((await receive(url)).length, 0, 'receive while group g1 is locked by an in-flight message');

    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'b1', MessageGroupId: 'g2', MessageDeduplicationId: 'b1' });
    const r2 = await receive(url);
    eq(r2.map((m) => m.Body), ['b1'], 'only the unlocked group g2 is served');
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: r2[0].ReceiptHandle });
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: r1[0].ReceiptHandle });

    const rest = [];
    const deadline = Date.now() + 3000;
    while (rest.length < 2 && Date.now() < deadline) {
      const msgs = await receive(url);
      for (const m of msgs) {
        rest.push(m.Body);
        await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      }
      if (!msgs.length) await sleep(100);
    }
    eq(rest, ['a2', 'a3'], 'rest of g1 in order, the duplicate a1 not delivered');

    // Deduplication ids are remembered after the message is deleted.
    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'a1 again', MessageGroupId: 'g1', MessageDeduplicationId: 'a1' });
    eq((await receive(url)).length, 0, 'a re-used MessageDeduplicationId within 5 min is dropped');

    // Content-based deduplication.
    await c.call('SetQueueAttributes', { QueueUrl: url, Attributes: { ContentBasedDeduplication: 'true' } });
    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'same', MessageGroupId: 'g3' });
    await c.call('SendMessage', { QueueUrl: url, MessageBody: 'same', MessageGroupId: 'g3' });
    const cbd = await receiveN(url, 2, 500);
    eq(cbd.map((m) => m.Body), ['same'], 'content-based dedup delivers one copy');
    await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: cbd[0].ReceiptHandle });

    // A batch is enqueued in entry order.
    const bo = await c.call('SendMessageBatch', {
      QueueUrl: url,
      Entries: ['c1', 'c2', 'c3', 'c4'].map((b) => ({ Id: b, MessageBody: b, MessageGroupId: 'g4' })),
    });
    eq((bo.Successful || []).length, 4, 'FIFO batch entries accepted');
    const order = [];
    const d2 = Date.now() + 3000;
    while (order.length < 4 && Date.now() < d2) {
      const msgs = await receive(url);
      for (const m of msgs) {
        order.push(m.Body);
        await c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      }
      if (!msgs.length) await sleep(100);
    }
    eq(order, ['c1', 'c2', 'c3', 'c4'], 'FIFO batch order');
    return 'ordered sequence numbers, group lock, explicit and content-based dedup, batch order ok';
  }

  // -------------------------------------------------------------------------------------
  async function dead_letter_and_move_task() {
    if (!c.hasMoveTasks) return na(`${c.client} ${c.version} has no message move task API`);
    const dlq = await createQueue('dlq');
    const dlqArn = await arn(dlq);
    const src = await createQueue('src', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
    });
    const srcArn = await arn(src);
    const rp = JSON.parse((await attrs(src, ['RedrivePolicy'])).RedrivePolicy || '{}');
    eq([rp.deadLetterTargetArn, Number(rp.maxReceiveCount)], [dlqArn, 1], 'RedrivePolicy round trip');

    const sent = await c.call('SendMessage', {
      QueueUrl: src,
      MessageBody: 'poison',
      MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } },
    });
    eq((await receive(src, { VisibilityTimeout: 0 })).map((m) => m.Body), ['poison'], '1st receive from the source');
    eq((await receive(src, { VisibilityTimeout: 0 })).length, 0, '2nd receive from the source (message should move to the DLQ)');

    // The deprecated AttributeNames member selects system attributes here, on purpose.
    const dl = await receiveN(dlq, 1, 3000, { VisibilityTimeout: 0, AttributeNames: ['All'], MessageAttributeNames: ['All'] });
    eq(dl.length, 1, 'messages in the DLQ');
    const m = dl[0];
    eq([m.MessageId, m.Body], [sent.MessageId, 'poison'], 'DLQ message keeps MessageId and body');
    eq(((m.MessageAttributes || {}).k || {}).StringValue, 'v', 'DLQ message keeps its attributes');
    eq((m.Attributes || {}).DeadLetterQueueSourceArn, srcArn, 'DeadLetterQueueSourceArn');
    eq((m.Attributes || {}).ApproximateReceiveCount, '2', 'ApproximateReceiveCount carried into the DLQ');

    const sources = await c.call('ListDeadLetterSourceQueues', { QueueUrl: dlq });
    eq(sources.queueUrls, [src], 'ListDeadLetterSourceQueues');

    const started = await c.call('StartMessageMoveTask', { SourceArn: dlqArn });
    check(typeof started.TaskHandle === 'string' && started.TaskHandle, 'StartMessageMoveTask: no TaskHandle');
    let task;
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const l = await c.call('ListMessageMoveTasks', { SourceArn: dlqArn });
      task = (l.Results || [])[0];
      if (task && task.Status === 'COMPLETED') break;
      check(!task || ['RUNNING', 'COMPLETED'].includes(task.Status), `move task status ${JSON.stringify(task)}`);
      await sleep(200);
    }
    check(task && task.Status === 'COMPLETED', `move task not COMPLETED within 5 s: ${JSON.stringify(task)}`);
    eq([task.SourceArn, Number(task.ApproximateNumberOfMessagesMoved), Number(task.ApproximateNumberOfMessagesToMove)],
      [dlqArn, 1, 1], 'ListMessageMoveTasks entry (SourceArn, moved, to move)');
    check(Math.abs(Number(task.StartedTimestamp) - Date.now()) < 60000, `StartedTimestamp (epoch ms) ${task.StartedTimestamp}`);

    const back = await receiveN(src, 1, 3000, { ...sys(['All']) });
    eq(back.map((x) => x.Body), ['poison'], 'message back in the source queue after the move task');
    eq((back[0].Attributes || {}).ApproximateReceiveCount, '1', 'a redriven message is received as new (ApproximateReceiveCount)');
    eq((await attrs(dlq, ['ApproximateNumberOfMessages'])).ApproximateNumberOfMessages, '0', 'DLQ empty after the move');
    const sameId = back[0].MessageId === sent.MessageId;
    return `moved to DLQ on the 2nd receive, DeadLetterQueueSourceArn ok, move task COMPLETED and message redriven` +
      (sameId ? ' (note: redriven message kept its MessageId; AWS docs say redrive assigns a new one)' : ' with a new MessageId');
  }

  // -------------------------------------------------------------------------------------
  async function tags() {
    const url = await createQueue('tags', undefined, { env: 'test', team: 'a' });
    const tagsOf = async () => (await c.call('ListQueueTags', { QueueUrl: url })).Tags || {};
    const sorted = (o) => Object.fromEntries(Object.entries(o).sort());
    eq(sorted(await tagsOf()), { env: 'test', team: 'a' }, 'tags from CreateQueue');
    await c.call('TagQueue', { QueueUrl: url, Tags: { team: 'b', 'cost-center': '42' } });
    eq(sorted(await tagsOf()), { 'cost-center': '42', env: 'test', team: 'b' }, 'tags after TagQueue');
    await c.call('UntagQueue', { QueueUrl: url, TagKeys: ['env', 'absent'] });
    eq(sorted(await tagsOf()), { 'cost-center': '42', team: 'b' }, 'tags after UntagQueue');
    await c.call('UntagQueue', { QueueUrl: url, TagKeys: ['team', 'cost-center'] });
    eq(await tagsOf(), {}, 'tags after removing all');
    return 'create with tags, tag (overwrite), untag (incl. absent key), untag all ok';
  }

  // -------------------------------------------------------------------------------------
  async function errors_typed() {
    const url = await createQueue('err');
    const missingName = qname(tag, 'missing');
    const missingUrl = url.replace(/[^/]+$/, missingName);
    const results = [];
    const problems = [];
    const one = async (what, expected, cls, fn) => {
      let err;
      let out;
      try {
        out = await fn();
      } catch (e) {
        err = e;
      }
      if (!err) {
        problems.push(`${what}: no error (${JSON.stringify(out).slice(0, 120)})`);
        return;
      }
      const code = c.code(err);
      const status = err.statusCode || (err.$metadata && err.$metadata.httpStatusCode);
      const extra = c.protocol === 'json' && err.Code && err.Code !== code ? `, Code=${err.Code}` : '';
      results.push(`${what} -> ${code} (${status}${extra})`);
      if (code !== expected) problems.push(`${what}: expected ${expected}, got ${errSummary(err)}`);
      if (cls && c.sdk[cls] && !(err instanceof c.sdk[cls])) problems.push(`${what}: not an instance of ${cls}`);
    };
    const v3 = c.client === '@aws-sdk/client-sqs';
    await one('GetQueueUrl missing queue', c.errs.QueueDoesNotExist, v3 && 'QueueDoesNotExist',
      () => c.call('GetQueueUrl', { QueueName: missingName }));
    await one('SendMessage to a missing queue URL', c.errs.QueueDoesNotExist, v3 && 'QueueDoesNotExist',
      () => c.call('SendMessage', { QueueUrl: missingUrl, MessageBody: 'x' }));
    await one('DeleteMessage bad receipt handle', c.errs.ReceiptHandleIsInvalid, v3 && 'ReceiptHandleIsInvalid',
      () => c.call('DeleteMessage', { QueueUrl: url, ReceiptHandle: 'garbage' }));
    await one('SendMessageBatch empty', c.errs.EmptyBatchRequest, v3 && 'EmptyBatchRequest',
      () => c.call('SendMessageBatch', { QueueUrl: url, Entries: [] }));
    await one('GetQueueAttributes bad name', c.errs.InvalidAttributeName, v3 && 'InvalidAttributeName',
      () => c.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['Foobar'] }));
    if (problems.length) throw new CheckError(problems.join('; '));
    return results.join('; ');
  }

  const scenarios = {
    queue_lifecycle,
    list_queues_pagination,
    send_receive_delete_attributes,
    batches_partial_failure,
    visibility_change_release,
    delay,
    long_polling,
    fifo_order_group_lock_dedup,
    dead_letter_and_move_task,
    tags,
    errors_typed,
  };
  for (const k of Object.keys(scenarios)) scenarios[k] = wrap(scenarios[k]);
  return scenarios;
}

module.exports = { makeScenarios, TRACE, TRACE_MD5 };
