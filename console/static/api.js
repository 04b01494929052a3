// What the console talks to: Retsu's admin API (/_retsu/…, JSON, optional
// bearer token), and at "/" the SQS JSON API and SNS's query API — the same
// calls an SDK makes. Nothing here ever calls ReceiveMessage: looking must
// not change a queue.

const TOKEN_KEY = 'retsu.adminToken';

/** An error from either API, with `unavailable` set when this server does not serve the endpoint. */
export class ApiError extends Error {
  constructor(status, code, message, unavailable = false) {
    super(message);
    this.status = status;
    this.code = code;
    this.unavailable = unavailable;
  }
}

export function adminToken() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setAdminToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Calls the admin API. `path` is under /_retsu/ (e.g. "queues"). A response
 * that is not the admin API's JSON means the endpoint is not served by this
 * server (an older build, or --no-admin): it fell through to the SQS handler.
 */
export async function admin(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  const token = adminToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/_retsu/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = res.headers.get('content-type') || '';
  if (!type.includes('application/json')) {
    throw new ApiError(res.status, 'Unavailable', `This server does not serve /_retsu/${path.split('?')[0]}.`, true);
  }
  const data = await res.json();
  if (!res.ok) {
    const err = data && data.error ? data.error : { code: String(res.status), message: res.statusText };
    // The admin API answers a path it does not know with this 404: an
    // endpoint of a newer server (history, events, faults).
    const unknown = res.status === 404 && /^no admin endpoint/.test(err.message || '');
    throw new ApiError(res.status, unknown ? 'Unavailable' : err.code, err.message, unknown);
  }
  return data;
}

/** Calls an SQS action through the AWS JSON 1.0 protocol, as an SDK does. */
export async function sqs(action, params = {}) {
  if (action === 'ReceiveMessage') throw new Error('The console never receives messages.');
  const res = await fetch('/', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `AmazonSQS.${action}`,
    },
    body: JSON.stringify(params),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : {};
  if (!res.ok) {
    const type = String(data.__type || res.status).split('#').pop();
    throw new ApiError(res.status, type, data.message || data.Message || type);
  }
  return data;
}

/**
 * Calls an SNS action through its query protocol (a form POST answered in
 * XML), as an SDK does. Like the SQS API it takes no admin token. Returns a
 * reader of the answer: `pick('MessageId')` is the first such element's text.
 */
export async function sns(action, params = {}) {
  const body = new URLSearchParams({ Action: action, Version: '2010-03-31' });
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null) body.append(k, v);
  }
  const res = await fetch('/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
  const text = await res.text();
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const pick = (tag) => {
    const el = doc.getElementsByTagName(tag)[0];
    return el ? el.textContent : null;
  };
  if (!res.ok || doc.getElementsByTagName('ErrorResponse').length > 0) {
    const code = pick('Code') || String(res.status);
    throw new ApiError(res.status, code, pick('Message') || res.statusText || code);
  }
  if (!doc.getElementsByTagName(`${action}Response`).length) {
    throw new ApiError(res.status, 'Unavailable', `This server does not answer SNS's ${action}.`, true);
  }
  return { pick };
}

/** The path segment the admin API names a queue by. */
export function queuePath(q) {
  return [q.region, q.account, q.name].map(encodeURIComponent).join('/');
}

/**
 * Every queue, from the admin API; when it is not served, from ListQueues and
 * GetQueueAttributes (the default region only, and no peek-based details).
 */
export async function listQueues() {
  try {
    return { queues: (await admin('queues')).queues, fallback: false };
  } catch (e) {
    if (!e.unavailable) throw e;
  }
  const urls = [];
  let token;
  do {
    const page = await sqs('ListQueues', { MaxResults: 1000, ...(token ? { NextToken: token } : {}) });
    urls.push(...(page.QueueUrls || []));
    token = page.NextToken;
  } while (token);
  const queues = await Promise.all(urls.map(async (url) => {
    const { Attributes: a = {} } = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] });
    const [, , , region, account, name] = a.QueueArn.split(':');
    let dlq = null;
    if (a.RedrivePolicy) {
      const p = JSON.parse(a.RedrivePolicy);
      const [, , , r, acc, n] = p.deadLetterTargetArn.split(':');
      dlq = { arn: p.deadLetterTargetArn, region: r, account: acc, name: n, max_receive_count: Number(p.maxReceiveCount) };
    }
    return {
      region, account, name, url, arn: a.QueueArn, fifo: a.FifoQueue === 'true',
      counts: {
        available: Number(a.ApproximateNumberOfMessages || 0),
        in_flight: Number(a.ApproximateNumberOfMessagesNotVisible || 0),
        delayed: Number(a.ApproximateNumberOfMessagesDelayed || 0),
      },
      oldest_age_seconds: null, dead_letter_queue: dlq, dead_letter_sources: [],
      attributes: a, tags: {}, created_ms: Number(a.CreatedTimestamp || 0) * 1000,
    };
  }));
  for (const q of queues) {
    const target = q.dead_letter_queue && queues.find((t) => t.arn === q.dead_letter_queue.arn);
    if (target) target.dead_letter_sources.push({ arn: q.arn, region: q.region, account: q.account, name: q.name });
  }
  const key = (q) => [q.region, q.account, q.name].join('\u0000');
  queues.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
  return { queues, fallback: true };
}
