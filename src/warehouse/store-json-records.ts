import { type RawBuilder, sql } from 'kysely';
import {
  type PageStatement,
  type PageStatementInput,
  pageCte,
  type WrittenRow,
} from './page-statement.js';

/**
 * The statement of a resource stored as JSON (jobs, job posts, and any
 * resource declared with defineJsonResource): `id`, `data` (the record as
 * sent), `deleted_at` and bookkeeping, in `table`.
 */
export function storeJsonRecords(table: string): PageStatement {
  return (input) => jsonRecordsStatement(input, table);
}

function jsonRecordsStatement(input: PageStatementInput, table: string): RawBuilder<WrittenRow> {
  return sql`with ${pageCte(input)},
  upserted as (
    insert into ${sql.table(table)} as t (id, data, deleted_at, synced_at, last_seen_run_id)
    select distinct on ((r ->> 'id')::bigint) (r ->> 'id')::bigint, r, null::timestamptz, now(), ${input.runId}::bigint
    from good
    order by (r ->> 'id')::bigint, idx desc
    on conflict (id) do update set
      data = excluded.data, deleted_at = null, synced_at = excluded.synced_at, last_seen_run_id = excluded.last_seen_run_id
    returning id
  )
  select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted`;
}
