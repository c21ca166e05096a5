import { type Kysely, sql, type Transaction } from 'kysely';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';

/** Which relation of which resource of which account (hiresync.policy_reapply's key). */
export interface RelationId {
  account: string;
  resource: string;
  relation: string;
}

/** A row's key: its id, and a history version's valid_from. */
export interface RowKey {
  id: string;
  validFrom?: string | undefined;
}

/** Where a relation's pass stands (a row of hiresync.policy_reapply). */
export interface RelationProgress {
  /** The resource's rules it applies (FieldPolicy.describe). */
  policy: string;
  /** The last row done; undefined before the first batch. */
  after: RowKey | undefined;
  rowsRead: number;
  rowsRewritten: number;
  /**
   * When the pass began (or the oldest transaction then open); once it is
   * complete, when it was last checked (markChecked): its catch-up, and a
   * later check of the completed relation, look at rows written since.
   */
  startedAt: string;
  completed: boolean;
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Throws unless hiresync.policy_reapply (migration hiresync/0012) exists:
 * a rewrite that could not record its progress could not be resumed.
 */
export async function assertReapplyProgress(db: Db): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.policy_reapply') is not null as present`.execute(db);
  if (!rows[0]?.present) {
    throw new HiresyncError(
      "this database has no hiresync.policy_reapply (where reapply-policy keeps its progress): run 'hiresync migrate' first; nothing was rewritten",
    );
  }
}

/** The progress of `id`'s pass, or undefined when none was ever begun. */
export async function readProgress(db: Db, id: RelationId): Promise<RelationProgress | undefined> {
  const { rows } = await sql<{
    policy: string;
    last_id: string | null;
    last_valid_from: string | null;
    rows_read: string;
    rows_rewritten: string;
    started_at: string;
    completed: boolean;
  }>`
    select policy, last_id::text as last_id, last_valid_from::text as last_valid_from,
      rows_read::text as rows_read, rows_rewritten::text as rows_rewritten,
      started_at::text as started_at, completed_at is not null as completed
    from hiresync.policy_reapply
    where account = ${id.account} and resource = ${id.resource} and relation = ${id.relation}`.execute(
    db,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    policy: row.policy,
    after:
      row.last_id === null
        ? undefined
        : { id: row.last_id, validFrom: row.last_valid_from ?? undefined },
    rowsRead: Number(row.rows_read),
    rowsRewritten: Number(row.rows_rewritten),
    startedAt: row.started_at,
    completed: row.completed,
  };
}

/**
 * Now, or the start of the oldest transaction of this database's clients
 * still open (a page begun before may commit after a pass has gone by; at
 * most an hour back): rows written after it are looked at again later.
 */
const CHECK_START = sql`greatest(
      now() - interval '1 hour',
      least(now(), (
        select min(xact_start) from pg_catalog.pg_stat_activity
        where datname = current_database() and backend_type = 'client backend'
          and pid <> pg_backend_pid())))`;

/** The moment from which rows written are looked at again (see CHECK_START), as Postgres prints it. */
export async function checkStart(db: Db): Promise<string> {
  const { rows } = await sql<{ at: string }>`select (${CHECK_START})::text as at`.execute(db);
  const at = rows[0]?.at;
  if (at === undefined) throw new Error('Postgres gave no time');
  return at;
}

/**
 * Records that the rows of `id`'s completed pass written before `from` were
 * looked at (see checkStart): the next check of the relation looks at the
 * rows written since (started_at moves to `from`).
 */
export async function markChecked(db: Db, id: RelationId, from: string): Promise<void> {
  await sql`
    update hiresync.policy_reapply set started_at = ${from}::timestamptz, updated_at = now()
    where account = ${id.account} and resource = ${id.resource} and relation = ${id.relation}`.execute(
    db,
  );
}

/**
 * Begins `id`'s pass afresh under `policy`: no row done yet. Its start is
 * now, or the start of the oldest transaction of this database's clients
 * still open (a page begun before the pass may commit after it has gone by;
 * at most an hour back), so that the catch-up at its end sees every row a
 * run wrote meanwhile.
 */
export async function beginProgress(
  db: Db,
  id: RelationId,
  policy: string,
): Promise<RelationProgress> {
  const { rows } = await sql<{ started_at: string }>`
    insert into hiresync.policy_reapply as p (account, resource, relation, policy, started_at)
    values (${id.account}, ${id.resource}, ${id.relation}, ${policy}, ${CHECK_START})
    on conflict (account, resource, relation) do update set
      policy = excluded.policy, last_id = null, last_valid_from = null, rows_read = 0,
      rows_rewritten = 0, started_at = excluded.started_at, updated_at = now(), completed_at = null
    returning started_at::text as started_at`.execute(db);
  const startedAt = rows[0]?.started_at;
  if (startedAt === undefined) throw new Error('policy_reapply returned no row');
  return { policy, after: undefined, rowsRead: 0, rowsRewritten: 0, startedAt, completed: false };
}

/** Records a batch done: the last key, and the rows it read and rewrote. */
export async function saveProgress(
  db: Db,
  id: RelationId,
  after: RowKey,
  read: number,
  rewritten: number,
): Promise<void> {
  await sql`
    update hiresync.policy_reapply set last_id = ${after.id}::bigint,
      last_valid_from = ${after.validFrom ?? null}::timestamptz,
      rows_read = rows_read + ${read}, rows_rewritten = rows_rewritten + ${rewritten},
      updated_at = now()
    where account = ${id.account} and resource = ${id.resource} and relation = ${id.relation}`.execute(
    db,
  );
}

/** Marks `id`'s pass complete: a rerun under the same policy skips it. */
export async function completeProgress(db: Db, id: RelationId): Promise<void> {
  await sql`
    update hiresync.policy_reapply set completed_at = now(), updated_at = now()
    where account = ${id.account} and resource = ${id.resource} and relation = ${id.relation}`.execute(
    db,
  );
}
