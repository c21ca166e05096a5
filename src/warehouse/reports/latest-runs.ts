/**
 * The newest runs of every (account, resource), read from the shared table
 * hiresync.data_sync_runs (migration hiresync/0009) in one statement whatever
 * the number of accounts: `status`, `accounts list` and each /metrics scrape
 * read them so. Each statement walks the index (account, resource, id desc)
 * once per (account, resource): the cost grows with the pairs read, not with
 * the runs kept, and the statement holds the same few locks at 5 accounts as
 * at 5,000 (the table and its indexes, not an account's views).
 */
import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { Database, SyncRun } from '../tables.js';

/** The newest runs of one (account, resource). */
export interface LatestRuns {
  account: string;
  resource: string;
  /** Its newest run. */
  lastRun: SyncRun;
  /** Its newest run that succeeded, if any. */
  lastSuccess: SyncRun | undefined;
  /** Its newest run that is not running, when the newest run is (else undefined: the newest run is). */
  lastFinished: SyncRun | undefined;
}

/**
 * The CTE `latest`: for each of the accounts `$1` (text[], the only
 * parameter of these statements), each resource it has runs of and its
 * newest run (every column of hiresync.data_sync_runs), by a loose index
 * scan: the first index entry of an account is its first resource's newest
 * run, and the first entry past a resource is the next resource's.
 * `with recursive` must open the statement. Every read of the shared table
 * is bound to an account of `$1`: the probes join on the accounts unnested
 * from it (`s.account = a.account`, then `l.account` of a row found so), so
 * a statement reads the accounts asked for and no other (a removed
 * account's leftover rows included). Not `s.account = any($1)` in each
 * probe: at 2,000 accounts that made the read 6.8 s instead of 33 ms (an
 * index condition of the whole list at every probe), 0.19 s as a filter.
 */
const LATEST_PER_RESOURCE = `latest as (
      select f.*
      from unnest($1::text[]) a(account)
      cross join lateral (
        select * from hiresync.data_sync_runs s
        where s.account = a.account
        order by s.resource, s.id desc limit 1) f
      union all
      select n.*
      from latest l
      cross join lateral (
        select * from hiresync.data_sync_runs s
        where s.account = l.account and s.resource > l.resource
        order by s.resource, s.id desc limit 1) n
    )`;

/** The newest runs of each pair (see readLatestRuns). */
export const LATEST_RUNS_TEXT = `-- The newest runs of each (account, resource) of $1.
with recursive ${LATEST_PER_RESOURCE}
select l.*, true as is_last, l.outcome = 'succeeded' as is_success, false as is_finished
from latest l
union all
select s.*, false, true, false
from latest l
cross join lateral (
  select * from hiresync.data_sync_runs s
  where s.account = l.account and s.resource = l.resource
    and s.outcome = 'succeeded'
  order by s.id desc limit 1) s
where l.outcome <> 'succeeded'
union all
select f.*, false, false, true
from latest l
cross join lateral (
  select * from hiresync.data_sync_runs s
  where s.account = l.account and s.resource = l.resource
    and s.outcome <> 'running'
  order by s.id desc limit 1) f
where l.outcome = 'running'`;

/** When each pair last succeeded, and whether its last finished run failed (see readLatestOutcomes). */
export const LATEST_OUTCOMES_TEXT = `-- The outcomes of each (account, resource) of $1, for /metrics.
with recursive ${LATEST_PER_RESOURCE}
select l.account, l.resource,
  case when l.outcome = 'succeeded' and l.finished_at is not null
    then extract(epoch from l.finished_at)::float8
    else (select extract(epoch from s.finished_at)::float8 from hiresync.data_sync_runs s
      where s.account = l.account and s.resource = l.resource
        and s.outcome = 'succeeded' and s.finished_at is not null
      order by s.id desc limit 1) end as at,
  case when l.outcome <> 'running' and l.finished_at is not null
    then l.outcome = 'failed'
    else (select s.outcome = 'failed' from hiresync.data_sync_runs s
      where s.account = l.account and s.resource = l.resource
        and s.outcome <> 'running' and s.finished_at is not null
      order by s.id desc limit 1) end as failed
from latest l
order by l.account, l.resource`;

/** When each account last succeeded (see readLastSuccesses). */
export const LAST_SUCCESSES_TEXT = `-- When each account of $1 last succeeded.
with recursive ${LATEST_PER_RESOURCE}
select l.account, max(case when l.outcome = 'succeeded' then l.finished_at
    else (select s.finished_at from hiresync.data_sync_runs s
      where s.account = l.account and s.resource = l.resource
        and s.outcome = 'succeeded'
      order by s.id desc limit 1) end) as finished_at
from latest l
group by l.account`;

/** Runs `text` with the accounts as `$1` (see {@link withoutJit}). */
async function readOf<T>(
  db: Kysely<Database>,
  text: string,
  accounts: readonly string[],
): Promise<T[]> {
  const { rows } = await withoutJit(db, (trx) =>
    trx.executeQuery<T>(CompiledQuery.raw(text, [[...new Set(accounts)]])),
  );
  return rows;
}

/**
 * Runs `read` in a transaction with JIT compilation off. Each of these
 * statements is thousands of index probes of a row or two, which the
 * planner's cost puts far above jit_above_cost at a few thousand accounts:
 * compiling them would add about 0.3 s to a read of 5,000 accounts and save
 * nothing. Four statements: begin, set, the read, commit.
 */
async function withoutJit<T>(
  db: Kysely<Database>,
  read: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local jit = off`.execute(trx);
    return read(trx);
  });
}

/**
 * For each of `accounts`, each resource it has runs of: its newest run, its
 * newest run that succeeded, and, when the newest is running, the newest that
 * is not; in no particular order. Throws Postgres's 42P01
 * when the shared table does not exist yet (a database before `migrate`).
 */
export async function readLatestRuns(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<LatestRuns[]> {
  if (accounts.length === 0) return [];
  // The newest run of each pair; then, only where it did not succeed, the
  // newest that did; and, only where it is running, the newest that is not.
  const rows = await readOf<
    SyncRun & { account: string; is_last: boolean; is_success: boolean; is_finished: boolean }
  >(db, LATEST_RUNS_TEXT, accounts);
  const found = new Map<string, LatestRuns>();
  // Each row is kept as it came (its account and flags along): at thousands
  // of accounts a copy of every row costs more in garbage than the rest.
  for (const run of rows) {
    const key = `${run.account}\n${run.resource}`;
    const entry = found.get(key) ?? {
      account: run.account,
      resource: run.resource,
      lastRun: run,
      lastSuccess: undefined,
      lastFinished: undefined,
    };
    found.set(key, entry);
    if (run.is_last) entry.lastRun = run;
    if (run.is_success) entry.lastSuccess = run;
    if (run.is_finished) entry.lastFinished = run;
  }
  return [...found.values()];
}

/** What a /metrics scrape reads of one (account, resource)'s runs. */
export interface LatestOutcome {
  account: string;
  resource: string;
  /** When its newest succeeded run finished, epoch seconds; null before one. */
  at: number | null;
  /** Whether its newest finished run failed; null before one finished. */
  failed: boolean | null;
}

/**
 * For each of `accounts`, each resource it has runs of: when its newest
 * succeeded run finished, and whether its newest finished run (a run in
 * flight leaves the one before it standing) failed. One probe of the index
 * per pair when the newest run finished; a run in flight or a failure costs
 * one more. Throws 42P01 before the shared table exists.
 */
export async function readLatestOutcomes(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<LatestOutcome[]> {
  if (accounts.length === 0) return [];
  return readOf<LatestOutcome>(db, LATEST_OUTCOMES_TEXT, accounts);
}

/**
 * When each of `accounts` last succeeded: the latest finish among its
 * resources' newest succeeded runs, as Postgres prints it; accounts without
 * one are absent. Throws 42P01 before the shared table exists.
 */
export async function readLastSuccesses(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await readOf<{ account: string; finished_at: string | null }>(
    db,
    LAST_SUCCESSES_TEXT,
    accounts,
  );
  return new Map(
    rows.flatMap((r) => (r.finished_at === null ? [] : [[r.account, r.finished_at] as const])),
  );
}
