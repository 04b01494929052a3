// Time and faults: the server's clock (freeze, resume, advance, set) and the
// fault profile. Both change what every client of this server sees, so the
// screen says so before anything else.

import { useState } from 'preact/hooks';
import { html, usePoll, fmtTime, fmtDuration, setServerClock, errorText } from '../util.js';
import { admin } from '../api.js';
import { ActionButton, LoadError, notify } from './parts.js';

function Clock() {
  const { data: c, error, reload } = usePoll(() => admin('clock'));
  const [amount, setAmount] = useState('30s');
  const [when, setWhen] = useState('');
  const post = async (body) => {
    const clock = await admin('clock', { method: 'POST', body });
    setServerClock(clock);
    reload();
    return clock;
  };
  return html`<section aria-labelledby="clock-h" class="panel">
    <h2 id="clock-h">Clock</h2>
    <${LoadError} error=${error} what="The clock" />
    ${c ? html`
      <p class="big" data-testid="clock-now">${fmtTime(c.now_ms)} <span class="small muted">UTC</span></p>
      <p>${c.frozen ? html`<span class="badge warn">frozen</span>` : html`<span class="badge">running</span>`}
        ${c.offset_ms ? html` <span class="muted">${c.offset_ms > 0 ? 'ahead of' : 'behind'} system time by ${fmtDuration(Math.abs(c.offset_ms))}</span>` : null}</p>
      <div class="row wrap">
        ${c.frozen
          ? html`<${ActionButton} onClick=${() => post({ resume: true })} testid="clock-resume">Resume</${ActionButton}>`
          : html`<${ActionButton} onClick=${() => post({ freeze: true })} testid="clock-freeze">Freeze</${ActionButton}>`}
      </div>
      <form class="row wrap" onSubmit=${async (e) => {
        e.preventDefault();
        try {
          const clock = await post({ advance: amount });
          notify(`Clock advanced by ${amount}: now ${fmtTime(clock.now_ms)}`);
        } catch (err) {
          notify(errorText(err), 'error');
        }
      }}>
        <label>Advance by <input value=${amount} onInput=${(e) => setAmount(e.target.value)} class="narrow"
          name="advance" aria-describedby="advance-help" /></label>
        <button type="submit" class="primary" data-testid="clock-advance">Advance</button>
        ${['10s', '1m', '5m', '1h', '1d'].map((a) => html`<${ActionButton} label=${`Advance by ${a}`} onClick=${async () => {
          const clock = await post({ advance: a });
          notify(`Clock advanced by ${a}: now ${fmtTime(clock.now_ms)}`);
        }}>+${a}</${ActionButton}>`)}
      </form>
      <p id="advance-help" class="small muted">Units ms s m h d, combined like 1h30m. Due delays, visibility
        timeouts and retention fire at once; waiting long polls wake.</p>
      <form class="row wrap" onSubmit=${async (e) => {
        e.preventDefault();
        try {
          await post({ set: when });
        } catch (err) {
          notify(errorText(err), 'error');
        }
      }}>
        <label>Set to <input value=${when} onInput=${(e) => setWhen(e.target.value)} placeholder="2026-01-01T00:00:00Z" /></label>
        <button type="submit">Set</button>
        <span class="small muted">Time never goes backwards.</span>
      </form>` : null}
  </section>`;
}

/** The active fault scopes (server-wide and per queue) and what each injected so far. */
function FaultState({ data, onClear }) {
  if (!('active' in data)) return html`<pre class="mono small" data-testid="faults-now">${JSON.stringify(data, null, 2)}</pre>`;
  const scopes = [...(data.server ? [data.server] : []), ...(data.queues || [])];
  return html`<div data-testid="faults-now" data-active=${String(!!data.active)}>
    <p>${data.active ? html`<span class="badge warn">faults on</span> clients of this server get injected failures`
      : html`<span class="badge">off</span> every answer is the real one`}</p>
    ${scopes.length ? html`<div class="table-wrap"><table class="small">
      <thead><tr><th scope="col">Scope</th><th scope="col">Profile / seed</th><th scope="col">Rates</th><th scope="col">Injected</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>${scopes.map((sc) => html`<tr key=${sc.queue || 'server'}>
        <td>${sc.queue ? html`<span class="mono">${sc.queue}</span>` : 'every queue'}</td>
        <td>${sc.profile || 'explicit'} / ${sc.seed}</td>
        <td class="nowrap">${RATES.filter(([k]) => sc[k]).map(([k, l]) => html`<div title=${l}>${k} ${sc[k]}</div>`)}
          ${sc.latency_ms && sc.latency_ms[1] ? html`<div>latency ${sc.latency_ms[0]}–${sc.latency_ms[1]} ms</div>` : null}</td>
        <td class="nowrap">${Object.entries(sc.injected || {}).map(([k, n]) => html`<div>${k}: ${n}</div>`)}</td>
        <td>${sc.queue ? html`<${ActionButton} label=${`Clear faults on ${sc.queue}`} onClick=${() => onClear(sc.queue)}>Clear</${ActionButton}>` : null}</td>
      </tr>`)}</tbody></table></div>` : null}
  </div>`;
}

const RATES = [['duplicate', 'Duplicate deliveries'], ['reorder', 'Reordering'], ['short_receive', 'Short receives'],
  ['throttle', 'Throttling errors'], ['internal_error', 'Internal errors']];

function Faults() {
  const { data, error, reload } = usePoll(() => admin('faults'));
  const [f, setF] = useState({ seed: '1', profile: 'aws-like', queue: '', custom: false, duplicate: '0', reorder: '0', short_receive: '0', throttle: '0', internal_error: '0', latency_min: '0', latency_max: '0' });
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const apply = async () => {
    const body = { seed: Number(f.seed) };
    if (f.custom) {
      body.queue = f.queue || null;
      for (const [k] of RATES) body[k] = Number(f[k]);
      body.latency_ms = [Number(f.latency_min), Number(f.latency_max)];
    } else {
      body.profile = f.profile;
    }
    await admin('faults', { method: 'POST', body });
    notify('Fault profile applied');
    reload();
  };
  return html`<section aria-labelledby="faults-h" class="panel">
    <h2 id="faults-h">Faults</h2>
    <${LoadError} error=${error} what="Fault injection" />
    ${data ? html`<${FaultState} data=${data} onClear=${async (queue) => {
        await admin(`faults?queue=${encodeURIComponent(queue)}`, { method: 'DELETE' });
        notify(`Faults cleared on ${queue}`);
        reload();
      }} />
      <form class="form" onSubmit=${(e) => { e.preventDefault(); }}>
        <div class="grid3">
          <label>Seed <input type="number" value=${f.seed} onInput=${set('seed')} /></label>
          <label class="inline"><input type="checkbox" checked=${f.custom} onChange=${set('custom')} /> Explicit rates</label>
          ${f.custom ? html`<label>Queue (r/a/n, empty: all) <input value=${f.queue} onInput=${set('queue')} /></label>`
            : html`<label>Profile <select value=${f.profile} onChange=${set('profile')}><option value="aws-like">aws-like</option><option value="none">none</option></select></label>`}
        </div>
        ${f.custom ? html`<div class="grid3">
          ${RATES.map(([k, l]) => html`<label>${l} (0–1) <input type="number" min="0" max="1" step="0.01" value=${f[k]} onInput=${set(k)} /></label>`)}
          <label>Latency min (ms) <input type="number" min="0" value=${f.latency_min} onInput=${set('latency_min')} /></label>
          <label>Latency max (ms) <input type="number" min="0" value=${f.latency_max} onInput=${set('latency_max')} /></label>
        </div>` : null}
        <div class="row">
          <${ActionButton} kind="danger" onClick=${apply} testid="faults-apply">Apply faults</${ActionButton}>
          <${ActionButton} onClick=${async () => { await admin('faults', { method: 'DELETE' }); notify('Faults cleared'); reload(); }} testid="faults-clear">Clear all faults</${ActionButton}>
        </div>
      </form>` : null}
  </section>`;
}

export function TimeView() {
  return html`<section>
    <h1 tabindex="-1">Time & faults</h1>
    <p class="notice warn" role="note"><strong>These change what clients see.</strong> Moving the clock makes
      delays, visibility timeouts and retention run out for every client of this server; faults make its
      answers fail, repeat or come late on purpose.</p>
    <div class="cols">
      <${Clock} />
      <${Faults} />
    </div>
  </section>`;
}
