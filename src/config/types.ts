/**
 * The shapes of hiresync's configuration: what the loaders of src/config/load-config.ts
 * return, frozen, and hand to the rest of hiresync.
 */
import type { RecordPolicy } from '../privacy/police-page.js';
import type { RedisTarget } from '../redis/redis-target.js';
import type { Secret } from '../secret.js';
import type { ResourceName } from '../sync/ports.js';
import type { ResourceUpdatedFilter } from './resource-names.js';
import type { SecretKeys } from './secret-keys.js';

export type AuthConfig =
  | {
      mode: 'client_credentials';
      /** `HIRESYNC_AUTH_URL` + `/token`. */
      tokenUrl: string;
      clientId: string;
      clientSecret: Secret;
      sub: string | undefined;
      /**
       * The registered account whose stored credentials these are: errors
       * about them name it and `hiresync accounts update`. Undefined for
       * `default` (the environment's), whose errors name its variables.
       */
      account?: string | undefined;
      /**
       * The account is being added (`accounts add` tests its credentials
       * first): errors about its token name the flags of `add`, not `update`.
       */
      adding?: boolean | undefined;
    }
  | {
      mode: 'api_key';
      /** `HIRESYNC_BASE_URL` + `/auth/token`. */
      tokenUrl: string;
      apiKey: Secret;
      /** As for client credentials: the registered account, undefined for `default`. */
      account?: string | undefined;
      /** As for client credentials. */
      adding?: boolean | undefined;
    }
  | {
      /** A partner integration's customer: refresh grants with the partner app's credentials. */
      mode: 'partner';
      /** The account's auth URL (default `HIRESYNC_AUTH_URL`) + `/token`. */
      tokenUrl: string;
      /** `HIRESYNC_PARTNER_CLIENT_ID`. */
      clientId: string;
      /** `HIRESYNC_PARTNER_CLIENT_SECRET`. */
      clientSecret: Secret;
      /** The account whose refresh token (kept by a RefreshTokenVault) the grants use. */
      account: string;
      /** As for client credentials. */
      adding?: boolean | undefined;
    };

/** Everything the API client needs but the credentials. */
export interface ApiSettings {
  /** `HIRESYNC_BASE_URL` without a trailing slash. */
  baseUrl: string;
  /** Page size asked of the API (1..500). Default 500. */
  perPage: number;
  /** `status` filter of the jobs list. */
  jobsStatus: string | undefined;
  /** List path of tracking links. Default `/v3/tracking_links`. */
  trackingLinksPath: string;
  /** `HIRESYNC_RESOURCE_PATHS`: list paths of other resources by name; default `/v3/NAME`. */
  resourcePaths: Readonly<Record<string, string>>;
  /** Property of a JSON object body that holds the records; undefined: the body is the array. */
  recordsKey: string | undefined;
  /** First guess of the API's rate-limit window, until X-RateLimit-Reset states it or it is learned. Default 10 s. */
  rateLimitWindowMs: number;
  /** Requests of the window left unused for other clients of the same credentials. Default 0. */
  rateLimitReserve: number;
  /** Timeout of one HTTP request. Default 30 s. */
  httpTimeoutMs: number;
  /** Retries of a request after 5xx or network errors. Default 5. */
  maxRetries: number;
  /** Largest response body accepted, counted after decompression. Default 4 MiB (fits the 512 MB heap of the bin). */
  maxPageBytes: number;
  /** Longest Retry-After waited; a longer one ends the run's attempt. Default 1 h. */
  maxRetryAfterMs: number;
}

/** Everything the API client needs: the settings and one account's credentials. */
export interface ApiConfig extends ApiSettings {
  auth: AuthConfig;
}

/**
 * A partner app (HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET): its credentials are shared by every
 * partner account; each account has its own refresh token.
 */
export interface PartnerConfig {
  clientId: string;
  clientSecret: Secret;
  /** `HIRESYNC_AUTHORIZE_URL`, default `HIRESYNC_AUTH_URL` (default the live service's) + `/authorize`. */
  authorizeUrl: string | undefined;
  /** `HIRESYNC_PARTNER_SCOPE`, sent with the authorization request when set. */
  scope: string | undefined;
}

/** Where hiresync's Redis is and the prefix of its keys, as a configuration holds them. */
export interface RedisSettings {
  /** REDIS_URL, with REDIS_CA_FILE's PEM and REDIS_SENTINEL_PASSWORD. */
  redis: RedisTarget;
  /**
   * Prefix of every Redis key (queue, checkpoints, tokens, pacing):
   * HIRESYNC_REDIS_PREFIX (default `hiresync`), hash-tagged on a Cluster
   * (`{hiresync}`, src/redis/redis-target.ts keyPrefix).
   */
  redisPrefix: string;
}

export interface DatabaseConfig {
  databaseUrl: string;
  logLevel: string;
  /** `LOG_FORMAT`: `json` or `pretty`; undefined: pretty on a terminal, else JSON. */
  logFormat: 'json' | 'pretty' | undefined;
}

export interface StatusConfig extends DatabaseConfig, RedisSettings {
  /**
   * `HIRESYNC_SECRET_KEY`: the keys that seal and open the credentials of
   * registered accounts (the accounts layer makes its SecretBox of them);
   * undefined when the variable is unset (only `default` can run).
   */
  secretKeys: SecretKeys | undefined;
  /**
   * `HIRESYNC_UPDATED_LOOKBACK`: subtracted from the last successful run's
   * start (on the API's clock); a larger skew between the API's clock and the
   * worker's is a warning in the log and in `status`. Default 5 min.
   */
  updatedLookbackMs: number;
  /** How the environment's account (`default`) authenticates, as {@link AccountsConfig} says. */
  defaultAuthMode: AuthConfig['mode'] | undefined;
  /** `HIRESYNC_RESOURCES`: the resources of an account whose settings name none of their own. */
  resources: readonly ResourceName[];
}

export interface Config extends StatusConfig {
  /**
   * The API settings, and the environment's own credentials (account
   * `default`): undefined when the environment sets none, and then there is
   * no account `default`.
   */
  api: ApiSettings & { auth: AuthConfig | undefined };
  /** Attempts of a failing run before it is recorded as failed. Default 5. */
  runAttempts: number;
  /** First retry delay of a failing run (doubles each attempt). Default 30 s. */
  runBackoffMs: number;
  /** How long a dead process's run lock blocks the resource (renewed every third of it while alive). Default 15 s. */
  runLockTtlMs: number;
  /** A full run that would soft-delete more than this fraction of live rows marks none. Default 0.5. */
  maxDeleteFraction: number;
  /**
   * `HIRESYNC_MAX_SLOT_WAIT`: longest rate-limit wait a queued run spends
   * holding its worker slot; a longer one frees the slot for other accounts'
   * runs and the run resumes from its checkpoint when the wait is over. Default 5 s.
   */
  maxSlotWaitMs: number;
  /**
   * `HIRESYNC_UPDATED_FILTER`: the query-string template (holding `{since}`)
   * every incremental run sends on its first request; undefined: incremental
   * runs stop by id instead.
   */
  updatedFilter: string | undefined;
  /**
   * `HIRESYNC_EXTRA_WALKS`: per resource name, the queries (`active=false`)
   * of the walks a run reads after the default one, as part of the same run.
   * Default none.
   */
  extraWalks: Readonly<Record<string, readonly string[]>>;
  /**
   * `HIRESYNC_RESOURCE_UPDATED_FILTERS`: per resource name, its incremental
   * filter (over HIRESYNC_UPDATED_FILTER's and the declared one), or every
   * run of it full. Default none.
   */
  resourceUpdatedFilters: Readonly<Record<string, ResourceUpdatedFilter>>;
  /** `HIRESYNC_HISTORY`: keep a version of every record that changes in `<resource>_history`. Default on. */
  history: boolean;
  /**
   * `HIRESYNC_ERASE_DELETED_AFTER`: the worker erases, once a day, the records
   * deleted upstream (deleted_at) longer ago than this, history and rejected
   * records included, each logged in hiresync.erasures. Undefined (the
   * default): never; the worker removes the schedule.
   */
  eraseDeletedAfterMs: number | undefined;
  /** `HIRESYNC_CONCURRENCY`: runs one worker process runs at once. Default 4. */
  concurrency: number;
  /**
   * `HIRESYNC_METRICS_ACCOUNT_SERIES`: a /metrics scrape holds every account's
   * series while the enabled accounts are at most this many (`auto`: 100,
   * `all`: Infinity, `none`: 0); above, aggregates and the accounts that need action.
   */
  metricsAccountSeries: number;
  /** The partner app, when HIRESYNC_PARTNER_CLIENT_ID and _SECRET are set. */
  partner: PartnerConfig | undefined;
  /**
   * `HIRESYNC_PUBLIC_URL`: the public base URL of the worker's HTTP server,
   * without a trailing slash; connect links and the redirect URI
   * (`/oauth/callback`) are under it. Undefined when unset: no connect links.
   */
  publicUrl: string | undefined;
  /** `HIRESYNC_REFRESH_KEEPALIVE`: each enabled partner account is refreshed at least this often by `worker`. Default 6 h. */
  refreshKeepaliveMs: number;
  /** `HIRESYNC_INCREMENTAL_EVERY`: an account's incremental schedule, unless its settings say otherwise. Default 15 min. */
  incrementalEveryMs: number;
  /** `HIRESYNC_FULL_CRON`: an account's full schedule, unless its settings say otherwise. Default `0 3 * * *`. */
  fullCron: string;
  /**
   * `HIRESYNC_FULL_WINDOW`: each (account, resource)'s full run fires at its
   * cron's time plus a stable offset within this window, so thousands of
   * accounts do not resync at the same moment. Default 1 h; 0: at the cron's time.
   */
  fullWindowMs: number;
  /** `HIRESYNC_HTTP_PORT`/`_HOST` and `HIRESYNC_PUBLIC_PORT`/`_HOST`: where `worker` serves HTTP. */
  listeners: Listeners;
  /**
   * `HIRESYNC_WEBHOOK_MAX_INFLIGHT` (default 32) and
   * `HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES` (default 16 MiB): most webhook
   * bodies read at once, and most bytes of them held, before their
   * signatures are checked; a delivery beyond either is answered 503.
   */
  webhookIntake: { maxInflight: number; maxBufferedBytes: number };
  /** `HIRESYNC_CONSOLE_PASSWORD`: the console at `/` of the HTTP server (user `hiresync`); undefined: the console is off. */
  consolePassword: Secret | undefined;
  /**
   * `HIRESYNC_FIELD_POLICY` with `HIRESYNC_HASH_KEY`: what of each resource's
   * records is dropped or hashed before anything of them is stored, as
   * written (resolvePolicy checks it against the resources and mirrors it
   * onto reference columns); undefined when the variable is unset.
   */
  fieldPolicy: RecordPolicy | undefined;
  /**
   * `HIRESYNC_WEBHOOK_SECRET`: the account `default`'s webhook secret, which
   * the vendor signs its deliveries to `…/webhooks/default` with; undefined:
   * that endpoint refuses every delivery (registered accounts keep theirs in
   * hiresync.webhook_secrets).
   */
  webhookSecret: Secret | undefined;
}

/** The environment as the loaders read it: a frozen copy of `process.env` (readEnv, config/env.ts). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Configuration of `hiresync migrate`. */
export interface MigrateConfig extends DatabaseConfig {
  /** `HIRESYNC_RESOURCES` (optional): the list resources among them get their tables too. */
  resources: readonly ResourceName[];
}

/** Configuration of `hiresync demo`: where it creates its database and keeps its keys. */
export interface DemoConfig {
  /** `DATABASE_URL`: a Postgres server where the user may create databases; undefined: the demo's chain. */
  adminUrl: string | undefined;
  /** `REDIS_URL`; undefined: the demo's chain. */
  redisUrl: string | undefined;
}

/** Configuration of `hiresync accounts`: Postgres always; Redis and the secret key when a subcommand needs them. */
export interface AccountsConfig extends DatabaseConfig {
  /** `REDIS_URL` (src/config/redis-settings.ts); undefined unless asked for (disable, remove). */
  redis: RedisTarget | undefined;
  /** HIRESYNC_REDIS_PREFIX, hash-tagged on a Cluster (RedisSettings). */
  redisPrefix: string;
  /** `HIRESYNC_SECRET_KEY`; always set when asked for (add, rekey). */
  secretKeys: SecretKeys | undefined;
  /**
   * How the environment's account (`default`) authenticates, from which of
   * HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET and HIRESYNC_API_KEY are set;
   * undefined when neither or both are (`sync` would refuse that).
   */
  defaultAuthMode: AuthConfig['mode'] | undefined;
  /** Whether HIRESYNC_WEBHOOK_SECRET is set for the account `default` (never its value). */
  defaultWebhookSecret: boolean;
}

/** The HTTP listeners of `worker`. */
export interface Listeners {
  /**
   * `HIRESYNC_HTTP_PORT` (default 9464) on `HIRESYNC_HTTP_HOST`: /healthz
   * with its details, /metrics and the console; and the public routes too
   * when there is no public listener. Default host `0.0.0.0`, or
   * `127.0.0.1` when there is a public listener.
   */
  http: ListenAddress;
  /**
   * `HIRESYNC_PUBLIC_PORT` on `HIRESYNC_PUBLIC_HOST` (default `0.0.0.0`):
   * `/webhooks/…`, `/connect/…` and `/oauth/callback` only, every other
   * path 404. Undefined when HIRESYNC_PUBLIC_PORT is unset: one listener.
   */
  public: ListenAddress | undefined;
}

/** Where one HTTP listener of `worker` binds. */
export interface ListenAddress {
  /** 0: a free port the system picks (logged at start). */
  port: number;
  /** An IP address or a host name resolving to the machine's own. */
  host: string;
}
