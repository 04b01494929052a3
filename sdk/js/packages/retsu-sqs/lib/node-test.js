'use strict';
// Helpers for node:test: hooks from node:test itself.
const nodeTest = require('node:test');
const { perScope, shared } = require('./fixture.js');

const hooks = { beforeAll: nodeTest.before, afterAll: nodeTest.after, beforeEach: nodeTest.beforeEach };

/** A server for this file (or the enclosing describe), reset before each test. */
function useRetsu(options = {}) {
  return perScope(hooks, options);
}

/** The server at RETSU_ENDPOINT (or options.endpoint), reset before each test. */
function useSharedRetsu(options = {}) {
  return shared(hooks, options);
}

module.exports = { useRetsu, useSharedRetsu };
