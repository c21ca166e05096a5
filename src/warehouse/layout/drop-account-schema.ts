import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, accountOfSchema, schemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';
import { hiresyncAnalyticsSchema, schemaOwner } from './account-schema-owner.js';
import { sharedTable, sharedTables } from './account-views.js';
import { dependentsOutside } from './schema-dependents.js';

/**
 * Drops an account's schema and everything in it, and its rows of the shared
 * tables, in one transaction. Refuses, changing nothing, a schema that is not
 * hiresync's (see {@link schemaOwner}), one that objects of other schemas
 * depend on (see {@link DependentObjectsError}), and the schema of an account
 * still registered.
 */
export async function dropSchema(
  db: Kysely<Database>,
  schema: string,
): Promise<{ warnings: string[] }> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to drop schema ${JSON.stringify(schema)}: ${problem}`);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql`select 1 from hiresync.accounts where name = ${schema}`.execute(trx);
    if (rows.length > 0) {
      throw new Error(`refusing to drop schema ${schema}: account ${schema} is still registered`);
    }
    await dropAccountSchema(trx, schema, []);
    return { warnings: [] };
  });
}

/** What {@link dropStoredData} did with the schema of the name. */
export type StoredSchemaOutcome = 'dropped' | 'absent' | 'not hiresync';

/**
 * `accounts remove NAME --drop-data` of a name no account has: drops what an
 * earlier registration of it left (removed without --drop-data), in one
 * transaction: its rows of the shared tables, and its schema when that is
 * hiresync's, under the same rules as {@link unregisterAccount} (no
 * dependents outside it but those of `cascade`, which go with it). A schema
 * of the name that is not hiresync's is left alone, only the shared rows
 * deleted. Refuses, changing nothing, while an account of the name is
 * registered. Returns what became of the schema and the objects dropped with it.
 */
export async function dropStoredData(
  db: Kysely<Database>,
  account: string,
  { cascade = [] }: { cascade?: readonly string[] } = {},
): Promise<{ schema: StoredSchemaOutcome; cascaded: string[] }> {
  const problem = accountNameProblem(account);
  if (problem)
    throw new Error(`refusing to drop the data of ${JSON.stringify(account)}: ${problem}`);
  const schema = schemaOf(account);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql`select 1 from hiresync.accounts where name = ${account}`.execute(
      trx,
    );
    if (rows.length > 0) {
      throw new HiresyncError(
        `account ${account} is registered (again) now: nothing was dropped; 'hiresync accounts remove ${account} --drop-data' removes it with its data`,
      );
    }
    const owner = await schemaOwner(trx, schema);
    if (owner === 'other') {
      await deleteSharedRows(trx, account);
      return { schema: 'not hiresync', cascaded: [] };
    }
    const cascaded = await dropAccountSchema(trx, schema, cascade);
    return { schema: owner === 'absent' ? 'absent' : 'dropped', cascaded };
  });
}

/**
 * Objects of other schemas depend on the schema `accounts remove --drop-data`
 * would drop (an analyst's view, a foreign key, ...): it is not dropped unless
 * they may go too (`--cascade`).
 */
export class DependentObjectsError extends HiresyncError {
  readonly schema: string;
  /** As {@link dependentsOutside} names them. */
  readonly objects: readonly string[];
  constructor(schema: string, objects: readonly string[]) {
    super(
      `schema ${schema} is not dropped: objects outside it depend on it: ${objects.join(', ')}; drop or change them first, or give --cascade to drop them with it`,
    );
    this.schema = schema;
    this.objects = objects;
  }
}

/** Options of {@link unregisterAccount}. */
export interface UnregisterAccountOptions {
  /** Deletes the account's registration (its row of hiresync.accounts), in the transaction given. */
  unregister: (trx: Transaction<Database>) => Promise<unknown>;
  /** Drop the account's schema too. */
  dropData: boolean;
  /**
   * With `dropData`: the objects of other schemas that may be dropped with it,
   * as {@link dependentsOutside} names them (what the operator was shown and
   * agreed to with --cascade). Any other dependent refuses the drop.
   */
  cascade?: readonly string[];
}

/**
 * The Postgres part of `accounts remove`, all or nothing in one transaction:
 * deletes the account's registration (`unregister`: the `all_accounts` views
 * show registered accounts only), and with `dropData` drops its schema, which
 * must be hiresync's and have no dependents outside it but those of `cascade`,
 * and deletes its rows of the shared tables.
 * Any failure rolls all of it back. Returns the views' warnings and the
 * objects of other schemas dropped with the schema.
 */
export async function unregisterAccount(
  db: Kysely<Database>,
  schema: string,
  options: UnregisterAccountOptions,
): Promise<{ warnings: string[]; cascaded: string[] }> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to remove schema ${JSON.stringify(schema)}: ${problem}`);
  return db.transaction().execute(async (trx) => {
    await options.unregister(trx);
    // What blocked its typed views is no one's concern once it is removed.
    await forgetTypedViewBlocks(trx, schema);
    if (!options.dropData) return { warnings: [], cascaded: [] };
    const cascaded = await dropAccountSchema(trx, schema, options.cascade ?? []);
    return { warnings: [], cascaded };
  });
}

/** Locks, for the rest of `trx`, every table, view and foreign table of `schema` in access exclusive mode. */
async function lockRelations(trx: Transaction<Database>, schema: string): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f')
    order by c.relname`.execute(trx);
  if (rows.length === 0) return;
  await sql`lock table ${sql.join(rows.map((r) => sql.id(schema, r.name)))} in access exclusive mode`.execute(
    trx,
  );
}

/**
 * Drops `schema` in `trx`, with the account's analytics schema when
 * hiresync made it (its views read the shared tables, so it goes with the
 * account's data; one of the name that is someone else's stays, see
 * hiresyncAnalyticsSchema), after checking that it is hiresync's and that
 * nothing outside them depends on them but the objects of `cascade`, which
 * go with them; returns those dropped so.
 */
async function dropAccountSchema(
  trx: Transaction<Database>,
  schema: string,
  cascade: readonly string[],
): Promise<string[]> {
  if ((await schemaOwner(trx, schema)) === 'other') {
    throw new HiresyncError(
      `refusing to drop schema ${schema}: it holds objects hiresync did not create (it is not marked as, nor migrated as, one of hiresync's account schemas)`,
    );
  }
  // The check and the drop must see the same dependents. In read committed, a
  // view (or foreign key) on one of its relations committed between them would
  // go with `drop schema ... cascade` unnamed and unasked. Creating one locks
  // the relation it reads (access share; a foreign key, share row exclusive),
  // so its relations are locked first, as the drop would lock them anyway:
  // one being created waits for this transaction, and one created meanwhile
  // is committed before the check, which then sees it. (A default using one
  // of its sequences is not covered: a sequence cannot be locked.)
  await lockRelations(trx, schema);
  const analytics = await hiresyncAnalyticsSchema(trx, accountOfSchema(schema));
  if (analytics !== undefined) await lockRelations(trx, analytics);
  const outside = await dependentsOutside(trx, schema);
  const allowed = new Set(cascade);
  const refused = outside.filter((object) => !allowed.has(object));
  if (refused.length > 0) throw new DependentObjectsError(schema, refused);
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(trx);
  if (analytics !== undefined) await sql`drop schema ${sql.id(analytics)} cascade`.execute(trx);
  await deleteSharedRows(trx, accountOfSchema(schema));
  // Its views are gone: an account added again under the name gets them anew.
  await sql`delete from hiresync.schema_layouts where schema = ${schema}`.execute(trx);
  // Its typed views are gone: nothing of theirs is blocked any more.
  await forgetTypedViewBlocks(trx, schema);
  return outside;
}

/**
 * Deletes `account`'s rows from every shared table (hiresync.data_*): one
 * partition of each, through its primary key's leading column. Rows that
 * reference others (rejected records, typed columns) go first.
 */
async function deleteSharedRows(trx: Transaction<Database>, account: string): Promise<void> {
  const tables = (await sharedTables(trx)).map((t) => t.table);
  const first = ['rejected_records', 'typed_view_columns'];
  for (const table of [
    ...first.filter((t) => tables.includes(t)),
    ...tables.filter((t) => !first.includes(t)),
  ]) {
    await sql`delete from ${sql.id('hiresync', sharedTable(table))} where account = ${account}`.execute(
      trx,
    );
  }
}

/** Deletes the hiresync.typed_view_blocks rows of the typed views of `schema`. */
async function forgetTypedViewBlocks(trx: Transaction<Database>, schema: string): Promise<void> {
  const { rows: blocks } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (blocks[0]?.present) {
    await sql`delete from hiresync.typed_view_blocks where schema = ${schema}`.execute(trx);
  }
}
