import { HiresyncError } from '../errors.js';
import { registerSecret } from '../secret.js';
import { abortable, sleep } from './sleep.js';
import { renewAt, tokenUrlVariable } from './token-answer.js';
import type { CachedToken } from './token-cipher.js';
import { TokenGrants, type TokenGrantsOptions } from './token-grants.js';
import type { TokenStore } from './token-store.js';

/** Options of {@link TokenProvider}: its grants' (the clock optional), and where tokens are shared. */
export interface TokenProviderOptions extends Omit<TokenGrantsOptions, 'now'> {
  store: TokenStore;
  /** How long to wait for another process's refresh before giving up. Default 60 s. */
  lockWaitMs?: number;
  now?: () => number;
}

/** Numbers the providers of a process (their redaction slots). */
let providers = 0;

/**
 * Gives out the access token in force. Tokens are shared through a store (Redis
 * in production) so all processes with the same credentials use one token, and
 * minting is single-flight across them: some deployments of the API revoke the
 * previous token when a new one is minted.
 */
export class TokenProvider {
  readonly #options: TokenProviderOptions;
  readonly #now: () => number;
  readonly #grants: TokenGrants;
  #current: CachedToken | undefined;
  /** The refresh in progress, shared by every caller; aborted when all of them have given up. */
  #inflight: { promise: Promise<string>; controller: AbortController; waiters: number } | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#grants = new TokenGrants({ ...options, now: this.#now });
  }

  /** The token to send now: cached while fresh, else renewed. Every wait ends when `signal` is aborted. */
  async getToken(signal?: AbortSignal): Promise<string> {
    const current = this.#current;
    // Registered in this provider's slot each time it is handed out: the
    // redaction holds the token in force however many accounts' tokens were
    // minted since, and the one it replaced for an hour more.
    if (current && this.#isFresh(current)) return this.#handOut(current.accessToken);
    return this.#refresh(undefined, signal);
  }

  /**
   * Called after a 401 with the token that was refused: returns a different
   * token, taking one another process already minted if there is one.
   */
  async renew(refused: string, signal?: AbortSignal): Promise<string> {
    if (this.#current && this.#current.accessToken !== refused && this.#isFresh(this.#current)) {
      return this.#handOut(this.#current.accessToken);
    }
    return this.#refresh(refused, signal);
  }

  /**
   * Obtains a new token now, unless the one in the store is newer than the
   * one this process holds (another process has just obtained it).
   */
  async refreshNow(signal?: AbortSignal): Promise<void> {
    const stored = await this.#options.store.read();
    await this.#refresh(stored?.accessToken ?? this.#current?.accessToken, signal);
  }

  /**
   * Resolves once no token request of this provider is under way, whatever
   * its outcome: a closing process waits for it, as a refresh grant that has
   * left runs to its answer (which may carry a rotated refresh token).
   */
  async settled(): Promise<void> {
    await this.#inflight?.promise.catch(() => {});
  }

  /** Slot of this provider in the redaction registry: the token it hands out stays redacted. */
  readonly #slot = `token-provider:${++providers}`;

  /** The token handed out, kept in this provider's redaction slot (a no-op while it is unchanged). */
  #handOut(token: string): string {
    registerSecret(token, { slot: this.#slot });
    return token;
  }

  #isFresh(token: CachedToken): boolean {
    const at = renewAt(token);
    return at === undefined || this.#now() < at;
  }

  async #refresh(refused: string | undefined, signal: AbortSignal | undefined): Promise<string> {
    // A caller may join a refresh started before its token was refused, which
    // can hand out that very token (still in the store). A refused token is
    // never given out again: join (or start) refreshes until one knows it.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const token = await this.#joinRefresh(refused, signal);
      if (refused === undefined || token !== refused) return token;
      if (this.#current?.accessToken === refused) this.#current = undefined;
    }
    throw new HiresyncError(
      `the token endpoint keeps handing out the token the API has just refused; check the credentials and ${tokenUrlVariable(this.#options.auth)}`,
    );
  }

  /** Joins the refresh in progress, or starts one that will not hand out `refused`. */
  async #joinRefresh(
    refused: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    let shared = this.#inflight;
    if (!shared) {
      const controller = new AbortController();
      const promise = this.#refreshShared(refused, controller.signal)
        .then((token) => this.#handOut(token))
        .finally(() => {
          if (this.#inflight === created) this.#inflight = undefined;
        });
      // Observed here: when every caller has given up, nobody else awaits it.
      promise.catch(() => {});
      const created = { promise, controller, waiters: 0 };
      this.#inflight = created;
      shared = created;
    }
    shared.waiters += 1;
    try {
      return await abortable(shared.promise, signal);
    } finally {
      shared.waiters -= 1;
      if (shared.waiters === 0 && signal?.aborted) shared.controller.abort(signal.reason);
    }
  }

  async #refreshShared(refused: string | undefined, signal: AbortSignal): Promise<string> {
    const { store, logger } = this.#options;
    const deadline = this.#now() + (this.#options.lockWaitMs ?? 60_000);
    const usable = (t: CachedToken | undefined): t is CachedToken =>
      t !== undefined && t.accessToken !== refused && this.#isFresh(t);
    for (;;) {
      const shared = await store.read();
      if (usable(shared)) {
        this.#current = shared;
        return shared.accessToken;
      }
      const lock = await store.tryLock();
      if (lock) {
        try {
          // Another process may have stored a token between our read and our lock.
          const again = await store.read();
          if (usable(again)) {
            this.#current = again;
            return again.accessToken;
          }
          // The lock is renewed while the token request runs (it may wait out
          // a token-endpoint 429); should it be lost, the request stops and
          // the loop looks again, so two processes never mint at once.
          let minted: CachedToken;
          const attempt = { sent: false };
          try {
            minted = await this.#grants.mint(AbortSignal.any([signal, lock.lost]), attempt);
          } catch (error) {
            // Looking again is safe unless a refresh grant left: its answer
            // may have rotated the refresh token, which must not be sent twice.
            const partner = this.#options.auth.mode === 'partner';
            if (lock.lost.aborted && !signal.aborted && !(partner && attempt.sent)) continue;
            throw error;
          }
          await store.write(minted);
          this.#current = minted;
          logger.info(
            {
              mode: this.#options.auth.mode,
              expiresInS:
                minted.expiresAt && Math.round((minted.expiresAt - minted.obtainedAt) / 1000),
            },
            'access token obtained',
          );
          return minted.accessToken;
        } finally {
          await lock.release();
        }
      }
      if (this.#now() > deadline) {
        throw new HiresyncError(
          `timed out after ${Math.round((this.#options.lockWaitMs ?? 60_000) / 1000)} s waiting for another process's token request (a slow or rate-limited token endpoint, or Redis trouble); the run will be retried`,
        );
      }
      await sleep(50 + Math.random() * 50, signal);
    }
  }
}
