// Shared helpers: the html tag, polling, the server's clock, formatting.

import { h } from 'preact';
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

/** How often every view re-reads what it shows (short polling). */
export const POLL_MS = 1000;

/**
 * Runs `load` now and every POLL_MS while the view is shown; `deps` restart
 * it. Returns { data, error, reload }. Errors keep the last good data.
 */
export function usePoll(load, deps = []) {
  const [state, setState] = useState({ data: null, error: null, loaded: false });
  const loadRef = useRef(load);
  loadRef.current = load;
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const data = await loadRef.current();
      if (mine === seq.current) setState({ data, error: null, loaded: true });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error, loaded: true }));
    }
  }, []);
  useEffect(() => {
    setState({ data: null, error: null, loaded: false });
    reload();
    const timer = setInterval(() => {
      if (!document.hidden) reload();
    }, POLL_MS);
    return () => {
      clearInterval(timer);
      seq.current++;
    };
  }, deps);
  return { ...state, reload };
}

/**
 * The server's clock as last read, so times left are computed on the
 * server's (possibly frozen or advanced) time, not the browser's.
 */
let serverClock = null;
export function setServerClock(clock) {
  serverClock = clock ? { ...clock, readAt: Date.now() } : null;
}
export function serverNow() {
  if (!serverClock) return Date.now();
  if (serverClock.frozen) return serverClock.now_ms;
  return serverClock.now_ms + (Date.now() - serverClock.readAt);
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  const neg = ms < 0;
  let s = Math.round(Math.abs(ms) / 1000);
  const d = Math.floor(s / 86400); s %= 86400;
  const hh = Math.floor(s / 3600); s %= 3600;
  const m = Math.floor(s / 60); s %= 60;
  const parts = [];
  if (d) parts.push(`${d}d`);
  if (hh) parts.push(`${hh}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return (neg ? '-' : '') + parts.slice(0, 2).join(' ');
}

export function fmtTime(ms) {
  if (ms === null || ms === undefined) return '—';
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** `arn:aws:sqs:region:account:name` → { region, account, name }. */
export function parseArn(arn) {
  if (!arn) return null;
  const [, , , region, account, name] = arn.split(':');
  return { region, account, name, arn };
}

export function queueHref(q) {
  return `#/queues/${[q.region, q.account, q.name].map(encodeURIComponent).join('/')}`;
}

export function topicHref(t) {
  return `#/topics/${[t.region, t.account, t.name].map(encodeURIComponent).join('/')}`;
}

export function messageHref(id) {
  return `#/messages/${encodeURIComponent(id)}`;
}

/** Turns a caught error into one line for the user. */
export function errorText(e) {
  if (!e) return '';
  return e.code ? `${e.code}: ${e.message}` : String(e.message || e);
}
