import type { StartRetsuOptions } from './index.mjs';

type Teardown = () => Promise<void>;
type GlobalSetup = (context?: { provide?: (key: string, value: unknown) => void }) => Promise<Teardown>;

export declare function createGlobalSetup(options?: StartRetsuOptions): GlobalSetup;
declare const setup: GlobalSetup;
export default setup;

declare module 'vitest' {
  export interface ProvidedContext {
    retsuEndpoint: string;
  }
}
