// Lambda: the event source mappings (GET /_retsu/lambda/mappings) and the
// recent invocations of mappings and SNS lambda subscriptions
// (GET /_retsu/lambda/invocations): what invoked the function, the batch,
// how long it took, the result, which items failed and why, and the
// messages each held (a link to each message's history).

import { html, usePoll, fmtTime, fmtDuration, messageHref } from '../util.js';
import { admin } from '../api.js';
import { LoadError } from './parts.js';

const lastPart = (arn) => (arn || '').split(':').pop();

function resultBadge(result) {
  const cls = result === 'ok' ? 'st-available' : result === 'partial' ? 'st-delayed' : 'st-deadletter';
  return html`<span class=${`badge ${cls}`}>${result}</span>`;
}

export function LambdaView() {
  const mappings = usePoll(() => admin('lambda/mappings'));
  const invocations = usePoll(() => admin('lambda/invocations'));
  const recent = invocations.data ? [...invocations.data.invocations].reverse() : [];
  return html`<section>
    <h1 tabindex="-1">Lambda</h1>
    <p class="small muted">Event source mappings poll their queue and invoke the function with batches; SNS
      lambda subscriptions invoke it with each notification, retried one and then two minutes after a failure.</p>
    <h2>Event source mappings</h2>
    <${LoadError} error=${mappings.error} what="the mappings" />
    ${mappings.data ? (mappings.data.mappings.length === 0
      ? html`<p class="muted">No event source mappings.</p>`
      : html`<table data-testid="lambda-mappings">
        <caption class="sr-only">Event source mappings</caption>
        <thead><tr><th scope="col">UUID</th><th scope="col">Function</th><th scope="col">Queue</th>
          <th scope="col">State</th><th scope="col">Batch</th><th scope="col">Last result</th></tr></thead>
        <tbody>${mappings.data.mappings.map((m) => html`<tr key=${m.UUID}>
          <th scope="row" class="mono small">${m.UUID}</th>
          <td>${lastPart(m.FunctionArn)}</td>
          <td>${lastPart(m.EventSourceArn)}</td>
          <td>${m.State}</td>
          <td>${m.BatchSize}</td>
          <td>${m.LastProcessingResult}</td>
        </tr>`)}</tbody>
      </table>`) : null}
    <h2>Recent invocations</h2>
    <${LoadError} error=${invocations.error} what="the invocations" />
    ${invocations.data ? (recent.length === 0
      ? html`<p class="muted">No invocations yet.</p>`
      : html`<table data-testid="lambda-invocations">
        <caption class="sr-only">Recent invocations, newest first</caption>
        <thead><tr><th scope="col">When</th><th scope="col">Function</th><th scope="col">From</th>
          <th scope="col">Batch</th><th scope="col">Took</th><th scope="col">Result</th><th scope="col">Why / failed items</th></tr></thead>
        <tbody>${recent.map((r) => html`<tr key=${r.request_id}>
          <td>${fmtTime(r.at_ms)}</td>
          <td>${r.function}</td>
          <td class="small">${r.source === 'mapping' ? `mapping of ${lastPart(r.from)}` : `subscription to ${lastPart(r.from)}`}${r.attempt ? `, attempt ${r.attempt}` : ''}</td>
          <td>${r.batch}</td>
          <td>${fmtDuration(r.duration_ms)}</td>
          <td>${resultBadge(r.result)}</td>
          <td class="small">${r.error || ''}${r.failed_items.length
            ? html`reported failed: ${r.failed_items.map((id) => html`<a class="mono" href=${messageHref(id)}>${id}</a> `)}`
            : ''}</td>
        </tr>`)}</tbody>
      </table>`) : null}
  </section>`;
}
