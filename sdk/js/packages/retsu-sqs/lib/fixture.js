'use strict';
// The part every test-framework helper shares: a handle that stands for the
// server a before-all hook starts, plus the hooks that start, reset, stop it.

const { startRetsu, connectRetsu, RetsuError } = require('./index.js');

function handle(getServer) {
  const s = () => getServer();
  return {
    get endpoint() { return s().endpoint; },
    get caFile() { return s().caFile; },
    get region() { return s().region; },
    get accountId() { return s().accountId; },
    get server() { return s(); },
    queueUrl: (name) => s().queueUrl(name),
    clock: {
      freeze: () => s().clock.freeze(),
      advance: (seconds) => s().clock.advance(seconds),
      resume: () => s().clock.resume(),
      now: () => s().clock.now(),
      status: () => s().clock.status(),
      set: (when) => s().clock.set(when),
    },
    peek: (name, opts) => s().peek(name, opts),
    history: (id) => s().history(id),
    reset: () => s().reset(),
    resetQueue: (name) => s().resetQueue(name),
    health: () => s().health(),
    stop: () => s().stop(),
  };
}

function notYet(what) {
  return new RetsuError(`the retsu fixture is not ready: ${what}. Use it inside tests or hooks, ` +
    'not at the top level of the file (its before-all hook starts it).');
}

// One server for the hooks' scope (a file, or a describe block): started
// before all, reset before each test (unless reset: false), stopped after all.
function perScope(hooks, options = {}) {
  const { reset = true, ...startOptions } = options;
  let server = null;
  let error = null;
  hooks.beforeAll(async () => {
    try {
      server = await startRetsu(startOptions);
    } catch (err) {
      error = err;
      throw err;
    }
  });
  hooks.afterAll(async () => {
    if (server) await server.stop();
  });
  if (reset) hooks.beforeEach(async () => { if (server) await server.reset(); });
  return handle(() => {
    if (server) return server;
    throw error || notYet('no server was started yet');
  });
}

// The server a global setup started (RETSU_ENDPOINT), reset before each test.
function shared(hooks, options = {}) {
  const { reset = true, endpoint } = options;
  let client = null;
  const get = () => {
    if (!client) {
      const ep = endpoint || process.env.RETSU_ENDPOINT;
      if (!ep) throw notYet('RETSU_ENDPOINT is not set: is the global setup configured?');
      client = connectRetsu({ endpoint: ep });
    }
    return client;
  };
  if (reset) hooks.beforeEach(async () => { await get().reset(); });
  return handle(get);
}

// A global setup: start a server, publish its endpoint in the environment
// (inherited by the workers, which start after it), return the server.
async function startGlobal(options = {}) {
  const server = await startRetsu(options);
  process.env.RETSU_ENDPOINT = server.endpoint;
  if (server.caFile) process.env.RETSU_CA_FILE = server.caFile;
  process.env.RETSU_FROZEN_CLOCK = options.frozenClock ? '1' : '0';
  return server;
}

module.exports = { handle, perScope, shared, startGlobal };
