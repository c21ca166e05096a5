import { createHash, randomBytes } from 'node:crypto';

/** What the simulator has done with one account's partner authorizations (authorization code grant). */
export interface PartnerStats {
  /** Authorization requests approved, each with a code. */
  codesIssued: number;
  /** Codes exchanged for tokens (a reused code is not counted again). */
  codesRedeemed: number;
  /** Authorization requests answered `access_denied`. */
  authorizationsDenied: number;
  /** Refresh token grants answered with a new access token, dropped responses included. */
  refreshes: number;
  /** Token requests answered 400 `invalid_grant` (bad, reused, expired or revoked code or refresh token). */
  invalidGrants: number;
  /** Refresh responses dropped after the rotation ({@link PartnerGrants.takeDrop}). */
  refreshResponsesDropped: number;
  /** Authorizations revoked: by the account, by a reused code or (when so configured) a reused refresh token. */
  authorizationsRevoked: number;
}

/** One approval of the partner app by an account: the chain of refresh tokens it issues. */
export interface PartnerGrant {
  readonly id: number;
  readonly account: string;
  readonly clientId: string;
  /** The scope granted (space-separated), if any; {@link PartnerGrants.setScopes} changes it. */
  scope: string | undefined;
  /** Every refresh and access token of the grant is invalid once set. */
  revoked: boolean;
}

interface AuthorizationCode {
  readonly account: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string | undefined;
  /** The request's PKCE `code_challenge` (S256), if it carried one: the exchange must send its verifier. */
  readonly codeChallenge: string | undefined;
  readonly expiresAt: number;
  /** The grant the code was exchanged for; a second exchange revokes it (RFC 6749 10.5). */
  grant: PartnerGrant | undefined;
}

interface RefreshToken {
  readonly grant: PartnerGrant;
  /** Idle expiry: the token is refused once unused until then. */
  expiresAt: number;
  /** Replaced by a newer token of the grant (rotation); refused from then on. */
  rotated: boolean;
}

/** Options of {@link PartnerGrants}. */
export interface PartnerGrantsOptions {
  /** Lifetime of an authorization code. */
  codeTtlMs: number;
  /** A refresh token unused for this long is refused. */
  refreshTtlMs: number;
  /** Every refresh answers a new refresh token and retires the one presented. */
  rotate: boolean;
  /** A retired refresh token presented again revokes its whole grant (OAuth security BCP 4.14.2). */
  revokeOnReuse: boolean;
}

/** A token request refused: its OAuth error code (RFC 6749 5.2) and description. */
export interface GrantRefusal {
  error: 'invalid_grant' | 'invalid_scope';
  description: string;
}

/** What a successful code exchange or refresh yields. */
export interface GrantTokens {
  grant: PartnerGrant;
  /** The refresh token to send; undefined when a refresh keeps the one presented (no rotation). */
  refreshToken: string | undefined;
  /** Scope of the access token to mint. */
  scope: string | undefined;
}

const newSecret = (bytes: number) => randomBytes(bytes).toString('base64url');

/** The scopes of a space-separated scope string. */
export const scopesOf = (scope: string | undefined): string[] =>
  (scope ?? '').split(' ').filter((s) => s !== '');

const emptyStats = (): PartnerStats => ({
  codesIssued: 0,
  codesRedeemed: 0,
  authorizationsDenied: 0,
  refreshes: 0,
  invalidGrants: 0,
  refreshResponsesDropped: 0,
  authorizationsRevoked: 0,
});

/**
 * The simulator's state of the authorization code grant (RFC 6749 4.1 and
 * 6): single-use codes bound to a client and redirect URI, grants, refresh
 * tokens with idle expiry and rotation, revocation, and per-account stats.
 * Access tokens are the simulator's own; a grant's are invalid once it is revoked.
 */
export class PartnerGrants {
  readonly #options: PartnerGrantsOptions;
  readonly #codes = new Map<string, AuthorizationCode>();
  readonly #refreshTokens = new Map<string, RefreshToken>();
  readonly #grants = new Set<PartnerGrant>();
  readonly #stats = new Map<string, PartnerStats>();
  /** Invalid grants whose code or refresh token the simulator never issued. */
  readonly #unattributed = emptyStats();
  /** Refresh responses to drop: by account name, `''` for any account. */
  readonly #drops = new Map<string, number>();
  #nextGrantId = 1;

  constructor(options: PartnerGrantsOptions) {
    this.#options = options;
  }

  /** Account `account`'s stats; a live object. */
  statsOf(account: string): PartnerStats {
    let stats = this.#stats.get(account);
    if (!stats) {
      stats = emptyStats();
      this.#stats.set(account, stats);
    }
    return stats;
  }

  /** Every account's stats summed, with the invalid grants no account can be charged with. */
  totals(): PartnerStats {
    const total = { ...this.#unattributed };
    for (const stats of this.#stats.values())
      for (const key of Object.keys(total) as (keyof PartnerStats)[]) total[key] += stats[key];
    return total;
  }

  /** A new single-use code granting `account`'s data to `clientId`, redeemable with `redirectUri`. */
  issueCode(code: Omit<AuthorizationCode, 'expiresAt' | 'grant'>): string {
    const text = newSecret(24);
    this.#codes.set(text, {
      ...code,
      expiresAt: Date.now() + this.#options.codeTtlMs,
      grant: undefined,
    });
    this.statsOf(code.account).codesIssued += 1;
    return text;
  }

  /** Counts an authorization request the account denied. */
  countDenial(account: string): void {
    this.statsOf(account).authorizationsDenied += 1;
  }

  /**
   * Exchanges a code (grant_type=authorization_code) for a new grant and its
   * first refresh token. A code whose request carried a PKCE challenge needs
   * the `codeVerifier` whose S256 it is (RFC 7636 4.6); a code without one
   * ignores a verifier sent.
   */
  redeemCode(
    text: string,
    clientId: string,
    redirectUri: string,
    codeVerifier: string | undefined,
  ): GrantTokens | GrantRefusal {
    const code = this.#codes.get(text);
    if (!code) return this.#refuse(undefined, 'unknown authorization code');
    if (code.grant) {
      // RFC 6749 10.5: a code used twice revokes the tokens issued from it.
      this.#revoke(code.grant);
      return this.#refuse(code.account, 'authorization code already used');
    }
    if (code.expiresAt <= Date.now())
      return this.#refuse(code.account, 'authorization code expired');
    if (code.clientId !== clientId)
      return this.#refuse(code.account, 'authorization code issued to another client');
    if (code.redirectUri !== redirectUri)
      return this.#refuse(code.account, 'redirect_uri differs from the authorization request');
    if (code.codeChallenge !== undefined) {
      if (codeVerifier === undefined)
        return this.#refuse(code.account, 'code_verifier is required (PKCE)');
      const challenge = createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
      if (challenge !== code.codeChallenge)
        return this.#refuse(code.account, 'code_verifier does not match the code_challenge');
    }
    const grant: PartnerGrant = {
      id: this.#nextGrantId++,
      account: code.account,
      clientId,
      scope: code.scope,
      revoked: false,
    };
    code.grant = grant;
    this.#grants.add(grant);
    this.statsOf(code.account).codesRedeemed += 1;
    return { grant, refreshToken: this.#newRefreshToken(grant), scope: grant.scope };
  }

  /**
   * A refresh (grant_type=refresh_token): with rotation, retires the token
   * presented and answers a new one; without, extends the presented one's
   * idle expiry. `scope`, when given, must lie within the grant's.
   */
  refresh(text: string, clientId: string, scope: string | undefined): GrantTokens | GrantRefusal {
    const token = this.#refreshTokens.get(text);
    if (!token) return this.#refuse(undefined, 'unknown refresh token');
    const { grant } = token;
    if (grant.revoked) return this.#refuse(grant.account, 'authorization revoked');
    if (token.rotated) {
      if (this.#options.revokeOnReuse) this.#revoke(grant);
      return this.#refuse(grant.account, 'refresh token already used (rotated)');
    }
    if (token.expiresAt <= Date.now())
      return this.#refuse(grant.account, 'refresh token expired (unused too long)');
    if (grant.clientId !== clientId)
      return this.#refuse(grant.account, 'refresh token issued to another client');
    if (scope !== undefined) {
      const granted = scopesOf(grant.scope);
      if (!scopesOf(scope).every((s) => granted.includes(s))) {
        return {
          error: 'invalid_scope',
          description: 'the scope requested exceeds the scope granted',
        };
      }
    }
    this.statsOf(grant.account).refreshes += 1;
    let refreshToken: string | undefined;
    if (this.#options.rotate) {
      token.rotated = true;
      refreshToken = this.#newRefreshToken(grant);
    } else {
      token.expiresAt = Date.now() + this.#options.refreshTtlMs;
    }
    return { grant, refreshToken, scope: scope ?? grant.scope };
  }

  /** Revokes every grant of `account`: its refresh tokens, access tokens and unredeemed codes. */
  revokeAccount(account: string): void {
    for (const grant of this.#grants) if (grant.account === account) this.#revoke(grant);
    for (const [text, code] of this.#codes) if (code.account === account) this.#codes.delete(text);
  }

  /**
   * Sets the scopes of every grant of `account` not revoked (as when the
   * vendor's partner support changes the app's scopes and the customer
   * approves again): the grant's tokens, those already minted included,
   * carry them from now on.
   */
  setScopes(account: string, scopes: readonly string[]): void {
    for (const grant of this.#grants)
      if (grant.account === account && !grant.revoked) grant.scope = scopes.join(' ');
  }

  /** Drops the next `times` refresh responses of `account` (any account when undefined). */
  dropRefreshResponses(account: string | undefined, times: number): void {
    const key = account ?? '';
    this.#drops.set(key, (this.#drops.get(key) ?? 0) + times);
  }

  /** Whether this refresh response of `account` is to be dropped; consumes one drop if so. */
  takeDrop(account: string): boolean {
    for (const key of [account, '']) {
      const left = this.#drops.get(key) ?? 0;
      if (left > 0) {
        this.#drops.set(key, left - 1);
        this.statsOf(account).refreshResponsesDropped += 1;
        return true;
      }
    }
    return false;
  }

  #newRefreshToken(grant: PartnerGrant): string {
    const text = newSecret(32);
    this.#refreshTokens.set(text, {
      grant,
      expiresAt: Date.now() + this.#options.refreshTtlMs,
      rotated: false,
    });
    return text;
  }

  #revoke(grant: PartnerGrant): void {
    if (grant.revoked) return;
    grant.revoked = true;
    this.statsOf(grant.account).authorizationsRevoked += 1;
  }

  #refuse(account: string | undefined, description: string): GrantRefusal {
    const stats = account === undefined ? this.#unattributed : this.statsOf(account);
    stats.invalidGrants += 1;
    return { error: 'invalid_grant', description };
  }
}
