import type { Kysely } from 'kysely';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { effectiveSettings } from '../config/account-settings.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { Config } from '../config/types.js';
import type { Secret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import { AccountSettingsStore } from './account-settings-store.js';
import { WebhookSecretStore } from './webhook-secrets.js';

/** What the webhook endpoint knows of an account (see WebhookAccount, src/http/webhook-routes.ts). */
export interface WebhookAccountSettings {
  /** Its webhook secret: HIRESYNC_WEBHOOK_SECRET for `default`; undefined when it has none. */
  secret: Secret | undefined;
  /** The resources it syncs: its settings, else HIRESYNC_RESOURCES. */
  resources: readonly string[];
  /** Whether it runs: `default` always, a registered account when enabled. */
  runs: boolean;
}

/** Options of {@link webhookAccounts}. */
export interface WebhookAccountsOptions {
  db: Kysely<Database>;
  /** HIRESYNC_SECRET_KEY: opens the registered accounts' webhook secrets. */
  secretKeys: SecretKeys | undefined;
  config: Pick<Config, 'resources' | 'incrementalEveryMs' | 'fullCron' | 'webhookSecret'> & {
    api: { auth: unknown };
  };
  /** How long an answer is kept. Default 5 s: a secret set or removed applies within it. */
  ttlMs?: number;
  /** Most accounts kept (the oldest go first). Default 10,000. */
  maxEntries?: number;
}

/** Default {@link WebhookAccountsOptions.ttlMs}. */
export const WEBHOOK_ACCOUNT_TTL_MS = 5000;

/**
 * The webhook settings of an account by name, for the endpoint: `default`
 * from the configuration (when the environment sets its credentials), a
 * registered account from hiresync.accounts, hiresync.webhook_secrets and
 * its settings; undefined for an account that does not exist. Each answer
 * is kept `ttlMs`, so a burst of deliveries reads Postgres once per
 * account, and unknown names are kept too (bounded by `maxEntries`).
 */
export function webhookAccounts(
  options: WebhookAccountsOptions,
): (name: string) => Promise<WebhookAccountSettings | undefined> {
  const { config } = options;
  const ttlMs = options.ttlMs ?? WEBHOOK_ACCOUNT_TTL_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const secrets = new WebhookSecretStore(options.db, options.secretKeys);
  const settings = new AccountSettingsStore(options.db);
  const cache = new Map<
    string,
    { at: number; value: Promise<WebhookAccountSettings | undefined> }
  >();

  const read = async (name: string): Promise<WebhookAccountSettings | undefined> => {
    if (name === DEFAULT_ACCOUNT) {
      if (config.api.auth === undefined) return undefined;
      return { secret: config.webhookSecret, resources: config.resources, runs: true };
    }
    const row = await secrets.lookup(name);
    if (!row) return undefined;
    const own = row.secret === undefined ? undefined : await settings.get(name);
    return {
      secret: row.secret,
      resources: effectiveSettings(config, own).resources,
      runs: row.state === 'enabled',
    };
  };

  return (name) => {
    const now = Date.now();
    const kept = cache.get(name);
    if (kept && now - kept.at < ttlMs) return kept.value;
    const value = read(name);
    cache.delete(name);
    cache.set(name, { at: now, value });
    // A failure is not kept: the next delivery reads again.
    value.catch(() => {
      if (cache.get(name)?.value === value) cache.delete(name);
    });
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string);
    return value;
  };
}
