import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.vitest.mjs'],
    globalSetup: ['retsu-sqs/vitest/setup'],
    testTimeout: 20000,
    hookTimeout: 20000,
  },
});
