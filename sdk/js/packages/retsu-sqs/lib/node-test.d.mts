// ESM types: the same shapes as the CommonJS helper's.
export * from './node-test.js';
