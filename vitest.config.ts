import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/runtime-dir.ts'],
    // End-to-end browser tests drive real Chromium; everything else stays within a few seconds.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
