import type { StartRetsuOptions } from './index.js';
type GlobalSetup = () => Promise<void>;
declare const globalSetup: GlobalSetup & { createGlobalSetup(options?: StartRetsuOptions): GlobalSetup };
export = globalSetup;
