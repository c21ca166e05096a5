import { createHash } from 'node:crypto';
import { type Generated, type Kysely, sql } from 'kysely';
import type { GrantAnswer, RefreshTokenVault } from '../api/refresh-token-port.js';
import { HiresyncError, ReauthorizationRequiredError, RefreshRefusedError } from '../errors.js';
import { redactSecrets, registerSecret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import { AccountUnavailableError } from './account.js';
import type { SecretBox } from './secret-box.js';

/** A row of `hiresync.refresh_tokens` (migrations/hiresync/0002_partner_tokens.ts). */
export interface RefreshTokensTable {
  /** The partner account (hiresync.accounts.name). */
  account: string;
  /** Sealed by SecretBox for {@link refreshTokenPurpose} (`hs1.…`); never plaintext. */
  token: string;
  authorized_at: Generated<string>;
  refreshed_at: string | null;
  /** Set while a refresh grant's outcome is not recorded: still set after one was interrupted. */
  refresh_started_at: string | null;
  reauthorization_reason: string | null;
}

/**
 * The table of partner refresh tokens, for `Kysely#withTables` (a type alias:
 * withTables wants an index signature, which an interface lacks).
 */
export type RefreshTokenTables = {
  /** In schema hiresync whatever the search_path: always named with its schema. */
  'hiresync.refresh_tokens': RefreshTokensTable;
};

/** The purpose a partner account's refresh token is sealed for: it opens in no other row or column. */
export function refreshTokenPurpose(account: string): string {
  return `account:${account}:refresh_token`;
}

/**
 * The advisory-lock key serialising the refresh grants (and re-authorizations)
 * of one account across every process: 64 bits of SHA-256 of a name no run
 * lock has (run locks hash `hiresync run lock\n…`), in Postgres's single-bigint
 * key space.
 */
export function refreshLockKey(account: string): bigint {
  return createHash('sha256')
    .update(`hiresync refresh lock\n${account}`)
    .digest()
    .readBigInt64BE(0);
}

/**
 * Why an account needs re-authorizing after the token endpoint refused its
 * stored refresh token (`refusal`: the RefreshRefusedError's message).
 * `interrupted`: a refresh before this one was sent and never recorded, so the
 * endpoint most likely rotated the token then and the rotation was lost.
 */
export function refusalReason(refusal: string, interrupted: boolean): string {
  // The first clause says what the endpoint answered; the rest is advice the
  // reason gives in its own words.
  const answered = redactSecrets(refusal.split('; ')[0] ?? refusal);
  return interrupted
    ? `a refresh was interrupted after the token endpoint rotated the token; the rotated token was lost, and the stored one was refused (${answered})`
    : `its refresh token was refused (${answered}): the customer revoked the authorization, or the token expired unused`;
}

/** What {@link PostgresRefreshTokenVault.exchange} reads under its lock. */
interface StoredToken {
  state: string;
  token: string | null;
  refresh_started_at: string | null;
  reauthorization_reason: string | null;
}

/** Options of {@link PostgresRefreshTokenVault}. */
export interface PostgresRefreshTokenVaultOptions {
  /** Longest wait for another process's refresh of the account to end. Default 60 s. */
  lockWaitMs?: number;
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * A partner account's refresh token in `hiresync.refresh_tokens`, sealed with
 * HIRESYNC_SECRET_KEY. Each {@link exchange} runs on a pooled connection of
 * its own under a session advisory lock of the account, so one refresh at a
 * time runs per account across every process (and every deployment on the
 * database), and records in Postgres where it stands:
 *
 * - `refresh_started_at` is set and committed right before the grant is sent;
 * - an answer stores the rotated token (or the same one), clears the marker
 *   and, when the grant was accepted, sets `refreshed_at`, in one statement,
 *   and only then hands the access token back (or throws what was wrong with
 *   the answer): it is never used before the new refresh token is safe;
 * - a refusal (RefreshRefusedError) puts an enabled account in state
 *   `needs_reauthorization` with the reason, and throws ReauthorizationRequiredError;
 * - no answer (network, 5xx, a timeout: the endpoint may have rotated the
 *   token) leaves the marker set.
 *
 * A process killed between the token response and the commit leaves the
 * marker too. The next exchange then tries the stored token: if the endpoint
 * had not rotated it, all is well; if it had, the refusal's reason says the
 * rotated token was lost. An account is never silently stuck.
 */
export class PostgresRefreshTokenVault implements RefreshTokenVault {
  readonly #db: Kysely<Database>;
  readonly #box: SecretBox;
  readonly #account: string;
  readonly #lockWaitMs: number;

  /** `db`: the root instance of the pool (tables are named with their schema). */
  constructor(
    db: Kysely<Database>,
    box: SecretBox,
    account: string,
    options: PostgresRefreshTokenVaultOptions = {},
  ) {
    this.#db = db;
    this.#box = box;
    this.#account = account;
    this.#lockWaitMs = options.lockWaitMs ?? 60_000;
  }

  exchange<T>(
    send: (refreshToken: string, sending: () => Promise<void>) => Promise<GrantAnswer<T>>,
  ): Promise<T> {
    const key = refreshLockKey(this.#account).toString();
    return this.#db.connection().execute(async (conn) => {
      await this.#lock(conn, key);
      try {
        return await this.#exchangeLocked(conn, send);
      } finally {
        // A broken connection has released the lock already.
        await sql`select pg_advisory_unlock(${key}::bigint)`.execute(conn).catch(() => {});
      }
    });
  }

  /** Takes the account's session lock, waiting at most lockWaitMs for another process's refresh. */
  async #lock(conn: Kysely<Database>, key: string): Promise<void> {
    try {
      // A session lock taken in a transaction outlives it; the wait limit
      // (set local) does not, so the pooled connection keeps its settings.
      await conn.transaction().execute(async (trx) => {
        await sql`select set_config('lock_timeout', ${`${this.#lockWaitMs}ms`}, true)`.execute(trx);
        await sql`select pg_advisory_lock(${key}::bigint)`.execute(trx);
      });
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
      throw new HiresyncError(
        `timed out after ${Math.round(this.#lockWaitMs / 1000)} s waiting for another process's refresh of account ${this.#account}'s token (a slow or rate-limited token endpoint); the run will be retried`,
        { cause: error },
      );
    }
  }

  async #exchangeLocked<T>(
    conn: Kysely<Database>,
    send: (refreshToken: string, sending: () => Promise<void>) => Promise<GrantAnswer<T>>,
  ): Promise<T> {
    const name = this.#account;
    const purpose = refreshTokenPurpose(name);
    const { rows } = await sql<StoredToken>`
      select a.state, t.token, t.refresh_started_at, t.reauthorization_reason
      from hiresync.accounts a
      left join hiresync.refresh_tokens t on t.account = a.name
      where a.name = ${name}`.execute(conn);
    const stored = rows[0];
    if (!stored) {
      throw new AccountUnavailableError(
        `account ${name} was removed; its refresh token went with it`,
      );
    }
    if (stored.state === 'needs_reauthorization') {
      throw new ReauthorizationRequiredError(
        name,
        stored.reauthorization_reason ?? 'its refresh token was refused',
      );
    }
    if (stored.token === null) {
      throw new ReauthorizationRequiredError(name, 'no refresh token is stored for it');
    }
    const refreshToken = this.#box.open(stored.token, purpose);
    registerSecret(refreshToken);
    // Still set: the refresh before this one was sent and its outcome never recorded.
    const interrupted = stored.refresh_started_at !== null;

    const tokens = conn.withTables<RefreshTokenTables>();
    // Committed right before the grant leaves: should this process die before
    // the outcome is recorded, the next exchange knows a rotation may be lost.
    // A grant given up before it was sent (a shutdown) never sets it.
    let marked = false;
    const sending = async () => {
      if (marked) return;
      await tokens
        .updateTable('hiresync.refresh_tokens')
        .set({ refresh_started_at: sql<string>`now()` })
        .where('account', '=', name)
        .execute();
      marked = true;
    };

    // Thrown: the outcome is unknown (the endpoint may have rotated the
    // token); the marker stays for the next exchange to settle.
    const answer = await send(refreshToken, sending);
    if ('error' in answer && answer.error instanceof RefreshRefusedError) {
      const reason = refusalReason(answer.error.message, interrupted);
      // One statement: the account's state and the token's reason together.
      // Only an enabled account changes state: a disabled one stays disabled
      // (enabling is the operator's decision), its reason kept for `list`.
      await sql`
        with token as (
          update hiresync.refresh_tokens
          set refresh_started_at = null, reauthorization_reason = ${reason}
          where account = ${name}
          returning account
        )
        update hiresync.accounts set state = 'needs_reauthorization'
        where name = ${name} and state = 'enabled'`.execute(conn);
      throw new ReauthorizationRequiredError(name, reason);
    }

    // Answered: the outcome is known. A rotated token is committed even when
    // the rest of the answer is unusable, as the endpoint has retired the old one.
    const granted = 'value' in answer || answer.rotated !== undefined;
    if (answer.rotated !== undefined) registerSecret(answer.rotated);
    const result = await tokens
      .updateTable('hiresync.refresh_tokens')
      .set({
        token: this.#box.seal(answer.rotated ?? refreshToken, purpose),
        refresh_started_at: null,
        ...(granted ? { refreshed_at: sql<string>`now()`, reauthorization_reason: null } : {}),
      })
      .where('account', '=', name)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) {
      throw new AccountUnavailableError(
        `account ${name} was removed while its token was being refreshed`,
      );
    }
    if ('error' in answer) throw answer.error;
    return answer.value;
  }
}
