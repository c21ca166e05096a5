import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql, type Transaction } from 'kysely';
import { HiresyncError } from '../../errors.js';
import { awaitRunFence, holdRunFence, runLockKey } from '../lock-keys.js';
import type { Database } from '../tables.js';

/** The run no longer holds its resource's Postgres lock (its connection was lost). */
export class ResourceLockLostError extends HiresyncError {}

interface Held {
  pid: number;
  release: () => void;
  done: Promise<void>;
}

/**
 * One run per resource per database, whatever Redis says: a session-level
 * advisory lock held on one pooled connection for the whole run. Two
 * deployments on different Redis instances (or a Redis that lost its keys)
 * still cannot run one resource twice against the same tables. A process that
 * dies releases its locks with its connections.
 */
/** A Postgres resource lock this process holds. */
export interface HeldResourceLock {
  /** Aborted (reason: a ResourceLockLostError) once the lock's connection fails its heartbeat. */
  lost: AbortSignal;
  /** Releases the lock; bounded in time, never throws. */
  release: () => Promise<void>;
  /**
   * The connection that holds the lock, until `release`: the run's
   * statements may go through it, one connection per run, no checkout each,
   * and a write committed on it was made under the lock (a session's
   * advisory lock lives as long as its connection). Its heartbeat waits for
   * the statement or transaction in hand. Nothing about the run's account
   * lives in it: every statement binds the account itself.
   */
  session: Kysely<Database>;
}

/** Server-side TCP settings of a lock's session (seconds, but tcp_user_timeout in ms), as text for set_config. */
interface DeadPeerSettings {
  idle: string;
  interval: string;
  count: string;
  userTimeout: string;
}

/**
 * Keepalives that find a silent client dead in about `ms`: the first probe
 * after half of it, then three probes a sixth of it apart; and unacknowledged
 * data given up after `ms`. At least a second each (their unit).
 */
export function deadPeerSettings(ms: number): DeadPeerSettings {
  return {
    idle: String(Math.max(1, Math.ceil(ms / 2000))),
    interval: String(Math.max(1, Math.floor(ms / 6000))),
    count: '3',
    userTimeout: String(Math.max(1000, Math.round(ms))),
  };
}

/** How long a release may wait for the unlock before giving the connection up. */
const RELEASE_TIMEOUT_MS = 5000;

/** The session settings `deadPeerMs` sets on the lock's connection, reset before it goes back to the pool. */
const DEAD_PEER_SETTINGS = [
  'tcp_keepalives_idle',
  'tcp_keepalives_interval',
  'tcp_keepalives_count',
  'tcp_user_timeout',
] as const;

/**
 * One run per resource per database, whatever Redis says: a session-level
 * advisory lock held on one pooled connection for the whole run. Two
 * deployments on different Redis instances (or a Redis that lost its keys)
 * still cannot run one resource twice against the same tables. A process that
 * dies releases its locks with its connections.
 *
 * The held connection is pinged every `heartbeatMs` (which also keeps it from
 * counting as idle): should it fail (a Postgres restart, pg_terminate_backend,
 * a proxy cutting it), the lock is gone and `lost` aborts, so the run stops
 * after the page in hand instead of running beside another deployment's.
 * Session advisory locks need a session: not pgbouncer's transaction mode.
 */
export class ResourceLock {
  readonly #db: Kysely<Database>;
  readonly #heartbeatMs: number;
  readonly #deadPeer: DeadPeerSettings | undefined;
  readonly #held = new Map<string, Held>();

  /**
   * `deadPeerMs`: the server drops the lock's connection (and so the lock)
   * about this long after the client's host stops answering (TCP
   * keepalives and tcp_user_timeout of that session); without it, the
   * server's defaults, often two hours.
   */
  constructor(db: Kysely<Database>, options: { heartbeatMs?: number; deadPeerMs?: number } = {}) {
    this.#db = db;
    this.#heartbeatMs = options.heartbeatMs ?? 5000;
    this.#deadPeer =
      options.deadPeerMs === undefined ? undefined : deadPeerSettings(options.deadPeerMs);
  }

  /** Takes the lock of `name` if it is free; undefined when another session holds it. */
  async tryAcquire(name: string): Promise<HeldResourceLock | undefined> {
    if (this.#held.has(name)) return undefined;
    const key = runLockKey(name).toString();
    const lost = new AbortController();
    let settle!: (pid: number | undefined) => void;
    const acquired = new Promise<number | undefined>((resolve) => {
      settle = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let session: Kysely<Database> | undefined;
    const done = this.#db
      .connection()
      .execute(async (conn) => {
        const deadPeer = this.#deadPeer;
        // The dead-peer settings are the session's, and the connection is the
        // shared pool's: set in the statement that takes the lock, put back to
        // the server's values (pg_settings.reset_val, what RESET restores) in
        // the one that releases it, or at once when the lock is not taken, so
        // that no other query's connection drops a slow peer this early and a
        // run sends no statement more than without them.
        const setDeadPeer = deadPeer
          ? sql`set_config('tcp_keepalives_idle', ${deadPeer.idle}, false),
              set_config('tcp_keepalives_interval', ${deadPeer.interval}, false),
              set_config('tcp_keepalives_count', ${deadPeer.count}, false),
              set_config('tcp_user_timeout', ${deadPeer.userTimeout}, false),`
          : sql``;
        const resetDeadPeer = deadPeer
          ? sql`, ${sql.join(
              DEAD_PEER_SETTINGS.map(
                (setting) =>
                  sql`set_config(${setting}, (select reset_val from pg_catalog.pg_settings where name = ${setting}), false)`,
              ),
            )}`
          : sql``;
        let reset = !deadPeer;
        try {
          // Taken, the lock then waits for the fence: pages a previous holder
          // was still committing on pooled connections (see runFenceKey).
          const { rows } = await sql<{ ok: boolean; pid: number }>`
            select t.ok, t.pid, case when t.ok then ${sql.raw(awaitRunFence(name))} end as fenced
            from (
              select ${setDeadPeer} pg_try_advisory_lock(${key}::bigint) as ok, pg_backend_pid() as pid
              offset 0
            ) as t`
            .execute(conn)
            .catch(async (error: unknown) => {
              // The lock taken, its fence's wait failed (a lock_timeout, a
              // cancel): a session's lock outlives the failed statement, and
              // must not go back to the pool with the connection.
              await sql`select pg_advisory_unlock(${key}::bigint)`.execute(conn).catch(() => {});
              throw error;
            });
          const row = rows[0];
          if (!row?.ok) {
            settle(undefined);
            return;
          }
          session = conn;
          settle(row.pid);
          // Release cancels the sleep in progress: a timer left running would
          // keep the process alive up to a heartbeat after the run ended.
          const stop = new AbortController();
          void released.then(() => stop.abort());
          while (!stop.signal.aborted) {
            await sleep(this.#heartbeatMs, undefined, { signal: stop.signal }).catch(() => {});
            if (stop.signal.aborted) break;
            try {
              await sql`select 1`.execute(conn);
            } catch (error) {
              lost.abort(
                new ResourceLockLostError(
                  `the run of ${name} lost its Postgres lock (its connection failed); it stops after the page in hand and resumes from its checkpoint`,
                  { cause: error },
                ),
              );
              return;
            }
          }
          // A broken connection has released the lock already.
          await sql`select pg_advisory_unlock(${key}::bigint) ${resetDeadPeer}`
            .execute(conn)
            .then(() => {
              reset = true;
            })
            .catch(() => {});
        } finally {
          // The lock not taken, or a way out before its release: a reset of
          // its own (it fails only on a broken connection, which pg's pool
          // does not keep).
          if (!reset) await sql`select 1 ${resetDeadPeer}`.execute(conn).catch(() => {});
        }
      })
      .catch((error: unknown) => {
        settle(undefined);
        if (!lost.signal.aborted) {
          lost.abort(
            new ResourceLockLostError(`the run of ${name} lost its Postgres lock`, {
              cause: error,
            }),
          );
        }
        throw error;
      });
    // Failures to lock come through `acquired`; later ones abort `lost`.
    done.catch(() => {});
    const pid = await acquired;
    if (pid === undefined || session === undefined) {
      await done.catch(() => {});
      return undefined;
    }
    this.#held.set(name, { pid, release, done });
    return {
      session,
      lost: lost.signal,
      release: async () => {
        this.#held.delete(name);
        release();
        // An unlock stuck on a half-open connection must not hold the run's
        // end; once the unlock is done, the timeout is cancelled.
        const unlocked = new AbortController();
        await Promise.race([
          done.catch(() => {}),
          sleep(RELEASE_TIMEOUT_MS, undefined, { signal: unlocked.signal }).catch(() => {}),
        ]);
        unlocked.abort();
      },
    };
  }

  /**
   * Throws ResourceLockLostError unless this process still holds the lock of
   * `name` on a live connection; run inside the transaction it protects.
   */
  async assertHeld(name: string, trx: Transaction<Database>): Promise<void> {
    const held = this.#held.get(name);
    if (!held)
      throw new ResourceLockLostError(`the run of ${name} does not hold its Postgres lock`);
    // pg_locks shows a bigint key as its high (classid) and low (objid) halves.
    const key = BigInt.asUintN(64, runLockKey(name));
    // The fence first (select-list items are evaluated left to right): a
    // session that takes the lock after this check waits for this
    // transaction. Should this process vanish before it ends, the server
    // ends it once idle for the lock's dead-peer time, as it drops the lock's
    // own session, rather than keep the next holder waiting.
    const idleLimit = this.#deadPeer
      ? sql`set_config('idle_in_transaction_session_timeout', ${this.#deadPeer.userTimeout}, true),`
      : sql``;
    const { rows } = await sql<{ held: boolean }>`
      select ${sql.raw(holdRunFence(name))} as fenced, ${idleLimit} exists (
        select 1 from pg_catalog.pg_locks
        where locktype = 'advisory' and classid = ${String(key >> 32n)}::bigint::oid
          and objid = ${String(key & 0xffffffffn)}::bigint::oid and objsubid = 1
          and pid = ${held.pid}::int and granted
          and database = (select d.oid from pg_catalog.pg_database d where d.datname = current_database())
      ) as held`.execute(trx);
    if (!rows[0]?.held) {
      throw new ResourceLockLostError(
        `the run of ${name} lost its Postgres lock (its connection was closed); the run will be retried from its checkpoint`,
      );
    }
  }
}
