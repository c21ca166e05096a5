import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration files share one Postgres and one Redis; each file isolates
    // itself (own database cloned from a template, own Redis key prefix), so
    // files may run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
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
