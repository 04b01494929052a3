import helpers from './node-test.js';
export const { useRetsu, useSharedRetsu } = helpers;
