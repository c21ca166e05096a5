import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AccountState } from './account-registry.js';
import type { PartnerGrant } from './partner-grants.js';

/** An access token the simulator minted, expired or revoked included. */
export interface IssuedToken {
  account: AccountState;
  owner: string;
  sub: string | undefined;
  expiresAt: number;
  revoked: boolean;
  /** The partner authorization the token was minted under; the token is invalid once it is revoked. */
  grant?: PartnerGrant | undefined;
}

/** Options of {@link IssuedTokens}. */
export interface IssuedTokensOptions {
  /** Lifetime of a token minted without one of its own, in seconds. */
  ttlSeconds: number;
  /** Minting a token revokes the previous ones of the same owner and `sub`. */
  revokePrevious: boolean;
}

/** Every access token minted, by its text, with the count of those minted. */
export class IssuedTokens {
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #options: IssuedTokensOptions;
  readonly #stats: { tokensIssued: number };

  /** `stats` is the live object whose `tokensIssued` counts every token minted. */
  constructor(options: IssuedTokensOptions, stats: { tokensIssued: number }) {
    this.#options = options;
    this.#stats = stats;
  }

  /** Mints a token of `account`, counted for the simulator and the account. */
  issue(
    account: AccountState,
    owner: string,
    sub: string | undefined,
    ttlSeconds = this.#options.ttlSeconds,
    grant?: PartnerGrant,
  ): { token: string; expiresAt: number } {
    if (this.#options.revokePrevious) {
      for (const t of this.#tokens.values())
        if (t.owner === owner && t.sub === sub) t.revoked = true;
    }
    const token = randomBytes(24).toString('base64url');
    const expiresAt = Date.now() + ttlSeconds * 1000;
    this.#tokens.set(token, { account, owner, sub, expiresAt, revoked: false, grant });
    this.#stats.tokensIssued += 1;
    account.stats.tokensIssued += 1;
    return { token, expiresAt };
  }

  /** Makes token `token` known as `text` instead (its record moves, unchanged). */
  rename(token: string, text: string): void {
    this.#tokens.set(text, { ...(this.#tokens.get(token) as IssuedToken) });
    this.#tokens.delete(token);
  }

  /** The token a request presents, if the simulator issued it (expired or revoked included). */
  presentedBy(req: IncomingMessage): IssuedToken | undefined {
    const auth = req.headers.authorization;
    return auth?.startsWith('Bearer ') ? this.#tokens.get(auth.slice(7)) : undefined;
  }

  /** Revokes every token of `account`, or every token when undefined. */
  revoke(account?: AccountState): void {
    for (const token of this.#tokens.values())
      if (account === undefined || token.account === account) token.revoked = true;
  }

  /** Makes every token of `account`, or every token when undefined, expire now. */
  expire(account?: AccountState): void {
    for (const token of this.#tokens.values())
      if (account === undefined || token.account === account) token.expiresAt = 0;
  }
}
