// Vitest globalSetup: `globalSetup: ['retsu-sqs/vitest/setup']` starts one server
// for the whole run; tests reach it with useSharedRetsu() (RETSU_ENDPOINT) or
// inject('retsuEndpoint'). createGlobalSetup(options) makes one with options.
import fixture from './fixture.js';

export function createGlobalSetup(options = {}) {
  return async function setup(context) {
    const server = await fixture.startGlobal(options);
    if (context && typeof context.provide === 'function') context.provide('retsuEndpoint', server.endpoint);
    return async function teardown() {
      await server.stop();
    };
  };
}

export default createGlobalSetup({});
