import type { Kysely } from 'kysely';
import type { Account } from '../../accounts/account.js';
import { accountResources } from '../../accounts/account-resources.js';
import type { OpenTester } from '../../accounts/add-account.js';
import { type App, createApp } from '../../app.js';
import type { Config } from '../../config/types.js';
import type { Logger } from '../../logger.js';
import type { AccountContext } from '../../queue/sync-processor.js';
import { redactSecrets } from '../../secret.js';
import { checkPrefixOwner, confirmRedisDatabase } from '../../status/preflight.js';
import {
  probeResources,
  probeToken,
  type ResourceProbe,
  type TokenProbe,
} from '../../sync/probe-account.js';
import type { Database } from '../../warehouse/tables.js';

/** A test asks for one record per page: the page says all it has to say. */
const PROBE_PER_PAGE = 1;
/** Retries of a failing request in a test: a blip is retried, an outage is reported soon. */
const PROBE_MAX_RETRIES = 2;
/** Longest rate-limit wait of a test; a longer one is reported as the resource's error. */
const PROBE_MAX_WAIT_MS = 60_000;

/**
 * An app to test accounts with: createApp's, so that each account's API
 * client, token provider (Redis cache and lock; a partner account's refresh
 * grants through its vault, which stores a rotated refresh token) and
 * pacing are the ones its runs use. It never starts a worker, so nothing is
 * queued, run, checkpointed or written to an account's tables. Pages of one
 * record, at most two retries, rate-limit waits of a minute at most.
 * `resolve` gives the accounts it tests, from the app's pool `db` (`default`
 * is the environment's).
 * Redis is checked to be REDIS_URL's database and the prefix this database's.
 */
export async function openProbeApp(
  config: Config,
  logger: Logger,
  resolve: (name: string, db: Kysely<Database>) => Promise<Account>,
): Promise<App> {
  const api = {
    ...config.api,
    perPage: PROBE_PER_PAGE,
    maxRetries: Math.min(config.api.maxRetries, PROBE_MAX_RETRIES),
    maxRetryAfterMs: Math.min(config.api.maxRetryAfterMs, PROBE_MAX_WAIT_MS),
  };
  // Before any connection of the app: nothing may be written to a database REDIS_URL does not name.
  await confirmRedisDatabase(config.redis);
  const app = createApp({ ...config, api }, logger, {
    concurrency: 1,
    defaultMetrics: false,
    registry: (db) => ({ resolve: (name) => resolve(name, db), enabledNames: async () => [] }),
  });
  try {
    await checkPrefixOwner(app.db, app.redis, config.redisPrefix, false);
    return app;
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** What a test of one account found. */
export interface AccountProbe {
  token: TokenProbe;
  /** Empty when no token was minted. */
  resources: ResourceProbe[];
}

/**
 * Mints a new access token for account `name` of `app` (see
 * {@link openProbeApp}) with its own token provider; returns what came of it,
 * and the account's context to read its pages with.
 */
export async function mintAccountToken(
  app: App,
  name: string,
): Promise<{ token: TokenProbe; context: AccountContext }> {
  const context = await app.contextOf(name);
  const token = await probeToken(async () => {
    await context.renewToken?.();
  });
  return { token, context };
}

/** Reads the first page of each of account `name`'s resources with its `context` (a token minted). */
export async function readAccountResources(
  app: App,
  name: string,
  context: AccountContext,
): Promise<ResourceProbe[]> {
  const account = await app.accounts.resolve(name);
  return probeResources(
    context.source,
    await accountResources(app.db, app.config, account),
    app.shutdown.signal,
  );
}

/** Tests account `name` of `app`: a token minted, then the first page of each of its resources. */
export async function probeAccount(app: App, name: string): Promise<AccountProbe> {
  const { token, context } = await mintAccountToken(app, name);
  if (!token.ok) return { token, resources: [] };
  return { token, resources: await readAccountResources(app, name, context) };
}

/**
 * A test's outcome for a person: the token, then one line per resource
 * (`ok`, `not permitted (scope …)`, or `failed: ` and what failed and what
 * to do); the first resource not permitted is followed by the API's answer
 * and what to do. Redacted.
 */
export function formatProbe(name: string, mode: string, probe: AccountProbe): string {
  const head = probe.token.ok
    ? `account ${name} (${mode}): access token minted`
    : `account ${name} (${mode}): no access token could be minted with its credentials: ${probe.token.error}`;
  const width = Math.max(0, ...probe.resources.map((r) => r.resource.length));
  // The 403s of one account say the same but for the list: explained once.
  let explained = false;
  const lines = probe.resources.flatMap((r) => {
    const label = `  ${r.resource.padEnd(width)}  `;
    if (r.outcome === 'ok') return [`${label}ok`];
    if (r.outcome === 'failed') return [`${label}failed: ${r.error}`];
    const line = `${label}not permitted (scope ${r.scope})`;
    if (explained) return [line];
    explained = true;
    return [line, `${' '.repeat(label.length)}${r.error}`];
  });
  return redactSecrets([head, ...lines].join('\n'));
}

/**
 * The tester `accounts add` tests a new account with ({@link openProbeApp}):
 * a token minted with the account's own token provider, then the first page
 * of each of its resources read with a context of the account as registered.
 */
export function probeTester(config: Config, logger: Logger): OpenTester<ResourceProbe> {
  return async (resolve) => {
    const app = await openProbeApp(config, logger, (name) => resolve(name));
    return {
      mintToken: async (name) => (await mintAccountToken(app, name)).token,
      readResources: async (name) => readAccountResources(app, name, await app.contextOf(name)),
      close: () => app.close(),
    };
  };
}
