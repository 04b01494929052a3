'use strict';
// JavaScript v3 SNS (@aws-sdk/client-sns, AWS Query protocol) against a fresh retsu.
// Topics are created and published to with SNSClient; what they deliver is read back with
// @aws-sdk/client-sqs from the same server. Every SNS request is captured on the way out
// (finalizeRequest middleware): it must be a form body (application/x-www-form-urlencoded,
// Action=<Op>) sent to the endpoint; every SNS answer must be XML (deserialize middleware).
// Errors are checked as the modelled exception classes (NotFoundException,
// InvalidParameterException) and by their message text.

const { check, eq, errSummary, CheckError } = require('./harness');

const CREDS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

const SNS_SCENARIOS = ['sns_topic_lifecycle', 'sns_fanout_envelope', 'sns_raw_and_filter', 'sns_fifo', 'sns_errors'];

function makeSnsSuite(endpoint) {
  const snsSdk = require('@aws-sdk/client-sns');
  const sqsSdk = require('@aws-sdk/client-sqs');
  const common = { region: REGION, credentials: CREDS, maxAttempts: 1, endpoint };
  const sns = new snsSdk.SNSClient(common);
  const sqs = new sqsSdk.SQSClient(common);
  const wire = [];
  const expectedHost = new URL(endpoint).host;
  sns.middlewareStack.add(
    (next, context) => async (args) => {
      const r = args.request;
      const body = typeof r.body === 'string' ? r.body : '';
      const action = new URLSearchParams(body).get('Action');
      wire.push({
        op: context.commandName,
        contentType: String(r.headers['content-type'] || ''),
        action,
        host: `${r.hostname}:${r.port}`,
      });
      return next(args);
    },
    { step: 'finalizeRequest', name: 'retsuSnsWire' },
  );
  // The raw answer, inside the SDK's deserializer (so error answers are seen too).
  sns.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const headers = (out.response && out.response.headers) || {};
      if (wire.length) wire[wire.length - 1].answer = String(headers['content-type'] || '');
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'retsuSnsAnswer' },
  );

  const S = (op, params = {}) => sns.send(new snsSdk[`${op}Command`](params)).catch((e) => {
    if (e && typeof e === 'object') e.retsuOp = `SNS ${op}`;
    throw e;
  });
  const Q = (op, params = {}) => sqs.send(new sqsSdk[`${op}Command`](params));

  let n = 0;
  const run = `${Date.now().toString(36)}`;
  const name = (stem, fifo) => `js-${stem}-${run}-${++n}${fifo ? '.fifo' : ''}`;
  let queues = [];
  let topics = [];

  async function queue(stem, fifo) {
    const qn = name(stem, fifo);
    const { QueueUrl } = await Q('CreateQueue', { QueueName: qn, Attributes: fifo ? { FifoQueue: 'true' } : {} });
    queues.push(QueueUrl);
    return { url: QueueUrl, arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${qn}` };
  }
  async function topic(stem, fifo, attributes = {}) {
    const Attributes = { ...attributes };
    if (fifo) Attributes.FifoTopic = 'true';
    const { TopicArn } = await S('CreateTopic', { Name: name(stem, fifo), Attributes });
    topics.push(TopicArn);
    return TopicArn;
  }
  async function subscribe(TopicArn, Endpoint, Attributes = {}) {
    const { SubscriptionArn } = await S('Subscribe', {
      TopicArn, Protocol: 'sqs', Endpoint, Attributes, ReturnSubscriptionArn: true,
    });
    check(String(SubscriptionArn).startsWith(`${TopicArn}:`), `SubscriptionArn ${SubscriptionArn} is not under ${TopicArn}`);
    return SubscriptionArn;
  }
  async function drain(url, want, ms = 5000, extra = {}) {
    const got = [];
    const deadline = Date.now() + ms;
    while (got.length < want && Date.now() < deadline) {
      const r = await Q('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, ...extra });
      for (const m of r.Messages || []) {
        got.push(m);
        await Q('DeleteMessage', { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      }
    }
    return got;
  }
  const envelope = (m, what) => {
    try {
      return JSON.parse(m.Body);
    } catch (e) {
      throw new CheckError(`${what}: the body is not a JSON envelope: ${String(m.Body).slice(0, 200)}`);
    }
  };
  // fn must reject with the modelled exception class `cls` (error name `code`); returns its message.
  async function expectError(fn, cls, code, what) {
    try {
      await fn();
    } catch (err) {
      check(err instanceof snsSdk[cls], `${what}: expected ${cls}, got ${errSummary(err)}`);
      eq(err.name, cls, `${what}: error name`);
      eq(err.$metadata && err.$metadata.httpStatusCode, code === 'NotFound' ? 404 : 400, `${what}: HTTP status`);
      return err.message;
    }
    throw new CheckError(`${what}: expected ${cls}, the call succeeded`);
  }

  const scenarios = {
    async sns_topic_lifecycle() {
      const tn = name('life');
      const { TopicArn: arn } = await S('CreateTopic', { Name: tn });
      topics.push(arn);
      eq(arn, `arn:aws:sns:${REGION}:${ACCOUNT}:${tn}`, 'TopicArn');
      eq((await S('CreateTopic', { Name: tn })).TopicArn, arn, 'CreateTopic again');
      await S('SetTopicAttributes', { TopicArn: arn, AttributeName: 'DisplayName', AttributeValue: 'Life cycle' });
      const { Attributes } = await S('GetTopicAttributes', { TopicArn: arn });
      eq(Attributes.DisplayName, 'Life cycle', 'DisplayName');
      const listed = [];
      for await (const page of snsSdk.paginateListTopics({ client: sns }, {})) {
        for (const t of page.Topics || []) listed.push(t.TopicArn);
      }
      check(listed.includes(arn), `ListTopics does not list ${arn}`);
      await S('TagResource', { ResourceArn: arn, Tags: [{ Key: 'team', Value: 'a' }, { Key: 'env', Value: 'test' }] });
      const { Tags } = await S('ListTagsForResource', { ResourceArn: arn });
      eq(Tags.map((t) => `${t.Key}=${t.Value}`).sort(), ['env=test', 'team=a'], 'ListTagsForResource');
      await S('UntagResource', { ResourceArn: arn, TagKeys: ['env'] });
      eq((await S('ListTagsForResource', { ResourceArn: arn })).Tags, [{ Key: 'team', Value: 'a' }], 'tags after UntagResource');
      await S('DeleteTopic', { TopicArn: arn });
      const msg = await expectError(() => S('GetTopicAttributes', { TopicArn: arn }), 'NotFoundException', 'NotFound',
        'GetTopicAttributes after DeleteTopic');
      check(msg.includes('Topic does not exist'), `NotFound message ${JSON.stringify(msg)}`);
      return `NotFoundException: ${msg}`;
    },

    async sns_fanout_envelope() {
      const arn = await topic('fan');
      const qs = [await queue('fan-a'), await queue('fan-b')];
      for (const q of qs) await subscribe(arn, q.arn);
      const text = 'hello "fan-out"\nsecond line';
      const { MessageId } = await S('Publish', {
        TopicArn: arn, Message: text, Subject: 'Greeting',
        MessageAttributes: { colour: { DataType: 'String', StringValue: 'blue' } },
      });
      for (const [i, q] of qs.entries()) {
        const got = await drain(q.url, 1);
        eq(got.length, 1, `messages in queue ${i + 1}`);
        const env = envelope(got[0], `queue ${i + 1}`);
        eq(env.Type, 'Notification', 'Type');
        eq(env.MessageId, MessageId, "MessageId (Publish's)");
        eq(env.TopicArn, arn, 'TopicArn');
        eq(env.Subject, 'Greeting', 'Subject');
        eq(env.Message, text, 'Message');
        eq(env.MessageAttributes, { colour: { Type: 'String', Value: 'blue' } }, 'MessageAttributes');
        eq(env.SignatureVersion, '1', 'SignatureVersion');
        for (const k of ['Timestamp', 'Signature', 'SigningCertURL', 'UnsubscribeURL']) {
          check(typeof env[k] === 'string' && env[k].length > 0, `envelope has no ${k}`);
        }
      }
      return `both queues got envelope ${MessageId}`;
    },

    async sns_raw_and_filter() {
      const arn = await topic('raw');
      const raw = await queue('raw');
      const blue = await queue('blue');
      await subscribe(arn, raw.arn, { RawMessageDelivery: 'true' });
      await subscribe(arn, blue.arn, { FilterPolicy: JSON.stringify({ colour: ['blue'] }) });
      for (const colour of ['red', 'blue']) {
        await S('Publish', {
          TopicArn: arn, Message: `a ${colour} one`,
          MessageAttributes: { colour: { DataType: 'String', StringValue: colour } },
        });
      }
      const rawGot = await drain(raw.url, 2, 5000, { MessageAttributeNames: ['All'] });
      eq(rawGot.map((m) => m.Body).sort(), ['a blue one', 'a red one'], 'raw bodies');
      for (const m of rawGot) {
        const colour = m.Body.split(' ')[1];
        eq(m.MessageAttributes, { colour: { DataType: 'String', StringValue: colour } }, `SQS message attributes of ${m.Body}`);
      }
      const blueGot = await drain(blue.url, 2, 3000);
      eq(blueGot.map((m) => envelope(m, 'filtered').Message), ['a blue one'], 'messages through the filter');
      return 'raw body + SQS attribute; filter let only blue through';
    },

    async sns_fifo() {
      const arn = await topic('fifo', true, { ContentBasedDeduplication: 'true' });
      const q = await queue('fifo', true);
      await subscribe(arn, q.arn, { RawMessageDelivery: 'true' });
      const seqs = [];
      for (let i = 0; i < 3; i++) {
        const r = await S('Publish', { TopicArn: arn, Message: `m${i}`, MessageGroupId: 'g' });
        check(r.SequenceNumber, `Publish m${i} returned no SequenceNumber`);
        seqs.push(r.SequenceNumber);
      }
      check(BigInt(seqs[0]) < BigInt(seqs[1]) && BigInt(seqs[1]) < BigInt(seqs[2]), `SequenceNumbers not increasing: ${seqs}`);
      const again = await S('Publish', { TopicArn: arn, Message: 'm0', MessageGroupId: 'g' });
      eq(again.SequenceNumber, seqs[0], 'SequenceNumber of the duplicate publish');
      const got = await drain(q.url, 4, 4000);
      eq(got.map((m) => m.Body), ['m0', 'm1', 'm2'], 'FIFO queue contents, in order');
      return `3 delivered in order; duplicate answered sequence ${seqs[0]}`;
    },

    async sns_errors() {
      const missing = `arn:aws:sns:${REGION}:${ACCOUNT}:${name('missing')}`;
      const m1 = await expectError(() => S('Publish', { TopicArn: missing, Message: 'x' }), 'NotFoundException', 'NotFound',
        'Publish to a missing topic');
      check(m1.includes('Topic does not exist'), `NotFound message ${JSON.stringify(m1)}`);
      const m2 = await expectError(() => S('CreateTopic', { Name: 'bad name' }), 'InvalidParameterException', 'InvalidParameter',
        "CreateTopic 'bad name'");
      check(m2.startsWith('Invalid parameter:'), `InvalidParameter message ${JSON.stringify(m2)}`);
      return `NotFoundException: ${m1}; InvalidParameterException: ${m2}`;
    },
  };

  const protocolsSeen = new Set();
  const beforeEach = () => {
    wire.length = 0;
  };
  // The wire check of the scenario just run, then its queues and topics go.
  const afterEach = async () => {
    const problem = wireProblems();
    for (const url of queues) await Q('DeleteQueue', { QueueUrl: url }).catch(() => {});
    for (const arn of topics) await S('DeleteTopic', { TopicArn: arn }).catch(() => {});
    queues = [];
    topics = [];
    return problem;
  };
  function wireProblems() {
    const bad = [];
    for (const w of wire) {
      const query = w.contentType.startsWith('application/x-www-form-urlencoded') && w.action === w.op.replace(/Command$/, '');
      protocolsSeen.add(query ? 'query' : 'unknown');
      if (!query) bad.push(`${w.op}: Content-Type ${JSON.stringify(w.contentType)}, Action ${JSON.stringify(w.action)}`);
      if (w.host !== expectedHost) bad.push(`${w.op}: sent to ${w.host}, not ${expectedHost}`);
      if (!/^(text|application)\/xml/.test(w.answer || '')) bad.push(`${w.op}: answer Content-Type ${JSON.stringify(w.answer)}`);
    }
    if (!wire.length) bad.push('no SNS request observed');
    wire.length = 0;
    return bad.length ? `wire check: ${[...new Set(bad)].slice(0, 5).join('; ')}` : null;
  }
  return { scenarios, beforeEach, afterEach, protocolsSeen };
}

module.exports = { SNS_SCENARIOS, makeSnsSuite };
