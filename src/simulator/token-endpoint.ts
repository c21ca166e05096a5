import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountRegistry } from './account-registry.js';
import { basicCredentials, json, NO_STORE, readBody } from './http-messages.js';
import type { IssuedTokens } from './issued-tokens.js';
import type { GrantRefusal, GrantTokens, PartnerGrants } from './partner-grants.js';
import { FixedWindow } from './rate-limiter.js';
import type { SimulatorOptions, SimulatorStats } from './simulator-options.js';

/** Called just before a refresh response is written (see {@link TokenEndpoint.onRefresh}). */
export type RefreshListener = (account: string) => void | Promise<void>;

/** Path of the transition endpoint, which swaps a version 1/2 API key for a token. */
const TRANSITION_PATH = '/auth/token';

/** What {@link TokenEndpoint} works with. */
export interface TokenEndpointOptions {
  options: SimulatorOptions;
  accounts: AccountRegistry;
  tokens: IssuedTokens;
  /** The partner app's authorizations. */
  partner: PartnerGrants;
  partnerClientId: string;
  partnerClientSecrets: readonly string[];
  /** Counts the token requests answered 429. */
  stats: SimulatorStats;
}

/**
 * Both token endpoints: POST {authPath}/token (the client credentials grant
 * of an account, or the partner app's authorization code and refresh token
 * grants) and POST /auth/token (the transition endpoint: an API key for a
 * JWT), with the 429s queued for the next token requests.
 */
export class TokenEndpoint {
  readonly #options: SimulatorOptions;
  readonly #accounts: AccountRegistry;
  readonly #tokens: IssuedTokens;
  readonly #partner: PartnerGrants;
  readonly #partnerClientId: string;
  readonly #partnerClientSecrets: readonly string[];
  readonly #stats: SimulatorStats;
  /** Path of the OAuth token endpoint, `{authPath}/token`. */
  readonly #tokenPath: string;
  /** Retry-After (seconds) of the 429s queued for the next token requests. */
  readonly #rateLimits: number[] = [];
  readonly #refreshListeners = new Set<RefreshListener>();
  /** The endpoint's own window (`tokenEndpointWindow`), if any. */
  readonly #window: FixedWindow | undefined;

  constructor(deps: TokenEndpointOptions) {
    this.#options = deps.options;
    this.#accounts = deps.accounts;
    this.#tokens = deps.tokens;
    this.#partner = deps.partner;
    this.#partnerClientId = deps.partnerClientId;
    this.#partnerClientSecrets = deps.partnerClientSecrets;
    this.#stats = deps.stats;
    this.#tokenPath = `${deps.options.authPath ?? '/oauth'}/token`;
    const window = deps.options.tokenEndpointWindow;
    this.#window = window ? new FixedWindow(window) : undefined;
  }

  /** Whether a POST to `path` is a token request. */
  serves(path: string): boolean {
    return path === this.#tokenPath || path === TRANSITION_PATH;
  }

  /** Answers the next `times` token requests (either endpoint) with 429 and `Retry-After: retryAfterS`. */
  rateLimitNext(retryAfterS: number, times: number): void {
    for (let i = 0; i < times; i += 1) this.#rateLimits.push(retryAfterS);
  }

  /** Adds a refresh listener; returns a function that removes it. */
  onRefresh(listener: RefreshListener): () => void {
    this.#refreshListeners.add(listener);
    return () => {
      this.#refreshListeners.delete(listener);
    };
  }

  /** Serves a POST to `path`, one the endpoint {@link TokenEndpoint.serves}. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const decision = this.#window?.take(Date.now());
    const retryAfterS =
      this.#rateLimits.shift() ?? (decision?.allowed === false ? decision.retryAfterS : undefined);
    if (retryAfterS !== undefined) {
      await readBody(req);
      this.#stats.tokenRequestsRateLimited += 1;
      json(res, 429, { message: 'Too Many Requests' }, { 'retry-after': String(retryAfterS) });
      return;
    }
    if (path === this.#tokenPath) {
      if (basicCredentials(req)?.[0] === this.#partnerClientId) return this.#partnerToken(req, res);
      return this.#clientCredentials(req, res);
    }
    return this.#transition(req, res);
  }

  async #clientCredentials(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = new URLSearchParams(await readBody(req));
    const creds = basicCredentials(req);
    const [id, secret] = creds ?? ['', ''];
    const account = this.#accounts.byClientId(id);
    if (!account?.clientSecrets.includes(secret)) {
      return this.#refuse(res, 401, 'invalid_client', 'Client authentication failed');
    }
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return this.#refuse(res, 400, 'invalid_request', 'form body expected');
    }
    if (body.get('grant_type') !== 'client_credentials') {
      return this.#refuse(
        res,
        400,
        'unsupported_grant_type',
        'grant_type must be client_credentials',
      );
    }
    const sub = body.get('sub') ?? undefined;
    if (sub !== undefined && !/^\d+$/.test(sub)) {
      return this.#refuse(res, 400, 'invalid_request', 'sub must be a numeric user id');
    }
    const { token, expiresAt } = this.#tokens.issue(account, `client:${id}`, sub);
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
    const account = this.#accounts.byApiKey(key);
    if (password !== '' || !account) {
      if (this.#options.oauthErrorBodies === undefined)
        return json(res, 401, { message: 'Unauthorized' });
      return this.#refuse(res, 401, 'invalid_client', 'unknown API key');
    }
    const { token, expiresAt } = this.#tokens.issue(account, `key:${key}`, undefined);
    // A JWT-shaped token whose `exp` is the only statement of its lifetime.
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const jwt = `${part({ alg: 'none', typ: 'JWT' })}.${part({ exp: Math.floor(expiresAt / 1000), jti: token })}.sig`;
    this.#tokens.rename(token, jwt);
    json(res, 200, { access_token: jwt });
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
      return this.#refuse(res, 401, 'invalid_client', 'Client authentication failed', {
        'www-authenticate': 'Basic realm="oauth"',
        ...NO_STORE,
      });
    }
    const fail = (error: string, description: string) =>
      this.#refuse(res, 400, error, description, NO_STORE);
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      return fail('invalid_request', 'form body expected');
    const grantType = body.get('grant_type');
    let result: GrantTokens | GrantRefusal;
    if (grantType === 'authorization_code') {
      const code = body.get('code');
      const redirectUri = body.get('redirect_uri');
      if (!code) return fail('invalid_request', 'code is required');
      if (!redirectUri) return fail('invalid_request', 'redirect_uri is required');
      result = this.#partner.redeemCode(
        code,
        clientId,
        redirectUri,
        body.get('code_verifier') ?? undefined,
      );
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
    const account = this.#accounts.get(grant.account);
    const ttl = this.#options.partnerAccessTokenTtlSeconds ?? this.#options.tokenTtlSeconds ?? 3600;
    const { token, expiresAt } = this.#tokens.issue(
      account,
      `grant:${grant.id}`,
      undefined,
      ttl,
      grant,
    );
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

  /**
   * Answers a refused token request: `{"error", "error_description"}` (RFC
   * 6749 5.2), or `{"message": …}` when `oauthErrorBodies` is false.
   */
  #refuse(
    res: ServerResponse,
    status: number,
    error: string,
    description: string,
    headers: Record<string, string> = {},
  ): void {
    const body =
      this.#options.oauthErrorBodies === false
        ? { message: `${error}: ${description}` }
        : { error, error_description: description };
    json(res, status, body, headers);
  }
}
