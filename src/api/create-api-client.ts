import type { Got } from 'got';
import type { ApiConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import { ApiClient, type ApiClientMetrics } from './api-client.js';
import type { CredentialRefusals } from './credential-refusal.js';
import { createHttp } from './http.js';
import type { ResourcesSource } from './not-served.js';
import { RateLimitPacer } from './rate-limit-pacer.js';
import type { RefreshTokenVault } from './refresh-token-port.js';
import { TokenCipher } from './token-cipher.js';
import { TokenProvider } from './token-provider.js';
import { RedisTokenStore } from './token-store.js';

/** Options of {@link createApiClient}. */
export interface CreateApiClientOptions {
  config: ApiConfig;
  redis: RedisConnection;
  logger: Logger;
  metrics?: ApiClientMetrics;
  /** Redis key prefix. Default `hiresync`. */
  prefix?: string;
  /** The got instance to send with (shared by the clients of a process); default a new one. */
  http?: Got;
  /** A partner account's refresh token (required when `config.auth.mode` is partner). */
  refreshTokens?: RefreshTokenVault | undefined;
  /** A registered client-credentials or API-key account: where a refusal of its credential is recorded. */
  credentialRefusals?: CredentialRefusals | undefined;
  /** Where the account's resources are set, named by a 404's error (see ApiClientOptions). */
  resourcesSource?: (() => Promise<ResourcesSource>) | undefined;
}

/** Assembles the API client: one got instance, tokens and pacing shared through Redis. */
export function createApiClient(options: CreateApiClientOptions): ApiClient {
  const { config, redis, logger, metrics } = options;
  const http = options.http ?? createHttp({ timeoutMs: config.httpTimeoutMs });
  const cipher = new TokenCipher(config.auth);
  const store = new RedisTokenStore({ redis, cipher, prefix: options.prefix });
  const tokens = new TokenProvider({
    auth: config.auth,
    http,
    store,
    logger,
    maxRetries: config.maxRetries,
    defaultRetryAfterMs: config.rateLimitWindowMs,
    maxRetryAfterMs: config.maxRetryAfterMs,
    maxResponseBytes: config.maxPageBytes,
    timeoutMs: config.httpTimeoutMs,
    ...(options.refreshTokens ? { refreshTokens: options.refreshTokens } : {}),
    credentialRefusals: options.credentialRefusals,
    onTokenRequest: (outcome) => metrics?.onTokenRequest?.(outcome),
  });
  const pacer = new RateLimitPacer({
    redis,
    namespace: cipher.namespace,
    windowMs: config.rateLimitWindowMs,
    reserve: config.rateLimitReserve,
    maxWaitMs: config.maxRetryAfterMs,
    // An attempt has its answer, or has failed, within its timeout.
    inFlightMs: config.httpTimeoutMs + 1000,
    prefix: options.prefix,
  });
  return new ApiClient({
    config,
    http,
    tokens,
    pacer,
    logger,
    metrics,
    resourcesSource: options.resourcesSource,
  });
}
