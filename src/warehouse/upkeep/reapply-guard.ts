import { type Kysely, sql } from 'kysely';
import { runKey } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import { awaitRunFence, runLockKey } from '../lock-keys.js';
import { isReferenceTable } from '../pages/sql/reference-locks.js';
import type { Database } from '../tables.js';

/**
 * A run of a resource reapply-policy would rewrite held it for longer than
 * reapply-policy waits: nothing of the resource was rewritten.
 */
export class RunWritingError extends HiresyncError {}

/** A run whose sync_runs row says `running`. */
export interface RunningRow {
  /** The resource it runs: the one rewritten, or tracking_links for a reference table. */
  resource: string;
  id: string;
  mode: string;
  startedAt: string;
}

/** Options of {@link waitForRuns}. */
export interface WaitForRunsOptions {
  /** Longest wait for each run lock held (lock_timeout). */
  waitMs: number;
  /** Told, before waiting, of the run (or the holder) it waits for. */
  onWait?: (what: string) => void;
  /**
   * Told of a run sync_runs says is running while nobody holds its lock: an
   * interrupted run, which a worker resumes later.
   */
  onInterrupted?: (run: RunningRow) => void;
}

/** SQLSTATE of lock_timeout expiring. */
const LOCK_NOT_AVAILABLE = '55P03';

/** The runs that write `resource`'s rows: its own, and tracking links' for a reference table (their nested copies). */
export function writersOf(resource: string): string[] {
  return isReferenceTable(resource) ? [resource, 'tracking_links'] : [resource];
}

/** The newest run of (account, resource) that sync_runs says is running, if any. */
async function runningRow(
  db: Kysely<Database>,
  account: string,
  resource: string,
): Promise<RunningRow | undefined> {
  const { rows } = await sql<{ id: string; mode: string; started_at: string }>`
    select id::text as id, mode, started_at::text as started_at from hiresync.data_sync_runs
    where account = ${account} and resource = ${resource} and outcome = 'running'
    order by id desc limit 1`.execute(db);
  const row = rows[0];
  return row && { resource, id: row.id, mode: row.mode, startedAt: row.started_at };
}

/** How a run (or the lock's unknown holder) is named in what reapply-policy prints. */
function describe(account: string, resource: string, run: RunningRow | undefined): string {
  const of = `${resource} of account ${account}`;
  return run
    ? `a run of ${of} is writing (sync_runs run ${run.id}, ${run.mode}, started ${run.startedAt})`
    : `the run lock of ${of} is held (a sync run, an erasure or a webhook deletion)`;
}

/**
 * Waits until no run writes `resource` of `account` (see {@link writersOf}):
 * for each writer, its Postgres run lock (held by a run from its start to
 * its end, see ResourceLock) is taken for one transaction and let go at
 * once. A lock held is waited for at most `waitMs`, after `onWait` is told
 * which run it is; past it, {@link RunWritingError} naming the run. So a
 * pass never begins while a run started under the old policy is writing
 * the rows it would rewrite: what that run wrote is committed before the
 * pass reads. A run sync_runs says is running but whose lock is free was
 * interrupted: `onInterrupted` is told.
 */
export async function waitForRuns(
  db: Kysely<Database>,
  account: string,
  resource: string,
  options: WaitForRunsOptions,
): Promise<void> {
  for (const writer of writersOf(resource)) {
    const name = runKey(account, writer);
    const key = runLockKey(name).toString();
    const free = await db.transaction().execute(async (trx) => {
      // Free, the lock then waits for its fence: pages of a run that ended
      // still being committed on pooled connections (see runFenceKey).
      const { rows } = await sql<{ free: boolean }>`
        select t.free, case when t.free then ${sql.raw(awaitRunFence(name))} end as fenced
        from (select pg_try_advisory_xact_lock(${key}::bigint) as free offset 0) as t`.execute(trx);
      return rows[0]?.free === true;
    });
    const run = await runningRow(db, account, writer);
    if (free) {
      if (run) options.onInterrupted?.(run);
      continue;
    }
    const what = describe(account, writer, run);
    options.onWait?.(what);
    try {
      await db.transaction().execute(async (trx) => {
        await sql`select set_config('lock_timeout', ${`${Math.max(1, Math.round(options.waitMs))}ms`}, true)`.execute(
          trx,
        );
        await sql`select pg_advisory_xact_lock(${key}::bigint)::text, ${sql.raw(awaitRunFence(name))}`.execute(
          trx,
        );
      });
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
      throw new RunWritingError(
        `${what} and did not end within ${Math.round(options.waitMs / 1000)} s: nothing of ${resource} was rewritten (a pass beside a run under the old policy would be undone by it); run reapply-policy again once it has ended ('hiresync status' shows it), or wait longer (--wait)`,
        { cause: error },
      );
    }
  }
}
