// Small shared components: notices, the confirm dialog, state badges,
// rate charts, action buttons.

import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from '../vendor/uPlot.esm.js';
import { html, errorText } from '../util.js';

// ---- toasts: one live region announcing what an action did ----
const listeners = new Set();
let toasts = [];
let nextToast = 1;
export function notify(text, kind = 'ok') {
  const t = { id: nextToast++, text, kind };
  toasts = [...toasts, t].slice(-4);
  listeners.forEach((l) => l(toasts));
  setTimeout(() => {
    toasts = toasts.filter((x) => x.id !== t.id);
    listeners.forEach((l) => l(toasts));
  }, 6000);
}
export function Toasts() {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    listeners.add(setList);
    return () => listeners.delete(setList);
  }, []);
  return html`<div class="toasts" role="status" aria-live="polite">
    ${list.map((t) => html`<div key=${t.id} class=${`toast ${t.kind}`}>${t.text}</div>`)}
  </div>`;
}

/** A button running an async action: busy while it runs, errors as a toast. */
export function ActionButton({ onClick, children, kind = '', label, disabled, testid }) {
  const [busy, setBusy] = useState(false);
  const run = async (ev) => {
    ev.preventDefault();
    setBusy(true);
    try {
      await onClick();
    } catch (e) {
      notify(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" class=${kind} onClick=${run} disabled=${busy || disabled}
    aria-label=${label} data-testid=${testid}>${children}</button>`;
}

/** Shown where data could not be loaded; says when the endpoint does not exist yet. */
export function LoadError({ error, what }) {
  if (!error) return null;
  if (error.unavailable) {
    return html`<p class="notice muted" data-testid="unavailable">${what} is not available on this server
      (${error.message}).</p>`;
  }
  if (error.status === 401) {
    return html`<p class="notice error">This server needs an admin token: set it in the header (Token).</p>`;
  }
  return html`<p class="notice error" role="alert">Could not load ${what}: ${errorText(error)}</p>`;
}

/**
 * A confirmation as a modal <dialog>: focus moves into it, Escape cancels,
 * and the destructive button says exactly what it does.
 */
export function ConfirmButton({ children, title, text, confirmLabel, onConfirm, kind = 'danger', testid }) {
  const ref = useRef(null);
  const [busy, setBusy] = useState(false);
  const open = () => ref.current && ref.current.showModal();
  const close = () => ref.current && ref.current.close();
  const confirm = async () => {
    setBusy(true);
    try {
      await onConfirm();
      close();
    } catch (e) {
      notify(errorText(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  return html`<span>
    <button type="button" class=${kind} onClick=${open} data-testid=${testid}>${children}</button>
    <dialog ref=${ref} aria-labelledby=${`${testid}-title`} class="confirm">
      <h2 id=${`${testid}-title`}>${title}</h2>
      <p>${text}</p>
      <div class="row end">
        <button type="button" onClick=${close} autofocus>Cancel</button>
        <button type="button" class=${kind} onClick=${confirm} disabled=${busy}
          data-testid=${`${testid}-confirm`}>${confirmLabel}</button>
      </div>
    </dialog>
  </span>`;
}

const STATE_LABEL = { available: 'Available', inflight: 'In flight', delayed: 'Delayed' };
export function StateBadge({ state }) {
  return html`<span class=${`badge st-${state}`}>${STATE_LABEL[state] || state}</span>`;
}

/**
 * A small time series chart (uPlot). `series` = [{label, values}], `times`
 * in seconds. Drawn once, then fed new data.
 */
export function Sparkline({ times, series, label, width = 160, height = 36 }) {
  const box = useRef(null);
  const plot = useRef(null);
  const key = series.map((s) => s.label).join('|');
  useEffect(() => {
    const styles = getComputedStyle(document.documentElement);
    const colors = ['--c-sent', '--c-received', '--c-deleted', '--c-other'].map((v) => styles.getPropertyValue(v).trim());
    const opts = {
      width, height,
      legend: { show: false },
      cursor: { show: false },
      select: { show: false },
      scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [{ show: false }, { show: false }],
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 1.5, points: { show: false } }))],
    };
    plot.current = new uPlot(opts, [times, ...series.map((s) => s.values)], box.current);
    return () => plot.current && plot.current.destroy();
  }, [key, width, height]);
  useEffect(() => {
    if (plot.current) plot.current.setData([times, ...series.map((s) => s.values)]);
  });
  return html`<div class="spark" role="img" aria-label=${label} ref=${box}></div>`;
}
