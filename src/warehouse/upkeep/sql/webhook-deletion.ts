import { quoteIdentifier } from '../../quote-identifier.js';
import { sharedRelation } from '../../shared-relation.js';

/** Where a resource's records and versions are, as a webhook's delete event marks them. */
export interface WebhookDeletionTables {
  /** The account's relation (`jobs`, `candidates_data`, …): its rows are in hiresync.data_<table>. */
  table: string;
  /** `<table>_history`, when a deletion version is recorded (HIRESYNC_HISTORY); else undefined. */
  history?: string | undefined;
  /** The column holding the record as sent: `data`, or `raw` for tracking links. */
  recordColumn: 'data' | 'raw';
}

/**
 * The statement of a webhook's delete event: the account's live rows of the
 * ids get `deleted_at` (and `changed_at`) as a full run's sweep sets them
 * and, with `history`, their open version is closed and a deletion version
 * opened at the statement's time (`run_id` null: no run recorded it), in one
 * statement. It names the shared tables and binds the account in each
 * filter and insert.
 *
 * Parameters: `$1` the account, `$2` the ids (bigint[]). Returns one row:
 * `deleted`, how many rows were live (text).
 */
export function webhookDeletion(tables: WebhookDeletionTables): string {
  const table = sharedRelation(tables.table);
  const rec = quoteIdentifier(tables.recordColumn);
  const marked = `with marked as (
  update ${table} as t set deleted_at = now(), changed_at = statement_timestamp()
  where t.account = $1::text and t.id = any($2::bigint[]) and t.deleted_at is null
  returning t.id, t.${rec} as rec
)`;
  if (tables.history === undefined) {
    return `-- A webhook's delete event: live rows of ${table} marked deleted.
${marked}
select count(*)::text as deleted from marked`;
  }
  const history = sharedRelation(tables.history);
  // The ids as an array: the planner then probes the primary key for the few
  // marked records instead of scanning the whole history (a join would).
  return `-- A webhook's delete event: live rows of ${table} marked deleted, a deletion version each in ${history}.
${marked},
closed_versions as (
  update ${history} as h set valid_to = statement_timestamp()
  where h.account = $1::text and h.id = any(array(select m.id from marked as m))
    and h.valid_to is null
),
new_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, ${rec})
  select $1::text, m.id, statement_timestamp(), null::bigint, true, m.rec from marked as m
)
select count(*)::text as deleted from marked`;
}
