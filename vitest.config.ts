import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files share one Postgres and one Redis; each file isolates
    // itself (own database cloned from a template, own Redis key prefix), so
    // files may run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
