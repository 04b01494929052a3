// The topics screen: SNS topics, their subscriptions and filter policies,
// a publish form, and the last fan-out steps (why a message was filtered
// out). Nothing here consumes a message.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html, usePoll, POLL_MS, fmtDuration, fmtTime, queueHref, topicHref, messageHref, parseArn, errorText } from '../util.js';
import { admin, adminToken, sqs, sns, listQueues } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, Sparkline, notify } from './parts.js';

const tkey = (t) => `${t.region}/${t.account}/${t.name}`;
const STEP_KINDS = ['published', 'delivered', 'filtered_out', 'delivery_failed', 'dead_lettered'];
const STEP_LABEL = {
  published: 'Published', delivered: 'Delivered', filtered_out: 'Filtered out',
  delivery_failed: 'Delivery failed', dead_lettered: 'Dead-lettered',
};
// The badge colours of the message states: sent on, arrived, held back, lost.
const STEP_CLASS = {
  published: 'st-inflight', delivered: 'st-available', filtered_out: 'st-delayed',
  delivery_failed: 'st-deadletter', dead_lettered: 'st-deadletter',
};
// While the stream is live the list is re-read on each fan-out step, and
// only now and then besides.
const LIVE_POLL_MS = 15000;

/**
 * GET /_retsu/topics, re-read whenever the event stream reports a fan-out
 * step; polled every POLL_MS instead when there is no stream (an older
 * server, or an admin token, which EventSource cannot send).
 */
function useTopics() {
  const [state, setState] = useState({ data: null, error: null });
  const [live, setLive] = useState(false);
  const liveRef = useRef(false);
  const lastLoad = useRef(0);
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    lastLoad.current = Date.now();
    try {
      const data = await admin('topics');
      if (mine === seq.current) setState({ data, error: null });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error }));
    }
  }, []);
  useEffect(() => {
    let source = null;
    let everOpened = false;
    let stopped = false;
    let retry = null;
    let pending = null;
    const setLiveBoth = (v) => {
      liveRef.current = v;
      setLive(v);
    };
    // A publish brings several steps at once: one read for them all.
    const soon = () => {
      if (!pending) pending = setTimeout(() => { pending = null; reload(); }, 100);
    };
    const open = () => {
      if (stopped || typeof EventSource === 'undefined' || adminToken()) return;
      const es = new EventSource(`/_retsu/events/stream?kind=${STEP_KINDS.join(',')}`);
      source = es;
      for (const kind of STEP_KINDS) es.addEventListener(kind, soon);
      es.onopen = () => {
        everOpened = true;
        setLiveBoth(true);
        soon(); // what happened while it connected
      };
      const drop = () => {
        es.close();
        if (source === es) source = null;
        setLiveBoth(false);
        soon();
      };
      // Cut off for falling behind: read the list, then follow again.
      es.addEventListener('missed', () => {
        drop();
        retry = setTimeout(open, 1000);
      });
      es.onerror = () => {
        drop();
        // Never opened: this server has no stream; polling it is.
        if (everOpened) retry = setTimeout(open, 2000);
      };
    };
    reload();
    open();
    const timer = setInterval(() => {
      if (document.hidden) return;
      if (!liveRef.current || Date.now() - lastLoad.current >= LIVE_POLL_MS) reload();
    }, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
      clearTimeout(retry);
      clearTimeout(pending);
      if (source) source.close();
      seq.current++;
    };
  }, []);
  return { ...state, live, reload };
}

export function TopicsView({ selected }) {
  const { data, error, live, reload } = useTopics();
  const topics = data ? data.topics : [];
  const key = selected ? tkey(selected) : null;
  const topic = key ? topics.find((t) => tkey(t) === key) : null;
  // Choosing a topic moves focus to its details (not on arriving here:
  // the shell focuses the screen's heading then).
  const heading = useRef(null);
  const focused = useRef(key);
  useEffect(() => {
    if (!key) focused.current = null;
    else if (key !== focused.current && heading.current) {
      heading.current.focus();
      focused.current = key;
    }
  });
  return html`<section>
    <h1 tabindex="-1">Topics</h1>
    <div class="row wrap small">
      <span class="muted">SNS topics on this endpoint: publish through SNS's own API and follow each message to its subscriptions.</span>
      ${data ? html`<span class="muted" data-testid="topics-source" data-live=${live ? 'true' : 'false'}>
        ${live ? 'Updates live from the event stream.' : 'Updates polled every second.'}</span>` : null}
    </div>
    <${LoadError} error=${error} what="the topics" />
    ${data && topics.length === 0 ? html`<p class="notice muted">No topics yet. Create one with an SNS client (CreateTopic) pointed at this endpoint.</p>` : null}
    ${topics.length > 0 ? html`<div class="table-wrap"><table class="topics" data-testid="topics-table">
      <caption class="sr-only">Topics with their subscriptions</caption>
      <thead><tr>
        <th scope="col">Topic</th><th scope="col" class="num">Subscriptions</th><th scope="col">Last step</th>
      </tr></thead>
      <tbody>${topics.map((t) => html`<${TopicRow} key=${tkey(t)} t=${t} current=${tkey(t) === key} />`)}</tbody>
    </table></div>` : null}
    ${key && data && !topic ? html`<p class="notice warn" data-testid="topic-missing">There is no topic ${selected.name}
      in ${selected.region} · ${selected.account} (deleted?).</p>` : null}
    ${topic ? html`<${TopicDetail} key=${key} t=${topic} heading=${heading} live=${live} onPublished=${reload} />` : null}
    ${data && topics.length > 0 && !key ? html`<p class="muted">Choose a topic to see its subscriptions, publish to it and follow its last deliveries.</p>` : null}
  </section>`;
}

function TopicRow({ t, current }) {
  const last = t.recent[0];
  const pending = t.subscriptions.filter((s) => s.pending).length;
  return html`<tr data-testid=${`topic-row-${t.name}`} class=${current ? 'selected' : ''}>
    <th scope="row">
      <a href=${topicHref(t)} aria-current=${current ? 'true' : undefined}>${t.name}</a>
      ${t.fifo ? html` <span class="badge">FIFO</span>` : null}
      <div class="small muted">${t.region} · ${t.account}</div>
    </th>
    <td class="num" data-testid="subscription-count">${t.subscriptions.length}${pending ? html`<div class="small muted">${pending} pending</div>` : null}</td>
    <td class="small">${last ? html`${STEP_LABEL[last.kind] || last.kind} · ${fmtTime(last.at_ms)}` : html`<span class="muted">—</span>`}</td>
  </tr>`;
}

function TopicDetail({ t, heading, live, onPublished }) {
  const tags = Object.entries(t.tags || {});
  return html`<section class="panel" aria-labelledby="topic-title" data-testid="topic-detail">
    <h2 id="topic-title" tabindex="-1" ref=${heading}>${t.name}${t.fifo ? html` <span class="badge">FIFO</span>` : null}</h2>
    <p class="small muted mono wrap-any">${t.arn}</p>
    ${tags.length ? html`<p class="small">Tags: ${tags.map(([k, v], i) => html`${i ? ', ' : ''}<span class="mono">${k}=${v}</span>`)}</p>` : null}
    <h3>Subscriptions</h3>
    <${Subscriptions} subs=${t.subscriptions} />
    <h3>Publish</h3>
    <${PublishForm} t=${t} live=${live} onPublished=${onPublished} />
    <h3>Last deliveries</h3>
    <${Steps} t=${t} />
    <h3>Inbox</h3>
    <${Inbox} t=${t} />
  </section>`;
}

/** An endpoint as a link to its queue when it is one. */
function Endpoint({ protocol, endpoint }) {
  if (!endpoint) return html`<span class="muted">—</span>`;
  if (protocol === 'sqs' && endpoint.startsWith('arn:')) {
    const q = parseArn(endpoint);
    return html`<a href=${queueHref(q)} title=${endpoint}>${q.name}</a>`;
  }
  return html`<span class="mono wrap-any">${endpoint}</span>`;
}

function pretty(json) {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch (e) {
    return json;
  }
}

function Subscriptions({ subs }) {
  if (subs.length === 0) return html`<p class="muted">No subscriptions: a message published now reaches no one.</p>`;
  return html`<div class="table-wrap"><table class="subs" data-testid="subscriptions">
    <caption class="sr-only">Subscriptions of this topic</caption>
    <thead><tr>
      <th scope="col">Protocol</th><th scope="col">Endpoint</th><th scope="col">Delivery</th><th scope="col">Filter policy</th>
    </tr></thead>
    <tbody>${subs.map((s) => {
      const dlq = s.redrive_policy ? redriveTarget(s.redrive_policy) : null;
      return html`<tr key=${s.arn} data-testid="subscription" data-arn=${s.arn}>
        <td>${s.protocol}</td>
        <th scope="row"><${Endpoint} protocol=${s.protocol} endpoint=${s.endpoint} />
          <div class="small muted mono wrap-any">${s.arn}</div></th>
        <td>
          ${s.pending ? html`<span class="badge warn">pending confirmation</span> ` : null}
          ${s.pending && s.token ? html`<div class="small">token <span class="mono wrap-any" data-testid="subscription-token">${s.token}</span></div>` : null}
          ${s.raw ? html`<span class="badge">raw</span>` : html`<span class="badge">SNS envelope</span>`}
          ${dlq ? html`<div class="small">dead letters → <${Endpoint} protocol="sqs" endpoint=${dlq} /></div>` : null}
        </td>
        <td data-label="Filter policy">
          ${s.filter_policy ? html`<pre class="policy" data-testid="filter-policy">${pretty(s.filter_policy)}</pre>
            <div class="small muted" data-testid="filter-scope">scope: ${s.filter_policy_scope || 'MessageAttributes'}</div>`
            : html`<span class="muted">none: every message</span>`}
        </td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

function redriveTarget(policy) {
  try {
    const p = typeof policy === 'string' ? JSON.parse(policy) : policy;
    return p && p.deadLetterTargetArn ? p.deadLetterTargetArn : null;
  } catch (e) {
    return null;
  }
}

function Steps({ t }) {
  if (t.recent.length === 0) return html`<p class="muted" data-testid="steps-empty">Nothing published to ${t.name} yet.</p>`;
  const seen = new Map();
  return html`<div class="table-wrap"><table class="steps" data-testid="steps">
    <caption class="sr-only">The last fan-out steps of ${t.name}, newest first</caption>
    <thead><tr>
      <th scope="col">Step</th><th scope="col">Time</th><th scope="col">Subscription</th><th scope="col">Message</th><th scope="col">Detail</th>
    </tr></thead>
    <tbody>${t.recent.map((s) => {
      const base = `${s.at_ms}|${s.kind}|${s.message_id}|${s.subscription || ''}`;
      const n = (seen.get(base) || 0) + 1;
      seen.set(base, n);
      return html`<tr key=${`${base}|${n}`} data-testid="step" data-kind=${s.kind} data-message-id=${s.message_id}>
        <td><span class=${`badge ${STEP_CLASS[s.kind] || ''}`}>${STEP_LABEL[s.kind] || s.kind}</span></td>
        <td class="small nowrap">${fmtTime(s.at_ms)}</td>
        <td class="small" data-label="Subscription"><${Endpoint} protocol=${s.protocol || (s.endpoint && s.endpoint.startsWith('arn:aws:sqs:') ? 'sqs' : '')} endpoint=${s.endpoint} />
          ${s.protocol && s.protocol !== 'sqs' ? html`<div class="muted">${s.protocol}</div>` : null}</td>
        <td class="small" data-label="Message">
          <span class="mono" title="SNS message ID">${s.message_id}</span>
          ${s.delivered_as ? html`<div>as <a href=${messageHref(s.delivered_as)} data-testid="delivered-link"
            aria-label=${`SQS message ${s.delivered_as}`}>SQS message <span class="mono">${s.delivered_as}</span></a></div>` : null}
        </td>
        <td class="small" data-testid="step-detail" data-label="Detail">${s.detail || html`<span class="muted">—</span>`}</td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

/**
 * What the topic's e-mail, SMS, push, Lambda and Firehose subscriptions
 * were sent: recorded by the server, never sent (newest first).
 */
function Inbox({ t }) {
  const inbox = t.inbox || [];
  if (inbox.length === 0) {
    return html`<p class="muted" data-testid="inbox-empty">Nothing sent to e-mail, SMS, mobile push, Lambda or Firehose subscriptions of ${t.name} yet.</p>`;
  }
  return html`<div class="table-wrap"><table class="inbox" data-testid="inbox">
    <caption class="sr-only">What the subscriptions of ${t.name} that Retsu does not reach were sent, newest first</caption>
    <thead><tr>
      <th scope="col">Protocol</th><th scope="col">Endpoint</th><th scope="col">Time</th><th scope="col">Payload</th>
    </tr></thead>
    <tbody>${inbox.map((r) => html`<tr key=${r.id} data-testid="inbox-record" data-protocol=${r.protocol}>
      <td>${r.protocol}</td>
      <th scope="row" class="small"><span class="mono wrap-any">${r.endpoint}</span>
        ${r.subject ? html`<div class="muted">${r.subject}</div>` : null}</th>
      <td class="small nowrap">${fmtTime(r.at_ms)}</td>
      <td data-label="Payload"><pre class="policy" data-testid="inbox-payload">${pretty(r.payload)}</pre></td>
    </tr>`)}</tbody>
  </table></div>`;
}

/** Publish through SNS's query API (POST / with Action=Publish), as a client would. */
function PublishForm({ t, live, onPublished }) {
  const [f, setF] = useState({ message: '', subject: '', group: '', dedup: '' });
  const [attrs, setAttrs] = useState([{ name: '', value: '' }]);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const [err, setErr] = useState('');
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const setAttr = (i, k) => (e) => setAttrs(attrs.map((a, j) => (j === i ? { ...a, [k]: e.target.value } : a)));
  const cbd = t.attributes && t.attributes.ContentBasedDeduplication === 'true';

  const submit = async (ev) => {
    ev.preventDefault();
    setBusy(true);
    setErr('');
    setResult(null);
    try {
      const p = { TopicArn: t.arn, Message: f.message };
      if (f.subject) p.Subject = f.subject;
      if (t.fifo) {
        if (f.group) p.MessageGroupId = f.group;
        if (f.dedup) p.MessageDeduplicationId = f.dedup;
      }
      attrs.filter((a) => a.name.trim() || a.value).forEach((a, i) => {
        const e = `MessageAttributes.entry.${i + 1}`;
        p[`${e}.Name`] = a.name.trim();
        p[`${e}.Value.DataType`] = 'String';
        p[`${e}.Value.StringValue`] = a.value;
      });
      const { pick } = await sns('Publish', p);
      const id = pick('MessageId');
      setResult({ id, sequence: pick('SequenceNumber') });
      notify(`Published ${id} to ${t.name}`);
      // A reused deduplication ID would silently drop the next publish.
      if (f.dedup) setF({ ...f, dedup: '' });
      if (!live) onPublished();
    } catch (e) {
      setErr(e.message || String(e));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="form publish" onSubmit=${submit} data-testid="publish-form" aria-label=${`Publish to ${t.name}`}>
    <label>Message <textarea required rows="3" name="message" value=${f.message} onInput=${set('message')}></textarea></label>
    <label>Subject (optional) <input name="subject" value=${f.subject} onInput=${set('subject')} /></label>
    ${t.fifo ? html`<div class="grid3">
      <label>Message group ID <input required name="group" value=${f.group} onInput=${set('group')} /></label>
      <label>Deduplication ID${cbd ? ' (optional: content-based)' : ''} <input name="dedup" value=${f.dedup} onInput=${set('dedup')} /></label>
    </div>` : null}
    <fieldset class="attrs-rows"><legend>Message attributes (String)</legend>
      ${attrs.map((a, i) => html`<div class="row wrap attr-row" key=${i}>
        <label><span class="sr-only">Attribute ${i + 1} </span>name <input value=${a.name} onInput=${setAttr(i, 'name')} /></label>
        <label><span class="sr-only">Attribute ${i + 1} </span>value <input value=${a.value} onInput=${setAttr(i, 'value')} /></label>
        <button type="button" class="ghost" aria-label=${`Remove attribute ${i + 1}`}
          onClick=${() => setAttrs(attrs.length > 1 ? attrs.filter((_, j) => j !== i) : [{ name: '', value: '' }])}>Remove</button>
      </div>`)}
      <div><button type="button" onClick=${() => setAttrs([...attrs, { name: '', value: '' }])}>Add attribute</button></div>
    </fieldset>
    <div class="row wrap">
      <button type="submit" class="primary" disabled=${busy} data-testid="publish-submit">Publish</button>
      <div role="status" class="small" data-testid="publish-result">${result ? html`Published: message ID${' '}<span class="mono" data-testid="published-id">${result.id}</span>${result.sequence ? html`, sequence number <span class="mono">${result.sequence}</span>` : null}` : null}</div>
    </div>
    ${err ? html`<p class="notice error" role="alert" data-testid="publish-error">${err}</p>` : null}
  </form>`;
}
