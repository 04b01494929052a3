// One queue: its messages by state (peeked — never received), FIFO groups
// with their lock, attributes and tags (editable), and a send form.

import { useState } from 'preact/hooks';
import { html, usePoll, fmtDuration, fmtTime, serverNow, queueHref, messageHref, parseArn, errorText } from '../util.js';
import { admin, sqs, listQueues, queuePath } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, StateBadge, notify } from './parts.js';

/** The queue from the admin API, or from the SQS API when the admin API is not served. */
export async function loadQueue(ref) {
  try {
    return await admin(`queues/${queuePath(ref)}`);
  } catch (e) {
    if (!e.unavailable) throw e;
  }
  const { queues } = await listQueues();
  const q = queues.find((x) => x.region === ref.region && x.account === ref.account && x.name === ref.name);
  if (!q) throw Object.assign(new Error(`No queue ${ref.name}`), { code: 'NotFound', status: 404 });
  const { Tags = {} } = await sqs('ListQueueTags', { QueueUrl: q.url });
  return { ...q, tags: Tags };
}

export async function peek(ref, state = 'all', limit = 200) {
  return admin(`queues/${queuePath(ref)}/messages?state=${state}&limit=${limit}`);
}

// Sequence numbers are decimal strings longer than a double holds.
const bySequence = (a, b) => {
  const x = a.sequence_number || '', y = b.sequence_number || '';
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
};

export function timeLeft(m) {
  if (m.visible_at_ms === null || m.visible_at_ms === undefined) return null;
  return m.visible_at_ms - serverNow();
}

/** Deletes (admin, no receipt handle) or restores a peeked message. */
export function MessageActions({ q, m, onChanged }) {
  return html`<span class="row nowrap">
    ${m.dead_letter_source_arn ? html`<${ActionButton} testid=${`restore-${m.message_id}`}
      label=${`Restore message ${m.message_id} to ${parseArn(m.dead_letter_source_arn).name}`}
      onClick=${async () => {
        const r = await admin(`queues/${queuePath(q)}/messages/${encodeURIComponent(m.message_id)}/restore`, { method: 'POST', body: {} });
        notify(`Restored to ${r.queue.name}`);
        onChanged();
      }}>Restore</${ActionButton}>` : null}
    <${ConfirmButton} testid=${`delete-msg-${m.message_id}`} title="Delete this message?" confirmLabel="Delete message"
      text=${`Message ${m.message_id} is removed from ${q.name} in whatever state it is; a consumer holding it gets an invalid receipt handle.`}
      onConfirm=${async () => {
        await admin(`queues/${queuePath(q)}/messages/${encodeURIComponent(m.message_id)}`, { method: 'DELETE' });
        notify('Message deleted');
        onChanged();
      }}>Delete</${ConfirmButton}>
  </span>`;
}

function MessageRow({ q, m, blocked, onChanged }) {
  const left = timeLeft(m);
  const attrs = Object.keys(m.message_attributes || {});
  return html`<tr data-testid="message-row" data-message-id=${m.message_id} data-state=${m.state}>
    <td><${StateBadge} state=${m.state} />${blocked ? html` <span class="badge st-blocked" title="Behind an in-flight message of its group">waiting</span>` : null}</td>
    <td><a href=${messageHref(m.message_id)} class="mono" title="History of this message">${m.message_id.slice(0, 8)}…</a></td>
    <td class="body"><code>${m.body.length > 120 ? `${m.body.slice(0, 120)}…` : m.body}</code>
      ${attrs.length ? html`<div class="small muted">attributes: ${attrs.join(', ')}</div>` : null}</td>
    <td class="num" data-testid="receive-count">${m.receive_count}</td>
    <td class="num">${m.state === 'available' ? '—' : html`${fmtDuration(left)}<span class="sr-only"> left</span>`}</td>
    <td class="small">${fmtTime(m.sent_ms)}</td>
    ${q.fifo ? html`<td class="small mono">${m.group_id}</td>` : null}
    ${q.dead_letter_sources && q.dead_letter_sources.length ? html`<td class="small">${m.dead_letter_source_arn ? html`<a href=${queueHref(parseArn(m.dead_letter_source_arn))}>${parseArn(m.dead_letter_source_arn).name}</a>` : '—'}</td>` : null}
    <td class="actions"><${MessageActions} q=${q} m=${m} onChanged=${onChanged} /></td>
  </tr>`;
}

export function MessagesTable({ q, messages, blockedIds = new Set(), onChanged }) {
  const isDlq = q.dead_letter_sources && q.dead_letter_sources.length > 0;
  return html`<div class="table-wrap"><table class="messages">
    <thead><tr><th scope="col">State</th><th scope="col">Message</th><th scope="col">Body</th>
      <th scope="col" class="num">Receives</th><th scope="col" class="num">Time left</th><th scope="col">Sent</th>
      ${q.fifo ? html`<th scope="col">Group</th>` : null}${isDlq ? html`<th scope="col">Source</th>` : null}
      <th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
    <tbody>${messages.map((m) => html`<${MessageRow} key=${m.message_id} q=${q} m=${m} blocked=${blockedIds.has(m.message_id)} onChanged=${onChanged} />`)}</tbody>
  </table></div>`;
}

/** FIFO: messages per group in sequence order; an in-flight message locks itself and those after it. */
function Groups({ q, messages, onChanged }) {
  const groups = new Map();
  for (const m of messages) {
    if (!groups.has(m.group_id)) groups.set(m.group_id, []);
    groups.get(m.group_id).push(m);
  }
  // Groups in the order their heads were sent.
  const ordered = [...groups.entries()].map(([g, ms]) => [g, ms.sort(bySequence)]);
  ordered.sort(([, a], [, b]) => bySequence(a[0], b[0]));
  return html`${ordered.map(([g, ms]) => {
    const firstLock = ms.findIndex((m) => m.state === 'inflight');
    const blocked = new Set(firstLock < 0 ? [] : ms.slice(firstLock + 1).map((m) => m.message_id));
    const lock = firstLock < 0 ? null : ms[firstLock];
    return html`<section class="group" key=${g} data-testid="fifo-group">
      <h3><span class="mono">${g}</span> <span class="small muted">${ms.length} message${ms.length === 1 ? '' : 's'}</span>
        ${lock ? html` <span class="badge st-inflight">locked by ${lock.message_id.slice(0, 8)}… for ${fmtDuration(timeLeft(lock))}</span>`
          : html` <span class="badge">unlocked</span>`}</h3>
      <${MessagesTable} q=${q} messages=${ms} blockedIds=${blocked} onChanged=${onChanged} />
    </section>`;
  })}`;
}

function Messages({ q }) {
  const [state, setState] = useState('all');
  const [byGroup, setByGroup] = useState(true);
  const { data, error, reload } = usePoll(() => peek(q, state), [state, q.name]);
  const messages = data ? data.messages : [];
  return html`<section aria-labelledby="msgs-h">
    <div class="row between wrap">
      <h2 id="msgs-h">Messages <span class="small muted">peeked: looking never receives</span></h2>
      <div class="row wrap">
        <label>State <select value=${state} onChange=${(e) => setState(e.target.value)} data-testid="state-filter">
          <option value="all">all</option><option value="available">available</option>
          <option value="inflight">in flight</option><option value="delayed">delayed</option>
        </select></label>
        ${q.fifo ? html`<label class="inline"><input type="checkbox" checked=${byGroup} onChange=${(e) => setByGroup(e.target.checked)} /> by group</label>` : null}
      </div>
    </div>
    <${LoadError} error=${error} what="Peeking" />
    ${data && messages.length === 0 ? html`<p class="muted">No ${state === 'all' ? '' : `${state} `}messages.</p>` : null}
    ${messages.length > 0 && q.fifo && byGroup ? html`<${Groups} q=${q} messages=${messages} onChanged=${reload} />` : null}
    ${messages.length > 0 && !(q.fifo && byGroup) ? html`<${MessagesTable} q=${q} messages=${messages} onChanged=${reload} />` : null}
    ${data && data.truncated ? html`<p class="small muted">Showing the first ${messages.length}.</p>` : null}
  </section>`;
}

function SendMessage({ q, onSent }) {
  const [f, setF] = useState({ body: '', group: '', dedup: '', delay: '', attrs: [] });
  const [busy, setBusy] = useState(false);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const setAttr = (i, k) => (e) => setF({ ...f, attrs: f.attrs.map((a, j) => (j === i ? { ...a, [k]: e.target.value } : a)) });
  const submit = async (ev) => {
    ev.preventDefault();
    setBusy(true);
    try {
      const params = { QueueUrl: q.url, MessageBody: f.body };
      if (q.fifo) {
        params.MessageGroupId = f.group;
        if (f.dedup) params.MessageDeduplicationId = f.dedup;
      } else if (f.delay !== '') {
        params.DelaySeconds = Number(f.delay);
      }
      const named = f.attrs.filter((a) => a.name);
      if (named.length) {
        params.MessageAttributes = Object.fromEntries(named.map((a) => [a.name, { DataType: a.type, StringValue: a.value }]));
      }
      const r = await sqs('SendMessage', params);
      notify(`Sent ${r.MessageId}`);
      setF({ ...f, body: '', dedup: '' });
      onSent();
    } catch (e) {
      notify(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="send-h">
    <h2 id="send-h">Send a message</h2>
    <form class="form" onSubmit=${submit} data-testid="send-form">
      <label>Body <textarea required rows="3" value=${f.body} onInput=${set('body')} name="body"></textarea></label>
      <div class="grid3">
        ${q.fifo ? html`
          <label>Message group id <input required value=${f.group} onInput=${set('group')} name="group" /></label>
          <label>Deduplication id <input value=${f.dedup} onInput=${set('dedup')} name="dedup"
            placeholder=${q.attributes.ContentBasedDeduplication === 'true' ? 'from the body' : 'required'} /></label>`
        : html`<label>Delay (s) <input type="number" min="0" max="900" value=${f.delay} onInput=${set('delay')} name="delay"
            placeholder=${q.attributes.DelaySeconds || '0'} /></label>`}
      </div>
      ${f.attrs.map((a, i) => html`<div class="grid3" key=${i}>
        <label>Attribute name <input value=${a.name} onInput=${setAttr(i, 'name')} /></label>
        <label>Type <select value=${a.type} onChange=${setAttr(i, 'type')}><option>String</option><option>Number</option></select></label>
        <label>Value <input value=${a.value} onInput=${setAttr(i, 'value')} /></label>
      </div>`)}
      <div class="row">
        <button type="button" onClick=${() => setF({ ...f, attrs: [...f.attrs, { name: '', type: 'String', value: '' }] })}>Add attribute</button>
        <button type="submit" class="primary" disabled=${busy} data-testid="send-submit">Send</button>
      </div>
    </form>
  </section>`;
}

const SETTABLE = ['VisibilityTimeout', 'DelaySeconds', 'MaximumMessageSize', 'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds', 'RedrivePolicy', 'RedriveAllowPolicy', 'Policy', 'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds', 'SqsManagedSseEnabled', 'ContentBasedDeduplication', 'DeduplicationScope',
  'FifoThroughputLimit'];

function Attributes({ q, onSaved }) {
  const [edits, setEdits] = useState({});
  const names = [...new Set([...Object.keys(q.attributes), ...SETTABLE.filter((n) => q.fifo || !['ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit'].includes(n))])].sort();
  const save = async () => {
    if (!Object.keys(edits).length) return;
    await sqs('SetQueueAttributes', { QueueUrl: q.url, Attributes: edits });
    notify(`Saved ${Object.keys(edits).join(', ')}`);
    setEdits({});
    onSaved();
  };
  return html`<section aria-labelledby="attrs-h">
    <h2 id="attrs-h">Attributes</h2>
    <div class="table-wrap"><table class="attrs"><tbody>
      ${names.map((n) => {
        const value = n in edits ? edits[n] : (q.attributes[n] ?? '');
        return html`<tr key=${n}><th scope="row"><label for=${`attr-${n}`}>${n}</label></th><td>${SETTABLE.includes(n)
          ? html`<input id=${`attr-${n}`} value=${value} class=${n in edits ? 'edited' : ''}
              onInput=${(e) => setEdits({ ...edits, [n]: e.target.value })} />`
          : html`<output id=${`attr-${n}`} class="mono">${value}</output>`}</td></tr>`;
      })}
    </tbody></table></div>
    <div class="row">
      <${ActionButton} kind="primary" onClick=${save} disabled=${!Object.keys(edits).length} testid="save-attrs">Save attributes</${ActionButton}>
      <button type="button" onClick=${() => setEdits({})} disabled=${!Object.keys(edits).length}>Discard changes</button>
    </div>
  </section>`;
}

function Tags({ q, onSaved }) {
  const [k, setK] = useState('');
  const [v, setV] = useState('');
  const tags = Object.entries(q.tags || {}).sort();
  return html`<section aria-labelledby="tags-h">
    <h2 id="tags-h">Tags</h2>
    ${tags.length === 0 ? html`<p class="muted">No tags.</p>` : html`<ul class="tags">${tags.map(([tk, tv]) => html`<li key=${tk}>
      <span class="mono">${tk}</span> = <span class="mono">${tv}</span>
      <${ActionButton} kind="ghost" label=${`Remove tag ${tk}`} onClick=${async () => {
        await sqs('UntagQueue', { QueueUrl: q.url, TagKeys: [tk] });
        onSaved();
      }}>✕</${ActionButton}></li>`)}</ul>`}
    <form class="row wrap" onSubmit=${async (e) => {
      e.preventDefault();
      try {
        await sqs('TagQueue', { QueueUrl: q.url, Tags: { [k]: v } });
        setK(''); setV('');
        onSaved();
      } catch (err) {
        notify(errorText(err), 'error');
      }
    }}>
      <label>Key <input required value=${k} onInput=${(e) => setK(e.target.value)} /></label>
      <label>Value <input value=${v} onInput=${(e) => setV(e.target.value)} /></label>
      <button type="submit">Add tag</button>
    </form>
  </section>`;
}

export function QueueView({ ref_ }) {
  const { data: q, error, reload } = usePoll(() => loadQueue(ref_), [ref_.name]);
  return html`<section>
    <p class="crumbs small"><a href="#/queues">Queues</a> / ${ref_.region} / ${ref_.account}</p>
    <h1 tabindex="-1">${ref_.name}</h1>
    <${LoadError} error=${error} what="this queue" />
    ${q ? html`
      <dl class="summary">
        <div><dt>Available</dt><dd data-testid="q-available">${q.counts.available}</dd></div>
        <div><dt>In flight</dt><dd data-testid="q-inflight">${q.counts.in_flight}</dd></div>
        <div><dt>Delayed</dt><dd data-testid="q-delayed">${q.counts.delayed}</dd></div>
        <div><dt>Oldest</dt><dd>${q.oldest_age_seconds === null || q.oldest_age_seconds === undefined ? '—' : fmtDuration(q.oldest_age_seconds * 1000)}</dd></div>
        <div><dt>Type</dt><dd>${q.fifo ? 'FIFO' : 'Standard'}</dd></div>
        <div><dt>Dead-letter queue</dt><dd>${q.dead_letter_queue ? html`<a href=${queueHref(q.dead_letter_queue)}>${q.dead_letter_queue.name}</a> after ${q.dead_letter_queue.max_receive_count}` : '—'}</dd></div>
      </dl>
      <p class="small mono wrap-any">${q.url}</p>
      <${Messages} q=${q} />
      <div class="cols">
        <${SendMessage} q=${q} onSent=${reload} />
        <${Tags} q=${q} onSaved=${reload} />
      </div>
      <${Attributes} q=${q} onSaved=${reload} />` : null}
  </section>`;
}
