import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, inject } from 'vitest';
import type { ApiClient } from '../../src/api/api-client.js';
import { createApiClient } from '../../src/api/create-api-client.js';
import { fetchPages } from '../../src/api/fetch-pages.js';
import {
  type EnvironmentConfig,
  loadConfig,
  type ResourceName,
  withEnvironmentCredentials,
} from '../../src/config/load-config.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { BUILT_IN_RESOURCES, declarationOf, RESOURCE_NAMES } from '../../src/resources/index.js';
import { listUrl } from '../../src/resources/read-plan.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import type { Page } from '../../src/sync/ports.js';
import { captureLogger } from './capture-logger.js';

export const SIM_SECRET = 'sim-secret-4b1d';
export const SIM_API_KEY = 'sim-api-key-77f3';

/** Options of {@link startApiHarness}. */
export interface ApiHarnessOptions {
  simulator?: SimulatorOptions;
  env?: Record<string, string | undefined>;
  mode?: 'client_credentials' | 'api_key';
}

/** Config, Redis and a private key prefix for clients of an API at `baseUrl`, and a page walk. */
function clientKit(
  baseUrl: string,
  authUrl: string,
  options: { mode?: 'client_credentials' | 'api_key'; env?: Record<string, string | undefined> },
) {
  const creds =
    options.mode === 'api_key'
      ? { HIRESYNC_API_KEY: SIM_API_KEY }
      : {
          HIRESYNC_AUTH_URL: authUrl,
          HIRESYNC_CLIENT_ID: 'demo-client',
          HIRESYNC_CLIENT_SECRET: SIM_SECRET,
        };
  const config = withEnvironmentCredentials(
    loadConfig(
      {
        HIRESYNC_BASE_URL: baseUrl,
        DATABASE_URL: inject('databaseUrl'),
        REDIS_URL: inject('redisUrl'),
        HIRESYNC_RATE_LIMIT_WINDOW: '10s',
        ...creds,
        ...options.env,
      },
      RESOURCE_NAMES,
    ),
  );
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
  const prefix = `test-${randomUUID()}`;
  const log = captureLogger();
  const client = (o: { logger?: ReturnType<typeof captureLogger>['logger'] } = {}) =>
    createApiClient({ config: config.api, redis, logger: o.logger ?? log.logger, prefix });
  const walk = async (resource: ResourceName, c: ApiClient, signal?: AbortSignal) => {
    const pages: Page[] = [];
    for await (const page of fetchPages({
      client: c,
      startUrl: listUrl(config.api, declarationOf(BUILT_IN_RESOURCES, resource)),
      signal,
    }))
      pages.push(page);
    return pages;
  };
  return { config, redis, prefix, log, client, walk };
}

/** A simulator, a config pointing at it, a Redis connection with a private key prefix, and clients. */
export interface ApiHarness {
  sim: ApiSimulator;
  config: EnvironmentConfig;
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
  const {
    config,
    redis,
    prefix,
    log,
    client,
    walk: walkWith,
  } = clientKit(sim.url, sim.authUrl, options);
  const walk = (resource: ResourceName, c = client()) => walkWith(resource, c);
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

/** Handles one request of a hand-written hostile API; `token` answers a token request normally. */
export type HostileHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  helpers: { token: () => void; body: () => Promise<string> },
) => void | Promise<void>;

/** A hand-written API on loopback (tokens at /oauth/token and /auth/token), and a client for it. */
export interface HostileHarness {
  url: string;
  config: EnvironmentConfig;
  redis: Redis;
  prefix: string;
  log: ReturnType<typeof captureLogger>;
  /** Request lines (`POST /oauth/token`, `GET /v3/jobs?…`) in the order received. */
  requests: string[];
  client: () => ApiClient;
  walk: (resource: ResourceName, signal?: AbortSignal) => Promise<Page[]>;
  close: () => Promise<void>;
}

/** Starts a node:http server answering with `handler`, and a client configured for it. */
export async function startHostileHarness(
  handler: HostileHandler,
  options: {
    env?: Record<string, string | undefined>;
    mode?: 'client_credentials' | 'api_key';
  } = {},
): Promise<HostileHarness> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const token = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ token_type: 'Bearer', access_token: 'hostile-token-1', expires_in: 3600 }),
      );
    };
    const body = async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    };
    Promise.resolve(handler(req, res, { token, body })).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { config, redis, prefix, log, client, walk } = clientKit(url, `${url}/oauth`, options);
  return {
    url,
    config,
    redis,
    prefix,
    log,
    requests,
    client: () => client(),
    walk: (resource, signal) => walk(resource, client(), signal),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deletePrefix(redis, prefix);
      redis.disconnect();
    },
  };
}

/**
 * Starts harnesses that are closed after each test of the file. Call once at
 * the top of a test file.
 */
export function closeHarnessesAfterEach(): {
  start: (options?: Parameters<typeof startApiHarness>[0]) => Promise<ApiHarness>;
  startHostile: (
    handler: HostileHandler,
    options?: Parameters<typeof startHostileHarness>[1],
  ) => Promise<HostileHarness>;
} {
  const open: Array<{ close: () => Promise<void> }> = [];
  afterEach(async () => {
    for (const harness of open.splice(0)) await harness.close();
  });
  return {
    start: async (options = {}) => {
      const harness = await startApiHarness(options);
      open.push(harness);
      return harness;
    },
    startHostile: async (handler, options = {}) => {
      const harness = await startHostileHarness(handler, options);
      open.push(harness);
      return harness;
    },
  };
}
