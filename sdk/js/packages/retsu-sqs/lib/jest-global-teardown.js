'use strict';
// Jest globalTeardown: stops the server retsu-sqs/jest/global-setup started
// (globalSetup and globalTeardown share one global context in Jest).
const KEY = Symbol.for('retsu.jest.server');

module.exports = async function globalTeardown() {
  const server = globalThis[KEY];
  globalThis[KEY] = undefined;
  if (server) await server.stop();
};
