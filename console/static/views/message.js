// One message's life: its history drawn as a path through SQS's state
// machine (Delayed → Available → In flight → Deleted / back to Available /
// Dead-letter / Expired), every event with its time, receipt handle and
// visibility deadline.

import { html, usePoll, fmtTime, fmtDuration, queueHref } from '../util.js';
import { admin, listQueues } from '../api.js';
import { LoadError, StateBadge } from './parts.js';
import { peek } from './queue.js';

// The states a message can be in, and where each event leaves it.
const STATES = [
  ['delayed', 'Delayed'], ['available', 'Available'], ['inflight', 'In flight'],
  ['deleted', 'Deleted'], ['deadletter', 'Dead-letter'], ['expired', 'Expired'], ['gone', 'Purged'],
];

/**
 * The state an event leaves the message in (null: unchanged), given the
 * state before it: a message arriving from its source after being
 * dead-lettered is a dead letter (available in the dead-letter queue).
 */
export function stateAfter(e, before = null) {
  if (e.kind === 'arrived_from_source' && before === 'deadletter') return 'deadletter';
  switch (e.kind) {
    case 'sent':
      return e.visible_at_ms !== null && e.visible_at_ms !== undefined && e.visible_at_ms > e.at_ms ? 'delayed' : 'available';
    case 'delay_ended': case 'released': case 'arrived_from_source': case 'restored_in':
      return 'available';
    case 'received':
      return 'inflight';
    case 'visibility_changed':
      return e.visible_at_ms !== null && e.visible_at_ms !== undefined && e.visible_at_ms <= e.at_ms ? 'available' : 'inflight';
    case 'deleted': case 'admin_deleted':
      return 'deleted';
    case 'dead_lettered':
      return 'deadletter';
    case 'expired':
      return 'expired';
    case 'purged': case 'queue_deleted':
      return 'gone';
    default:
      // stale_delete changed nothing; moved_by_task and restored_out are
      // followed by the arrival in the other queue, which says where it is.
      return null;
  }
}

const KIND_TEXT = {
  sent: 'sent', delay_ended: 'delay ended', received: 'received', visibility_changed: 'visibility changed',
  released: 'visibility timeout ran out: back to available', deleted: 'deleted by its consumer',
  stale_delete: 'delete with a stale receipt handle — removed nothing', expired: 'expired: retention period passed',
  purged: 'purged with its queue', dead_lettered: 'moved to the dead-letter queue (maxReceiveCount passed)',
  moved_by_task: 'moved by a message move task', arrived_from_source: 'arrived from its source queue',
  queue_deleted: 'its queue was deleted', admin_deleted: 'deleted from the console / admin API',
  restored_out: 'restored out of the dead-letter queue', restored_in: 'restored into this queue',
};

function StateMachine({ events, now }) {
  const visits = new Map();
  let current = null;
  for (const e of events) {
    const s = stateAfter(e, current);
    if (s && s !== current) {
      visits.set(s, (visits.get(s) || 0) + 1);
      current = s;
    }
  }
  // Where it is now, when still stored, is what a peek says.
  if (now) current = now.state;
  return html`<ol class="machine" aria-label="States this message has been in">
    ${STATES.map(([id, label]) => html`<li class=${`st st-${id} ${visits.has(id) ? 'visited' : ''} ${current === id ? 'current' : ''}`}>
      <span>${label}</span>${visits.has(id) ? html`<span class="small"> ×${visits.get(id)}</span>` : null}
      ${current === id ? html`<span class="sr-only"> (current)</span>` : null}
    </li>`)}
  </ol>`;
}

function Path({ events }) {
  let prev = null;
  return html`<ol class="path" data-testid="history">
    ${events.map((e) => {
      const next = stateAfter(e, prev);
      const from = prev;
      if (next) prev = next;
      const odd = e.kind === 'stale_delete' || e.kind === 'expired';
      return html`<li key=${e.seq} class=${`step k-${e.kind} ${odd ? 'odd' : ''}`} data-kind=${e.kind}>
        <div class="step-head">
          <span class="states">${from ? html`<span class=${`pill st-${from}`}>${label(from)}</span> → ` : ''}
            ${next ? html`<span class=${`pill st-${next}`}>${label(next)}</span>` : html`<span class="pill">unchanged</span>`}</span>
          <strong>${KIND_TEXT[e.kind] || e.kind}</strong>
        </div>
        <div class="small muted">
          ${fmtTime(e.at_ms)} · <a href=${queueHref(e.queue)}>${e.queue.name}</a> · receives ${e.receive_count}
          ${e.visible_at_ms !== null && e.visible_at_ms !== undefined ? html` · visible at ${fmtTime(e.visible_at_ms)} (${fmtDuration(e.visible_at_ms - e.at_ms)} later)` : null}
          ${e.receipt_handle ? html` · receipt <span class="mono" title=${e.receipt_handle}>…${e.receipt_handle.slice(-12)}</span>` : null}
          ${e.detail ? html` · ${e.detail}` : null}
        </div>
      </li>`;
    })}
  </ol>`;
}

function label(state) {
  return (STATES.find(([id]) => id === state) || [state, state])[1];
}

/** Without the history endpoint: where the message is now, by peeking every queue. */
async function findNow(id) {
  const { queues } = await listQueues();
  for (const q of queues) {
    const { messages } = await peek(q, 'all', 10000);
    const m = messages.find((x) => x.message_id === id);
    if (m) return { q, m };
  }
  return null;
}

/** The Lambda invocations whose event held this message: why it came back or was dead-lettered. */
function Invocations({ list, id }) {
  return html`<h2>Lambda invocations</h2>
    <ol class="small" data-testid="message-invocations">${list.map((r) => html`<li key=${r.request_id}>
      ${fmtTime(r.at_ms)}: <span class="mono">${r.function}</span>, batch of ${r.batch}, ${r.result}${
        r.failed_items.includes(id) ? ' (this message reported failed)' : ''}${r.error ? html`: ${r.error}` : ''}
    </li>`)}</ol>`;
}

export function MessageView({ id }) {
  const history = usePoll(() => admin(`messages/${encodeURIComponent(id)}`), [id]);
  const unavailable = history.error && history.error.unavailable;
  const now = usePoll(() => (unavailable ? findNow(id) : Promise.resolve(null)), [id, unavailable]);
  const h = history.data;
  return html`<section>
    <p class="crumbs small"><a href="#/queues">Queues</a> / message</p>
    <h1 tabindex="-1">Message <span class="mono">${id}</span></h1>
    ${h && h.current ? html`<p>Now: <${StateBadge} state=${h.current.state} /> · receives ${h.current.receive_count}</p>` : null}
    ${h && !h.current ? html`<p>Now: no longer in any queue.</p>` : null}
    ${h ? html`<${StateMachine} events=${h.events} now=${h.current} />
      <h2>History</h2>
      <${Path} events=${h.events} />
      ${h.truncated ? html`<p class="small muted">Older events were dropped from the log.</p>` : null}
      ${h.invocations && h.invocations.length ? html`<${Invocations} list=${h.invocations} id=${id} />` : null}
      ${h.current ? html`<h2>Body</h2><pre class="body">${h.current.body}</pre>` : null}` : null}
    ${unavailable ? html`<p class="notice muted" data-testid="unavailable">This server keeps no message history yet
      (/_retsu/messages is not served); showing where the message is now.</p>
      ${now.data ? html`<p>In <a href=${queueHref(now.data.q)}>${now.data.q.name}</a>: <${StateBadge} state=${now.data.m.state} />
        · receives ${now.data.m.receive_count}</p><pre class="body">${now.data.m.body}</pre>` : null}
      ${now.loaded && !now.data && !now.error ? html`<p class="muted">Not in any queue now.</p>` : null}
      <${LoadError} error=${now.error} what="the message" />` : html`<${LoadError} error=${history.error} what="this message's history" />`}
  </section>`;
}
