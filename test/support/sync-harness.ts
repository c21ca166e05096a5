import { inject } from 'vitest';
import { type App, type AppOptions, createApp } from '../../src/app.js';
import { loadConfig, type ResourceName } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES, validateRecord } from '../../src/resources/index.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import type { RequestedMode } from '../../src/sync/run-resource.js';
import { captureLogger } from './capture-logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { liveIdsIn } from './live-ids.js';
import {
  clearRedisPrefix,
  DEFAULT_CLIENT_SECRET,
  newRedisPrefix,
  simulatorEnv,
} from './test-env.js';

export const ALL: ResourceName[] = ['jobs', 'job_posts', 'tracking_links'];

/** A simulator, a database of its own, a Redis prefix of its own, and the env a CLI child needs. */
export interface SyncHarness {
  sim: ApiSimulator;
  database: TestDatabase;
  env: Record<string, string>;
  config: Config;
  log: ReturnType<typeof captureLogger>;
  /** Builds an app (call close() on it) with the harness's config. */
  app: (options?: AppOptions) => App;
  /** A `sync` of one resource stopped (as by SIGTERM) once `pages` pages are committed. */
  syncStoppedAfter: (resource: ResourceName, pages: number) => ReturnType<typeof runOnce>;
  /** One `sync` in this process, like the CLI's. */
  sync: (
    resources?: ResourceName[],
    requested?: RequestedMode,
    options?: AppOptions,
  ) => ReturnType<typeof runOnce>;
  /** Ids (as text) of live rows per resource, and what the simulator serves. */
  liveIds: (resource: ResourceName) => Promise<string[]>;
  expectedIds: (resource: ResourceName) => string[];
  /** How many of the simulator's records of a resource should be rejected. */
  expectedRejected: (resource: ResourceName) => number;
  close: () => Promise<void>;
}

export async function startSyncHarness(
  options: { simulator?: SimulatorOptions; env?: Record<string, string> } = {},
): Promise<SyncHarness> {
  const sim = await ApiSimulator.start({
    clientSecrets: [DEFAULT_CLIENT_SECRET],
    ...options.simulator,
  });
  const database = await createTestDatabase(inject('databaseUrl'));
  const env: Record<string, string> = {
    ...simulatorEnv(sim),
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
    HIRESYNC_RUN_BACKOFF: '200ms',
    HIRESYNC_RUN_ATTEMPTS: '4',
    HIRESYNC_HTTP_PORT: '0',
    ...options.env,
  };
  const config = loadConfig(env, RESOURCE_NAMES);
  const log = captureLogger('info');
  const app = (appOptions: AppOptions = {}) =>
    createApp(config, log.logger, { defaultMetrics: false, ...appOptions });
  return {
    sim,
    database,
    env,
    config,
    log,
    app,
    syncStoppedAfter: async (resource, pages) => {
      const a = app({
        onProgress: (p) => {
          if (p.pages === pages) a.shutdown.abort(new Error('test stop'));
        },
      });
      try {
        return await runOnce(a, [resource], 'auto');
      } finally {
        await a.close();
      }
    },
    sync: async (resources = ALL, requested = 'auto', appOptions = {}) => {
      const a = app(appOptions);
      try {
        return await runOnce(a, resources, requested);
      } finally {
        await a.close();
      }
    },
    liveIds: (resource) => liveIdsIn(database.db, resource),
    expectedIds: (resource) => {
      const ds = sim.dataset;
      // Jobs and job posts have only their id specified: some deliberately
      // malformed tracking-link shapes are valid jobs.
      return [...ds.presentIndexes(resource)]
        .filter((i) => validateRecord(resource, ds.record(resource, i)) === undefined)
        .map((i) => String(ds.idOf(resource, i)));
    },
    expectedRejected: (resource) => {
      const ds = sim.dataset;
      return [...ds.presentIndexes(resource)].filter(
        (i) => validateRecord(resource, ds.record(resource, i)) !== undefined,
      ).length;
    },
    close: async () => {
      await sim.close();
      await database.drop();
      await clearRedisPrefix(env);
    },
  };
}
