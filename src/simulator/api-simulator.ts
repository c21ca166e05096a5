import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccountRegistry, type AccountState, type AccountStats } from './account-registry.js';
import { AuthorizeEndpoint } from './authorize-endpoint.js';
import { CursorCodec } from './cursor-codec.js';
import type { Dataset } from './dataset.js';
import { EXTRA_RESOURCE_NAMES, extraResourcesNamed } from './extra-resources.js';
import { type Fault, Faults } from './faults.js';
import { json } from './http-messages.js';
import { IssuedTokens } from './issued-tokens.js';
import { ListEndpoint } from './list-endpoint.js';
import { PartnerGrants, type PartnerStats } from './partner-grants.js';
import { shapeDefaults, withDefaults } from './shape.js';
import { DEFAULT_ACCOUNT } from './simulated-accounts.js';
import {
  PARTNER_CLIENT_ID,
  PARTNER_CLIENT_SECRET,
  type SimulatorOptions,
  type SimulatorStats,
} from './simulator-options.js';
import { type RefreshListener, TokenEndpoint } from './token-endpoint.js';

/**
 * The built-in API simulator: a real HTTP server on loopback that implements
 * the API specification (both token endpoints, the partner apps' authorization
 * code grant with refresh token rotation, the declared lists and the extra
 * ones (applications, candidates, …) with id-descending cursor pagination and
 * Link headers, every 422 rule, 401 on expired or revoked tokens, 403 for
 * non-administrators, a fixed-window rate limit with X-RateLimit-Remaining
 * and 429/Retry-After) plus fault injection. With `shape: 'v3'` it serves
 * the live service's shapes instead where they differ (see shape.ts).
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
  readonly #tokens: IssuedTokens;
  readonly #faults: Faults;
  readonly #accounts: AccountRegistry;
  readonly #default: AccountState;
  readonly #partner: PartnerGrants;
  readonly #tokenEndpoint: TokenEndpoint;
  readonly #authorizeEndpoint: AuthorizeEndpoint;
  readonly #listEndpoint: ListEndpoint;

  private constructor(given: SimulatorOptions) {
    const shape = shapeDefaults(given.shape ?? 'seed');
    const options = withDefaults(shape.simulator, given);
    this.#options = options;
    this.#accounts = new AccountRegistry({
      datasetDefaults: shape.dataset,
      extraNames: new Set(
        extraResourcesNamed(options.extraResources ?? EXTRA_RESOURCE_NAMES).map((r) => r.name),
      ),
      clockSkewMs: options.clockSkewMs,
      rateLimit: options.rateLimit ?? undefined,
      alignedWindows: options.rateLimitResetFormat === 'epoch',
      trackingLinksPath: options.trackingLinksPath,
    });
    this.#default = this.#accounts.add({
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
      this.#accounts.add(account);
    }
    const partnerClientId = options.partnerClientId ?? PARTNER_CLIENT_ID;
    const holder = this.#accounts.byClientId(partnerClientId);
    if (holder)
      throw new Error(
        `the partner app and simulated account ${holder.name} share client id ${partnerClientId}`,
      );
    this.#partner = new PartnerGrants({
      codeTtlMs: (options.authorizationCodeTtlSeconds ?? 60) * 1000,
      refreshTtlMs: (options.refreshTokenTtlSeconds ?? 86_400) * 1000,
      rotate: options.rotateRefreshTokens ?? true,
      revokeOnReuse: options.revokeOnRefreshTokenReuse ?? false,
    });
    this.#tokens = new IssuedTokens(
      {
        ttlSeconds: options.tokenTtlSeconds ?? 3600,
        revokePrevious: options.revokePreviousToken ?? false,
      },
      this.stats,
    );
    this.#faults = new Faults(options.randomFaults, this.stats.faultsInjected);
    this.#tokenEndpoint = new TokenEndpoint({
      options,
      accounts: this.#accounts,
      tokens: this.#tokens,
      partner: this.#partner,
      partnerClientId,
      partnerClientSecrets: options.partnerClientSecrets ?? [PARTNER_CLIENT_SECRET],
      stats: this.stats,
    });
    this.#authorizeEndpoint = new AuthorizeEndpoint({
      accounts: this.#accounts,
      partner: this.#partner,
      partnerClientId,
      partnerScopes: options.partnerScopes,
      authorizingAccount: this.#default,
    });
    this.#listEndpoint = new ListEndpoint({
      options,
      stats: this.stats,
      faults: this.#faults,
      tokens: this.#tokens,
      cursors: this.#cursors,
      defaultAccount: this.#default,
      baseUrl: () => this.url,
    });
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          json(res, 500, { message: `simulator error: ${(error as Error).message}` });
        else res.destroy();
      });
    });
    this.#server.keepAliveTimeout = 30_000;
  }

  /** List paths of the extra resources served (`/v3/applications`, …), for what `hiresync simulate` prints. */
  get extraListPaths(): string[] {
    return this.#accounts.extraListPaths;
  }

  /** List paths of the v3 world's resources served (`/v3/application_stages`, …), for what `hiresync simulate` prints. */
  get worldListPaths(): string[] {
    return this.#accounts.worldListPaths;
  }

  /** Names of the accounts served: `default` (the top-level options) first, then `accounts` in order. */
  get accountNames(): string[] {
    return this.#accounts.names;
  }

  /** The data of account `name` (`default`: the same as {@link ApiSimulator.dataset}), to grow, touch or remove records. */
  datasetOf(name: string): Dataset {
    return this.#accounts.get(name).dataset;
  }

  /** What account `name` has seen; a live object, also counted in {@link ApiSimulator.stats}. */
  statsOf(name: string): Readonly<AccountStats> {
    return this.#accounts.get(name).stats;
  }

  /**
   * Revokes every token issued so far to account `name`, or to every account
   * when none is named: the next list request with one gets 401.
   */
  revokeTokens(name?: string): void {
    this.#tokens.revoke(name === undefined ? undefined : this.#accounts.get(name));
  }

  /**
   * Makes account `name`'s lists answer 403 to every token (as when its
   * authorizing user loses site administrator rights), or serve again.
   */
  setForbidden(name: string, forbidden = true): void {
    this.#accounts.get(name).forbidden = forbidden;
  }

  /**
   * Makes the next authorization requests approve the partner app for
   * account `name` (default: the default account) until called again; a
   * request's `sim_account=NAME` query parameter overrides it.
   */
  authorizeAs(name: string): void {
    this.#authorizeEndpoint.authorizeAs(this.#accounts.get(name));
  }

  /**
   * Makes the next `times` authorization requests that are otherwise valid
   * be denied by the user: they redirect with `error=access_denied` and the state.
   */
  denyNextAuthorization(times = 1): void {
    this.#authorizeEndpoint.denyNext(times);
  }

  /**
   * Revokes account `name`'s authorizations of the partner app (as when the
   * customer disconnects it): every refresh token answers `invalid_grant`,
   * every access token minted under them 401, and codes not yet exchanged
   * `invalid_grant`. A new authorization works again.
   */
  revokeAuthorization(name: string): void {
    this.#partner.revokeAccount(this.#accounts.get(name).name);
  }

  /**
   * Sets the scopes of account `name`'s partner authorizations (with
   * `resourceScopes`, a list answers 403 unless its `harvest:NAME:list` is
   * among them), for the tokens already minted too.
   */
  setPartnerScopes(name: string, scopes: readonly string[]): void {
    this.#partner.setScopes(this.#accounts.get(name).name, scopes);
  }

  /**
   * Drops the next `times` refresh responses of account `name` (of any
   * account when undefined): the refresh token is rotated and an access token
   * minted server-side, then the connection is destroyed instead of answered,
   * so the client never sees the new refresh token and holds only the retired one.
   */
  dropNextRefreshResponse(name?: string, times = 1): void {
    const account = name === undefined ? undefined : this.#accounts.get(name).name;
    this.#partner.dropRefreshResponses(account, times);
  }

  /**
   * Calls `listener` with the account's name after each successful refresh
   * has rotated the tokens server-side and just before its response is
   * written (or dropped), awaiting it: a test can kill its client there.
   * Returns a function that removes the listener.
   */
  onRefresh(listener: RefreshListener): () => void {
    return this.#tokenEndpoint.onRefresh(listener);
  }

  /**
   * What account `name` has done with the partner flow (a live object), or,
   * without a name, every account's sum with the invalid grants of codes and
   * refresh tokens the simulator never issued (a snapshot).
   */
  partnerStats(name?: string): Readonly<PartnerStats> {
    return name === undefined
      ? this.#partner.totals()
      : this.#partner.statsOf(this.#accounts.get(name).name);
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
    this.#faults.inject(
      fault,
      times,
      account === undefined ? undefined : this.#accounts.get(account).faults,
    );
  }

  /**
   * Answers the next `times` token requests (either endpoint) with 429 and
   * `Retry-After: retryAfterS`, as a token service with limits of its own does.
   */
  rateLimitTokenRequests(retryAfterS: number, times = 1): void {
    this.#tokenEndpoint.rateLimitNext(retryAfterS, times);
  }

  /** Makes every token issued so far (to account `name` when given) expire now. */
  expireTokens(name?: string): void {
    this.#tokens.expire(name === undefined ? undefined : this.#accounts.get(name));
  }

  /** Invalidates every cursor handed out so far (as a deploy of the real service may). */
  rotateCursorKey(): void {
    this.#cursors.rotate();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const skew = this.#options.clockSkewMs ?? 0;
    // Node sends its own Date unless one is set: this API's clock is off.
    if (skew !== 0) res.setHeader('date', new Date(Date.now() + skew).toUTCString());
    const target = req.url ?? '/';
    const url = new URL(target, 'http://simulator.invalid');
    const authorizePath = `${this.#options.authPath ?? '/oauth'}/authorize`;
    if (req.method === 'POST' && this.#tokenEndpoint.serves(url.pathname))
      return this.#tokenEndpoint.handle(req, res, url.pathname);
    if (req.method === 'GET' && url.pathname === authorizePath)
      return this.#authorizeEndpoint.handle(res, url);
    const resource = this.#accounts.resourceAt(url.pathname);
    // A request counts against the account of its token; an unknown token against the default's.
    const account = this.#tokens.presentedBy(req)?.account ?? this.#default;
    if (req.method === 'GET' && resource && account.dataset.serves(resource))
      return this.#listEndpoint.serve(req, res, { resource, url, target, account });
    json(res, 404, { message: 'Not Found' });
  }
}
