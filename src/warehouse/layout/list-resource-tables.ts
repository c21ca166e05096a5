import { type Kysely, sql, type Transaction } from 'kysely';
import { accountOfSchema } from '../../account-name.js';
import type { Database } from '../tables.js';
import {
  createListResourceViews,
  createSharedListTables,
  LIST_RESOURCE_MARKER,
  listResourceTable,
} from './shared-list-tables.js';

export { LIST_RESOURCE_MARKER, listResourceTable };

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The list resources whose relations `schema` holds, sorted: its `…_data`
 * views (tables, in a schema not yet moved to shared storage) marked with
 * {@link LIST_RESOURCE_MARKER}.
 */
export async function listResourcesIn(db: Db, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select substring(obj_description(c.oid, 'pg_class') from ${`^${LIST_RESOURCE_MARKER} ([a-z][a-z0-9_]*):`}) as name
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'v') and c.relname like '%\\_data'
      and obj_description(c.oid, 'pg_class') like ${`${LIST_RESOURCE_MARKER} %`}
    order by 1`.execute(db);
  return rows.map((r) => r.name).filter((name) => name !== null);
}

/**
 * Makes what a list resource `name` is stored in, where it is missing, and
 * `schema`'s views of it; changes nothing that exists (safe to run any number
 * of times). The caller serialises it (see ensureListResources) and runs it
 * in a transaction, so a schema never holds half of it:
 *
 * - the shared tables `hiresync.data_NAME_data` (one row per account and
 *   record id, the record as sent in `data`, with `deleted_at`, `changed_at`
 *   and bookkeeping: the shape of `jobs`) and `hiresync.data_NAME_history`
 *   (one row per version of a record, as `jobs_history`), made once for all
 *   accounts (see createSharedListTables);
 * - in `schema`, the views `NAME_data` and `NAME_history` of the account's
 *   rows, the view `NAME` analysts read, and the typed view `NAME_flat` (id
 *   and deleted_at until a full run fills it).
 *
 * A relation of one of these names that hiresync did not make (an analyst's
 * own table `applications`) makes it fail with Postgres's message, taking
 * nothing over. Returns true when it made the shared tables (the
 * all_accounts views then need `NAME` too).
 */
export async function createListResourceTables(
  trx: Transaction<Database>,
  schema: string,
  name: string,
): Promise<boolean> {
  const made = await createSharedListTables(trx, name);
  await createListResourceViews(trx, schema, accountOfSchema(schema), name);
  return made;
}
