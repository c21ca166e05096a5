import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { BUILT_IN_RESOURCES } from '../resources/index.js';
import { CursorCodec } from './cursor-codec.js';
import { Dataset, type DatasetOptions, mix, type SimResource } from './dataset.js';
import { EXTRA_RESOURCE_NAMES, extraResourcesNamed } from './extra-resources.js';
import {
  type GrantRefusal,
  type GrantTokens,
  type PartnerGrant,
  PartnerGrants,
  type PartnerStats,
} from './partner-grants.js';

export type { PartnerStats } from './partner-grants.js';

/** How a 429's Retry-After states its wait. */
export type RetryAfterFormat = 'seconds' | 'http-date' | 'epoch';

/** A one-shot fault, applied to the next list request(s). */
export type Fault =
  | { kind: 'status'; status: number }
  /** 429; `epoch` sends Unix epoch seconds (now + retryAfterS), as some APIs do. */
  | { kind: 'rate-limit'; retryAfterS: number; format?: RetryAfterFormat }
  | { kind: 'malformed-body' }
  | { kind: 'next-origin'; origin: string }
  | { kind: 'self-next' }
  /** The next link points back at the previous list request's target (a B → C → B loop). */
  | { kind: 'previous-next' }
  /**
   * A 200 whose JSON body (`[{},{},…]`) is `bytes` long, streamed without
   * holding it; `gzip` sends it compressed (a small transfer that expands),
   * `declareLength` (default true without gzip) sends its content-length.
   */
  | { kind: 'oversized-body'; bytes: number; gzip?: boolean; declareLength?: boolean }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop-connection' };

/** Faults drawn at random on list requests, by probability (0..1). For soaks. */
export interface RandomFaults {
  serverError?: number;
  rateLimit?: number;
  slow?: number;
  slowMs?: number;
  dropConnection?: number;
  revokeTokens?: number;
  seed?: number;
}

/** A fixed window of `limit` list requests per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * A customer account the simulator serves beside the default one (the
 * top-level options), as the real API serves many customers: credentials,
 * data and rate budget of its own. A token minted for it reads only its data.
 */
export interface SimulatedAccount {
  /** Unique among the accounts; `default` names the top-level options' account. */
  name: string;
  /** Client id of the client credentials grant; none: that grant is refused for the account. */
  clientId?: string;
  /** Valid client secrets of `clientId` (several during a rotation). Required with `clientId`. */
  clientSecrets?: string[];
  /** Valid version 1/2 API keys for the transition endpoint. Default none. */
  apiKeys?: string[];
  /** Its data. Default a dataset of default options (seed 1, 250 records each, as the default account's). */
  dataset?: Dataset | DatasetOptions;
  /**
   * Its fixed window, counted for this account alone. Default (undefined) the
   * top-level `rateLimit`, also counted for this account alone; null: none.
   */
  rateLimit?: RateLimit | null;
  /** `sub` values whose users are not site administrators (lists answer 403). Default none. */
  nonAdminSubs?: string[];
  /** Lists answer 403 to every token of the account. Default false; see {@link ApiSimulator.setForbidden}. */
  forbidden?: boolean;
}

/** Name of the account the top-level options describe. */
export const DEFAULT_ACCOUNT = 'default';

/** Options of {@link simulatedAccounts}. */
export interface SimulatedAccountsOptions {
  /** Records per resource of each account. Default 20. */
  records?: number;
  /** Records of some resources, overriding `records`. */
  counts?: Partial<Record<SimResource, number>>;
  /** Each account's own window; default the top-level `rateLimit`, null: none. */
  rateLimit?: RateLimit | null;
  /** Other dataset options every account shares (flat tracking links, resources, extra resources, …). */
  dataset?: Omit<DatasetOptions, 'counts' | 'seed' | 'idOffset'>;
}

/**
 * `n` accounts, the same on every call: `acct001`, `acct002`, … with client
 * id `acct001-client`, secret `acct001-secret` and API key `acct001-api-key`;
 * account i's data has seed 100 + i and ids 10^6·i above the default
 * account's (distinct while each account holds under 142,857 records per
 * resource and i < 1000).
 */
export function simulatedAccounts(
  n: number,
  options: SimulatedAccountsOptions = {},
): SimulatedAccount[] {
  const records = options.records ?? 20;
  return Array.from({ length: n }, (_, k) => {
    const i = k + 1;
    const name = `acct${String(i).padStart(3, '0')}`;
    const counts: Record<SimResource, number> = {};
    const extras = options.dataset?.extraResources ?? EXTRA_RESOURCE_NAMES;
    for (const resource of [
      ...(options.dataset?.resources ?? BUILT_IN_RESOURCES).keys(),
      ...extras,
    ])
      counts[resource] = options.counts?.[resource] ?? records;
    const account: SimulatedAccount = {
      name,
      clientId: `${name}-client`,
      clientSecrets: [`${name}-secret`],
      apiKeys: [`${name}-api-key`],
      dataset: { ...options.dataset, counts, seed: 100 + i, idOffset: (i % 1000) * 1_000_000 },
    };
    if (options.rateLimit !== undefined) account.rateLimit = options.rateLimit;
    return account;
  });
}

/** Options of {@link ApiSimulator.start}. */
export interface SimulatorOptions {
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
   * Fixed-window rate limit on list requests; none when undefined. Each
   * account counts its own window (a request whose token the simulator never
   * issued counts against the default account's).
   */
  rateLimit?: RateLimit | undefined;
  /**
   * Send `X-RateLimit-Limit` and `X-RateLimit-Reset` (seconds until the window
   * resets, to the millisecond) beside `X-RateLimit-Remaining` on every list
   * response. Default false: only Remaining, as the spec shows.
   */
  rateLimitHeaders?: boolean;
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
  /** Token requests answered 429 ({@link ApiSimulator.rateLimitTokenRequests}). */
  tokenRequestsRateLimited: number;
  faultsInjected: Record<string, number>;
  /** The raw request targets (path and query) of the last 1,000 list requests. */
  receivedTargets: string[];
}

/** What one account has seen: its share of {@link SimulatorStats}. */
export interface AccountStats {
  listRequests: number;
  byStatus: Record<string, number>;
  tokensIssued: number;
  /** List requests answered 429. */
  rateLimited: number;
}

/** An account as the simulator runs it. */
interface AccountState {
  readonly name: string;
  readonly clientId: string | undefined;
  readonly clientSecrets: readonly string[];
  readonly apiKeys: readonly string[];
  readonly dataset: Dataset;
  readonly rateLimit: RateLimit | undefined;
  readonly nonAdminSubs: readonly string[];
  forbidden: boolean;
  window: { start: number; count: number };
  /** Faults for this account's next list requests, before the shared ones. */
  readonly faults: Fault[];
  readonly stats: AccountStats;
}

interface IssuedToken {
  account: AccountState;
  owner: string;
  sub: string | undefined;
  expiresAt: number;
  revoked: boolean;
  /** The partner authorization the token was minted under; the token is invalid once it is revoked. */
  grant?: PartnerGrant | undefined;
}

/** Called just before a refresh response is written (see {@link ApiSimulator.onRefresh}). */
export type RefreshListener = (account: string) => void | Promise<void>;

/** Default client id of the partner app. */
export const PARTNER_CLIENT_ID = 'partner-client';
/** Default client secret of the partner app. */
export const PARTNER_CLIENT_SECRET = 'partner-secret';

/** Whether `text` is an http redirect URI on a loopback host, without fragment or credentials. */
function isLoopbackRedirect(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    url.protocol === 'http:' &&
    (host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)) &&
    !text.includes('#') &&
    !url.username &&
    !url.password
  );
}

/** The 302 to `redirectUri` with `params` added to its query (RFC 6749 4.1.2). */
function redirect(res: ServerResponse, redirectUri: string, params: Record<string, string>): void {
  const location = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) location.searchParams.append(name, value);
  res.writeHead(302, { location: location.href, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

/** Token endpoint responses are never cached (RFC 6749 5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function unprocessable(res: ServerResponse, errors: unknown[]): void {
  json(res, 422, { message: 'Unprocessable Content', errors });
}

function basicCredentials(req: IncomingMessage): [string, string] | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Streams an oversized `[{},{},…]` body of `fault.bytes` bytes (before
 * compression) in 64 KiB pieces, honouring backpressure, and stops when the
 * client hangs up, so the simulator never holds the body itself.
 */
async function sendOversized(
  res: ServerResponse,
  fault: Extract<Fault, { kind: 'oversized-body' }>,
  headers: Record<string, string>,
): Promise<void> {
  const piece = Buffer.from('{},'.repeat(21_845));
  // `[` and k elements `{}` with k - 1 commas and a closing `]`: 3k + 1 bytes.
  const elements = Math.max(1, Math.floor((fault.bytes - 1) / 3));
  const total = 3 * elements + 1;
  const head: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  };
  if (fault.gzip) head['content-encoding'] = 'gzip';
  else if (fault.declareLength ?? true) head['content-length'] = total;
  res.writeHead(200, head);
  const gzip = fault.gzip ? createGzip({ level: 9 }) : undefined;
  gzip?.pipe(res);
  const out: NodeJS.WritableStream = gzip ?? res;
  let closed = false;
  res.once('close', () => {
    closed = true;
    gzip?.destroy();
  });
  const write = async (chunk: Buffer): Promise<void> => {
    if (closed) return;
    if (!out.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          out.removeListener('drain', done);
          res.removeListener('close', done);
          resolve();
        };
        out.once('drain', done);
        res.once('close', done);
      });
    }
  };
  await write(Buffer.from('['));
  let left = 3 * elements;
  while (left > 0 && !closed) {
    const n = Math.min(left, piece.length);
    left -= n;
    // The last element's comma becomes the closing bracket.
    if (left === 0) await write(Buffer.concat([piece.subarray(0, n - 1), Buffer.from(']')]));
    else await write(piece.subarray(0, n));
  }
  if (closed) return;
  out.end();
}

/**
 * The built-in API simulator: a real HTTP server on loopback that implements
 * the API specification (both token endpoints, the partner apps' authorization
 * code grant with refresh token rotation, the declared lists and the extra
 * ones (applications, candidates, …) with id-descending cursor pagination and
 * Link headers, every 422 rule, 401 on expired or revoked tokens, 403 for
 * non-administrators, a fixed-window rate limit with X-RateLimit-Remaining
 * and 429/Retry-After) plus fault injection.
 */
export class ApiSimulator {
  readonly dataset: Dataset;
  readonly stats: SimulatorStats = {
    listRequests: 0,
    byStatus: {},
    tokensIssued: 0,
    rateLimited: 0,
    tokenRequestsRateLimited: 0,
    faultsInjected: {},
    receivedTargets: [],
  };
  /** Base URL, for HIRESYNC_BASE_URL. */
  url = '';
  /** Token service URL, for HIRESYNC_AUTH_URL. */
  authUrl = '';
  /** Authorize endpoint of the partner flow (`{authUrl}/authorize`), for HIRESYNC_AUTHORIZE_URL. */
  authorizeUrl = '';

  readonly #options: SimulatorOptions;
  readonly #server: Server;
  readonly #cursors = new CursorCodec();
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #faults: Fault[] = [];
  /** Retry-After (seconds) of the 429s queued for the next token requests. */
  readonly #tokenRateLimits: number[] = [];
  readonly #pageCache = new Map<string, { text: string; lastIndex: number; hasMore: boolean }>();
  /** Every account by name, the default one first. */
  readonly #accounts = new Map<string, AccountState>();
  readonly #byClientId = new Map<string, AccountState>();
  readonly #byApiKey = new Map<string, AccountState>();
  readonly #default: AccountState;
  /** List paths of the resources any account's dataset declares or holds as extra. */
  readonly #listPaths = new Map<string, SimResource>();
  /** Names of the extra resources served (`SimulatorOptions.extraResources`). */
  readonly #extraNames: ReadonlySet<string>;
  /** List paths of the extra resources some account serves, in the order first registered. */
  readonly #extraPaths = new Set<string>();
  readonly #partnerClientId: string;
  readonly #partnerClientSecrets: readonly string[];
  readonly #partner: PartnerGrants;
  /** The account the next authorizations approve for (unless the request names one). */
  #authorizingAccount: AccountState;
  /** Authorization requests still to deny. */
  #denials = 0;
  readonly #refreshListeners = new Set<RefreshListener>();
  #random: number;

  private constructor(options: SimulatorOptions) {
    this.#options = options;
    this.#extraNames = new Set(
      extraResourcesNamed(options.extraResources ?? EXTRA_RESOURCE_NAMES).map((r) => r.name),
    );
    this.#default = this.#addAccount({
      name: DEFAULT_ACCOUNT,
      clientId: options.clientId ?? 'demo-client',
      clientSecrets: options.clientSecrets ?? ['demo-secret'],
      apiKeys: options.apiKeys ?? ['demo-api-key'],
      ...(options.dataset === undefined ? {} : { dataset: options.dataset }),
      rateLimit: options.rateLimit ?? null,
      nonAdminSubs: options.nonAdminSubs ?? [],
    });
    this.dataset = this.#default.dataset;
    for (const account of options.accounts ?? []) {
      if (account.name === DEFAULT_ACCOUNT)
        throw new Error(`account name ${DEFAULT_ACCOUNT} is the top-level options' account`);
      this.#addAccount(account);
    }
    this.#partnerClientId = options.partnerClientId ?? PARTNER_CLIENT_ID;
    this.#partnerClientSecrets = options.partnerClientSecrets ?? [PARTNER_CLIENT_SECRET];
    const holder = this.#byClientId.get(this.#partnerClientId);
    if (holder)
      throw new Error(
        `the partner app and simulated account ${holder.name} share client id ${this.#partnerClientId}`,
      );
    this.#partner = new PartnerGrants({
      codeTtlMs: (options.authorizationCodeTtlSeconds ?? 60) * 1000,
      refreshTtlMs: (options.refreshTokenTtlSeconds ?? 86_400) * 1000,
      rotate: options.rotateRefreshTokens ?? true,
      revokeOnReuse: options.revokeOnRefreshTokenReuse ?? false,
    });
    this.#authorizingAccount = this.#default;
    this.#random = options.randomFaults?.seed ?? 7;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          json(res, 500, { message: `simulator error: ${(error as Error).message}` });
        else res.destroy();
      });
    });
    this.#server.keepAliveTimeout = 30_000;
  }

  /** Registers an account; throws on a name, client id or API key already taken. */
  #addAccount(account: SimulatedAccount): AccountState {
    const { name } = account;
    if (!name) throw new Error('a simulated account needs a name');
    if (this.#accounts.has(name)) throw new Error(`two simulated accounts are named ${name}`);
    if (account.clientId !== undefined && !account.clientSecrets)
      throw new Error(`simulated account ${name} has a client id but no client secret`);
    const dataset =
      account.dataset instanceof Dataset
        ? account.dataset
        : new Dataset({
            ...account.dataset,
            clockSkewMs: account.dataset?.clockSkewMs ?? this.#options.clockSkewMs,
            extraResources: account.dataset?.extraResources ?? [...this.#extraNames],
          });
    const state: AccountState = {
      name,
      clientId: account.clientId,
      clientSecrets: account.clientSecrets ?? [],
      apiKeys: account.apiKeys ?? [],
      dataset,
      rateLimit:
        account.rateLimit === undefined
          ? this.#options.rateLimit
          : (account.rateLimit ?? undefined),
      nonAdminSubs: account.nonAdminSubs ?? [],
      forbidden: account.forbidden ?? false,
      window: { start: 0, count: 0 },
      faults: [],
      stats: { listRequests: 0, byStatus: {}, tokensIssued: 0, rateLimited: 0 },
    };
    if (state.clientId !== undefined) {
      const holder = this.#byClientId.get(state.clientId);
      if (holder)
        throw new Error(
          `simulated accounts ${holder.name} and ${name} share client id ${state.clientId}`,
        );
      this.#byClientId.set(state.clientId, state);
    }
    for (const key of state.apiKeys) {
      const holder = this.#byApiKey.get(key);
      if (holder) throw new Error(`simulated accounts ${holder.name} and ${name} share an API key`);
      this.#byApiKey.set(key, state);
    }
    // Paths as a deployment would configure them; the default account's come first.
    const paths = { trackingLinksPath: this.#options.trackingLinksPath ?? '/v3/tracking_links' };
    for (const declaration of dataset.resources.values()) {
      const path = declaration.path(paths);
      if (!this.#listPaths.has(path)) this.#listPaths.set(path, declaration.name);
    }
    for (const extra of dataset.extraResources.values()) {
      if (!this.#extraNames.has(extra.name) || this.#listPaths.has(extra.path)) continue;
      this.#listPaths.set(extra.path, extra.name);
      this.#extraPaths.add(extra.path);
    }
    this.#accounts.set(name, state);
    return state;
  }

  #account(name: string): AccountState {
    const account = this.#accounts.get(name);
    if (!account) throw new Error(`the simulator serves no account ${name}`);
    return account;
  }

  /** List paths of the extra resources served (`/v3/applications`, …), for what `hiresync simulate` prints. */
  get extraListPaths(): string[] {
    return [...this.#extraPaths];
  }

  /** Names of the accounts served: `default` (the top-level options) first, then `accounts` in order. */
  get accountNames(): string[] {
    return [...this.#accounts.keys()];
  }

  /** The data of account `name` (`default`: the same as {@link ApiSimulator.dataset}), to grow, touch or remove records. */
  datasetOf(name: string): Dataset {
    return this.#account(name).dataset;
  }

  /** What account `name` has seen; a live object, also counted in {@link ApiSimulator.stats}. */
  statsOf(name: string): Readonly<AccountStats> {
    return this.#account(name).stats;
  }

  /**
   * Revokes every token issued so far to account `name`, or to every account
   * when none is named: the next list request with one gets 401.
   */
  revokeTokens(name?: string): void {
    const account = name === undefined ? undefined : this.#account(name);
    for (const token of this.#tokens.values())
      if (account === undefined || token.account === account) token.revoked = true;
  }

  /**
   * Makes account `name`'s lists answer 403 to every token (as when its
   * authorizing user loses site administrator rights), or serve again.
   */
  setForbidden(name: string, forbidden = true): void {
    this.#account(name).forbidden = forbidden;
  }

  /**
   * Makes the next authorization requests approve the partner app for
   * account `name` (default: the default account) until called again; a
   * request's `sim_account=NAME` query parameter overrides it.
   */
  authorizeAs(name: string): void {
    this.#authorizingAccount = this.#account(name);
  }

  /**
   * Makes the next `times` authorization requests that are otherwise valid
   * be denied by the user: they redirect with `error=access_denied` and the state.
   */
  denyNextAuthorization(times = 1): void {
    this.#denials += times;
  }

  /**
   * Revokes account `name`'s authorizations of the partner app (as when the
   * customer disconnects it): every refresh token answers `invalid_grant`,
   * every access token minted under them 401, and codes not yet exchanged
   * `invalid_grant`. A new authorization works again.
   */
  revokeAuthorization(name: string): void {
    this.#partner.revokeAccount(this.#account(name).name);
  }

  /**
   * Drops the next `times` refresh responses of account `name` (of any
   * account when undefined): the refresh token is rotated and an access token
   * minted server-side, then the connection is destroyed instead of answered,
   * so the client never sees the new refresh token and holds only the retired one.
   */
  dropNextRefreshResponse(name?: string, times = 1): void {
    const account = name === undefined ? undefined : this.#account(name).name;
    this.#partner.dropRefreshResponses(account, times);
  }

  /**
   * Calls `listener` with the account's name after each successful refresh
   * has rotated the tokens server-side and just before its response is
   * written (or dropped), awaiting it: a test can kill its client there.
   * Returns a function that removes the listener.
   */
  onRefresh(listener: RefreshListener): () => void {
    this.#refreshListeners.add(listener);
    return () => {
      this.#refreshListeners.delete(listener);
    };
  }

  /**
   * What account `name` has done with the partner flow (a live object), or,
   * without a name, every account's sum with the invalid grants of codes and
   * refresh tokens the simulator never issued (a snapshot).
   */
  partnerStats(name?: string): Readonly<PartnerStats> {
    return name === undefined
      ? this.#partner.totals()
      : this.#partner.statsOf(this.#account(name).name);
  }

  /** Starts a simulator listening on loopback. */
  static async start(options: SimulatorOptions = {}): Promise<ApiSimulator> {
    const sim = new ApiSimulator(options);
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      sim.#server.once('error', reject);
      sim.#server.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = sim.#server.address() as AddressInfo;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    sim.url = `http://${shownHost}:${port}`;
    sim.authUrl = `${sim.url}${options.authPath ?? '/oauth'}`;
    sim.authorizeUrl = `${sim.authUrl}/authorize`;
    return sim;
  }

  /**
   * Queues a fault for the next `times` list requests, or for the next `times`
   * of account `account` (its own faults come before the shared ones).
   */
  inject(fault: Fault, times = 1, account?: string): void {
    const queue = account === undefined ? this.#faults : this.#account(account).faults;
    for (let i = 0; i < times; i += 1) queue.push(fault);
  }

  /**
   * Answers the next `times` token requests (either endpoint) with 429 and
   * `Retry-After: retryAfterS`, as a token service with limits of its own does.
   */
  rateLimitTokenRequests(retryAfterS: number, times = 1): void {
    for (let i = 0; i < times; i += 1) this.#tokenRateLimits.push(retryAfterS);
  }

  /** Makes every token issued so far (to account `name` when given) expire now. */
  expireTokens(name?: string): void {
    const account = name === undefined ? undefined : this.#account(name);
    for (const token of this.#tokens.values())
      if (account === undefined || token.account === account) token.expiresAt = 0;
  }

  /** Invalidates every cursor handed out so far (as a deploy of the real service may). */
  rotateCursorKey(): void {
    this.#cursors.rotate();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #count(status: number, account: AccountState): void {
    this.stats.byStatus[status] = (this.stats.byStatus[status] ?? 0) + 1;
    account.stats.byStatus[status] = (account.stats.byStatus[status] ?? 0) + 1;
  }

  #fault(kind: string): void {
    this.stats.faultsInjected[kind] = (this.stats.faultsInjected[kind] ?? 0) + 1;
  }

  #chance(probability: number | undefined): boolean {
    if (!probability) return false;
    this.#random = mix(this.#random, 0x51ed);
    return this.#random / 0x1_0000_0000 < probability;
  }

  /** The token a request presents, if the simulator issued it (expired or revoked included). */
  #presentedToken(req: IncomingMessage): IssuedToken | undefined {
    const auth = req.headers.authorization;
    return auth?.startsWith('Bearer ') ? this.#tokens.get(auth.slice(7)) : undefined;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const skew = this.#options.clockSkewMs ?? 0;
    // Node sends its own Date unless one is set: this API's clock is off.
    if (skew !== 0) res.setHeader('date', new Date(Date.now() + skew).toUTCString());
    const target = req.url ?? '/';
    const url = new URL(target, 'http://simulator.invalid');
    const authPath = `${this.#options.authPath ?? '/oauth'}/token`;
    const authorizePath = `${this.#options.authPath ?? '/oauth'}/authorize`;
    const tokenRequest =
      req.method === 'POST' && (url.pathname === authPath || url.pathname === '/auth/token');
    const tokenRetryAfterS = tokenRequest ? this.#tokenRateLimits.shift() : undefined;
    if (tokenRetryAfterS !== undefined) {
      await readBody(req);
      this.stats.tokenRequestsRateLimited += 1;
      json(res, 429, { message: 'Too Many Requests' }, { 'retry-after': String(tokenRetryAfterS) });
      return;
    }
    if (req.method === 'POST' && url.pathname === authPath) {
      if (basicCredentials(req)?.[0] === this.#partnerClientId) return this.#partnerToken(req, res);
      return this.#clientCredentials(req, res);
    }
    if (req.method === 'GET' && url.pathname === authorizePath) return this.#authorize(res, url);
    if (req.method === 'POST' && url.pathname === '/auth/token') return this.#transition(req, res);
    const resource = this.#listPaths.get(url.pathname);
    // A request counts against the account of its token; an unknown token against the default's.
    const account = this.#presentedToken(req)?.account ?? this.#default;
    if (req.method === 'GET' && resource && account.dataset.serves(resource)) {
      const status = await this.#list(req, res, resource, url, target, account);
      this.#count(status, account);
      return;
    }
    json(res, 404, { message: 'Not Found' });
  }

  #issue(
    account: AccountState,
    owner: string,
    sub: string | undefined,
    ttlSeconds = this.#options.tokenTtlSeconds ?? 3600,
    grant?: PartnerGrant,
  ): { token: string; expiresAt: number } {
    if (this.#options.revokePreviousToken) {
      for (const t of this.#tokens.values())
        if (t.owner === owner && t.sub === sub) t.revoked = true;
    }
    const token = randomBytes(24).toString('base64url');
    const expiresAt = Date.now() + ttlSeconds * 1000;
    this.#tokens.set(token, { account, owner, sub, expiresAt, revoked: false, grant });
    this.stats.tokensIssued += 1;
    account.stats.tokensIssued += 1;
    return { token, expiresAt };
  }

  async #clientCredentials(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = new URLSearchParams(await readBody(req));
    const creds = basicCredentials(req);
    const [id, secret] = creds ?? ['', ''];
    const account = this.#byClientId.get(id);
    if (!account?.clientSecrets.includes(secret)) {
      return json(res, 401, {
        error: 'invalid_client',
        error_description: 'Client authentication failed',
      });
    }
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return json(res, 400, { error: 'invalid_request', error_description: 'form body expected' });
    }
    if (body.get('grant_type') !== 'client_credentials') {
      return json(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'grant_type must be client_credentials',
      });
    }
    const sub = body.get('sub') ?? undefined;
    if (sub !== undefined && !/^\d+$/.test(sub)) {
      return json(res, 400, {
        error: 'invalid_request',
        error_description: 'sub must be a numeric user id',
      });
    }
    const { token, expiresAt } = this.#issue(account, `client:${id}`, sub);
    const ttl = this.#options.tokenTtlSeconds ?? 3600;
    const lifetime =
      this.#options.statedTokenLifetime ??
      (this.#options.expiresField === 'expires_at'
        ? { expires_at: new Date(expiresAt).toISOString() }
        : { expires_in: ttl });
    json(res, 200, { token_type: 'Bearer', access_token: token, ...lifetime });
  }

  async #transition(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await readBody(req);
    const [key, password] = basicCredentials(req) ?? ['', 'none'];
    const account = this.#byApiKey.get(key);
    if (password !== '' || !account) {
      return json(res, 401, { message: 'Unauthorized' });
    }
    const { token, expiresAt } = this.#issue(account, `key:${key}`, undefined);
    // A JWT-shaped token whose `exp` is the only statement of its lifetime.
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const jwt = `${part({ alg: 'none', typ: 'JWT' })}.${part({ exp: Math.floor(expiresAt / 1000), jti: token })}.sig`;
    this.#tokens.set(jwt, { ...(this.#tokens.get(token) as IssuedToken) });
    this.#tokens.delete(token);
    json(res, 200, { access_token: jwt });
  }

  /**
   * GET {authPath}/authorize: an authorization request of the code grant
   * (RFC 6749 4.1.1), approved at once for the authorizing account (see
   * {@link ApiSimulator.authorizeAs}). A missing or bad client_id or
   * redirect_uri answers 400 (never a redirect, 4.1.2.1); other errors
   * redirect with `error` and the state.
   */
  #authorize(res: ServerResponse, url: URL): void {
    const answer = this.#authorization(url.searchParams);
    if ('refuse' in answer)
      json(res, 400, { error: 'invalid_request', error_description: answer.refuse });
    else redirect(res, answer.redirectUri, answer.params);
  }

  /** The answer to an authorization request: a 400's description, or the redirect. */
  #authorization(
    query: URLSearchParams,
  ): { refuse: string } | { redirectUri: string; params: Record<string, string> } {
    for (const name of ['client_id', 'redirect_uri'])
      if (query.getAll(name).length > 1) return { refuse: `${name} is given more than once` };
    const clientId = query.get('client_id');
    if (clientId === null) return { refuse: 'client_id is required' };
    if (clientId !== this.#partnerClientId) return { refuse: 'client_id is not a registered app' };
    const redirectUri = query.get('redirect_uri');
    if (redirectUri === null) return { refuse: 'redirect_uri is required' };
    if (!isLoopbackRedirect(redirectUri)) {
      return {
        refuse:
          'redirect_uri must be an http URL on a loopback host (127.0.0.1, [::1] or localhost) without fragment',
      };
    }
    const accountName = query.get('sim_account');
    const account =
      accountName === null ? this.#authorizingAccount : this.#accounts.get(accountName);
    if (!account) return { refuse: `the simulator serves no account ${accountName}` };

    const state = query.get('state');
    const fail = (error: string, description: string) => ({
      redirectUri,
      params: { error, error_description: description, ...(state === null ? {} : { state }) },
    });
    const repeated = ['response_type', 'state', 'scope', 'sim_account'].find(
      (name) => query.getAll(name).length > 1,
    );
    if (repeated) return fail('invalid_request', `${repeated} is given more than once`);
    const responseType = query.get('response_type');
    if (responseType === null) return fail('invalid_request', 'response_type is required');
    if (responseType !== 'code')
      return fail('unsupported_response_type', 'response_type must be code');
    if (!state) return fail('invalid_request', 'state is required');
    const requested = (query.get('scope') ?? '').split(' ').filter((s) => s !== '');
    const allowed = this.#options.partnerScopes;
    if (allowed && !requested.every((s) => allowed.includes(s)))
      return fail('invalid_scope', 'the scope requested is not available to the app');
    const scopes = requested.length > 0 ? requested : (allowed ?? []);
    if (this.#denials > 0) {
      this.#denials -= 1;
      this.#partner.countDenial(account.name);
      return fail('access_denied', 'the user denied the authorization');
    }
    const code = this.#partner.issueCode({
      account: account.name,
      clientId,
      redirectUri,
      scope: scopes.length > 0 ? scopes.join(' ') : undefined,
    });
    return { redirectUri, params: { code, state } };
  }

  /**
   * POST {authPath}/token from the partner app: grant_type
   * authorization_code (RFC 6749 4.1.3) or refresh_token (6), client
   * authentication by HTTP Basic. Answers an access token of the authorizing
   * account and, unless a refresh keeps its token, a refresh token.
   */
  async #partnerToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = new URLSearchParams(await readBody(req));
    const [clientId, secret] = basicCredentials(req) ?? ['', ''];
    if (!this.#partnerClientSecrets.includes(secret)) {
      return json(
        res,
        401,
        { error: 'invalid_client', error_description: 'Client authentication failed' },
        { 'www-authenticate': 'Basic realm="oauth"', ...NO_STORE },
      );
    }
    const fail = (error: string, description: string) =>
      json(res, 400, { error, error_description: description }, NO_STORE);
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      return fail('invalid_request', 'form body expected');
    const grantType = body.get('grant_type');
    let result: GrantTokens | GrantRefusal;
    if (grantType === 'authorization_code') {
      const code = body.get('code');
      const redirectUri = body.get('redirect_uri');
      if (!code) return fail('invalid_request', 'code is required');
      if (!redirectUri) return fail('invalid_request', 'redirect_uri is required');
      result = this.#partner.redeemCode(code, clientId, redirectUri);
    } else if (grantType === 'refresh_token') {
      const refreshToken = body.get('refresh_token');
      if (!refreshToken) return fail('invalid_request', 'refresh_token is required');
      result = this.#partner.refresh(refreshToken, clientId, body.get('scope') ?? undefined);
    } else if (grantType === null) {
      return fail('invalid_request', 'grant_type is required');
    } else if (grantType === 'client_credentials') {
      return fail(
        'unauthorized_client',
        'the partner app may use the authorization_code and refresh_token grants only',
      );
    } else {
      return fail(
        'unsupported_grant_type',
        'grant_type must be authorization_code or refresh_token',
      );
    }
    if ('error' in result) return fail(result.error, result.description);

    const { grant } = result;
    const account = this.#account(grant.account);
    const ttl = this.#options.partnerAccessTokenTtlSeconds ?? this.#options.tokenTtlSeconds ?? 3600;
    const { token, expiresAt } = this.#issue(account, `grant:${grant.id}`, undefined, ttl, grant);
    const answer = {
      access_token: token,
      token_type: 'Bearer',
      ...(this.#options.expiresField === 'expires_at'
        ? { expires_at: new Date(expiresAt).toISOString() }
        : { expires_in: ttl }),
      ...(result.refreshToken === undefined ? {} : { refresh_token: result.refreshToken }),
      ...(result.scope === undefined ? {} : { scope: result.scope }),
    };
    if (grantType === 'refresh_token') {
      for (const listener of [...this.#refreshListeners]) await listener(account.name);
      if (this.#partner.takeDrop(account.name)) {
        // Rotated server-side, lost to the client.
        req.socket.destroy();
        return;
      }
    }
    json(res, 200, answer, NO_STORE);
  }

  /** Serves one list request; returns the status sent. */
  async #list(
    req: IncomingMessage,
    res: ServerResponse,
    resource: SimResource,
    url: URL,
    target: string,
    account: AccountState,
  ): Promise<number> {
    this.stats.listRequests += 1;
    account.stats.listRequests += 1;
    const previousTarget = this.stats.receivedTargets.at(-1);
    this.stats.receivedTargets.push(target);
    if (this.stats.receivedTargets.length > 1000) this.stats.receivedTargets.shift();
    const opts = this.#options;
    const random = opts.randomFaults;
    if (opts.latencyMs) await sleep(opts.latencyMs);

    const fault = account.faults.shift() ?? this.#faults.shift();
    if (fault) this.#fault(fault.kind);
    if (fault?.kind === 'delay') await sleep(fault.ms);
    if (random && this.#chance(random.slow)) {
      this.#fault('slow');
      await sleep(random.slowMs ?? 2000);
    }
    if (fault?.kind === 'drop-connection' || (random && this.#chance(random.dropConnection))) {
      if (!fault) this.#fault('drop-connection');
      req.socket.destroy();
      return 0;
    }

    // Rate limit: a fixed window that opens with the first request after the last one closed.
    const now = Date.now();
    const limit = account.rateLimit;
    let remaining: number | undefined;
    if (limit) {
      if (now >= account.window.start + limit.windowMs) account.window = { start: now, count: 0 };
      if (account.window.count >= limit.limit) {
        return this.#tooMany(
          res,
          account,
          Math.ceil((account.window.start + limit.windowMs - now) / 1000),
          limit.limit,
        );
      }
      account.window.count += 1;
      remaining = limit.limit - account.window.count;
    }
    if (fault?.kind === 'rate-limit')
      return this.#tooMany(res, account, fault.retryAfterS, limit?.limit, fault.format);
    if (random && this.#chance(random.rateLimit)) {
      this.#fault('rate-limit');
      return this.#tooMany(res, account, 1, limit?.limit);
    }
    const rateHeaders: Record<string, string> = {};
    if (limit) {
      rateHeaders['x-ratelimit-remaining'] = String(remaining);
      if (opts.rateLimitHeaders) {
        rateHeaders['x-ratelimit-limit'] = String(limit.limit);
        const resetMs = account.window.start + limit.windowMs - now;
        rateHeaders['x-ratelimit-reset'] = (resetMs / 1000).toFixed(3);
      }
    }

    if (random && this.#chance(random.revokeTokens)) {
      this.#fault('revoke-tokens');
      for (const t of this.#tokens.values()) t.revoked = true;
    }
    const token = this.#presentedToken(req);
    if (!token || token.revoked || token.expiresAt <= now || token.grant?.revoked) {
      json(res, 401, { message: 'Unauthorized' }, rateHeaders);
      return 401;
    }
    if (
      account.forbidden ||
      (token.sub !== undefined && account.nonAdminSubs.includes(token.sub))
    ) {
      json(
        res,
        403,
        { message: 'Forbidden', errors: ['The authorizing user must be a site administrator'] },
        rateHeaders,
      );
      return 403;
    }
    if (fault?.kind === 'status' || (random && this.#chance(random.serverError))) {
      if (!fault) this.#fault('server-error');
      const status = fault?.kind === 'status' ? fault.status : 503;
      json(res, status, { message: 'Service Unavailable' }, rateHeaders);
      return status;
    }

    const ds = account.dataset;
    // Cursors of the default account carry no account, as they did before there were others.
    const cursorAccount = account === this.#default ? undefined : account.name;
    const params = [...url.searchParams.keys()];
    const cursorText = url.searchParams.get('cursor');
    let below = Number.POSITIVE_INFINITY;
    let perPage = 100;
    let status: string | undefined;
    let updatedSince: string | undefined;
    if (cursorText !== null) {
      if (params.length > 1) {
        unprocessable(res, ['No other query parameters may be provided with a cursor']);
        return 422;
      }
      const state = this.#cursors.decode(cursorText);
      if (!state || state.resource !== resource || state.account !== cursorAccount) {
        unprocessable(res, ['The cursor is malformed or invalid']);
        return 422;
      }
      ({ below, perPage, status, updatedSince } = state);
    } else {
      const perPageText = url.searchParams.get('per_page');
      if (perPageText !== null) {
        const n = Number(perPageText);
        if (!/^\d+$/.test(perPageText) || n < 1 || n > 500) {
          unprocessable(res, [
            {
              per_page:
                n > 500 ? 'must be less than or equal to 500' : 'must be an integer from 1 to 500',
            },
          ]);
          return 422;
        }
        perPage = n;
      }
      // The spec shows a status filter on jobs; the simulator applies one to any list.
      status = url.searchParams.get('status') ?? undefined;
      // The filter peers send for incremental syncs (Singer's tap-greenhouse):
      // updated_at=gte|<ISO 8601>.
      const updated = url.searchParams.get('updated_at');
      if (updated !== null) {
        const since = /^gte\|(.+)$/.exec(updated)?.[1];
        if (since === undefined || Number.isNaN(Date.parse(since))) {
          unprocessable(res, [{ updated_at: 'must be gte|<ISO 8601 timestamp>' }]);
          return 422;
        }
        updatedSince = since;
      }
    }
    const matches = (index: number) =>
      (status === undefined || ds.matches(resource, index, { status })) &&
      (updatedSince === undefined || ds.updatedSince(resource, index, updatedSince));

    const cacheKey = `${account.name}|${resource}|${below}|${perPage}|${status}|${updatedSince}|${ds.version}`;
    let page = opts.cachePages ? this.#pageCache.get(cacheKey) : undefined;
    if (!page) {
      const records: unknown[] = [];
      let index =
        below === Number.POSITIVE_INFINITY ? ds.size(resource) - 1 : ds.indexBelow(resource, below);
      let lastIndex = -1;
      for (; index >= 0 && records.length < perPage; index -= 1) {
        if (!ds.isPresent(resource, index)) continue;
        if (!matches(index)) continue;
        records.push(ds.record(resource, index));
        lastIndex = index;
      }
      let hasMore = false;
      for (; index >= 0; index -= 1) {
        if (ds.isPresent(resource, index) && matches(index)) {
          hasMore = true;
          break;
        }
      }
      page = { text: JSON.stringify(records), lastIndex, hasMore };
      if (opts.cachePages) this.#pageCache.set(cacheKey, page);
    }
    const { lastIndex, hasMore } = page;
    const headers = { ...rateHeaders };
    if (fault?.kind === 'oversized-body') {
      await sendOversized(res, fault, headers);
      return 200;
    }
    const loops = fault?.kind === 'self-next' || fault?.kind === 'previous-next';
    if (hasMore || loops) {
      const cursor = this.#cursors.encode({
        resource,
        below: ds.idOf(resource, lastIndex),
        perPage,
        status,
        updatedSince,
        account: cursorAccount,
      });
      let next = `${this.url}${url.pathname}?cursor=${cursor}`;
      if (fault?.kind === 'next-origin') next = `${fault.origin}${url.pathname}?cursor=${cursor}`;
      if (fault?.kind === 'self-next') next = `${this.url}${target}`;
      if (fault?.kind === 'previous-next') next = `${this.url}${previousTarget ?? target}`;
      headers.link = `<${next}>; rel="next"`;
    }
    if (fault?.kind === 'malformed-body') {
      res.writeHead(200, { 'content-type': 'text/html', ...headers });
      res.end('<html>Bad gateway</html>');
      return 200;
    }
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(page.text),
      ...headers,
    });
    res.end(page.text);
    return 200;
  }

  #tooMany(
    res: ServerResponse,
    account: AccountState,
    retryAfterS: number,
    limit: number | undefined,
    format?: RetryAfterFormat,
  ): number {
    this.stats.rateLimited += 1;
    account.stats.rateLimited += 1;
    const style = format ?? this.#options.retryAfterFormat ?? 'seconds';
    const retryAfter =
      style === 'http-date'
        ? new Date(Date.now() + retryAfterS * 1000).toUTCString()
        : style === 'epoch'
          ? String(Math.floor(Date.now() / 1000) + retryAfterS)
          : String(Math.max(0, retryAfterS));
    const headers: Record<string, string> = { 'retry-after': retryAfter };
    if (this.#options.rateLimitHeadersOn429 && limit !== undefined) {
      headers['x-ratelimit-limit'] = String(limit);
      headers['x-ratelimit-remaining'] = '0';
    }
    json(res, 429, { message: 'Too Many Requests' }, headers);
    return 429;
  }
}
