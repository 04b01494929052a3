// The queues screen: every queue of every region and account, counts per
// state, the oldest message's age (red past a threshold), dead-letter
// wiring, live rates; create, purge, delete.
//
// And the topics screen (TopicsView, below): SNS topics, their
// subscriptions and filter policies, a publish form, the last fan-out
// steps. It lives here because the binary embeds a fixed list of files
// (src/console.rs); it can move to views/topics.js once that list names it.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html, usePoll, POLL_MS, fmtDuration, fmtTime, queueHref, topicHref, messageHref, parseArn, errorText } from '../util.js';
import { admin, adminToken, sqs, sns, listQueues } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, Sparkline, notify } from './parts.js';

const SAMPLES = 60;
const qkey = (q) => `${q.region}/${q.account}/${q.name}`;

// Rates are sampled while this screen is shown: from the live event stream
// when the server serves one, else by polling the event log (an older
// server, or an admin token, which EventSource cannot send); with neither,
// the counts themselves are charted.
const rates = { eventsOk: null, since: null, lastAt: null, history: new Map() };
const live = { source: null, open: false, failed: false, counts: new Map() };

function followEvents() {
  if (live.source || live.failed || typeof EventSource === 'undefined' || adminToken()) return;
  const source = new EventSource('/_retsu/events/stream?kind=sent,received,deleted');
  live.source = source;
  const count = (message) => {
    const e = JSON.parse(message.data);
    const k = qkey(e.queue);
    const c = live.counts.get(k) || { sent: 0, received: 0, deleted: 0 };
    c[e.kind]++;
    live.counts.set(k, c);
  };
  for (const kind of ['sent', 'received', 'deleted']) source.addEventListener(kind, count);
  source.onopen = () => {
    live.open = true;
  };
  const stop = () => {
    source.close();
    live.source = null;
    live.open = false;
  };
  // Cut off for falling behind (a hidden tab): counts restart on the next sample.
  source.addEventListener('missed', stop);
  source.onerror = () => {
    // Never opened: this server has no stream; poll the log instead.
    if (!live.open) live.failed = true;
    stop();
  };
}

async function drainEvents(since) {
  const counts = new Map();
  let cursor = since;
  for (let page = 0; page < 20; page++) {
    const q = `events?kind=sent,received,deleted&limit=1000${cursor === null ? '' : `&since=${cursor}`}`;
    const { events, next } = await admin(q);
    for (const e of events) {
      const k = qkey(e.queue);
      const c = counts.get(k) || { sent: 0, received: 0, deleted: 0 };
      if (e.kind in c) c[e.kind]++;
      counts.set(k, c);
    }
    cursor = next;
    if (events.length < 1000) break;
  }
  return { counts, cursor };
}

async function sampleRates(queues) {
  const now = Date.now();
  let counts = null;
  followEvents();
  if (live.open) {
    counts = live.counts;
    live.counts = new Map();
    rates.eventsOk = true;
    rates.live = true;
  } else if (rates.eventsOk !== false) {
    rates.live = false;
    try {
      // The first read, or one after this screen was away, only finds
      // where "now" is in the log.
      const first = rates.since === null || !rates.lastAt || now - rates.lastAt > 5000;
      const r = await drainEvents(rates.since);
      rates.since = r.cursor;
      rates.eventsOk = true;
      counts = first ? new Map() : r.counts;
    } catch (e) {
      if (e.unavailable) rates.eventsOk = false;
    }
  }
  const dt = rates.lastAt ? Math.max(0.2, (now - rates.lastAt) / 1000) : 1;
  rates.lastAt = now;
  for (const q of queues) {
    const k = qkey(q);
    let h = rates.history.get(k);
    if (!h) {
      h = { t: [], a: [], b: [], c: [] };
      rates.history.set(k, h);
    }
    h.t.push(now / 1000);
    if (counts) {
      const c = counts.get(k) || { sent: 0, received: 0, deleted: 0 };
      h.a.push(c.sent / dt); h.b.push(c.received / dt); h.c.push(c.deleted / dt);
    } else {
      h.a.push(q.counts.available); h.b.push(q.counts.in_flight); h.c.push(q.counts.delayed);
    }
    for (const arr of [h.t, h.a, h.b, h.c]) if (arr.length > SAMPLES) arr.shift();
  }
}

function Rates({ q }) {
  const h = rates.history.get(qkey(q));
  if (!h || h.t.length < 2) return html`<span class="muted">…</span>`;
  const last = (arr) => arr[arr.length - 1];
  const byEvents = rates.eventsOk;
  const names = byEvents ? ['sent/s', 'received/s', 'deleted/s'] : ['available', 'in flight', 'delayed'];
  const values = [h.a, h.b, h.c];
  const summary = names.map((n, i) => `${n} ${last(values[i]).toFixed(byEvents ? 1 : 0)}`).join(', ');
  return html`<div class="rates">
    <${Sparkline} times=${h.t} series=${names.map((n, i) => ({ label: n, values: values[i] }))}
      label=${`${q.name}: ${summary}`} />
    <div class="legend small">${names.map((n, i) => html`<span class=${`k${i}`}>${n} ${last(values[i]).toFixed(byEvents ? 1 : 0)}</span>`)}</div>
  </div>`;
}

function threshold() {
  return Number(localStorage.getItem('retsu.oldestAlarm') || 300);
}

export function QueuesView() {
  const [alarm, setAlarm] = useState(threshold());
  const { data, error, reload } = usePoll(async () => {
    const r = await listQueues();
    await sampleRates(r.queues);
    return r;
  });
  const queues = data ? data.queues : [];
  return html`<section>
    <div class="row between wrap">
      <h1 tabindex="-1">Queues</h1>
      <${CreateQueue} queues=${queues} onCreated=${reload} />
    </div>
    <div class="row wrap small">
      <label>Oldest-message alarm at
        <input type="number" min="1" class="narrow" value=${alarm} onInput=${(e) => {
          const v = Number(e.target.value) || 300;
          localStorage.setItem('retsu.oldestAlarm', v);
          setAlarm(v);
        }} /> seconds</label>
      ${rates.eventsOk === false ? html`<span class="muted">Charts show counts: this server has no event log for rates.</span>` : null}
      ${rates.eventsOk ? html`<span class="muted" data-testid="rates-source">Rates ${rates.live ? 'live from the event stream' : 'from the event log, polled'}.</span>` : null}
      ${data && data.fallback ? html`<span class="muted">Admin API not served: listing through the SQS API (default region).</span>` : null}
    </div>
    <${LoadError} error=${error} what="the queues" />
    ${data && queues.length === 0 ? html`<p class="notice muted">No queues yet. Create one, or point an SDK at this endpoint.</p>` : null}
    ${queues.length > 0 ? html`<div class="table-wrap"><table class="queues" data-testid="queues-table">
      <caption class="sr-only">Queues with their message counts</caption>
      <thead><tr>
        <th scope="col">Queue</th><th scope="col" class="num">Available</th><th scope="col" class="num">In flight</th>
        <th scope="col" class="num">Delayed</th><th scope="col" class="num">Oldest</th>
        <th scope="col">Dead-letter</th><th scope="col">Activity</th><th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>${queues.map((q) => html`<${QueueRow} key=${qkey(q)} q=${q} alarm=${alarm} onChanged=${reload} />`)}</tbody>
    </table></div>` : null}
  </section>`;
}

function QueueRow({ q, alarm, onChanged }) {
  const old = q.oldest_age_seconds;
  const hot = old !== null && old !== undefined && old >= alarm;
  return html`<tr data-testid=${`queue-row-${q.name}`}>
    <th scope="row">
      <a href=${queueHref(q)}>${q.name}</a>
      ${q.fifo ? html` <span class="badge">FIFO</span>` : null}
      <div class="small muted">${q.region} · ${q.account}</div>
    </th>
    <td class="num" data-testid="count-available">${q.counts.available}</td>
    <td class="num" data-testid="count-inflight">${q.counts.in_flight}</td>
    <td class="num" data-testid="count-delayed">${q.counts.delayed}</td>
    <td class=${`num ${hot ? 'alarm' : ''}`} title=${hot ? `Older than ${alarm} s` : ''} data-testid="oldest">
      ${old === null || old === undefined ? '—' : fmtDuration(old * 1000)}${hot ? html`<span class="sr-only"> (past the alarm)</span>` : null}
    </td>
    <td class="small">
      ${q.dead_letter_queue ? html`<div>→ <a href=${queueHref(q.dead_letter_queue)}>${q.dead_letter_queue.name}</a>${' '}
        <span class="muted">after ${q.dead_letter_queue.max_receive_count} receives</span></div>` : null}
      ${q.dead_letter_sources.length ? html`<div>DLQ of ${q.dead_letter_sources.map((s, i) => html`${i ? ', ' : ''}<a href=${queueHref(s)}>${s.name}</a>`)}</div>` : null}
      ${!q.dead_letter_queue && !q.dead_letter_sources.length ? html`<span class="muted">—</span>` : null}
    </td>
    <td><${Rates} q=${q} /></td>
    <td class="actions">
      <${ConfirmButton} testid=${`purge-${q.name}`} title=${`Purge ${q.name}?`} confirmLabel="Purge"
        text=${`Every message in ${q.name} (${q.counts.available + q.counts.in_flight + q.counts.delayed} now) is deleted. Clients see an empty queue.`}
        onConfirm=${async () => { await sqs('PurgeQueue', { QueueUrl: q.url }); notify(`Purged ${q.name}`); onChanged(); }}>Purge</${ConfirmButton}>
      <${ConfirmButton} testid=${`delete-${q.name}`} title=${`Delete ${q.name}?`} confirmLabel="Delete queue"
        text=${`The queue ${q.name} and its messages are deleted. Clients using its URL get QueueDoesNotExist.`}
        onConfirm=${async () => { await sqs('DeleteQueue', { QueueUrl: q.url }); notify(`Deleted ${q.name}`); onChanged(); }}>Delete</${ConfirmButton}>
    </td>
  </tr>`;
}

/** Creates a queue through the SQS API, optionally with a new or existing dead-letter queue. */
function CreateQueue({ queues, onCreated }) {
  const dialog = useRef(null);
  const [f, setF] = useState({ name: '', fifo: false, vt: '30', delay: '0', retention: '345600', cbd: false, dlq: 'none', mrc: '3' });
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const base = f.name.replace(/\.fifo$/, '');
  const name = f.fifo ? `${base}.fifo` : base;
  const newDlqName = f.fifo ? `${base}-dlq.fifo` : `${base}-dlq`;
  const candidates = queues.filter((q) => q.fifo === f.fifo);

  const submit = async (ev) => {
    ev.preventDefault();
    setErr('');
    setBusy(true);
    try {
      const attrs = { VisibilityTimeout: f.vt, DelaySeconds: f.delay, MessageRetentionPeriod: f.retention };
      if (f.fifo) {
        attrs.FifoQueue = 'true';
        if (f.cbd) attrs.ContentBasedDeduplication = 'true';
      }
      let dlqArn = null;
      if (f.dlq === 'new') {
        const { QueueUrl } = await sqs('CreateQueue', { QueueName: newDlqName, Attributes: f.fifo ? { FifoQueue: 'true' } : {} });
        const { Attributes } = await sqs('GetQueueAttributes', { QueueUrl, AttributeNames: ['QueueArn'] });
        dlqArn = Attributes.QueueArn;
      } else if (f.dlq !== 'none') {
        dlqArn = f.dlq;
      }
      if (dlqArn) attrs.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: Number(f.mrc) });
      await sqs('CreateQueue', { QueueName: name, Attributes: attrs });
      notify(`Created ${name}${f.dlq === 'new' ? ` and ${newDlqName}` : ''}`);
      dialog.current.close();
      setF({ ...f, name: '' });
      onCreated();
    } catch (e) {
      setErr(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return html`<div>
    <button type="button" class="primary" onClick=${() => dialog.current.showModal()} data-testid="create-queue">Create queue</button>
    <dialog ref=${dialog} aria-labelledby="cq-title">
      <form onSubmit=${submit} class="form">
        <h2 id="cq-title">Create a queue</h2>
        <p class="small muted">Created through the SQS API (CreateQueue), in the server's default region.</p>
        <label>Name <input required name="name" value=${f.name} onInput=${set('name')} pattern="[A-Za-z0-9_\\-]{1,75}(\\.fifo)?" autofocus /></label>
        <fieldset><legend>Type</legend>
          <label class="inline"><input type="radio" name="type" checked=${!f.fifo} onChange=${() => setF({ ...f, fifo: false, dlq: 'none' })} /> Standard</label>
          <label class="inline"><input type="radio" name="type" checked=${f.fifo} onChange=${() => setF({ ...f, fifo: true, dlq: 'none' })} /> FIFO</label>
        </fieldset>
        ${f.fifo ? html`<label class="inline"><input type="checkbox" checked=${f.cbd} onChange=${set('cbd')} /> Content-based deduplication</label>` : null}
        <div class="grid3">
          <label>Visibility timeout (s) <input type="number" min="0" max="43200" value=${f.vt} onInput=${set('vt')} /></label>
          <label>Delay (s) <input type="number" min="0" max="900" value=${f.delay} onInput=${set('delay')} /></label>
          <label>Retention (s) <input type="number" min="60" max="1209600" value=${f.retention} onInput=${set('retention')} /></label>
        </div>
        <fieldset><legend>Dead-letter queue</legend>
          <label>Send messages that fail to
            <select value=${f.dlq} onChange=${set('dlq')} name="dlq">
              <option value="none">no dead-letter queue</option>
              <option value="new">a new queue ${base ? newDlqName : '<name>-dlq'}</option>
              ${candidates.map((q) => html`<option value=${q.arn}>${q.name} (${q.region})</option>`)}
            </select></label>
          ${f.dlq !== 'none' ? html`<label>after this many receives (maxReceiveCount)
            <input type="number" min="1" max="1000" value=${f.mrc} onInput=${set('mrc')} name="maxReceiveCount" /></label>` : null}
        </fieldset>
        ${err ? html`<p class="notice error" role="alert">${err}</p>` : null}
        <div class="row end">
          <button type="button" onClick=${() => dialog.current.close()}>Cancel</button>
          <button type="submit" class="primary" disabled=${busy} data-testid="create-queue-submit">Create</button>
        </div>
      </form>
    </dialog>
  </div>`;
}


export { ActionButton };

// ---- topics ----

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
        <td class="small" data-label="Subscription"><${Endpoint} protocol=${s.endpoint && s.endpoint.startsWith('arn:aws:sqs:') ? 'sqs' : ''} endpoint=${s.endpoint} /></td>
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
