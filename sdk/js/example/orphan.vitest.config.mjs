import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['orphan-victim.vitest.mjs'], hookTimeout: 20000 },
});
