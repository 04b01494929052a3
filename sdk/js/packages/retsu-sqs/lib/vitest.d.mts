// The Vitest helpers have the node:test helpers' shapes.
export * from './node-test.js';
