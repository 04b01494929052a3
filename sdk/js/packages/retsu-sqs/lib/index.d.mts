// ESM types: the declarations of the CommonJS entry, which the ESM one
// re-exports (one implementation, one set of shapes).
export * from './index.js';
