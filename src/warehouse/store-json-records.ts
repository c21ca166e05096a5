import { type RawBuilder, sql } from 'kysely';
import { changedAtOnConflict, returningVersion, versionCtes } from './history.js';
import {
  type PageStatement,
  type PageStatementInput,
  pageCte,
  type WrittenRow,
} from './page-statement.js';

/**
 * The statement of a resource stored as JSON (jobs, job posts, and any
 * resource declared with defineJsonResource): `id`, `data` (the record as
 * sent), `deleted_at`, `changed_at` and bookkeeping, in `table`, and a version
 * in its history table for each record that changed.
 */
export function storeJsonRecords(table: string): PageStatement {
  return (input) => jsonRecordsStatement(input, table);
}

function jsonRecordsStatement(input: PageStatementInput, table: string): RawBuilder<WrittenRow> {
  return sql`with ${pageCte(input)},
  upserted as (
    insert into ${sql.table(table)} as t (id, data, deleted_at, synced_at, last_seen_run_id, changed_at)
    select distinct on ((r ->> 'id')::bigint) (r ->> 'id')::bigint, r, null::timestamptz, now(), ${input.runId}::bigint,
      statement_timestamp()
    from good
    order by (r ->> 'id')::bigint, idx desc
    on conflict (id) do update set
      data = excluded.data, deleted_at = null, synced_at = excluded.synced_at,
      last_seen_run_id = excluded.last_seen_run_id, ${changedAtOnConflict('data')}
    returning id, ${returningVersion('data')}
  )${input.history ? sql`, ${versionCtes(input.history, 'upserted', input.runId, false)}` : sql``}
  select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted`;
}
