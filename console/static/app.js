// Retsu console: the shell (header, navigation, clock, token) and a hash
// router. Each screen lives in views/ and polls the admin API itself.

import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { html, usePoll, setServerClock, fmtTime, fmtDuration } from './util.js';
import { admin, adminToken, setAdminToken } from './api.js';
import { Toasts } from './views/parts.js';
import { QueuesView } from './views/queues.js';
import { TopicsView } from './views/topics.js';
import { QueueView } from './views/queue.js';
import { MessageView } from './views/message.js';
import { DeadLettersView } from './views/dlq.js';
import { TimeView } from './views/time.js';
import { ClusterView } from './views/cluster.js';
import { LambdaView } from './views/lambda.js';

function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'queues' && parts.length === 4) {
    return { view: 'queue', queue: { region: parts[1], account: parts[2], name: parts[3] } };
  }
  if (parts[0] === 'messages' && parts[1]) return { view: 'message', id: parts[1] };
  if (parts[0] === 'topics') {
    const topic = parts.length === 4 ? { region: parts[1], account: parts[2], name: parts[3] } : null;
    return { view: 'topics', topic };
  }
  if (parts[0] === 'dead-letters') return { view: 'dlq' };
  if (parts[0] === 'time') return { view: 'time' };
  if (parts[0] === 'cluster') return { view: 'cluster' };
  if (parts[0] === 'lambda') return { view: 'lambda' };
  return { view: 'queues' };
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function ClockBadge() {
  const { data, error } = usePoll(() => admin('clock'));
  useEffect(() => setServerClock(data), [data]);
  if (error && !data) return html`<a class="clock muted" href="#/time">clock: system</a>`;
  if (!data) return null;
  const shifted = data.offset_ms ? ` (${data.offset_ms > 0 ? '+' : ''}${fmtDuration(data.offset_ms)})` : '';
  return html`<a class=${`clock ${data.frozen || data.offset_ms ? 'warn' : ''}`} href="#/time" data-testid="clock-badge"
    title="Server clock: changing it changes what clients see">
    ${data.frozen ? 'frozen · ' : ''}${fmtTime(data.now_ms)}${shifted}
  </a>`;
}

function TokenButton() {
  const [has, setHas] = useState(!!adminToken());
  const set = () => {
    const t = prompt('Admin token (as given to retsu --admin-token); empty to clear', adminToken());
    if (t === null) return;
    setAdminToken(t.trim());
    setHas(!!t.trim());
  };
  return html`<button type="button" class="ghost" onClick=${set}>${has ? 'Token ✓' : 'Token'}</button>`;
}

const NAV = [
  ['queues', '#/queues', 'Queues'],
  ['topics', '#/topics', 'Topics'],
  ['dlq', '#/dead-letters', 'Dead letters'],
  ['lambda', '#/lambda', 'Lambda'],
  ['time', '#/time', 'Time & faults'],
];
const CLUSTER_NAV = ['cluster', '#/cluster', 'Cluster'];

/** Whether this server is a cluster node (it answers /_retsu/cluster); asked once. */
function useIsCluster() {
  const [is, setIs] = useState(false);
  useEffect(() => {
    admin('cluster').then(() => setIs(true), () => setIs(false));
  }, []);
  return is;
}

function App() {
  const route = useRoute();
  const cluster = useIsCluster();
  const nav = cluster || route.view === 'cluster' ? [...NAV, CLUSTER_NAV] : NAV;
  const firstRender = useRef(true);
  useEffect(() => {
    // Keyboard and screen-reader users land on the new screen's heading
    // (not on first load: the skip link comes first there).
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    const h1 = document.querySelector('main h1');
    if (h1) h1.focus({ preventScroll: true });
  }, [route.view, route.id, route.queue && route.queue.name]);
  const current = route.view === 'queue' ? 'queues' : route.view === 'message' ? null : route.view;
  let view;
  switch (route.view) {
    case 'queue': view = html`<${QueueView} key=${JSON.stringify(route.queue)} ref_=${route.queue} />`; break;
    case 'message': view = html`<${MessageView} key=${route.id} id=${route.id} />`; break;
    // One view for the list and the selected topic: choosing another topic
    // keeps the screen (and its live stream) and moves focus to the details.
    case 'topics': view = html`<${TopicsView} selected=${route.topic} />`; break;
    case 'dlq': view = html`<${DeadLettersView} />`; break;
    case 'time': view = html`<${TimeView} />`; break;
    case 'cluster': view = html`<${ClusterView} />`; break;
    case 'lambda': view = html`<${LambdaView} />`; break;
    default: view = html`<${QueuesView} />`;
  }
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
    <header class="top">
      <a class="brand" href="#/queues">Retsu</a>
      <nav aria-label="Main">
        ${nav.map(([id, href, label]) => html`<a href=${href} aria-current=${current === id ? 'page' : undefined}>${label}</a>`)}
      </nav>
      <div class="spacer"></div>
      <${ClockBadge} />
      <${TokenButton} />
    </header>
    <main id="main" tabindex="-1">${view}</main>
    <${Toasts} />`;
}

render(html`<${App} />`, document.getElementById('app'));
