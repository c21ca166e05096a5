import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files share one Postgres and one Redis; each file isolates
    // itself (own database cloned from a template, own Redis key prefix), so
    // files may run in parallel.
    fileParallelism: true,
    // Three at once on a 2-core machine: many files spend their time waiting
    // (servers starting, failovers, rate windows, child processes), and a
    // third keeps both cores busy (measured: 884 s → 694 s for the suite).
    maxWorkers: 3,
    projects: [
      {
        // No services: `vitest run test/unit` starts neither Postgres nor Redis.
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        // Postgres and Redis, provided once to every file (see global-setup.ts).
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
