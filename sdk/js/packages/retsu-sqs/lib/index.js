'use strict';
// Retsu for Node.js: start the `retsu` binary on a free loopback port and
// drive its admin API (clock, peek, history, reset). No dependencies: only
// node:child_process and the global fetch of Node 18+.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const REGION = 'us-east-1';
const ACCOUNT_ID = '000000000000';
const READY_PREFIX = 'retsu ready ';
// Printed before the ready line with --tls: the https:// endpoint and, when
// Retsu made the certificate, the CA file to trust.
const TLS_PREFIX = 'retsu tls ';
const STDERR_LINES = 20;
const DEFAULT_START_TIMEOUT_MS = 10000;
const STOP_GRACE_MS = 5000;

class RetsuError extends Error {
  constructor(message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'RetsuError';
    // Exit code of the retsu process when it ended (null if it did not, or by a signal).
    this.exitCode = details.exitCode === undefined ? null : details.exitCode;
    this.signal = details.signal === undefined ? null : details.signal;
    // The last lines retsu wrote to stderr.
    this.stderr = details.stderr === undefined ? '' : details.stderr;
  }
}

class RetsuAdminError extends RetsuError {
  constructor(message, details = {}) {
    super(message, details);
    this.name = 'RetsuAdminError';
    this.status = details.status;
    // The admin API's error code ("NotFound", "BadRequest", ...) and message.
    this.code = details.code;
    this.body = details.body;
  }
}

function platformPackage(platform = process.platform, arch = process.arch) {
  return `retsu-sqs-${platform}-${arch}`;
}

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// Where the binary is: options.bin, then RETSU_BIN, then the platform
// package, then PATH. Throws a RetsuError naming every place looked.
function findBinary(options = {}) {
  const env = options.env || process.env;
  if (options.bin) {
    if (isExecutableFile(options.bin)) return options.bin;
    throw new RetsuError(`the retsu binary given as option bin (${options.bin}) ${describeMissing(options.bin)}`);
  }
  if (env.RETSU_BIN) {
    if (isExecutableFile(env.RETSU_BIN)) return env.RETSU_BIN;
    throw new RetsuError(`RETSU_BIN=${env.RETSU_BIN} ${describeMissing(env.RETSU_BIN)}`);
  }
  const looked = ['RETSU_BIN (not set)'];
  const pkg = platformPackage();
  let resolved = null;
  try {
    resolved = require.resolve(`${pkg}/bin/retsu`);
  } catch {
    looked.push(`the platform package ${pkg} for ${process.platform}/${process.arch} (not installed` +
      (pkg === 'retsu-sqs-linux-x64' ? '; it is an optionalDependency of retsu-sqs: was it installed with --omit=optional or --no-optional?)' : '; Retsu ships a binary for linux/x64 only)'));
  }
  if (resolved) {
    if (!isExecutableFile(resolved)) {
      // Some extractors drop the executable bit; put it back once.
      try { fs.chmodSync(resolved, 0o755); } catch { /* reported below */ }
    }
    if (isExecutableFile(resolved)) return resolved;
    looked.push(`${resolved} from ${pkg} (${describeMissing(resolved)})`);
  }
  const dirs = (env.PATH || '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.join(dir, 'retsu');
    if (isExecutableFile(candidate)) return candidate;
  }
  looked.push(`PATH (${dirs.length ? dirs.join(path.delimiter) : 'empty'})`);
  throw new RetsuError(`no retsu binary found for ${process.platform}/${process.arch}; looked in: ` +
    `${looked.join('; ')}. Install retsu-sqs with its platform package (npm install retsu-sqs ${pkg}) or set RETSU_BIN to the binary's path.`);
}

function describeMissing(file) {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return 'is not a file';
    return 'is not executable';
  } catch {
    return 'does not exist';
  }
}

function hasFlag(args, name) {
  return args.some((a) => a === name || a.startsWith(name + '='));
}

function buildArgs(options) {
  const extra = (options.args || []).map(String);
  const args = [];
  // Extra args may choose their own host or port (the binary takes each once).
  if (!hasFlag(extra, '--host')) args.push('--host', '127.0.0.1');
  if (!hasFlag(extra, '--port')) args.push('--port', '0');
  args.push('--exit-on-stdin-close');
  if (options.frozenClock && !hasFlag(extra, '--clock')) args.push('--clock', 'frozen');
  if (options.dataDir) args.push('--data-dir', String(options.dataDir));
  if (options.config) args.push('--config', String(options.config));
  if (options.tls && !hasFlag(extra, '--tls')) args.push('--tls');
  return args.concat(extra);
}

// Keeps the last N complete lines of a stream.
class LineTail {
  constructor(limit) {
    this.limit = limit;
    this.lines = [];
    this.partial = '';
  }
  push(chunk, onLine) {
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop();
    if (this.partial.length > 8192) this.partial = this.partial.slice(-8192);
    for (const line of parts) {
      const l = line.replace(/\r$/, '');
      this.lines.push(l);
      if (this.lines.length > this.limit) this.lines.shift();
      if (onLine) onLine(l);
    }
  }
  text() {
    const all = this.partial ? this.lines.concat([this.partial]) : this.lines;
    return all.join('\n');
  }
}

const live = new Set();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The closed stdin pipe already ends retsu when this process dies; this
  // only makes an orderly exit quicker.
  process.on('exit', () => {
    for (const child of live) {
      try { child.kill('SIGKILL'); } catch { /* gone */ }
    }
  });
}

// A test runner's worker (Vitest forks, jest-worker, node --test's file
// processes) outlives a runner killed with SIGKILL; when this process's parent
// changes (or its IPC channel closes), stop every server it started.
let parentWatch = null;
function watchParent() {
  if (parentWatch) return;
  const original = process.ppid;
  const stopAll = () => {
    if (parentWatch) clearInterval(parentWatch);
    for (const child of live) {
      try { child.stdin.destroy(); } catch { /* closed */ }
      try { child.kill('SIGTERM'); } catch { /* gone */ }
    }
  };
  parentWatch = setInterval(() => {
    if (process.ppid !== original) stopAll();
  }, 200);
  parentWatch.unref();
  if (typeof process.send === 'function') process.once('disconnect', stopAll);
}

function withStderr(message, stderr) {
  return stderr ? `${message}\n--- last lines of retsu's stderr ---\n${stderr}` : message;
}

// A client for the admin API of a running retsu at `endpoint`. The admin
// API is called over plain HTTP, which Retsu answers on its TLS port too.
function createClient(endpoint, hooks = {}) {
  const adminBase = endpoint.replace(/^https:/, 'http:');
  const check = hooks.check || (() => {});
  const region = hooks.region || REGION;
  const accountId = hooks.accountId || ACCOUNT_ID;

  async function admin(method, pathname, body) {
    check();
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['content-type'] = 'application/json';
    }
    let res;
    try {
      res = await fetch(adminBase + pathname, init);
    } catch (err) {
      check();
      throw new RetsuError(`retsu admin ${method} ${pathname} failed: ${err.cause ? err.cause.message || err.cause : err.message}`,
        { cause: err, stderr: hooks.stderr ? hooks.stderr() : '' });
    }
    const text = await res.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    if (!res.ok) {
      const e = json && json.error ? json.error : {};
      const code = e.code || `HTTP ${res.status}`;
      const msg = e.message || text;
      throw new RetsuAdminError(`retsu admin ${method} ${pathname}: ${res.status} ${code}: ${msg}`,
        { status: res.status, code: e.code, body: json || text });
    }
    return json;
  }

  const queuePath = (name) =>
    `/_retsu/queues/${encodeURIComponent(region)}/${encodeURIComponent(accountId)}/${encodeURIComponent(name)}`;

  const clock = {
    status: () => admin('GET', '/_retsu/clock'),
    freeze: () => admin('POST', '/_retsu/clock', { freeze: true }),
    resume: () => admin('POST', '/_retsu/clock', { resume: true }),
    advance: (seconds) => {
      if (typeof seconds === 'string') return admin('POST', '/_retsu/clock', { advance: seconds });
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
        return Promise.reject(new RetsuError(`clock.advance takes a number of seconds >= 0 (or a duration such as "1h30m"), not ${String(seconds)}`));
      }
      return admin('POST', '/_retsu/clock', { advance: Math.round(seconds * 1000) });
    },
    set: (when) => admin('POST', '/_retsu/clock', { set: when instanceof Date ? when.toISOString() : when }),
    now: async () => new Date((await admin('GET', '/_retsu/clock')).now_ms),
  };

  return {
    endpoint,
    caFile: hooks.caFile,
    region,
    accountId,
    queueUrl: (name) => `${endpoint}/${accountId}/${name}`,
    clock,
    peek: async (name, opts = {}) => {
      const q = new URLSearchParams({ state: opts.state || 'all' });
      if (opts.limit !== undefined) q.set('limit', String(opts.limit));
      return (await admin('GET', `${queuePath(name)}/messages?${q}`)).messages;
    },
    history: (messageId) => admin('GET', `/_retsu/messages/${encodeURIComponent(messageId)}`),
    reset: async () => {
      const out = await admin('POST', '/_retsu/reset');
      // Reset puts the clock back on running system time; a fixture that
      // started frozen stays frozen across tests.
      if (hooks.frozenClock) await clock.freeze();
      return out;
    },
    resetQueue: (name) => admin('POST', `${queuePath(name)}/reset`),
    health: () => admin('GET', '/_retsu/health'),
  };
}

// Attach to a retsu someone else started (e.g. a global setup): the admin
// API without process control. stop() is a no-op here.
function connectRetsu(options = {}) {
  const endpoint = typeof options === 'string' ? options : options.endpoint || process.env.RETSU_ENDPOINT;
  if (!endpoint) throw new RetsuError('connectRetsu needs an endpoint (or RETSU_ENDPOINT set by a global setup)');
  const frozenClock = typeof options === 'object' && options.frozenClock !== undefined
    ? options.frozenClock
    : process.env.RETSU_FROZEN_CLOCK === '1';
  const caFile = (typeof options === 'object' && options.caFile) || process.env.RETSU_CA_FILE || undefined;
  const client = createClient(endpoint.replace(/\/+$/, ''), { frozenClock, caFile });
  client.stop = async () => {};
  return client;
}

function startRetsu(options = {}) {
  return new Promise((resolve, reject) => {
    let bin;
    try {
      bin = findBinary(options);
    } catch (err) {
      reject(err);
      return;
    }
    const args = buildArgs(options);
    const timeoutMs = options.startTimeoutMs === undefined ? DEFAULT_START_TIMEOUT_MS : options.startTimeoutMs;
    const stderrTail = new LineTail(STDERR_LINES);
    const stdoutTail = new LineTail(STDERR_LINES);
    let child;
    try {
      child = spawn(bin, args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: options.env ? { ...process.env, ...options.env } : process.env,
        cwd: options.cwd,
      });
    } catch (err) {
      reject(new RetsuError(`cannot start ${bin}: ${err.message}`, { cause: err }));
      return;
    }
    installExitHook();
    if (options.stopWithParent !== false) watchParent();
    live.add(child);

    let state = 'starting'; // starting -> running -> stopping -> stopped
    let exitInfo = null;
    let settled = false;
    let stopPromise = null;
    const exited = new Promise((res) => {
      child.on('close', (code, signal) => {
        exitInfo = { code, signal };
        live.delete(child);
        res(exitInfo);
      });
    });

    child.stdin.on('error', () => {}); // EPIPE once retsu is gone
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => stderrTail.push(d));
    child.stdout.setEncoding('utf8');

    const fail = (message, extra = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new RetsuError(withStderr(message, stderrTail.text()), { stderr: stderrTail.text(), ...extra }));
    };

    const timer = setTimeout(() => {
      if (state !== 'starting') return;
      state = 'timedout';
      try { child.kill('SIGKILL'); } catch { /* gone */ }
      exited.then(() => fail(`retsu did not print "${READY_PREFIX}URL" within ${timeoutMs} ms (startTimeoutMs); it was killed. Command: ${bin} ${args.join(' ')}`));
    }, timeoutMs);

    child.on('error', (err) => {
      state = 'stopped';
      live.delete(child);
      fail(`cannot start ${bin}: ${err.message}`, { cause: err });
    });

    exited.then(({ code, signal }) => {
      if (state === 'starting') {
        state = 'stopped';
        fail(`retsu exited before it was ready (${signal ? `signal ${signal}` : `exit code ${code}`}). Command: ${bin} ${args.join(' ')}`,
          { exitCode: code, signal });
      } else {
        state = 'stopped';
      }
    });

    let tls = null; // [https endpoint, CA file] from the TLS line
    child.stdout.on('data', (d) => stdoutTail.push(d, (line) => {
      if (state === 'starting' && line.startsWith(TLS_PREFIX)) {
        const rest = line.slice(TLS_PREFIX.length).trim();
        const space = rest.indexOf(' ');
        tls = space < 0 ? [rest, undefined] : [rest.slice(0, space), rest.slice(space + 1)];
        return;
      }
      if (state !== 'starting' || !line.startsWith(READY_PREFIX)) return;
      const endpoint = line.slice(READY_PREFIX.length).trim();
      if (!/^http:\/\/[^/\s]+$/.test(endpoint)) return;
      state = 'running';
      settled = true;
      clearTimeout(timer);
      // A forgotten server must not keep the test process alive; when the
      // process ends, the stdin pipe closes and retsu exits.
      child.unref();
      for (const s of [child.stdin, child.stdout, child.stderr]) if (s && s.unref) s.unref();

      const check = () => {
        if (state === 'stopping' || (state === 'stopped' && stopPromise)) {
          throw new RetsuError('this retsu server is stopped (stop() was called); start a new one with startRetsu()');
        }
        if (state === 'stopped') {
          const how = exitInfo ? (exitInfo.signal ? `signal ${exitInfo.signal}` : `exit code ${exitInfo.code}`) : 'unknown';
          throw new RetsuError(withStderr(`this retsu server exited on its own (${how})`, stderrTail.text()),
            { exitCode: exitInfo && exitInfo.code, signal: exitInfo && exitInfo.signal, stderr: stderrTail.text() });
        }
      };
      const server = createClient(tls ? tls[0] : endpoint, {
        caFile: tls ? tls[1] : undefined,
        check,
        frozenClock: !!options.frozenClock,
        stderr: () => stderrTail.text(),
      });
      server.pid = child.pid;
      server.binary = bin;
      server.args = args.slice();
      server.stderr = () => stderrTail.text();
      Object.defineProperty(server, 'running', { get: () => state === 'running', enumerable: true });
      server.stop = () => {
        if (stopPromise) return stopPromise;
        if (state === 'stopped') {
          stopPromise = Promise.resolve();
          return stopPromise;
        }
        state = 'stopping';
        stopPromise = (async () => {
          // Closing stdin makes retsu exit (--exit-on-stdin-close); SIGTERM
          // as well, then SIGKILL after the grace period.
          try { child.stdin.destroy(); } catch { /* closed */ }
          try { child.kill('SIGTERM'); } catch { /* gone */ }
          let killTimer;
          const killed = new Promise((res) => {
            killTimer = setTimeout(() => {
              try { child.kill('SIGKILL'); } catch { /* gone */ }
              res();
            }, STOP_GRACE_MS);
          });
          await Promise.race([exited, killed]);
          await exited;
          clearTimeout(killTimer);
          state = 'stopped';
        })();
        return stopPromise;
      };
      if (typeof Symbol.asyncDispose === 'symbol') server[Symbol.asyncDispose] = server.stop;
      resolve(server);
    }));
  });
}

module.exports = {
  startRetsu,
  connectRetsu,
  findBinary,
  platformPackage,
  RetsuError,
  RetsuAdminError,
  REGION,
  ACCOUNT_ID,
};
