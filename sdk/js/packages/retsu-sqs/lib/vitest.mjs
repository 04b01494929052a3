// Helpers for Vitest test files.
import { beforeAll, afterAll, beforeEach } from 'vitest';
import fixture from './fixture.js';

const hooks = { beforeAll, afterAll, beforeEach };

/** A server for this file (or the enclosing describe), reset before each test. */
export function useRetsu(options = {}) {
  return fixture.perScope(hooks, options);
}

/**
 * The server that `retsu-sqs/vitest/setup` (globalSetup) started, reset before
 * each test. Files share it: run them one at a time (fileParallelism: false)
 * or use distinct queue names and `reset: false`.
 */
export function useSharedRetsu(options = {}) {
  return fixture.shared(hooks, options);
}
