import { type RawBuilder, sql } from 'kysely';
import { sharedRelation } from '../shared-relation.js';

/** Where a synced table keeps its versions, and the column holding the record as sent. */
export interface HistoryTarget {
  /** `<table>_history`. */
  readonly historyTable: string;
  /** `data` (JSON-stored resources) or `raw` (tracking links), in both tables. */
  readonly recordColumn: 'data' | 'raw';
}

/**
 * CTEs `closed_versions` and `new_versions` that record a version for each row
 * of the CTE `source` (columns `id`, `changed`, `replaced`, `rec`) whose
 * `changed` is true: the open version, if `replaced` says there is one (not a
 * row just inserted), is closed and the new one opened at the statement's time,
 * so `valid_to` of the one is exactly `valid_from` of the next. Part of the
 * statement that changed the rows, hence of the sweep's transaction: a version
 * is never lost or doubled. (The page statements of sql/ spell the same two
 * CTEs out.)
 *
 * `deleted`: the new versions record a deletion (the sweep, a webhook's
 * delete event). `runId` null: the version was recorded by no run (a
 * webhook's delete event).
 *
 * `account`: the account whose versions they are, bound in both CTEs, which
 * then name the shared history table (`hiresync.data_<table>_history`).
 */
export function versionCtes(
  target: HistoryTarget,
  source: string,
  runId: string | null,
  deleted: boolean,
  account: string,
): RawBuilder<unknown> {
  const history = sql.raw(sharedRelation(target.historyTable));
  // The ids as an array: the planner then probes the primary key for the few
  // changed records instead of scanning the whole history (a join would).
  return sql`closed_versions as (
    update ${history} as h set valid_to = statement_timestamp()
    where h.account = ${account}::text
      and h.id = any(array(select s.id from ${sql.table(source)} as s where s.replaced))
      and h.valid_to is null
  ),
  new_versions as (
    insert into ${history} (account, id, valid_from, run_id, deleted, ${sql.ref(target.recordColumn)})
    select ${account}::text, s.id, statement_timestamp(), ${runId}::bigint, ${deleted}, s.rec
    from ${sql.table(source)} as s where s.changed
  )`;
}
