'use strict';
// One small adapter per SDK so the scenarios in scenarios.js are written once.
//
// adapter.call(op, params)   -> Promise<output> (op is the PascalCase operation name)
// adapter.code(err)          -> the error identifier this SDK exposes (v3: err.name, v2: err.code)
// adapter.errs               -> the identifier each typed error is expected to have on this SDK
// adapter.systemAttrParam    -> request member that selects message system attributes
// adapter.wire               -> requests captured on the way out (method, host, path, headers)
// adapter.wireProblems()     -> text describing requests that did not look as this client should, or null

process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const CREDS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const REGION = 'us-east-1';

const JSON_CT = 'application/x-amz-json-1.0';
const QUERY_CT = 'application/x-www-form-urlencoded';

function pkgVersion(name) {
  // Read package.json from disk: some packages (sqs-consumer) do not export it.
  const file = require('node:path').join(__dirname, '..', 'node_modules', name, 'package.json');
  return JSON.parse(require('node:fs').readFileSync(file, 'utf8')).version;
}

// Remember which operation raised an error, for the results detail.
function tagOp(promise, op) {
  return promise.catch((err) => {
    if (err && typeof err === 'object' && !err.retsuOp) err.retsuOp = op;
    throw err;
  });
}

function hostPort(u) {
  const url = new URL(u);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}

function wireChecker(adapter, endpoint, protocol) {
  const expected = hostPort(endpoint);
  return () => {
    const bad = [];
    for (const w of adapter.wire) {
      const ct = String(w.contentType || '');
      const okCt = protocol === 'json' ? ct.startsWith(JSON_CT) : ct.startsWith(QUERY_CT);
      if (!okCt) bad.push(`${w.op}: Content-Type ${JSON.stringify(ct)} is not ${protocol}`);
      if (protocol === 'json' && !String(w.target || '').startsWith('AmazonSQS.')) {
        bad.push(`${w.op}: X-Amz-Target ${JSON.stringify(w.target)}`);
      }
      if (w.hostPort !== expected) bad.push(`${w.op}: sent to ${w.hostPort}, not ${expected}`);
    }
    adapter.wire.length = 0;
    return bad.length ? `wire check: ${[...new Set(bad)].slice(0, 5).join('; ')}` : null;
  };
}

// ---------------------------------------------------------------------------------------
// JavaScript v3 (@aws-sdk/client-sqs).
//
// Two clients share the work:
//  - `explicit`: configured with `endpoint` (the usual way to point the SDK at an emulator);
//  - `byQueueUrl`: NO `endpoint`; its endpoint resolver yields an unreachable loopback
//    address (127.0.0.1:9), so a request only reaches Retsu when the SDK's default
//    `useQueueUrlAsEndpoint: true` redirects it to the origin of the QueueUrl it carries.
// Queue-scoped calls (those with a QueueUrl) go through `byQueueUrl`, the rest through
// `explicit`; adapter.explicit(op, params) forces the explicit client. MD5 validation
// (the md5 option) is left at its default: on.
const BOGUS_ENDPOINT = 'http://127.0.0.1:9/';

function silentLogger(counter) {
  return {
    trace() {},
    debug() {},
    info() {},
    warn(msg) {
      if (String(msg).includes('using QueueUrl host as endpoint')) counter.redirects += 1;
    },
    error() {},
  };
}

function makeV3(endpoint) {
  const sqs = require('@aws-sdk/client-sqs');
  const counter = { redirects: 0 };
  const adapter = {
    client: '@aws-sdk/client-sqs',
    version: pkgVersion('@aws-sdk/client-sqs'),
    protocol: 'json',
    sdk: sqs,
    wire: [],
    redirects: counter,
    systemAttrParam: 'MessageSystemAttributeNames',
    hasMoveTasks: true,
    errs: {
      QueueDoesNotExist: 'QueueDoesNotExist',
      QueueNameExists: 'QueueNameExists',
      ReceiptHandleIsInvalid: 'ReceiptHandleIsInvalid',
      EmptyBatchRequest: 'EmptyBatchRequest',
      InvalidAttributeName: 'InvalidAttributeName',
    },
    code: (err) => err && err.name,
  };
  const capture = (label) => (next, context) => async (args) => {
    const r = args.request;
    adapter.wire.push({
      op: context.commandName,
      client: label,
      hostPort: `${r.hostname}:${r.port || (r.protocol === 'https:' ? 443 : 80)}`,
      path: r.path,
      contentType: r.headers['content-type'],
      target: r.headers['x-amz-target'],
    });
    return next(args);
  };
  const common = { region: REGION, credentials: CREDS, maxAttempts: 1 };
  const explicit = new sqs.SQSClient({ ...common, endpoint, logger: silentLogger(counter) });
  const byQueueUrl = new sqs.SQSClient({
    ...common,
    endpointProvider: () => ({ url: new URL(BOGUS_ENDPOINT) }),
    logger: silentLogger(counter),
  });
  explicit.middlewareStack.add(capture('explicit'), { step: 'finalizeRequest', name: 'retsuWireCapture' });
  byQueueUrl.middlewareStack.add(capture('byQueueUrl'), { step: 'finalizeRequest', name: 'retsuWireCapture' });
  adapter.explicitClient = explicit;
  adapter.queueUrlClient = byQueueUrl;
  const send = (client, op, params) => {
    const Cmd = sqs[`${op}Command`];
    if (!Cmd) throw new Error(`no ${op}Command in @aws-sdk/client-sqs`);
    return client.send(new Cmd(params));
  };
  adapter.call = (op, params = {}) => tagOp(send(params.QueueUrl ? byQueueUrl : explicit, op, params), op);
  adapter.explicit = (op, params = {}) => tagOp(send(explicit, op, params), op);
  adapter.viaQueueUrlClient = (op, params = {}) => tagOp(send(byQueueUrl, op, params), op);
  adapter.wireProblems = wireChecker(adapter, endpoint, 'json');
  // Proof that MD5 validation is active (the SDK's own middleware is installed).
  adapter.md5Middleware = () => {
    const found = [];
    for (const [op, mw] of [
      ['SendMessage', 'sendMessageMiddleware'],
      ['SendMessageBatch', 'sendMessageBatchMiddleware'],
      ['ReceiveMessage', 'receiveMessageMiddleware'],
    ]) {
      const cmd = new sqs[`${op}Command`]({});
      cmd.resolveMiddleware(explicit.middlewareStack, explicit.config, {});
      if (cmd.middlewareStack.identify().some((n) => n.startsWith(mw))) found.push(mw);
    }
    return found;
  };
  return adapter;
}

// ---------------------------------------------------------------------------------------
// JavaScript v2 (aws-sdk), either the current JSON release or an old query release
// installed under the npm alias `aws-sdk-query`.
function makeV2(moduleName, endpoint, protocol) {
  const AWS = require(moduleName);
  const svc = new AWS.SQS({
    endpoint,
    region: REGION,
    credentials: new AWS.Credentials(CREDS.accessKeyId, CREDS.secretAccessKey),
    maxRetries: 0,
    sslEnabled: false,
  });
  if (svc.api.protocol !== protocol) {
    throw new Error(`${moduleName}@${AWS.VERSION} model speaks ${svc.api.protocol}, expected ${protocol}`);
  }
  const members = svc.api.operations.receiveMessage.input.members;
  const adapter = {
    client: 'aws-sdk v2',
    version: AWS.VERSION,
    protocol,
    sdk: AWS,
    service: svc,
    wire: [],
    systemAttrParam: members.MessageSystemAttributeNames ? 'MessageSystemAttributeNames' : 'AttributeNames',
    hasMoveTasks: Boolean(svc.api.operations.startMessageMoveTask),
    // v2 exposes the legacy query error code as err.code: from <Code> in query XML, and
    // from the x-amzn-query-error header for JSON (awsQueryCompatible).
    errs: {
      QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
      QueueNameExists: 'QueueAlreadyExists',
      ReceiptHandleIsInvalid: 'ReceiptHandleIsInvalid',
      EmptyBatchRequest: 'AWS.SimpleQueueService.EmptyBatchRequest',
      InvalidAttributeName: 'InvalidAttributeName',
    },
    code: (err) => err && err.code,
  };
  adapter.call = (op, params = {}) => {
    const method = op[0].toLowerCase() + op.slice(1);
    if (typeof svc[method] !== 'function') throw new Error(`aws-sdk ${AWS.VERSION} has no SQS.${method}`);
    const req = svc[method](params);
    req.on('sign', (r) => {
      const h = r.httpRequest;
      adapter.wire.push({
        op,
        hostPort: `${h.endpoint.hostname}:${h.endpoint.port}`,
        path: h.path,
        contentType: h.headers['Content-Type'],
        target: h.headers['X-Amz-Target'],
        action: protocol === 'query' ? new URLSearchParams(String(h.body || '')).get('Action') : undefined,
      });
    });
    return tagOp(req.promise(), op);
  };
  adapter.explicit = adapter.call;
  adapter.wireProblems = wireChecker(adapter, endpoint, protocol);
  return adapter;
}

module.exports = { makeV3, makeV2, pkgVersion, CREDS, REGION, BOGUS_ENDPOINT, silentLogger };
