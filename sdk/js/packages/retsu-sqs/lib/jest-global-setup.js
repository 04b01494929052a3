'use strict';
// Jest globalSetup: `globalSetup: 'retsu-sqs/jest/global-setup'` with
// `globalTeardown: 'retsu-sqs/jest/global-teardown'`. Workers see RETSU_ENDPOINT.
// createGlobalSetup(options) makes one with options (e.g. frozenClock).
const { startGlobal } = require('./fixture.js');

const KEY = Symbol.for('retsu.jest.server');

function createGlobalSetup(options = {}) {
  return async function globalSetup() {
    globalThis[KEY] = await startGlobal(options);
  };
}

module.exports = createGlobalSetup({});
module.exports.createGlobalSetup = createGlobalSetup;
module.exports.KEY = KEY;
