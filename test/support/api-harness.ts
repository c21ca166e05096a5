import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import type { ApiClient } from '../../src/api/api-client.js';
import { createApiClient, firstPageUrl } from '../../src/api/create-api-client.js';
import { fetchPages, type Page } from '../../src/api/fetch-pages.js';
import { type Config, loadConfig, type ResourceName } from '../../src/config.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { ApiSimulator, type SimulatorOptions } from '../../src/simulator/api-simulator.js';
import { captureLogger } from './capture-logger.js';

export const SIM_SECRET = 'sim-secret-4b1d';
export const SIM_API_KEY = 'sim-api-key-77f3';

/** Options of {@link startApiHarness}. */
export interface ApiHarnessOptions {
  simulator?: SimulatorOptions;
  env?: Record<string, string | undefined>;
  mode?: 'client_credentials' | 'api_key';
}

/** A simulator, a config pointing at it, a Redis connection with a private key prefix, and clients. */
export interface ApiHarness {
  sim: ApiSimulator;
  config: Config;
  redis: Redis;
  prefix: string;
  log: ReturnType<typeof captureLogger>;
  client: (options?: { logger?: ReturnType<typeof captureLogger>['logger'] }) => ApiClient;
  walk: (resource: ResourceName, client?: ApiClient) => Promise<Page[]>;
  close: () => Promise<void>;
}

export async function startApiHarness(options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const sim = await ApiSimulator.start({
    clientSecrets: [SIM_SECRET],
    apiKeys: [SIM_API_KEY],
    ...options.simulator,
  });
  const creds =
    options.mode === 'api_key'
      ? { HIRESYNC_API_KEY: SIM_API_KEY }
      : {
          HIRESYNC_AUTH_URL: sim.authUrl,
          HIRESYNC_CLIENT_ID: 'demo-client',
          HIRESYNC_CLIENT_SECRET: SIM_SECRET,
        };
  const config = loadConfig({
    HIRESYNC_BASE_URL: sim.url,
    DATABASE_URL: inject('databaseUrl'),
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_RATE_LIMIT_WINDOW: '10s',
    ...creds,
    ...options.env,
  });
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const prefix = `test-${randomUUID()}`;
  const log = captureLogger();
  const client = (o: { logger?: ReturnType<typeof captureLogger>['logger'] } = {}) =>
    createApiClient({ config: config.api, redis, logger: o.logger ?? log.logger, prefix });
  const walk = async (resource: ResourceName, c = client()) => {
    const pages: Page[] = [];
    for await (const page of fetchPages({
      client: c,
      startUrl: firstPageUrl(config.api, resource),
    }))
      pages.push(page);
    return pages;
  };
  return {
    sim,
    config,
    redis,
    prefix,
    log,
    client,
    walk,
    close: async () => {
      await sim.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
    },
  };
}
