'use strict';
// Helpers for Jest test files: Jest's global hooks (or options.hooks when
// injectGlobals is off: pass { beforeAll, afterAll, beforeEach } from @jest/globals).
const { perScope, shared } = require('./fixture.js');

function jestHooks(options) {
  const h = options.hooks || globalThis;
  if (typeof h.beforeAll !== 'function' || typeof h.beforeEach !== 'function') {
    throw new Error('retsu-sqs/jest: no Jest hooks found; call it in a Jest test file or pass options.hooks');
  }
  return { beforeAll: h.beforeAll, afterAll: h.afterAll, beforeEach: h.beforeEach };
}

/** A server for this file (or the enclosing describe), reset before each test. */
function useRetsu(options = {}) {
  const { hooks, ...rest } = options;
  return perScope(jestHooks(options), rest);
}

/** The server that retsu-sqs/jest/global-setup started, reset before each test. */
function useSharedRetsu(options = {}) {
  const { hooks, ...rest } = options;
  return shared(jestHooks(options), rest);
}

module.exports = { useRetsu, useSharedRetsu };
