// A cluster's nodes (GET /_retsu/cluster on the node the browser talks
// to): the shards each holds and the queues and topics in them, which
// holds shard 1 (it keeps the cluster's clock), each node's heartbeat, and
// drain / undrain (POST /_retsu/cluster/drain): a drained node hands its
// shards to the others at once.

import { html, usePoll, fmtDuration } from '../util.js';
import { admin } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, notify } from './parts.js';

function nodeState(n) {
  if (n.holds_lease) return html`<span class="badge st-available">keeps the clock</span>`;
  if (n.draining) return html`<span class="badge st-delayed">draining</span>`;
  return html`<span class="badge">candidate</span>`;
}

export function ClusterView() {
  const { data, error, reload } = usePoll(() => admin('cluster'));
  const drain = async (id, draining) => {
    // A drain is answered once the node holds no shard, or after a lease.
    const answer = await admin(draining ? 'cluster/drain' : 'cluster/undrain', { method: 'POST', body: { node: id } });
    const done = answer && answer.drained && answer.drained.done;
    notify(!draining ? `${id} may hold shards again`
      : done ? `${id} is drained: it holds no shard` : `${id} is draining: it hands its shards over`);
    reload();
  };
  const lease = data && data.lease;
  return html`<section>
    <h1 tabindex="-1">Cluster</h1>
    <p class="small muted">Every node answers every request. The store is split into shards; each queue and
      topic lives in one shard, and the node holding a shard's lease owns what is in it; the others pass
      requests on to it. Drain a node before taking it down: it hands its shards over at once and takes none
      until undrained or restarted.</p>
    <${LoadError} error=${error} what="the cluster" />
    ${lease ? html`<p data-testid="cluster-lease">
      ${lease.live
        ? html`Shard 1 (the cluster's clock) held by <strong>${lease.holder}</strong> (epoch ${lease.epoch}, renewed for ${fmtDuration(lease.expires_in_ms)} more).`
        : html`<span class="notice error">No node holds shard 1${lease.holder ? ` (last: ${lease.holder}, epoch ${lease.epoch})` : ''}.</span>`}
      <span class="small muted"> Asked: ${data.node}.</span></p>` : null}
    ${data ? html`<table class="nodes" data-testid="cluster-nodes">
      <caption class="sr-only">Nodes of the cluster</caption>
      <thead><tr><th scope="col">Node</th><th scope="col">URL</th><th scope="col">Heartbeat</th>
        <th scope="col">Up</th><th scope="col">State</th><th scope="col">Shards</th><th scope="col">Owns</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${data.nodes.map((n) => html`<tr key=${n.id} data-testid=${`node-${n.id}`} data-state=${n.holds_lease ? 'holder' : n.draining ? 'draining' : 'candidate'}>
        <th scope="row">${n.id}</th>
        <td class="mono small">${n.url}</td>
        <td>${fmtDuration(n.heartbeat_age_ms)} ago</td>
        <td>${fmtDuration(n.up_ms)}</td>
        <td>${nodeState(n)}</td>
        <td class="mono small">${(n.shards || []).join(', ') || '–'}</td>
        <td title=${[...(n.queues || []), ...(n.topics || [])].join(', ')}>${n.owns}</td>
        <td>${n.draining
          ? html`<${ActionButton} testid=${`undrain-${n.id}`} onClick=${() => drain(n.id, false)}>Undrain</${ActionButton}>`
          : html`<${ConfirmButton} testid=${`drain-${n.id}`} title=${`Drain ${n.id}?`} confirmLabel="Drain"
              text=${(n.shards || []).length
                ? `${n.id} gives its shards up; the other nodes load them and serve. Requests in flight at ${n.id} may be answered ServiceUnavailable, which SDKs retry.`
                : `${n.id} will not take a shard until it is undrained or restarted.`}
              onConfirm=${() => drain(n.id, true)}>Drain</${ConfirmButton}>`}</td>
      </tr>`)}</tbody>
    </table>` : null}
  </section>`;
}
