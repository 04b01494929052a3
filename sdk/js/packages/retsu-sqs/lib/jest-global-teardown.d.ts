declare const globalTeardown: () => Promise<void>;
export = globalTeardown;
