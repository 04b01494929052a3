// Dead-letter queues: the messages with their source queue and receive
// count; restore or delete one, or redrive all with a message move task
// (StartMessageMoveTask) and follow its progress (ListMessageMoveTasks).

import { html, usePoll, fmtTime, queueHref } from '../util.js';
import { sqs, listQueues } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, notify } from './parts.js';
import { MessagesTable, peek } from './queue.js';

function MoveTasks({ tasks, onCancel }) {
  if (!tasks || tasks.length === 0) return null;
  return html`<ul class="tasks" aria-label="Message move tasks">
    ${tasks.map((t) => {
      const total = t.ApproximateNumberOfMessagesToMove;
      const moved = t.ApproximateNumberOfMessagesMoved || 0;
      return html`<li key=${t.TaskHandle || t.StartedTimestamp} data-testid="move-task" data-status=${t.Status}>
        <strong>${t.Status}</strong> · ${moved}${total !== undefined ? ` of ${total}` : ''} moved
        ${total ? html` <progress max=${total} value=${moved} aria-label="Redrive progress">${moved}/${total}</progress>` : null}
        <span class="small muted"> · started ${fmtTime(t.StartedTimestamp)}${t.DestinationArn ? ` → ${t.DestinationArn.split(':').pop()}` : ' → source queues'}
          ${t.MaxNumberOfMessagesPerSecond ? ` · ${t.MaxNumberOfMessagesPerSecond}/s` : ''}</span>
        ${t.FailureReason ? html`<div class="notice error">${t.FailureReason}</div>` : null}
        ${t.Status === 'RUNNING' && t.TaskHandle ? html` <${ActionButton} onClick=${() => onCancel(t.TaskHandle)}>Cancel</${ActionButton}>` : null}
      </li>`;
    })}
  </ul>`;
}

function DeadLetterQueue({ q }) {
  const peeked = usePoll(() => peek(q, 'all', 500), [q.arn]);
  const tasks = usePoll(() => sqs('ListMessageMoveTasks', { SourceArn: q.arn, MaxResults: 5 }), [q.arn]);
  const messages = peeked.data ? peeked.data.messages : [];
  const running = tasks.data && (tasks.data.Results || []).some((t) => t.Status === 'RUNNING');
  const reload = () => { peeked.reload(); tasks.reload(); };
  return html`<section class="dlq" aria-labelledby=${`dlq-${q.name}`} data-testid=${`dlq-${q.name}`}>
    <div class="row between wrap">
      <h2 id=${`dlq-${q.name}`}><a href=${queueHref(q)}>${q.name}</a>
        <span class="small muted"> ${q.counts.available + q.counts.in_flight + q.counts.delayed} messages · dead-letter queue of
        ${q.dead_letter_sources.map((s, i) => html`${i ? ', ' : ' '}<a href=${queueHref(s)}>${s.name}</a>`)}</span></h2>
      <${ConfirmButton} kind="primary" testid=${`redrive-${q.name}`} title=${`Redrive ${q.name}?`} confirmLabel="Start redrive"
        text=${`Every message in ${q.name} is moved back to the queue it came from by a message move task. Consumers of those queues will receive them again.`}
        onConfirm=${async () => {
          await sqs('StartMessageMoveTask', { SourceArn: q.arn });
          notify(`Redrive of ${q.name} started`);
          reload();
        }}>${running ? 'Redrive running…' : 'Redrive all'}</${ConfirmButton}>
    </div>
    <${MoveTasks} tasks=${tasks.data && tasks.data.Results} onCancel=${async (handle) => {
      await sqs('CancelMessageMoveTask', { TaskHandle: handle });
      reload();
    }} />
    <${LoadError} error=${tasks.error} what="move tasks" />
    <${LoadError} error=${peeked.error} what="Peeking" />
    ${peeked.data && messages.length === 0 ? html`<p class="muted">Empty.</p>` : null}
    ${messages.length ? html`<${MessagesTable} q=${q} messages=${messages} onChanged=${reload} />` : null}
  </section>`;
}

export function DeadLettersView() {
  const { data, error } = usePoll(listQueues);
  const dlqs = data ? data.queues.filter((q) => q.dead_letter_sources.length > 0) : [];
  return html`<section>
    <h1 tabindex="-1">Dead letters</h1>
    <p class="small muted">Messages that passed their queue's maxReceiveCount. Restore one to its source
      (receive count back to 0), delete it, or redrive the whole queue.</p>
    <${LoadError} error=${error} what="the queues" />
    ${data && dlqs.length === 0 ? html`<p class="notice muted">No queue is a dead-letter queue yet: set a RedrivePolicy when creating a queue.</p>` : null}
    ${dlqs.map((q) => html`<${DeadLetterQueue} key=${q.arn} q=${q} />`)}
  </section>`;
}
