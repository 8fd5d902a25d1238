import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/runtime-dir.ts'],
    // `npm run test:quick` leaves out what needs Debian's Chromium or PostgreSQL: a whole file says
    // so with a `// @module-tag` comment at its top, a test or a describe with `{ tags: [...] }`.
    tags: [
      { name: 'browser', description: 'Drives Chromium: the console in a browser, or a robot on the sandbox portal.' },
      { name: 'postgres', description: 'Starts a throwaway PostgreSQL cluster: the hub and sync between installs.' },
    ],
    // End-to-end browser tests drive real Chromium; everything else stays within a few seconds.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
