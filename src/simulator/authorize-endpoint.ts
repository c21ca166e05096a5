import type { ServerResponse } from 'node:http';
import type { AccountRegistry, AccountState } from './account-registry.js';
import { json } from './http-messages.js';
import type { PartnerGrants } from './partner-grants.js';

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

/** What {@link AuthorizeEndpoint} works with. */
export interface AuthorizeEndpointOptions {
  accounts: AccountRegistry;
  /** The partner app's authorizations. */
  partner: PartnerGrants;
  partnerClientId: string;
  /** Scopes the partner app may be granted; undefined: any requested. */
  partnerScopes: readonly string[] | undefined;
  /** The account authorizations approve for until {@link AuthorizeEndpoint.authorizeAs}. */
  authorizingAccount: AccountState;
}

/**
 * GET {authPath}/authorize, the partner app's authorization request (the
 * consent page, approved or denied at once as the test says), which
 * redirects with a code of {@link PartnerGrants}.
 */
export class AuthorizeEndpoint {
  readonly #accounts: AccountRegistry;
  readonly #partner: PartnerGrants;
  readonly #partnerClientId: string;
  readonly #partnerScopes: readonly string[] | undefined;
  /** The account the next authorizations approve for (unless the request names one). */
  #authorizingAccount: AccountState;
  /** Authorization requests still to deny. */
  #denials = 0;

  constructor(deps: AuthorizeEndpointOptions) {
    this.#accounts = deps.accounts;
    this.#partner = deps.partner;
    this.#partnerClientId = deps.partnerClientId;
    this.#partnerScopes = deps.partnerScopes;
    this.#authorizingAccount = deps.authorizingAccount;
  }

  /** Makes the next authorizations approve for `account` (unless the request names one). */
  authorizeAs(account: AccountState): void {
    this.#authorizingAccount = account;
  }

  /** Makes the next `times` authorization requests that are otherwise valid be denied by the user. */
  denyNext(times: number): void {
    this.#denials += times;
  }

  /**
   * GET {authPath}/authorize: an authorization request of the code grant
   * (RFC 6749 4.1.1), approved at once for the authorizing account (see
   * {@link ApiSimulator.authorizeAs}); a PKCE challenge (S256) is kept with
   * the code, whose exchange must then send its verifier. A missing or bad client_id or
   * redirect_uri answers 400 (never a redirect, 4.1.2.1); other errors
   * redirect with `error` and the state.
   */
  handle(res: ServerResponse, url: URL): void {
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
      accountName === null ? this.#authorizingAccount : this.#accounts.find(accountName);
    if (!account) return { refuse: `the simulator serves no account ${accountName}` };

    const state = query.get('state');
    const fail = (error: string, description: string) => ({
      redirectUri,
      params: { error, error_description: description, ...(state === null ? {} : { state }) },
    });
    const repeated = [
      'response_type',
      'state',
      'scope',
      'sim_account',
      'code_challenge',
      'code_challenge_method',
    ].find((name) => query.getAll(name).length > 1);
    if (repeated) return fail('invalid_request', `${repeated} is given more than once`);
    const responseType = query.get('response_type');
    if (responseType === null) return fail('invalid_request', 'response_type is required');
    if (responseType !== 'code')
      return fail('unsupported_response_type', 'response_type must be code');
    if (!state) return fail('invalid_request', 'state is required');
    // PKCE (RFC 7636 4.3): optional, as the live service may not require it;
    // a challenge given must be S256 (plain is not accepted) and well formed.
    const codeChallenge = query.get('code_challenge') ?? undefined;
    const method = query.get('code_challenge_method');
    if (codeChallenge === undefined && method !== null)
      return fail('invalid_request', 'code_challenge_method without code_challenge');
    if (codeChallenge !== undefined && method !== 'S256')
      return fail('invalid_request', 'code_challenge_method must be S256');
    if (codeChallenge !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge))
      return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
    const requested = (query.get('scope') ?? '').split(' ').filter((s) => s !== '');
    const allowed = this.#partnerScopes;
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
      codeChallenge,
    });
    return { redirectUri, params: { code, state } };
  }
}
