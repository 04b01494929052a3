// The queues screen: every queue of every region and account, counts per
// state, the oldest message's age (red past a threshold), dead-letter
// wiring, live rates; create, purge, delete.

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
