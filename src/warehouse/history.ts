import { type RawBuilder, sql } from 'kysely';

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
 * statement that changed the rows, hence of the page's (or the sweep's)
 * transaction: a version is never lost or doubled.
 *
 * `deleted`: the new versions record a deletion (the sweep).
 */
export function versionCtes(
  target: HistoryTarget,
  source: string,
  runId: string,
  deleted: boolean,
): RawBuilder<unknown> {
  const history = sql.table(target.historyTable);
  // The ids as an array: the planner then probes the primary key for the few
  // changed records instead of scanning the whole history (a join would).
  return sql`closed_versions as (
    update ${history} as h set valid_to = statement_timestamp()
    where h.id = any(array(select s.id from ${sql.table(source)} as s where s.replaced))
      and h.valid_to is null
  ),
  new_versions as (
    insert into ${history} (id, valid_from, run_id, deleted, ${sql.ref(target.recordColumn)})
    select s.id, statement_timestamp(), ${runId}::bigint, ${deleted}, s.rec
    from ${sql.table(source)} as s where s.changed
  )`;
}

/**
 * The SET clause of an upsert's `changed_at`: moved to the statement's time
 * when the record differs from the one stored, or the row comes back from a
 * deletion; kept otherwise. `excluded.changed_at` is the statement's time.
 */
export function changedAtOnConflict(recordColumn: 'data' | 'raw'): RawBuilder<unknown> {
  const column = sql.ref(recordColumn);
  return sql`changed_at = case
      when t.${column} is distinct from excluded.${column} or t.deleted_at is not null
      then excluded.changed_at else t.changed_at end`;
}

/**
 * RETURNING columns `changed`, `replaced` and `rec` (the record, only when it
 * changed) of an upsert that set `changed_at` with {@link changedAtOnConflict}.
 * A row the upsert inserted (xmax 0: no version before it) replaces nothing,
 * which spares the first sync a probe of the history per record.
 */
export function returningVersion(recordColumn: 'data' | 'raw'): RawBuilder<unknown> {
  return sql`changed_at = statement_timestamp() as changed,
    changed_at = statement_timestamp() and xmax <> 0 as replaced,
    case when changed_at = statement_timestamp() then ${sql.ref(recordColumn)} end as rec`;
}
