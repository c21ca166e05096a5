import type { Kysely } from 'kysely';
import { DEFAULT_ACCOUNT, NO_DEFAULT_ACCOUNT, schemaOf } from './account-name.js';
import {
  type Account,
  type AccountDirectory,
  AccountUnavailableError,
} from './accounts/account.js';
import { AccountSettingsStore } from './accounts/account-settings-store.js';
import { assertRegistered } from './accounts/account-store.js';
import type { ApiClient } from './api/api-client.js';
import { ApiPageSource } from './api/api-page-source.js';
import { createApiClient } from './api/create-api-client.js';
import { createHttp } from './api/http.js';
import { type AccountSettings, effectiveSettings } from './config/account-settings.js';
import type { ResourceName } from './config/load-config.js';
import { resourceNameProblem } from './config/resource-names.js';
import type { Config } from './config/types.js';
import { ConfigError } from './errors.js';
import type { Logger } from './logger.js';
import type { RecordPolicy } from './privacy/police-page.js';
import { resolvePolicy } from './privacy/policy-targets.js';
import { AppServices, type CloseOptions, type CloseOutcome } from './queue/app-services.js';
import { createQueueRedis, createRedis } from './queue/redis.js';
import { RedisCheckpointStore } from './queue/redis-checkpoint-store.js';
import { RunLock } from './queue/run-lock.js';
import { createSyncQueue } from './queue/sync-job.js';
import type { AccountContext, SyncProcessorDeps } from './queue/sync-processor.js';
import type { createSyncWorker } from './queue/sync-worker.js';
import { throttledWarn } from './queue/throttled-warn.js';
import { readWorkers } from './queue/worker-heartbeat.js';
import type { RedisConnection } from './redis/connect.js';
import {
  BUILT_IN_RESOURCES,
  catalogFor,
  declarationOf,
  listResourceOf,
  type ResourceCatalog,
  type ResourceDeclaration,
} from './resources/index.js';
import { planRead } from './resources/read-plan.js';
import { Metrics } from './status/metrics.js';
import { registerWorkerSeries } from './status/worker-series.js';
import type { RunProgress } from './sync/run-resource.js';
import { createDatabase } from './warehouse/database.js';
import { ResourceLock } from './warehouse/runs/resource-lock.js';
import { KyselyRunStore } from './warehouse/runs/run-store.js';
import { ensureListResources } from './warehouse/setup/migrate-all.js';
import type { Database } from './warehouse/tables.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Runs processed at once by each worker of the app; default HIRESYNC_CONCURRENCY. */
  concurrency?: number;
  onProgress?: (progress: RunProgress & { account: string }) => void;
  /** Collect Node's default process metrics. Default true. */
  defaultMetrics?: boolean;
  /** The resources the app can sync, by name. Default the built-in ones. */
  resources?: ResourceCatalog;
  /**
   * The accounts besides the environment's (hiresync.accounts); default none:
   * only `default` runs.
   */
  registry?: (db: Kysely<Database>) => AccountDirectory;
}

/** Everything `sync` and `worker` run on, wired from one Config. */
export interface App {
  config: Config;
  logger: Logger;
  /** The one pool of the process, in schema `public`; accounts' schemas share it. */
  db: Kysely<Database>;
  /** Checkpoints, tokens, pacing and locks: commands fail after a few reconnection attempts. */
  redis: RedisConnection;
  /** BullMQ's own connection: commands wait for the reconnection. */
  queueRedis: RedisConnection;
  metrics: Metrics;
  queue: ReturnType<typeof createSyncQueue>;
  /** `default` (when the environment sets credentials) and the registered accounts. */
  accounts: AccountDirectory;
  /** The registered accounts' own settings (resources, interval, cron), by account, read now. */
  accountSettings: () => Promise<Map<string, AccountSettings>>;
  /** The checkpoints of an account's runs. */
  checkpointsOf: (account: string) => RedisCheckpointStore;
  /** One run per (account, resource) at a time, across every process. */
  runLock: RunLock;
  /** The resources the app can sync, by name (a list resource declared when first asked for). */
  resources: ResourceCatalog;
  /** What an account's runs run on (its API client, schema, checkpoints), made once per registration. */
  contextOf: (account: string) => Promise<AccountContext>;
  shutdown: AbortController;
  /** Starts a worker on the shared queue, or on the queue `queueName` only (a `sync` command's). */
  startWorker: (queueName?: string) => ReturnType<typeof createSyncWorker>;
  /**
   * Stops the runs after their page in hand and closes everything. Without a
   * deadline it waits for all of it; see {@link CloseOptions}. Called again,
   * it returns the first call's outcome.
   */
  close: (options?: CloseOptions) => Promise<CloseOutcome>;
}

/**
 * The environment's account (`default`): its credentials and base URL are the
 * configuration's. Undefined when the environment sets no credentials: then
 * there is no account `default`.
 */
export function environmentAccount(config: Config): Account | undefined {
  const { auth } = config.api;
  if (auth === undefined) return undefined;
  return {
    name: DEFAULT_ACCOUNT,
    schema: schemaOf(DEFAULT_ACCOUNT),
    baseUrl: config.api.baseUrl,
    auth,
    version: 'environment',
  };
}

/** `default` (when the environment has credentials), then the accounts of `registry` (if any). */
function directoryOf(config: Config, registry: AccountDirectory | undefined): AccountDirectory {
  const own = environmentAccount(config);
  return {
    resolve: async (name) => {
      if (name === DEFAULT_ACCOUNT) {
        if (own) return own;
        throw new AccountUnavailableError(NO_DEFAULT_ACCOUNT);
      }
      if (!registry) throw new AccountUnavailableError(`account ${name} is not registered`);
      return registry.resolve(name);
    },
    enabledNames: async () => [
      ...(own ? [DEFAULT_ACCOUNT] : []),
      ...(registry ? (await registry.enabledNames()).filter((n) => n !== DEFAULT_ACCOUNT) : []),
    ],
  };
}

/**
 * `declared`, and a list resource (stored as sent) for any other name that
 * can be one, declared when first asked for: an account's settings may name
 * resources HIRESYNC_RESOURCES does not (accounts add|update --resources).
 */
function openCatalog(declared: ResourceCatalog): ResourceCatalog {
  const catalog = new Map(declared);
  return new (class extends Map<ResourceName, ResourceDeclaration> {
    override get(name: ResourceName): ResourceDeclaration | undefined {
      const known = super.get(name);
      if (known || resourceNameProblem(name) !== undefined) return known;
      const declaration = listResourceOf(name);
      super.set(name, declaration);
      return declaration;
    }
  })(catalog);
}

/**
 * `config` with its field policy resolved against the built-in resources: the
 * commands that sync call it right after loading the configuration, so a
 * policy the resources cannot store exits 2 before anything connects.
 */
export function withResolvedPolicy(config: Config): Config {
  if (!config.fieldPolicy) return config;
  return Object.freeze({
    ...config,
    fieldPolicy: policyFor(config.fieldPolicy, BUILT_IN_RESOURCES),
  });
}

/** `policy` resolved against the declared resources (resolvePolicy), or a ConfigError naming each problem. */
function policyFor(policy: RecordPolicy, declared: ResourceCatalog): RecordPolicy {
  const resolved = resolvePolicy(policy, declared);
  if ('problems' in resolved) {
    throw new ConfigError(
      resolved.problems.map((message) => ({ variable: 'HIRESYNC_FIELD_POLICY', message })),
    );
  }
  return resolved.policy;
}

/** What createApp opens: the pool, the Redis connections, the queue, the metrics. */
function openConnections(config: Config, logger: Logger, options: AppOptions, concurrency: number) {
  // Each running run holds its Postgres resource lock's connection, which
  // its statements go through, and, while a full run writes a page beside
  // the one on that connection (src/warehouse/pages/pipelined-page.ts), one
  // more; the rest (account lookups, list tables made on demand, a failed
  // run's record, metrics) take the two left, or wait for one. Accounts
  // share this pool: connections never grow with their number.
  const db = createDatabase(config.databaseUrl, {
    max: 2 * concurrency + 2,
    onUnverified: (warning) => logger.warn(warning),
  });
  // A host that vanishes with a run (cut off, powered off) releases the
  // run's Postgres lock once the server has found its connection dead,
  // within about one run-lock lifetime, as its Redis lock expires.
  const resourceLock = new ResourceLock(db, { deadPeerMs: config.runLockTtlMs });
  const redis = createRedis(config.redis, logger, 'hiresync');
  const queueRedis = createQueueRedis(config.redis, logger, 'hiresync-queue');
  const http = createHttp({ timeoutMs: config.api.httpTimeoutMs });
  const queue = createSyncQueue(queueRedis, config.redisPrefix, undefined, {
    fullWindowMs: config.fullWindowMs,
  });
  const metrics = new Metrics({
    defaultMetrics: options.defaultMetrics ?? true,
    db,
    queue,
    withDefault: config.api.auth !== undefined,
    accountSeries: config.metricsAccountSeries,
    // A pair keeps its series above the threshold once its runs have missed a few schedules.
    staleAfterSeconds: Math.max(3600, (3 * config.incrementalEveryMs) / 1000),
    // What the schedules cover: a resource dropped from them must not look stale.
    synced: async () => {
      const own = await new AccountSettingsStore(db).all();
      return (account, resource) =>
        effectiveSettings(config, own.get(account)).resources.includes(resource);
    },
  });
  registerWorkerSeries(metrics.registry, () => readWorkers(redis, config.redisPrefix));
  // Without a listener BullMQ would print its errors raw; an outage emits one per call.
  queue.on('error', throttledWarn(logger, 'queue error'));
  return { db, resourceLock, redis, queueRedis, http, queue, metrics };
}

type Connections = ReturnType<typeof openConnections>;

/** What an account's context is made of besides the account. */
interface ContextParts extends Connections {
  config: Config;
  logger: Logger;
  resources: ResourceCatalog;
  fieldPolicy: RecordPolicy | undefined;
  checkpointsOf: (account: string) => RedisCheckpointStore;
  shutdown: AbortController;
}

/** What `account`'s runs run on: its API client (added to `clients`), its run store, its checkpoints. */
function contextFor(
  name: string,
  account: Account,
  parts: ContextParts,
  clients: Set<ApiClient>,
): AccountContext {
  const { config, logger, db, resources } = parts;
  const api = { ...config.api, baseUrl: account.baseUrl, auth: account.auth };
  const accountMetrics = parts.metrics.forAccount(name);
  const client = createApiClient({
    config: api,
    redis: parts.redis,
    logger: logger.child({ account: name }),
    metrics: accountMetrics,
    prefix: config.redisPrefix,
    http: parts.http,
    refreshTokens: account.refreshTokens,
    credentialRefusals: account.credentialRefusals,
    // Read when a list answers 404: its error names the list in force.
    resourcesSource: async () => {
      const own = (await new AccountSettingsStore(db).get(name))?.resources;
      return own ? { kind: 'account', account: name, resources: own } : { kind: 'deployment' };
    },
  });
  clients.add(client);
  const store = new KyselyRunStore(db, {
    resources,
    recordsKey: config.api.recordsKey,
    maxDeleteFraction: config.maxDeleteFraction,
    history: config.history,
    fieldPolicy: parts.fieldPolicy,
    // A list resource of HIRESYNC_RESOURCES gets its tables in every
    // schema; one only this account's settings name, in its schema only.
    ensureListResource: async (resource) => {
      const created = await ensureListResources(
        db,
        [resource],
        config.resources.includes(resource) ? {} : { schema: account.schema },
      );
      if (created.length > 0) logger.info({ resource, created }, 'list resource tables created');
    },
    resourceLock: parts.resourceLock,
    account: name,
    ...(name === DEFAULT_ACCOUNT
      ? {}
      : { assertWritable: (trx) => assertRegistered(trx, name, account.version) }),
  });
  return {
    source: new ApiPageSource(client, api, resources),
    plan: (resource) => planRead(declarationOf(resources, resource), config, account),
    store,
    pinned: { over: (session) => store.over(session) },
    checkpoints: parts.checkpointsOf(name),
    metrics: accountMetrics,
    renewToken: () => client.renewToken(parts.shutdown.signal),
    ensureToken: () => client.ensureToken(parts.shutdown.signal),
  };
}

/**
 * An account's context, made once per version of the account (its
 * credentials, its URLs); every API client made is added to `clients`, so
 * that closing waits for their token requests under way.
 */
function accountContexts(
  accounts: AccountDirectory,
  parts: ContextParts,
  clients: Set<ApiClient>,
): (account: string) => Promise<AccountContext> {
  const contexts = new Map<string, { version: string; context: Promise<AccountContext> }>();
  return async (name) => {
    let account: Account;
    try {
      account = await accounts.resolve(name);
    } catch (error) {
      // Removed or disabled: nothing of its old registration is kept.
      if (error instanceof AccountUnavailableError) contexts.delete(name);
      throw error;
    }
    const cached = contexts.get(name);
    if (cached?.version === account.version) return cached.context;
    const context = Promise.resolve(contextFor(name, account, parts, clients));
    contexts.set(name, { version: account.version, context });
    return context;
  };
}

export function createApp(config: Config, logger: Logger, options: AppOptions = {}): App {
  const concurrency = options.concurrency ?? config.concurrency;
  const declared = catalogFor(config.resources, options.resources ?? BUILT_IN_RESOURCES);
  const resources = openCatalog(declared);
  // Before anything connects: a policy the resources cannot store exits 2.
  const fieldPolicy = config.fieldPolicy && policyFor(config.fieldPolicy, declared);
  const connections = openConnections(config, logger, options, concurrency);
  const { db, redis, queueRedis, resourceLock } = connections;
  const prefix = config.redisPrefix;
  const shutdown = new AbortController();
  const accounts = directoryOf(config, options.registry?.(db));
  const checkpointsOf = (account: string) => new RedisCheckpointStore(redis, prefix, account);
  const clients = new Set<ApiClient>();
  const contextOf = accountContexts(
    accounts,
    { ...connections, config, logger, resources, fieldPolicy, checkpointsOf, shutdown },
    clients,
  );
  const runLock = new RunLock(redis, prefix, config.runLockTtlMs, resourceLock);
  const deps: SyncProcessorDeps = {
    accounts: contextOf,
    runLock,
    logger,
    shutdown: shutdown.signal,
    onProgress: options.onProgress,
    maxSlotWaitMs: config.maxSlotWaitMs,
  };
  const services = new AppServices({ ...connections, logger, shutdown }, clients);
  return {
    config,
    logger,
    db,
    redis,
    queueRedis,
    metrics: connections.metrics,
    queue: connections.queue,
    accounts,
    accountSettings: () => new AccountSettingsStore(db).all(),
    checkpointsOf,
    runLock,
    resources,
    contextOf,
    shutdown,
    startWorker: (queueName) => services.startWorker(config, deps, { concurrency, queueName }),
    close: (closeOptions) => services.close(closeOptions),
  };
}
