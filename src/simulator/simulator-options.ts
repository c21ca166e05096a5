import type { Dataset, DatasetOptions } from './dataset.js';
import type { RandomFaults } from './faults.js';
import type { RateLimit, RateLimitResetFormat, RetryAfterFormat } from './rate-limiter.js';
import type { SimulatedAccount } from './simulated-accounts.js';

/**
 * Which API the simulator plays: `seed`, the shapes `api-spec.md` shows (the
 * default), or `v3`, the shapes the live service (Harvest v3) serves.
 */
export type SimulatorShape = 'seed' | 'v3';

/** Default client id of the partner app. */
export const PARTNER_CLIENT_ID = 'partner-client';
/** Default client secret of the partner app. */
export const PARTNER_CLIENT_SECRET = 'partner-secret';

/** Options of {@link ApiSimulator.start}. */
export interface SimulatorOptions {
  /**
   * Which API to play: `seed` (default), the shapes `api-spec.md` shows, or
   * `v3`, the live service's (see `shapeDefaults` in shape.ts). A shape only
   * sets the options left undefined here and in each account's dataset
   * options (a {@link Dataset} passed in is served as it is).
   */
  shape?: SimulatorShape;
  /** Loopback address to listen on. Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  dataset?: Dataset | DatasetOptions;
  /** Default `demo-client`. */
  clientId?: string;
  /** Valid client secrets (several during a rotation). Default [`demo-secret`]. */
  clientSecrets?: string[];
  /** Valid version 1/2 API keys for the transition endpoint. Default [`demo-api-key`]. */
  apiKeys?: string[];
  /** `sub` values whose users are not site administrators (lists answer 403). */
  nonAdminSubs?: string[];
  /** Token lifetime. Default 3600 s. */
  tokenTtlSeconds?: number;
  /** How the token response states its lifetime. Default `expires_in`. */
  expiresField?: 'expires_in' | 'expires_at';
  /** Minting a token revokes the previous ones of the same credentials. Default false. */
  revokePreviousToken?: boolean;
  /**
   * Fixed-window rate limit on list requests; none when undefined (the seed
   * shape; v3: 75 / 30 s) or null. Each account counts its own window (a
   * request whose token the simulator never issued counts against the
   * default account's).
   */
  rateLimit?: RateLimit | null | undefined;
  /**
   * Send `X-RateLimit-Limit` and `X-RateLimit-Reset` beside
   * `X-RateLimit-Remaining` on every list response (a 422 included). Default
   * false: only Remaining, as the spec shows.
   */
  rateLimitHeaders?: boolean;
  /**
   * How `X-RateLimit-Reset` states the window's end: `seconds` until it
   * (to the millisecond; the default), `epoch`, Unix epoch seconds on the
   * API's clock (rounded up), as v3 sends it, with the windows aligned on the
   * epoch, or `epoch-ms`: epoch seconds to the millisecond, each window
   * opening with the first request after the last one closed.
   */
  rateLimitResetFormat?: RateLimitResetFormat;
  /** Send X-RateLimit-* headers on 429 responses too. Default false (the spec allows their absence). */
  rateLimitHeadersOn429?: boolean;
  /** Retry-After as delta-seconds, an HTTP-date or epoch seconds. Default seconds. */
  retryAfterFormat?: RetryAfterFormat;
  /**
   * Lifetime fields sent in place of the true one in client-credentials token
   * responses, e.g. `{ expires_in: 0.0001 }` or `{ expires_at: 1.1234 }`; the
   * simulator still honours `tokenTtlSeconds`.
   */
  statedTokenLifetime?: Record<string, unknown>;
  /** Path of the tracking links list. Default `/v3/tracking_links`. */
  trackingLinksPath?: string;
  /**
   * The extra resources served at `/v3/NAME` besides the declared ones
   * (names from `EXTRA_RESOURCE_NAMES`: applications, candidates, offers,
   * departments); `[]` for none. Default all of them. Also the default of
   * every account's `DatasetOptions.extraResources`; a {@link Dataset}
   * passed in serves, of these, those it holds. Records per resource:
   * `dataset.counts` (default 250 each).
   */
  extraResources?: readonly string[];
  /**
   * Path prefix of the OAuth token service: its endpoints are `{prefix}/token`
   * and `{prefix}/authorize`. Default `/oauth`.
   */
  authPath?: string;
  /**
   * Client id of the partner app, the client of the authorization code grant
   * (every account may authorize it). Default `partner-client`. Must differ
   * from every account's client id.
   */
  partnerClientId?: string;
  /** Valid client secrets of the partner app (several during a rotation). Default [`partner-secret`]. */
  partnerClientSecrets?: string[];
  /**
   * Scopes the partner app may be granted: a request for another answers
   * `invalid_scope`, a request for none is granted them all. Default none:
   * any scope requested is granted (and echoed), none requested grants none.
   */
  partnerScopes?: string[];
  /**
   * Partner access tokens carry the scopes of their grant (`harvest:NAME:list`
   * per list; `partnerScopes` and the scope requested decide which), and a
   * list request whose token lacks that list's scope answers 403 `{"message":
   * …}` naming the missing scope; the other lists work. A grant that names
   * no scope at all reads every list. Default false: a partner token reads
   * every list.
   */
  resourceScopes?: boolean;
  /**
   * Token-endpoint errors (both endpoints) in one shape: true, RFC 6749 5.2
   * `{"error", "error_description"}` (400, or 401 for `invalid_client`);
   * false, `{"message": …}` with the same statuses. Default undefined:
   * as before (the OAuth endpoint answers RFC 6749 bodies, the transition
   * endpoint `{"message": "Unauthorized"}`).
   */
  oauthErrorBodies?: boolean;
  /**
   * The token endpoint's own fixed window (60 s on the live service), counted
   * apart from the lists': a token request beyond `limit` in `windowMs`
   * (either endpoint, every client) answers 429 with `Retry-After`. Default none.
   */
  tokenEndpointWindow?: RateLimit | undefined;
  /** Lifetime of an authorization code. Default 60 s. */
  authorizationCodeTtlSeconds?: number;
  /** Lifetime of access tokens of the authorization code and refresh grants. Default `tokenTtlSeconds`. */
  partnerAccessTokenTtlSeconds?: number;
  /** A refresh token unused for this long answers `invalid_grant`. Default 86,400 s (24 h). */
  refreshTokenTtlSeconds?: number;
  /**
   * Every refresh answers a new refresh token and retires the one presented
   * (which then answers `invalid_grant`). Default true; false: refresh
   * responses carry no refresh token and the old one stays valid.
   */
  rotateRefreshTokens?: boolean;
  /**
   * A retired refresh token presented again revokes the whole authorization,
   * its newest refresh token and access tokens included (OAuth 2.0 security
   * BCP, refresh token reuse detection). Default false: only that request is refused.
   */
  revokeOnRefreshTokenReuse?: boolean;
  /** Delay before every list response. Default 0. */
  latencyMs?: number;
  /**
   * Keep rendered pages and serve them again to the same request while the
   * data is unchanged: benchmarks use it so the simulator's CPU, which a real
   * API spends on its own servers, does not compete with the sync's. Default false.
   */
  cachePages?: boolean;
  randomFaults?: RandomFaults;
  /**
   * How far the API's clock runs ahead of real time (negative: behind), in
   * ms: the `Date` header of every response, and the times of records changed
   * after start (the default of every account's `DatasetOptions.clockSkewMs`).
   * Default 0: Node's own `Date`.
   */
  clockSkewMs?: number;
  /**
   * More accounts, served beside the default one the options above describe
   * (see {@link simulatedAccounts}). Names, client ids and API keys must be
   * unique across all accounts.
   */
  accounts?: SimulatedAccount[];
}

/** What the simulator has seen and done, for assertions and benchmark figures. */
export interface SimulatorStats {
  listRequests: number;
  byStatus: Record<string, number>;
  tokensIssued: number;
  /** List requests answered 429. */
  rateLimited: number;
  /** Token requests answered 429 ({@link ApiSimulator.rateLimitTokenRequests}, `tokenEndpointWindow`). */
  tokenRequestsRateLimited: number;
  faultsInjected: Record<string, number>;
  /** The raw request targets (path and query) of the last 1,000 list requests. */
  receivedTargets: string[];
}
