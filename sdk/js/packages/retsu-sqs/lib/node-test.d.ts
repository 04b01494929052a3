import type { RetsuClient, RetsuServer, StartRetsuOptions } from './index.js';

export interface RetsuFixture extends RetsuClient {
  /** The underlying server (throws before the before-all hook ran). */
  readonly server: RetsuClient | RetsuServer;
}
export interface UseRetsuOptions extends StartRetsuOptions {
  /** Reset the server before each test (default true). */
  reset?: boolean;
}
export interface UseSharedRetsuOptions {
  endpoint?: string;
  reset?: boolean;
}
export declare function useRetsu(options?: UseRetsuOptions): RetsuFixture;
export declare function useSharedRetsu(options?: UseSharedRetsuOptions): RetsuFixture;
