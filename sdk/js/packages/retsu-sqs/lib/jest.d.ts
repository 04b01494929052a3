import type { RetsuFixture, UseRetsuOptions, UseSharedRetsuOptions } from './node-test.js';

export type { RetsuFixture };
interface Hooks {
  beforeAll: (fn: () => unknown) => void;
  afterAll: (fn: () => unknown) => void;
  beforeEach: (fn: () => unknown) => void;
}
export declare function useRetsu(options?: UseRetsuOptions & { hooks?: Hooks }): RetsuFixture;
export declare function useSharedRetsu(options?: UseSharedRetsuOptions & { hooks?: Hooks }): RetsuFixture;
