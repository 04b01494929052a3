// A cluster's nodes (GET /_retsu/cluster on the node the browser talks
// to): which holds the store's lease and so owns every queue and topic,
// each node's heartbeat, and drain / undrain (POST /_retsu/cluster/drain):
// a drained holder hands the lease to another node at once.

import { html, usePoll, fmtDuration } from '../util.js';
import { admin } from '../api.js';
import { ActionButton, ConfirmButton, LoadError, notify } from './parts.js';

function nodeState(n) {
  if (n.holds_lease) return html`<span class="badge st-available">holds the lease</span>`;
  if (n.draining) return html`<span class="badge st-delayed">draining</span>`;
  return html`<span class="badge">candidate</span>`;
}

export function ClusterView() {
  const { data, error, reload } = usePoll(() => admin('cluster'));
  const drain = async (id, draining) => {
    await admin(draining ? 'cluster/drain' : 'cluster/undrain', { method: 'POST', body: { node: id } });
    notify(draining ? `${id} is drained: it hands the lease over` : `${id} may hold the lease again`);
    reload();
  };
  const lease = data && data.lease;
  return html`<section>
    <h1 tabindex="-1">Cluster</h1>
    <p class="small muted">Every node answers every request; the node holding the store's lease owns every
      queue and topic and the others pass requests on to it. Drain a node before taking it down: it hands the
      lease over at once and takes it no more until undrained or restarted.</p>
    <${LoadError} error=${error} what="the cluster" />
    ${lease ? html`<p data-testid="cluster-lease">
      ${lease.live
        ? html`Lease held by <strong>${lease.holder}</strong> (epoch ${lease.epoch}, renewed for ${fmtDuration(lease.expires_in_ms)} more).`
        : html`<span class="notice error">No node holds the lease${lease.holder ? ` (last: ${lease.holder}, epoch ${lease.epoch})` : ''}.</span>`}
      <span class="small muted"> Asked: ${data.node}.</span></p>` : null}
    ${data ? html`<table class="nodes" data-testid="cluster-nodes">
      <caption class="sr-only">Nodes of the cluster</caption>
      <thead><tr><th scope="col">Node</th><th scope="col">URL</th><th scope="col">Heartbeat</th>
        <th scope="col">Up</th><th scope="col">State</th><th scope="col">Owns</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${data.nodes.map((n) => html`<tr key=${n.id} data-testid=${`node-${n.id}`} data-state=${n.holds_lease ? 'holder' : n.draining ? 'draining' : 'candidate'}>
        <th scope="row">${n.id}</th>
        <td class="mono small">${n.url}</td>
        <td>${fmtDuration(n.heartbeat_age_ms)} ago</td>
        <td>${fmtDuration(n.up_ms)}</td>
        <td>${nodeState(n)}</td>
        <td>${n.owns}</td>
        <td>${n.draining
          ? html`<${ActionButton} testid=${`undrain-${n.id}`} onClick=${() => drain(n.id, false)}>Undrain</${ActionButton}>`
          : html`<${ConfirmButton} testid=${`drain-${n.id}`} title=${`Drain ${n.id}?`} confirmLabel="Drain"
              text=${n.holds_lease
                ? `${n.id} gives the store's lease up; another node loads the store and serves. Requests in flight at ${n.id} may be answered ServiceUnavailable, which SDKs retry.`
                : `${n.id} will not take the store's lease until it is undrained or restarted.`}
              onConfirm=${() => drain(n.id, true)}>Drain</${ConfirmButton}>`}</td>
      </tr>`)}</tbody>
    </table>` : null}
  </section>`;
}
